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
/* Before a window opens (ss_pool_early, at the step boundary before it) the
 * thread makes a ring for each thread that lacks one (ss_ring_prepare) and
 * pages in the pool's POOL_READY chunks, while the gate is still closed:
 * the window's opening then finds the rings made instead of paging them
 * in (about 0.4 ms a 1 MiB chunk, 3-4 of them: the first recorded step's
 * 4-6 ms of issue 36) or reading /proc/self/status to count the threads
 * (issue 46) */
#define POOL_MAX 8
/* the thread refills only once the pool is down to POOL_LOW, then up to
 * POOL_READY: a few chunks taken (the first events of a window's threads)
 * cost no paging-in during the step that took them */
#define POOL_LOW 1
/* Full chunks are unmapped RETIRE_GRACE_NS after they were retired, not at
 * once: a thread that a signal handler interrupted right after it claimed
 * a word stores it when the handler returns, maybe after the handler
 * retired the chunk. */
#define POOL_RETIRED 256
/* pieces of fresh chunks a program's thread mapped without populating
 * them all (ss_buf_map_lazy), populated by the thread next */
#define POOL_LATER 64
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#define RETIRE_GRACE_NS 200000000ull

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;
	int busy;                       /* a reserved chunk is being paged in */
	int closing;                    /* at exit: prepare no more */
	int filling;                    /* below POOL_LOW since last full */
	int early;                      /* a window opens at the next step:
	                                 * fill while the gate is closed */
	int want;                       /* chunks to keep ready: POOL_READY,
	                                 * more before a window (ss_pool_early) */
	int rings;                      /* early: the threads' rings are to
	                                 * be made (rings_early) */
	int rings_made;                 /* the coming window's rings are made:
	                                 * its opening leaves them be */
	int sleeping;                   /* in the wait only a signal ends: the
	                                 * others need not wake it (a futex
	                                 * wake costs the caller 15-50 us on
	                                 * the development VM) when it looks
	                                 * again within COPY_WAIT_MAX_US */
	int release;                    /* no window is left: give the ready
	                                 * chunks back now (ss_pool_release) */
	pid_t pid;
	uint64_t size;
	int nlater;
	char *later[POOL_LATER];
	uint64_t later_len[POOL_LATER];
	int nready, nretired;
	struct ss_chunk_header *ready[POOL_MAX];
	uint64_t ready_off[POOL_MAX];   /* file offset of each ready chunk */
	struct ss_chunk_header *retired[POOL_RETIRED];
	uint64_t retired_ns[POOL_RETIRED];
} pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.want = POOL_READY,
};

/* Reserve and page in one chunk; NULL when recording has stopped. */
static struct ss_chunk_header *prepare(uint64_t size, uint64_t *offp)
{
	uint64_t off = 0;
	pthread_mutex_lock(&ss_rt.lock);
	pthread_mutex_lock(&pool.mu);
	if (!pool.closing && !ss_rt.stopped && !ss_rt.disabled &&
	    ((ss_hot.gate & SS_GATE_EVENTS) || pool.early))
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

/* No window is left (pool.release): the ready chunks leave the pool, and
 * their pages go back to the file system (the header page stays: an
 * unassigned chunk), without ss_rt.lock, which the program's step
 * boundaries take: as ss_pool_trim does at exit for chunks that are not
 * the file's tail, but while the program runs on.  pool.mu held (dropped
 * while unmapping). */
static void release_ready(void)
{
	struct ss_chunk_header *c[POOL_MAX];
	uint64_t off[POOL_MAX];
	int n = pool.nready;
	memcpy(c, pool.ready, sizeof(c[0]) * (size_t)n);
	memcpy(off, pool.ready_off, sizeof(off[0]) * (size_t)n);
	pool.nready = 0;
	pool.release = 0;
	pthread_mutex_unlock(&pool.mu);
	int fd = ss_rt.fd;
	if (!ss_buf_fd_is(fd, ss_rt.dev, ss_rt.ino))
		fd = -1; /* not ours any more: the pages stay */
	for (int i = 0; i < n; i++) {
		uint64_t size = c[i]->size;
		munmap(c[i], size);
		if (fd >= 0 && size > 4096)
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				  (off_t)(off[i] + 4096), (off_t)(size - 4096));
	}
	pthread_mutex_lock(&pool.mu);
}

