/*
 * pool.c - event chunks reserved and paged in ahead of time.
 *
 * Paging in a fresh chunk of the trace file (fallocate, mmap, then a write
 * fault on every page: ss_buf_prefault) costs more than recording the
 * events that fill it.  A background thread, "stepscope-buf", keeps a few
 * chunks ready, writable page by page, and unmaps the full ones, so a thread
 * whose chunk fills only swaps pointers and takes no page fault.  When the pool is empty, the thread maps a
 * chunk itself, as before: the pool is an optimisation, never a dependency.
 *
 * A ready chunk carries a valid header with serial 0 ("unassigned"); the
 * reader skips such chunks, so a process that dies with chunks in the pool
 * leaves a readable file.  The thread blocks every signal (the program's
 * signals are never delivered to it) and never takes ss_rt.lock while
 * holding the pool's lock; callers may hold ss_rt.lock when they call in.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define POOL_READY 2
/* the thread refills only once the pool is down to POOL_LOW, then up to
 * POOL_READY: a few chunks taken (the first events of a window's threads)
 * cost no paging-in during the step that took them */
#define POOL_LOW 1
/* Full chunks are unmapped RETIRE_GRACE_NS after they were retired, not at
 * once: a thread that a signal handler interrupted right after it claimed
 * a word stores it when the handler returns, maybe after the handler
 * retired the chunk. */
#define POOL_RETIRED 256
#define RETIRE_GRACE_NS 200000000ull

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;
	int busy;                       /* a reserved chunk is being paged in */
	int closing;                    /* at exit: prepare no more */
	int filling;                    /* below POOL_LOW since last full */
	pid_t pid;
	uint64_t size;
	int nready, nretired;
	struct ss_chunk_header *ready[POOL_READY];
	uint64_t ready_off[POOL_READY]; /* file offset of each ready chunk */
	struct ss_chunk_header *retired[POOL_RETIRED];
	uint64_t retired_ns[POOL_RETIRED];
} pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
};

/* Reserve and page in one chunk; NULL when recording has stopped. */
static struct ss_chunk_header *prepare(uint64_t size, uint64_t *offp)
{
	uint64_t off = 0;
	pthread_mutex_lock(&ss_rt.lock);
	pthread_mutex_lock(&pool.mu);
	if (!pool.closing && !ss_rt.stopped && !ss_rt.disabled &&
	    (ss_hot.gate & SS_GATE_EVENTS))
		off = ss_buf_reserve(size); /* header written: unassigned */
	pool.busy = off != 0; /* set with the reservation, under both locks */
	pthread_mutex_unlock(&pool.mu);
	pthread_mutex_unlock(&ss_rt.lock);
	/* page it in without the lock: other threads keep refilling */
	*offp = off;
	return off ? ss_buf_map(off, size) : NULL;
}

/* How long the thread sleeps between two looks at the rings while events
 * are recorded: short after it found blocks to copy, doubling up to the
 * most while it finds none.  A ring of 16 blocks holds a few milliseconds
 * of the busiest thread; a thread whose ring fills copies itself. */
#define COPY_WAIT_MIN_US 100
#define COPY_WAIT_MAX_US 1000

static void wait_us(long us)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += us * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&pool.cv, &pool.mu, &ts);
}

/* While recording, every MAPS_EVERY_NS: a library loaded since the last
 * look gets its maps snapshot from here, not from the threads' block
 * switches (a library built with -finstrument-functions is flagged at
 * once by the hooks' resolver anyway, hooks.c). */
#define MAPS_EVERY_NS 10000000ull

static void look_at_maps(void)
{
	static uint64_t last;
	uint64_t now = ss_clock_mono_ns();
	if (now - last < MAPS_EVERY_NS)
		return;
	last = now;
	pthread_mutex_unlock(&pool.mu);
	pthread_mutex_lock(&ss_rt.lock);
	if (ss_rt.fd >= 0 && ss_rt.pid == getpid())
		ss_meta_maps_if_changed();
	pthread_mutex_unlock(&ss_rt.lock);
	pthread_mutex_lock(&pool.mu);
}

/* Unmap the retired chunks whose grace has passed (all with `all`), the
 * pool's lock held (dropped while unmapping).  1 if it unmapped any. */
