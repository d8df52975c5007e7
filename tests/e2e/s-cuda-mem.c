/*
 * s-cuda-mem.c - fixture for recorded CUDA allocations (test-cuda-mem.c):
 * a training loop on the stand-in CUDA runtime of lib-cupti-fake.c (two
 * devices) that keeps its own ledger of every CUDA memory call it makes.
 *
 *   s-cuda-mem STEPS
 *
 * Each step (device 0 current unless said):
 *   load_batch   cudaMallocHost 4096 (pinned staging, freed by step, its
 *                caller) and cudaMalloc 65536 + 256 * i (the batch, freed
 *                by step); a cudaMalloc too big for the device fails
 *   forward      cudaMalloc of three activations (1024, 2048, 3072 + i),
 *                freed in backward; calls attention
 *   attention    cudaMallocAsync 32768 and cudaFreeAsync of it
 *   backward     cudaMalloc 8192 on device 1 (the gradient, freed by
 *                reduce_grads), frees the three activations; calls
 *                reduce_grads
 *   reduce_grads cudaFree of the gradient with device 0 current (CUDA's
 *                unified addressing allows it: the block is device 1's)
 *   update       cudaMallocManaged 2048, cudaFree of it; calls leak_dev1
 *                and cache_dev0
 *   leak_dev1    cudaMalloc 512 on device 1, never freed
 *   cache_dev0   cudaMalloc 300 on device 0, never freed
 *   prefetch     the root of a worker thread step starts and joins:
 *                cudaMalloc 12288 + i (the next batch, freed by step on
 *                the main thread)
 *   step         the calls above; frees the batch, the staging and the
 *                worker's block,
 *                cudaFree(NULL); from step 2 on frees one block main
 *                allocated before the first step (600 bytes, device 0)
 *
 * The ledger, printed at exit, one line per call that moved memory, in
 * the order of the calls:
 *   A STEP FUNCTION PARENT SPACE DEVICE BYTES ID      an allocation
 *   F STEP FUNCTION PARENT SPACE DEVICE BYTES ID      a free of block ID
 * STEP as stepscope numbers steps (the first call of step is step 0; -1:
 * in main, before the first), SPACE as in format.h (1 device, 2 pinned,
 * 3 managed), DEVICE and BYTES the block's (a free names the size and
 * device of the block it frees), ID numbers the blocks from 1.
 * Functions: main, step, load_batch, forward, attention, backward,
 * reduce_grads, update, leak_dev1, cache_dev0, prefetch (PARENT "-": the
 * root of its thread).  Build with -pthread.
 *
 *   s-cuda-mem STEPS [DEV1]
 * DEV1 (default 1) is the device of "device 1" above: 0 on a machine with
 * one GPU (the proof kit's run on a real GPU).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

int cudaMalloc(void **p, size_t n);
int cudaMallocAsync(void **p, size_t n, void *stream);
int cudaMallocHost(void **p, size_t n);
int cudaMallocManaged(void **p, size_t n, unsigned flags);
int cudaFree(void *p);
int cudaFreeAsync(void *p, void *stream);
int cudaFreeHost(void *p);
int cudaSetDevice(int dev);

enum { DEV = 1, PINNED = 2, MANAGED = 3 };

struct block {
	void *p;
	int id, space, dev;
	long bytes;
};

static struct entry {
	char what;
	int step;
	const char *fn, *parent;
	struct block b;
} ledger[4096];
static int nledger, cur_step = -1, next_id, dev1 = 1;

/* not instrumented: the fixture's own book-keeping is no recorded call */
__attribute__((no_instrument_function)) static void
note(char what, const char *fn, const char *parent, const struct block *b)
{
	if (nledger < 4096)
		ledger[nledger++] = (struct entry){ what, cur_step, fn, parent, *b };
}

__attribute__((no_instrument_function)) static struct block
note_alloc(const char *fn, const char *parent, void *p, int space, int dev, long bytes)
{
	struct block b = { p, ++next_id, space, dev, bytes };
	note('A', fn, parent, &b);
	return b;
}

