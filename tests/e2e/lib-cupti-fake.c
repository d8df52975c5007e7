/*
 * lib-cupti-fake.c - a stand-in CUDA runtime and CUPTI in one library, for
 * tests without a GPU (test-cuda-fake.c).  Built as libcudart.so, so the
 * runtime sees "a CUDA runtime is mapped", and named in
 * STEPSCOPE_CUPTI_LIBRARY, so the runtime's dlopen of "libcupti" gets this
 * same object and both halves share one state.
 *
 * CUDA half: fakeLaunchKernel(name, grid, block, stream), cudaMemcpy,
 * cudaMemset and cudaDeviceSynchronize.  The "GPU" runs work back to back
 * on its own clock (CLOCK_MONOTONIC + 7 s, so a reader must align clocks):
 * a kernel takes 200 us, a copy 1 ns per byte, plus 1 us each; synchronize
 * sleeps until the GPU is idle.  Each call, while the activity kinds are
 * enabled, adds a runtime API record and an activity record with the same
 * correlation id.
 *
 * CUPTI half: cuptiActivityRegisterCallbacks/Enable/Disable/FlushAll/
 * GetNextRecord, cuptiGetTimestamp, cuptiGetCallbackName.  Records use the
 * layouts of runtime/cupti.h (CUPTI's ABI) at a fixed 256-byte stride;
 * full buffers and the flush go to the completion callback.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "../../runtime/cupti.h"

#define STRIDE 256
#define GPU_OFFSET 7000000000ull
#define CBID_LAUNCH 211     /* cudaLaunchKernel_v7000 */
#define CBID_MEMCPY 31      /* cudaMemcpy_v3020 */
#define CBID_MEMSET 48      /* cudaMemset_v3020 */
#define CBID_SYNC 165       /* cudaDeviceSynchronize_v3020 */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ss_cupti_request_fn req;
static ss_cupti_complete_fn done;
static int enabled[32];
static uint8_t *buf;
static size_t buf_size, used;
static uint32_t corr;
static uint64_t gpu_free;

static uint64_t gpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + GPU_OFFSET;
}

int cuptiGetTimestamp(uint64_t *ts)
{
	*ts = gpu_now();
	return 0;
}

int cuptiActivityRegisterCallbacks(ss_cupti_request_fn r, ss_cupti_complete_fn c)
{
	req = r;
	done = c;
	return 0;
}

int cuptiActivityEnable(uint32_t kind)
{
	if (kind >= 32)
		return 1;
	enabled[kind] = 1;
	return 0;
}

int cuptiActivityDisable(uint32_t kind)
{
	if (kind >= 32)
		return 1;
	enabled[kind] = 0;
	return 0;
}

/* lock held */
static void deliver(void)
{
	if (buf && done) {
		uint8_t *b = buf;
		size_t n = used, size = buf_size;
		buf = NULL;
		used = 0;
		pthread_mutex_unlock(&lock);
		done(NULL, 0, b, size, n);
		pthread_mutex_lock(&lock);
	}
}

/* lock held: room for one record, zeroed */
static void *slot(void)
{
	if (buf && used + STRIDE > buf_size)
		deliver();
	if (!buf) {
		size_t max = 0;
		req(&buf, &buf_size, &max);
		used = 0;
		if (!buf)
			return NULL;
	}
	void *p = buf + used;
	memset(p, 0, STRIDE);
	used += STRIDE;
	return p;
}

int cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&lock);
	deliver();
	pthread_mutex_unlock(&lock);
	return 0;
}

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record)
{
	uint8_t *next = *record ? (uint8_t *)*record + STRIDE : buffer;
	if (next + STRIDE > buffer + valid)
		return SS_CUPTI_MAX_NUMBER_OF_RECORDS;
	*record = next;
	return 0;
}

int cuptiGetCallbackName(uint32_t domain, uint32_t cbid, const char **name)
{
	if (domain != SS_CUPTI_DOMAIN_RUNTIME)
		return 1;
	switch (cbid) {
	case CBID_LAUNCH: *name = "cudaLaunchKernel"; return 0;
	case CBID_MEMCPY: *name = "cudaMemcpy"; return 0;
	case CBID_MEMSET: *name = "cudaMemset"; return 0;
	case CBID_SYNC: *name = "cudaDeviceSynchronize"; return 0;
	}
	return 1;
}