/* Early (a window opens at the next step), pool.mu held (dropped while
 * it works): a ring for each thread that lacks one, made now and paged in
 * in pieces, its first 64 KiB at once and the rest next (populate_later):
 * a short step before the window, or a busy machine, leaves the thread
 * little time, and the opening wants the rings, not whole ones. */
static void rings_early(void)
{
	pthread_mutex_unlock(&pool.mu);
	pthread_mutex_lock(&ss_rt.lock);
	if (!ss_rt.stopped && !ss_rt.disabled && !(ss_hot.gate & SS_GATE_EVENTS))
		ss_ring_prepare(1);
	pthread_mutex_lock(&pool.mu);
	pthread_mutex_unlock(&ss_rt.lock);
	if (pool.rings) { /* else the window opened meanwhile (ss_pool_fill) */
		pool.rings = 0;
		pool.rings_made = 1;
	}
}

/* The pieces ss_buf_map_lazy left, populated (pool.mu held, dropped
 * meanwhile), and touched from user mode (ss_buf_touch): neither changes
 * a byte.  The pieces are rings', which stay mapped (a ring whose thread
 * is gone goes back to the free list; ring.c's ring_new maps nothing it
 * may unmap again), so the touch never meets an unmapped page. */
static void populate_later(void)
{
	char *p[POOL_LATER];
	uint64_t len[POOL_LATER];
	int n = pool.nlater;
	memcpy(p, pool.later, sizeof(p[0]) * (size_t)n);
	memcpy(len, pool.later_len, sizeof(len[0]) * (size_t)n);
	pool.nlater = 0;
	pthread_mutex_unlock(&pool.mu);
	for (int i = 0; i < n; i++)
		if (madvise(p[i], len[i], MADV_POPULATE_WRITE) == 0)
			ss_buf_touch(p[i], len[i]); /* buffer.c ss_buf_prefault */
	pthread_mutex_lock(&pool.mu);
}

