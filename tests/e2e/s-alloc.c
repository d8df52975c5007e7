/*
 * s-alloc.c - fixture: a trainer that allocates, with its own ledger of
 * every allocation and free it makes (test-alloc.c checks stepscope's
 * memory columns, step peaks, leaks and [memory] events against it).
 *
 *   s-alloc STEPS FIRST END [fork]
 * runs STEPS steps of train_step(); FIRST..END-1 are the steps the test
 * records (window.start_step/end_step): the ledger applies stepscope's
 * documented rules to them to print each recorded step's peak bytes (of
 * the blocks the step allocated, at their most at once) and its peak live
 * bytes (blocks allocated since the window opened; a free of a block
 * allocated before it counts 0).  Each step:
 *   load_batch     malloc  BATCH, freed by its caller train_step
 *   forward        layer_forward x3: malloc the activations ...
 *   backward       ... freed here
 *   update         calloc a temporary, freed; raise(SIGUSR1): on_signal
 *                  mallocs SIG bytes, freed by train_step
 *   jump_deep      jump_deeper raises SIGUSR2: on_jump mallocs JUMP bytes
 *                  and siglongjmps back to train_step, which at once (no
 *                  instrumented call between) mallocs AFTER bytes: its
 *                  own, not on_jump's; both freed by train_step
 *   log_metrics    realloc a history that grows every step (the block of
 *                  the step before freed, so in the first recorded step a
 *                  free of unknown size); freed in main after the steps;
 *                  then a realloc too large to succeed (the block stays)
 *   pack_weights   posix_memalign and aligned_alloc, both freed
 *   worker_alloc   on a worker thread (started before the steps, woken
 *                  by a semaphore, waited for): mallocs 512 and 256,
 *                  frees the 512; train_step frees the 256
 *   leak_small     malloc LEAK bytes, never freed
 * At exit it prints the ledger, one line per call, in the order they ran:
 *   "A STEP SIZE ADDR PATH"           an allocation
 *   "F STEP SIZE ADDR PATH ASTEP"     a free of a block of SIZE bytes
 *                                     allocated in step ASTEP
 *   "P STEP PEAK LIVE"                a recorded step's peak of its own
 *                                     blocks, and its peak live bytes
 * PATH: the functions open when the call was made, outermost first,
 * joined by '/'.  With `fork`, step FIRST also forks a child that
 * allocates 64 bytes in child_work, frees them and exits with status 0
 * when malloc gave it a block of at least that size ("child ok").
 */
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

enum { BATCH = 3000, SIG = 100, LEAK = 24, JUMP = 200, AFTER = 300, MAXE = 4096, DEPTH = 8 };

struct entry {
	char kind;
	int step, astep;
	size_t size;
	void *addr;
	char path[96];
};
static struct entry ledger[MAXE];
static int nledger;
static int cur_step = -1, first_rec, end_rec;
/* volatile: a signal handler reads them (-O2 kept jump_deeper's push
 * from the handler raise() runs) */
static __thread const char *volatile names[DEPTH];
static __thread volatile int depth;
static long long live, own, peak[1024], live_peak[1024];

#define ENTER(n) (names[depth++] = (n))
#define LEAVE() (depth--)

static int recorded(int step)
{
	return step >= first_rec && step < end_rec;
}

static void note(char kind, size_t size, void *addr, int astep)
{
	struct entry *e = &ledger[nledger < MAXE ? nledger++ : MAXE - 1];
	e->kind = kind;
	e->step = cur_step;
	e->astep = astep;
	e->size = size;
	e->addr = addr;
	e->path[0] = 0;
	for (int i = 0; i < depth; i++) {
		strncat(e->path, names[i], sizeof(e->path) - strlen(e->path) - 1);
		if (i + 1 < depth)
			strncat(e->path, "/", sizeof(e->path) - strlen(e->path) - 1);
	}
	if (!recorded(cur_step))
		return;
	if (kind == 'A')
		live += (long long)size, own += (long long)size;
	else if (recorded(astep))
		live -= (long long)size;
	if (kind == 'F' && astep == cur_step)
		own -= (long long)size;
	if (own > peak[cur_step])
		peak[cur_step] = own;
	if (live > live_peak[cur_step])
		live_peak[cur_step] = live;
}

/* a block and the step that allocated it */
struct blk {
	void *p;
	size_t n;
	int step;
};

static struct blk got(void *p, size_t n)
{
	struct blk b = { p, n, cur_step };
	if (!p || malloc_usable_size(p) < n)
		abort(); /* not the block asked for */
	note('A', n, p, 0);
	return b;
}

/* a macro: the free is made by the function that uses it */
#define PUT(b)                                                                 \
	do {                                                                   \
		note('F', (b).n, (b).p, (b).step);                             \
		free((b).p);                                                   \
		(b).p = NULL;                                                  \
	} while (0)

static struct blk act[3], sigblk, history, wblk, jblk;
static sigjmp_buf jb;
static sem_t go, done;

NOINLINE void on_signal(int sig)
{
	ENTER("on_signal");
	sigblk = got(malloc(SIG), SIG);
	SINK(sig);
	LEAVE();
}