#define MUST(x)                                                                 \
	do {                                                                    \
		if ((x) != 0) {                                                 \
			fprintf(stderr, "s-cuda-mem: %s failed\n", #x);         \
			exit(1);                                                \
		}                                                               \
	} while (0)

/* allocate through CALL into b.p and note it as FN's, child of PARENT */
#define ALLOC(b, CALL, fn, parent, space, dev, bytes)                           \
	do {                                                                    \
		void *p_ = NULL;                                                \
		MUST(CALL);                                                     \
		b = note_alloc(fn, parent, p_, space, dev, bytes);              \
	} while (0)
#define FREE(b, CALL, fn, parent)                                               \
	do {                                                                    \
		MUST(CALL);                                                     \
		note('F', fn, parent, &b);                                      \
	} while (0)

static struct block batch, staging, act[3], grad, early[8], next;

NOINLINE static void load_batch(int i)
{
	void *huge = NULL;
	ALLOC(staging, cudaMallocHost(&p_, 4096), __func__, "step", PINNED, 0, 4096);
	ALLOC(batch, cudaMalloc(&p_, 65536 + 256 * (size_t)i), __func__, "step", DEV, 0,
	      65536 + 256 * i);
	SINK(cudaMalloc(&huge, (size_t)1 << 40) == 0); /* fails: nothing */
}

NOINLINE static void attention(void)
{
	struct block tmp;
	ALLOC(tmp, cudaMallocAsync(&p_, 32768, NULL), __func__, "forward", DEV, 0, 32768);
	FREE(tmp, cudaFreeAsync(tmp.p, NULL), __func__, "forward");
}

NOINLINE static void forward(int i)
{
	for (int k = 0; k < 3; k++) {
		long n = 1024 * (k + 1) + (k == 2 ? i : 0);
		ALLOC(act[k], cudaMalloc(&p_, (size_t)n), __func__, "step", DEV, 0, n);
	}
	attention();
}

NOINLINE static void reduce_grads(void)
{
	/* device 1's block, device 0 current */
	FREE(grad, cudaFree(grad.p), __func__, "backward");
}

NOINLINE static void backward(void)
{
	MUST(cudaSetDevice(dev1));
	ALLOC(grad, cudaMalloc(&p_, 8192), __func__, "step", DEV, dev1, 8192);
	MUST(cudaSetDevice(0));
	for (int k = 2; k >= 0; k--)
		FREE(act[k], cudaFree(act[k].p), __func__, "step");
	reduce_grads();
}

NOINLINE static void leak_dev1(void)
{
	struct block b;
	MUST(cudaSetDevice(dev1));
	ALLOC(b, cudaMalloc(&p_, 512), __func__, "update", DEV, dev1, 512);
	SINK(b.id); /* never freed */
	MUST(cudaSetDevice(0));
}

NOINLINE static void cache_dev0(void)
{
	struct block b;
	ALLOC(b, cudaMalloc(&p_, 300), __func__, "update", DEV, 0, 300);
	SINK(b.id); /* never freed */
}

NOINLINE static void update(void)
{
	struct block m;
	ALLOC(m, cudaMallocManaged(&p_, 2048, 1), __func__, "step", MANAGED, 0, 2048);
	FREE(m, cudaFree(m.p), __func__, "step");
	leak_dev1();
	cache_dev0();
}

/* the worker thread; the main thread waits in pthread_join meanwhile, so
 * the ledger needs no lock */
NOINLINE static void *prefetch(void *arg)
{
	long n = 12288 + (long)(intptr_t)arg;
	ALLOC(next, cudaMalloc(&p_, (size_t)n), __func__, "-", DEV, 0, n);
	return NULL;
}

NOINLINE static void step(int i)
{
	pthread_t th;
	cur_step = i;
	if (pthread_create(&th, NULL, prefetch, (void *)(intptr_t)i) || pthread_join(th, NULL))
		exit(1);
	load_batch(i);
	forward(i);
	backward();
	update();
	FREE(batch, cudaFree(batch.p), __func__, "main");
	FREE(staging, cudaFreeHost(staging.p), __func__, "main");
	FREE(next, cudaFree(next.p), __func__, "main"); /* the worker's */
	MUST(cudaFree(NULL));
	if (i >= 2 && i - 2 < 8)
		FREE(early[i - 2], cudaFree(early[i - 2].p), __func__, "main");
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	dev1 = argc > 2 ? atoi(argv[2]) : 1;
	MUST(cudaSetDevice(0));
	for (int k = 0; k < 8; k++)
		ALLOC(early[k], cudaMalloc(&p_, 600), "main", "", DEV, 0, 600);
	for (int i = 0; i < steps; i++)
		step(i);
	for (int k = 0; k < nledger; k++) {
		const struct entry *e = &ledger[k];
		printf("%c %d %s %s %d %d %ld %d\n", e->what, e->step, e->fn,
		       *e->parent ? e->parent : "-", e->b.space, e->b.dev, e->b.bytes, e->b.id);
	}
	return 0;
}