static void *pool_main(void *arg)
{
	(void)arg;
	long wait = COPY_WAIT_MIN_US;
	ss_cost_bg_started(); /* its CPU time is recording's (cost.c) */
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		if (pool.nlater) {
			populate_later();
			continue;
		}
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
		if (pool.release) {
			release_ready();
			continue;
		}
		if (ss_hot.gate & SS_GATE_EVENTS)
			look_at_maps();
		if (unmap_retired(0))
			continue;
		if (pool.early && pool.rings) {
			rings_early();
			continue;
		}
		if (pool.nready <= POOL_LOW)
			pool.filling = 1;
		else if (pool.nready >= pool.want)
			pool.filling = 0;
		if (pool.filling && ((ss_hot.gate & SS_GATE_EVENTS) || pool.early) &&
		    !ss_rt.stopped) {
			uint64_t size = pool.size;
			pthread_mutex_unlock(&pool.mu);
			uint64_t off = 0;
			struct ss_chunk_header *c = prepare(size, &off);
			pthread_mutex_lock(&pool.mu);
			if (pool.busy) {
				pool.busy = 0;
				pthread_cond_broadcast(&pool.cv);
			}
			if (c && pool.nready < pool.want && size == pool.size) {
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
		/* while a window is about to open it looks often too: the
		 * opening then need not wake it */
		if ((ss_hot.gate & SS_GATE_EVENTS) || pending || pool.nretired || pool.early) {
			wait_us(wait);
			if (!copied && wait < COPY_WAIT_MAX_US)
				wait *= 2;
		} else {
			pool.sleeping = 1;
			pthread_cond_wait(&pool.cv, &pool.mu);
			pool.sleeping = 0;
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
		if (pool.sleeping)
			pthread_cond_signal(&pool.cv);
		pthread_mutex_unlock(&pool.mu);
		return;
	}
	pool.started = 1;
	pool.sleeping = 0;
	pool.pid = getpid();
	pool.size = size;
	pthread_t th;
	if (ss_thread_start(&th, pool_main, NULL, "stepscope-buf") == 0)
		pthread_detach(th);
	pthread_mutex_unlock(&pool.mu);
}

/* The step boundary before a window opens (ss_rt.lock held): the thread
 * opens the trace file, counts the threads that have no ring, pages in a
 * chunk for each and the pool's own, and makes their rings, while the
 * program runs its last step before the window, on another core.  The
 * program's thread only sets the flags and wakes it. */
void ss_pool_early(uint64_t size)
{
	ss_pool_start(size);
	pthread_mutex_lock(&pool.mu);
	if (pool.started && pool.pid == getpid() && pool.size == size) {
		pool.early = 1;
		pool.rings = 1;
		pool.rings_made = 0;
		if (pool.nready < pool.want)
			pool.filling = 1;
		/* else it looks within COPY_WAIT_MAX_US: a window closing
		 * EARLY_STEPS before the next (window.c) would pay a wake */
		if (pool.sleeping)
			pthread_cond_signal(&pool.cv);
	}
	pthread_mutex_unlock(&pool.mu);
}

/* A piece of a fresh chunk to populate (ss_buf_map_lazy): 1 when the
 * background thread will, 0 when the caller must (no thread, a full
 * list). */
int ss_pool_populate_later(void *p, uint64_t len)
{
	int ok = 0;
	pthread_mutex_lock(&pool.mu);
	if (pool.started && pool.pid == getpid() && pool.nlater < POOL_LATER) {
		pool.later[pool.nlater] = p;
		pool.later_len[pool.nlater++] = len;
		ok = 1;
		if (pool.sleeping)
			pthread_cond_signal(&pool.cv);
	}
	pthread_mutex_unlock(&pool.mu);
	return ok;
}

/* When a window opens (ss_rt.lock held): 1 if the background thread was
 * told to make the threads' rings before it (ss_pool_early), so that the
 * opening need not count the threads again.  A thread whose ring it has
 * not made yet (it began since, or the thread is behind: a short step, a
 * busy machine) gets one at its first event, from the pool or mapped in
 * pieces (ss_buf_map_lazy). */
int ss_pool_rings_early(void)
{
	pthread_mutex_lock(&pool.mu);
	int early = pool.started && pool.pid == getpid() && (pool.early || pool.rings_made);
	pthread_mutex_unlock(&pool.mu);
	return early;
}

/* When a window opens (ss_rt.lock held, before its step begins), after the
 * threads took their rings: the thread refills the pool in the background
 * from now on (the gate is open).  Nothing is paged in here: a ring that
 * overflows before the thread has a chunk ready maps one itself
 * (ring.c), and a window that ss_pool_early prepared finds its rings
 * ready.  Same lock order as the pool thread: ss_rt.lock, then pool.mu. */
void ss_pool_fill(uint64_t size)
{
	ss_pool_start(size);
	pthread_mutex_lock(&pool.mu);
	pool.early = 0;
	pool.rings = 0;
	pool.rings_made = 0;
	pool.want = POOL_READY;
	if (pool.nready <= POOL_LOW)
		pool.filling = 1;
	if (pool.sleeping) /* else it looks within COPY_WAIT_MAX_US */
		pthread_cond_signal(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
}

/* The last window of the schedule closed (ss_rt.lock held): the thread
 * gives the pool's chunks back in the background (release_ready), so that
 * the program's exit does not punch them out of the file (about 0.45 ms a
 * paged-in 1 MiB chunk).  A later event that needs a chunk maps one. */
void ss_pool_release(void)
{
	pthread_mutex_lock(&pool.mu);
	if (pool.started && pool.pid == getpid() && pool.nready) {
		pool.release = 1;
		pthread_cond_signal(&pool.cv);
	}
	pthread_mutex_unlock(&pool.mu);
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
	pool.nlater = 0;
	pool.started = 0;
	pool.busy = 0;    /* the parent's thread was preparing, not ours */
	pool.filling = 0;
	pool.closing = 0;
	pool.early = 0;
	pool.rings = 0;
	pool.rings_made = 0;
	pool.sleeping = 0;
	pool.want = POOL_READY;
	pool.release = 0;
}