static int unmap_retired(int all)
{
	struct ss_chunk_header *old[POOL_RETIRED];
	uint64_t now = ss_clock_mono_ns();
	int n = 0, keep = 0;
	for (int i = 0; i < pool.nretired; i++) {
		if (all || now - pool.retired_ns[i] >= RETIRE_GRACE_NS) {
			old[n++] = pool.retired[i];
		} else {
			pool.retired[keep] = pool.retired[i];
			pool.retired_ns[keep++] = pool.retired_ns[i];
		}
	}
	pool.nretired = keep;
	if (!n)
		return 0;
	pthread_mutex_unlock(&pool.mu);
	for (int i = 0; i < n; i++)
		munmap(old[i], old[i]->size);
	pthread_mutex_lock(&pool.mu);
	return 1;
}

static void *pool_main(void *arg)
{
	(void)arg;
	long wait = COPY_WAIT_MIN_US;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		if (unmap_retired(0))
			continue;
		/* the rings' finished blocks into the file (ring.c) */
		pthread_mutex_unlock(&pool.mu);
		uint64_t copied = ss_ring_drain_all(0);
		int pending = ss_ring_pending();
		ss_sched_drain(); /* record.sched: context switches (sched.c) */
		pthread_mutex_lock(&pool.mu);
		if (copied)
			wait = COPY_WAIT_MIN_US;
		if (ss_hot.gate & SS_GATE_EVENTS)
			look_at_maps();
		if (unmap_retired(0))
			continue;
		if (pool.nready <= POOL_LOW)
			pool.filling = 1;
		else if (pool.nready >= POOL_READY)
			pool.filling = 0;
		if (pool.filling && (ss_hot.gate & SS_GATE_EVENTS) && !ss_rt.stopped) {
			uint64_t size = pool.size;
			pthread_mutex_unlock(&pool.mu);
			uint64_t off = 0;
			struct ss_chunk_header *c = prepare(size, &off);
			pthread_mutex_lock(&pool.mu);
			if (pool.busy) {
				pool.busy = 0;
				pthread_cond_broadcast(&pool.cv);
			}
			if (c && pool.nready < POOL_READY && size == pool.size) {
				pool.ready_off[pool.nready] = off;
				pool.ready[pool.nready++] = c;
				continue;
			}
			if (c) { /* not needed after all: stays unassigned */
				pthread_mutex_unlock(&pool.mu);
				munmap(c, size);
				pthread_mutex_lock(&pool.mu);
				continue;
			}
		}
		if ((ss_hot.gate & SS_GATE_EVENTS) || pending || pool.nretired) {
			wait_us(wait);
			if (!copied && wait < COPY_WAIT_MAX_US)
				wait *= 2;
		} else {
			pthread_cond_wait(&pool.cv, &pool.mu);
			wait = COPY_WAIT_MIN_US;
		}
	}
	return NULL;
}

/* Start the thread once per process (again in a forked child). */
void ss_pool_start(uint64_t size)
{
	pthread_mutex_lock(&pool.mu);
	if (pool.started && pool.pid == getpid()) {
		pthread_cond_signal(&pool.cv);
		pthread_mutex_unlock(&pool.mu);
		return;
	}
	pool.started = 1;
	pool.pid = getpid();
	pool.size = size;
	pthread_t th;
	if (ss_thread_start(&th, pool_main, NULL, "stepscope-buf") == 0)
		pthread_detach(th);
	pthread_mutex_unlock(&pool.mu);
}

/* When a window opens (ss_rt.lock held, before its step begins): fill the
 * pool now, so that the threads' first events in the window (the workers'
 * first chunks) find chunks ready instead of mapping their own in the
 * first step.  Same lock order as the pool thread: ss_rt.lock, then
 * pool.mu, never held while a chunk is paged in. */
void ss_pool_fill(uint64_t size)
{
	ss_pool_start(size);
	for (;;) {
		pthread_mutex_lock(&pool.mu);
		int more = pool.started && pool.pid == getpid() && !pool.closing &&
			   pool.size == size && pool.nready < POOL_READY;
		pthread_mutex_unlock(&pool.mu);
		uint64_t off = more ? ss_buf_reserve(size) : 0;
		struct ss_chunk_header *c = off ? ss_buf_map(off, size) : NULL;
		if (!c)
			return;
		pthread_mutex_lock(&pool.mu);
		if (pool.nready < POOL_READY) {
			pool.ready_off[pool.nready] = off;
			pool.ready[pool.nready++] = c;
			c = NULL;
		}
		pthread_mutex_unlock(&pool.mu);
		if (c) { /* the pool thread filled it meanwhile: stays unassigned */
			munmap(c, size);
			return;
		}
	}
}

