/*
 * thread.c - per-thread bookkeeping: a serial number (tids can be reused),
 * the registry of live threads (so names and chunk ends are written at
 * process exit), and the thread-exit callback that closes a thread's chunk.
 *
 * A thread's first event registers it; a pthread key destructor closes its
 * chunk when it exits.  Events recorded later by other thread-specific-data
 * destructors reopen a chunk and register the key again, so they are kept.
 * Called with ss_rt.lock held.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "internal.h"

uint64_t ss_gettid(void)
{
	return (uint64_t)syscall(SYS_gettid);
}

void ss_thread_init(struct ss_thread *t)
{
	t->tid = ss_gettid();
	t->serial = atomic_fetch_add(&ss_rt.next_serial, 1) + 1;
	t->seq = 0;
	t->bseq = 0;
	t->state = SS_THREAD_LIVE;
	t->next = ss_rt.threads;
	ss_rt.threads = t;
	pthread_setspecific(ss_rt.key, t);
	ss_frames_alloc(t);
	if (ss_rt.cfg.record_args[0])
		ss_thread_stack_find(t); /* never in the capture path (args.c) */
	ss_meta_thread_name(t->tid);
	ss_sched_thread_add(t); /* record.sched: its switches */
}

/* The mapping of /proc/self/maps that holds the caller's stack pointer
 * bounds the stack above (stack_hi: its end), and the end of the mapping
 * below it bounds it below (stack_lo: the main thread's stack grows down
 * to there; a thread's guard page ends where its stack starts).  Read a
 * chunk at a time through a small state machine, no line buffer: the
 * start address, the end address, then the rest of the line is skipped.
 * pthread_getattr_np, which this replaces on record.args' path, takes
 * the thread's lock and calls malloc (and reads the same file with stdio
 * for the main thread): a signal handler that interrupted it there waited
 * forever.  A handler that interrupts this finds it busy and goes without
 * (returns 0). */
int ss_thread_stack_find(struct ss_thread *t)
{
	if (t->stack_hi)
		return 1;
	if (t->stack_busy)
		return 0;
	t->stack_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	int saved = errno;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t v[2] = { 0, 0 }, below = 0, lo = 0, hi = 0;
	int field = 0, fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	char buf[512];
	ssize_t n;
	while (fd >= 0 && !hi && ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))) {
		for (ssize_t i = 0; i < n && !hi; i++) {
			char c = buf[i];
			if (c == '\n') {
				if (field >= 1 && v[0] <= sp && sp < v[1]) {
					lo = below;
					hi = v[1];
				}
				below = v[1];
				v[0] = v[1] = 0;
				field = 0;
			} else if (field < 2) {
				int d = c >= '0' && c <= '9' ? c - '0'
					: c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
				if (d >= 0)
					v[field] = v[field] << 4 | (uintptr_t)d;
				else
					field++; /* '-' after the start, ' ' after the end */
			}
		}
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
	if (hi) {
		t->stack_lo = lo;
		atomic_signal_fence(memory_order_seq_cst);
		t->stack_hi = hi;
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->stack_busy = 0;
	return hi != 0;
}

static void unregister(struct ss_thread *t)
{
	for (struct ss_thread **p = &ss_rt.threads; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
}

/* pthread key destructor: the thread is exiting. */
SS_HIDDEN void ss_thread_exit(void *arg)
{
	struct ss_thread *t = arg;
	if (t != &ss_tls)
		return;
	/* frames still open never return (pthread_exit) */
	ss_frames_unwind_all(t, SS_UNWIND_THREAD_EXIT);
	ss_alloc_thread_gone(); /* its frees from here on are teardown */
	t->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	if (ss_rt.fd >= 0 && ss_rt.pid == getpid())
		ss_meta_thread_name(t->tid); /* the name it had at the end */
	ss_sched_thread_gone(t);
	ss_ring_close(t); /* the background thread copies the rest */
	ss_frames_release(t);
	ss_stats_close_frames(t); /* stats: whole_run: the thread's last table */
	ss_stats_write(t);
	ss_stats_release(t);
	unregister(t);
	t->state = SS_THREAD_NEW; /* a later event re-registers it */
	pthread_mutex_unlock(&ss_rt.lock);
	t->in_slow = 0;
}

/* The runtime's own threads started in this process (they never record):
 * ss_ring_missing leaves them out of the threads that want a ring. */
static int ss_thread_own_n;

int ss_thread_own_count(void)
{
	return __atomic_load_n(&ss_thread_own_n, __ATOMIC_RELAXED);
}

/* A runtime thread's start: marked own for its whole life, so nothing it
 * does is the program's (the malloc that libraries such as NVML make on
 * it: alloc.c never records them).  It names itself (a prctl): named by
 * the thread that starts it, the name would be an open and a write of
 * /proc/self/task/TID/comm on the program's thread, at the step boundary
 * before the first window (issue 46). */
struct ss_thread_boot {
	void *(*fn)(void *);
	void *arg;
	const char *name;
};

static void *ss_thread_boot(void *p)
{
	struct ss_thread_boot b = *(struct ss_thread_boot *)p;
	ss_free(p);
	ss_tls.own = 1;
	if (b.name)
		pthread_setname_np(pthread_self(), b.name);
	return b.fn(b.arg);
}

int ss_thread_start(pthread_t *th, void *(*fn)(void *), void *arg, const char *name)
{
	struct ss_thread *t = &ss_tls;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* no handler runs in here */
	uint64_t *end = t->end;
	t->own++;
	t->end = t->pos; /* every event: ss_buf_refill, which drops it */
	struct ss_thread_boot *b = ss_malloc(sizeof(*b));
	int err = ENOMEM;
	if (b) {
		b->fn = fn;
		b->arg = arg;
		b->name = name;
		err = pthread_create(th, NULL, ss_thread_boot, b);
		if (err)
			ss_free(b);
	}
	t->end = end;
	t->own--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		__atomic_fetch_add(&ss_thread_own_n, 1, __ATOMIC_RELAXED);
	return err;
}

/* After fork, in the child: only the calling thread survives, and every
 * chunk mapped by the parent must be left alone. */
SS_HIDDEN void ss_thread_after_fork(void)
{
	struct ss_thread *self = &ss_tls;
	/* drop the view of the parent's chunk without closing it: the
	 * parent still writes there */
	self->chunk = NULL; /* the parent's ring: unmapped by ss_ring_after_fork */
	self->ring = NULL;
	self->blk = NULL;
	self->drop = 0;
	if (self->ovf) /* the parent's chunk, which the parent goes on using */
		munmap(self->ovf, self->ovf->size);
	self->ovf = NULL;
	self->pos = self->end = NULL;
	self->state = SS_THREAD_NEW;
	self->seq = 0;
	self->bseq = 0;
	ss_rt.threads = NULL;
	ss_thread_own_n = 0; /* the runtime's threads start again in the child */
	ss_stats_after_fork(self); /* the child counts from zero */
	ss_sched_after_fork();
}