/* lock held: the API record of one call that began at `start` */
static void api(uint32_t cbid, uint64_t start, uint32_t c)
{
	if (!enabled[SS_CUPTI_KIND_RUNTIME])
		return;
	struct ss_cupti_api *a = slot();
	if (!a)
		return;
	a->kind = SS_CUPTI_KIND_RUNTIME;
	a->cbid = cbid;
	a->start = start;
	a->end = gpu_now();
	a->process_id = (uint32_t)getpid();
	a->thread_id = (uint32_t)syscall(SYS_gettid);
	a->correlation_id = c;
}

/* lock held: the GPU's next busy interval of `ns` */
static void busy(uint64_t ns, uint64_t *start, uint64_t *end)
{
	uint64_t now = gpu_now();
	*start = (gpu_free > now ? gpu_free : now) + 1000;
	*end = *start + ns;
	gpu_free = *end;
}

int fakeLaunchKernel(const char *name, int grid, int block, uint32_t stream)
{
	static const char *names[64];
	pthread_mutex_lock(&lock);
	uint64_t t0 = gpu_now();
	uint32_t c = ++corr;
	const char *kept = NULL;
	for (int i = 0; i < 64 && !kept; i++) {
		if (!names[i])
			names[i] = strdup(name);
		if (names[i] && !strcmp(names[i], name))
			kept = names[i];
	}
	if (enabled[SS_CUPTI_KIND_CONCURRENT_KERNEL]) {
		struct ss_cupti_kernel *k = slot();
		if (k) {
			k->kind = SS_CUPTI_KIND_CONCURRENT_KERNEL;
			busy(200000, &k->start, &k->end);
			k->completed = k->end;
			k->device_id = 0;
			k->context_id = 1;
			k->stream_id = stream;
			k->grid_x = grid;
			k->grid_y = k->grid_z = 1;
			k->block_x = block;
			k->block_y = k->block_z = 1;
			k->correlation_id = c;
			k->name = kept;
		}
	}
	api(CBID_LAUNCH, t0, c);
	pthread_mutex_unlock(&lock);
	return 0;
}

static void copy(uint32_t kind, uint32_t cbid, size_t n, int copy_kind)
{
	pthread_mutex_lock(&lock);
	uint64_t t0 = gpu_now();
	uint32_t c = ++corr;
	if (enabled[kind]) {
		struct ss_cupti_memcpy *m = slot(); /* memset shares the layout */
		if (m) {
			m->kind = kind;
			if (kind == SS_CUPTI_KIND_MEMCPY)
				m->copy_kind = (uint8_t)copy_kind;
			m->bytes = n;
			busy(n, &m->start, &m->end);
			m->device_id = 0;
			m->context_id = 1;
			m->stream_id = 7;
			m->correlation_id = c;
		}
	}
	api(cbid, t0, c);
	pthread_mutex_unlock(&lock);
}

int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	if (dst && src)
		memmove(dst, src, n);
	copy(SS_CUPTI_KIND_MEMCPY, CBID_MEMCPY, n, kind);
	return 0;
}

int cudaMemset(void *p, int v, size_t n)
{
	if (p)
		memset(p, v, n);
	copy(SS_CUPTI_KIND_MEMSET, CBID_MEMSET, n, 0);
	return 0;
}

int cudaDeviceSynchronize(void)
{
	pthread_mutex_lock(&lock);
	uint64_t t0 = gpu_now(), until = gpu_free;
	uint32_t c = ++corr;
	pthread_mutex_unlock(&lock);
	while (gpu_now() < until) {
		struct timespec nap = { 0, 50000 };
		nanosleep(&nap, NULL);
	}
	pthread_mutex_lock(&lock);
	api(CBID_SYNC, t0, c);
	pthread_mutex_unlock(&lock);
	return 0;
}