NOINLINE void on_jump(int sig)
{
	ENTER("on_jump");
	jblk = got(malloc(JUMP), JUMP);
	SINK(sig);
	siglongjmp(jb, 1);
}

NOINLINE void jump_deeper(void)
{
	ENTER("jump_deeper");
	raise(SIGUSR2);
	LEAVE(); /* never: on_jump jumps out */
}

NOINLINE void jump_deep(void)
{
	ENTER("jump_deep");
	jump_deeper();
	LEAVE();
}

NOINLINE struct blk load_batch(void)
{
	ENTER("load_batch");
	struct blk b = got(malloc(BATCH), BATCH);
	memset(b.p, 1, BATCH);
	LEAVE();
	return b;
}

NOINLINE void layer_forward(int i)
{
	ENTER("layer_forward");
	size_t n = 2048 * (size_t)(i + 1);
	act[i] = got(malloc(n), n);
	LEAVE();
}

NOINLINE void forward(void)
{
	ENTER("forward");
	for (int i = 0; i < 3; i++)
		layer_forward(i);
	LEAVE();
}

NOINLINE void backward(void)
{
	ENTER("backward");
	for (int i = 2; i >= 0; i--)
		PUT(act[i]);
	LEAVE();
}

NOINLINE void update(void)
{
	ENTER("update");
	struct blk tmp = got(calloc(8, 100), 800);
	SINK(((char *)tmp.p)[10]);
	PUT(tmp);
	raise(SIGUSR1);
	LEAVE();
}

NOINLINE void log_metrics(void)
{
	ENTER("log_metrics");
	size_t n = 1000 + 100 * (size_t)cur_step;
	if (history.p)
		note('F', history.n, history.p, history.step);
	void *p = realloc(history.p, n);
	history = got(p, n);
	/* a realloc that fails keeps the block: neither a free nor an
	 * allocation, and not in the ledger */
	static volatile size_t huge = SIZE_MAX / 2;
	if (realloc(history.p, huge))
		abort();
	LEAVE();
}

NOINLINE void pack_weights(void)
{
	ENTER("pack_weights");
	void *p = NULL;
	if (posix_memalign(&p, 64, 4096) || ((uintptr_t)p & 63))
		abort();
	struct blk a = got(p, 4096);
	void *q = aligned_alloc(256, 1024);
	if ((uintptr_t)q & 255)
		abort();
	struct blk b = got(q, 1024);
	PUT(b);
	PUT(a);
	LEAVE();
}

NOINLINE void worker_alloc(void)
{
	ENTER("worker_alloc");
	struct blk a = got(malloc(512), 512);
	wblk = got(malloc(256), 256);
	PUT(a);
	LEAVE();
}

NOINLINE void leak_small(void)
{
	ENTER("leak_small");
	got(malloc(LEAK), LEAK);
	LEAVE();
}

NOINLINE void child_work(void)
{
	void *p = malloc(64);
	int ok = p && malloc_usable_size(p) >= 64;
	free(p);
	_exit(ok ? 0 : 1);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		sem_wait(&go);
		if (cur_step < 0)
			return NULL;
		worker_alloc();
		sem_post(&done);
	}
}

NOINLINE void train_step(int step, int do_fork)
{
	cur_step = step;
	own = 0; /* a step's peak: only the blocks it allocates */
	if (recorded(step))
		live_peak[step] = live; /* what the step begins with */
	ENTER("train_step");
	struct blk batch = load_batch();
	forward();
	backward();
	update();
	PUT(sigblk);
	int saved = depth;
	if (!sigsetjmp(jb, 1))
		jump_deep();
	depth = saved; /* the ledger's names too */
	struct blk after = got(malloc(AFTER), AFTER);
	PUT(after);
	PUT(jblk);
	log_metrics();
	pack_weights();
	sem_post(&go);
	sem_wait(&done);
	PUT(wblk);
	leak_small();
	PUT(batch);
	if (do_fork && step == first_rec) {
		pid_t pid = fork();
		if (pid == 0)
			child_work();
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			abort();
	}
	LEAVE();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;
	first_rec = argc > 2 ? atoi(argv[2]) : 2;
	end_rec = argc > 3 ? atoi(argv[3]) : 6;
	int do_fork = argc > 4 && !strcmp(argv[4], "fork");
	pthread_t th;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_jump;
	sigaction(SIGUSR2, &sa, NULL);
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	ENTER("main"); /* open when the window opens: its CPU Mem is the steps' */
	for (int s = 0; s < steps && s < 1024; s++)
		train_step(s, do_fork);
	LEAVE();
	cur_step = -1;
	sem_post(&go);
	pthread_join(th, NULL);
	free(history.p); /* after the steps: not a leak */
	for (int i = 0; i < nledger; i++) {
		const struct entry *e = &ledger[i];
		if (e->kind == 'A')
			printf("A %d %zu %p %s\n", e->step, e->size, e->addr, e->path);
		else
			printf("F %d %zu %p %s %d\n", e->step, e->size, e->addr, e->path, e->astep);
	}
	for (int s = first_rec; s < end_rec && s < steps; s++)
		printf("P %d %lld %lld\n", s, peak[s], live_peak[s]);
	if (do_fork)
		printf("child ok\n");
	return 0;
}