/* A ready chunk of `size` bytes, or NULL (the caller maps one itself). */
struct ss_chunk_header *ss_pool_take(uint64_t size, uint64_t *offp)
{
	struct ss_chunk_header *c = NULL;
	pthread_mutex_lock(&pool.mu);
	if (pool.started && pool.pid == getpid()) {
		if (pool.nready && pool.size == size) {
			/* oldest first: chunks are used in file order, so the
			 * ones left at exit are the file's tail (ss_pool_trim) */
			c = pool.ready[0];
			*offp = pool.ready_off[0];
			pool.nready--;
			memmove(pool.ready, pool.ready + 1, sizeof(pool.ready[0]) * (size_t)pool.nready);
			memmove(pool.ready_off, pool.ready_off + 1,
				sizeof(pool.ready_off[0]) * (size_t)pool.nready);
		}
		pthread_cond_signal(&pool.cv);
	}
	pthread_mutex_unlock(&pool.mu);
	return c;
}

/* Unmap a full chunk in the background (its data is already in the file). */
void ss_pool_retire(struct ss_chunk_header *c)
{
	pthread_mutex_lock(&pool.mu);
	if (pool.started && pool.pid == getpid() && pool.nretired < POOL_RETIRED) {
		pool.retired_ns[pool.nretired] = ss_clock_mono_ns();
		pool.retired[pool.nretired++] = c;
		pthread_cond_signal(&pool.cv);
		c = NULL;
	}
	pthread_mutex_unlock(&pool.mu);
	if (c)
		munmap(c, c->size);
}

/* At exit (ss_rt.lock held): chunks still waiting in the pool hold no
 * events; where they are the end of the file, cut them off so the trace is
 * no bigger than what was recorded.  Later events map chunks as usual. */
void ss_pool_trim(void)
{
	pthread_mutex_lock(&pool.mu);
	if (!pool.started || pool.pid != getpid() || ss_rt.fd < 0) {
		pthread_mutex_unlock(&pool.mu);
		return;
	}
	/* a chunk reserved before we took ss_rt.lock may still be paging in:
	 * it is the file's tail, wait for it (the pool thread needs only
	 * pool.mu to finish); closing keeps new ones from starting */
	pool.closing = 1;
	while (pool.busy)
		pthread_cond_wait(&pool.cv, &pool.mu);
	uint64_t end = ss_rt.file_off;
	for (int again = 1; again;) {
		again = 0;
		for (int i = 0; i < pool.nready; i++) {
			if (pool.ready_off[i] + pool.ready[i]->size != end)
				continue;
			end = pool.ready_off[i];
			munmap(pool.ready[i], pool.ready[i]->size);
			pool.nready--;
			pool.ready[i] = pool.ready[pool.nready];
			pool.ready_off[i] = pool.ready_off[pool.nready];
			again = 1;
			break;
		}
	}
	int fd = end < ss_rt.file_off ? ss_buf_fd() : -1;
	if (fd >= 0 && ftruncate(fd, (off_t)end) == 0)
		ss_rt.file_off = end;
	/* the others hold nothing either: their pages go back to the file
	 * system, the header page stays (a later event can still use them) */
	fd = pool.nready ? ss_buf_fd() : -1;
	for (int i = 0; fd >= 0 && i < pool.nready; i++)
		if (pool.ready[i]->size > 4096)
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				  (off_t)(pool.ready_off[i] + 4096),
				  (off_t)(pool.ready[i]->size - 4096));
	pthread_mutex_unlock(&pool.mu);
}

/* In a forked child: the thread is gone and the pooled chunks belong to the
 * parent's file, which the parent goes on using. */
void ss_pool_after_fork(void)
{
	pthread_mutex_init(&pool.mu, NULL);
	pthread_cond_init(&pool.cv, NULL);
	for (int i = 0; i < pool.nready; i++)
		munmap(pool.ready[i], pool.ready[i]->size);
	for (int i = 0; i < pool.nretired; i++)
		munmap(pool.retired[i], pool.retired[i]->size);
	pool.nready = pool.nretired = 0;
	pool.started = 0;
	pool.busy = 0;    /* the parent's thread was preparing, not ours */
	pool.filling = 0;
	pool.closing = 0;
}
