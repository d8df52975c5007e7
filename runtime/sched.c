/*
 * sched.c - when each recorded thread was on a CPU and when it waited
 * (record.sched: true, docs/trace-format.md "Context switches").
 *
 * Design: a thread that registers (thread.c, its first recorded event; a
 * slow path, never a hook's common case) opens a perf event on itself:
 * the software DUMMY counter with context_switch records, times from
 * CLOCK_MONOTONIC, into a small ring mapped from the kernel.  The kernel
 * appends a PERF_RECORD_SWITCH each time the thread is switched out or in;
 * the background thread "stepscope-buf" (pool.c) reads the rings, pairs
 * each switch out with the next switch in and writes the intervals as
 * SS_META_SWITCH records.  Only switches while a window is open are kept:
 * when one opens the rings are emptied, when it closes they are read up to
 * that time (and an interval still open ends there).  Records the kernel
 * dropped (PERF_RECORD_LOST: a ring that filled before it was read) are
 * counted in the records and said at exit.
 *
 * The event's descriptor is closed as soon as its ring is mapped (the
 * mapping keeps the event alive): a program that closes every descriptor
 * it did not open (daemons, closefrom) can neither break it nor have one
 * of its own files closed by us later.  So the events are never disabled,
 * only ignored between windows: the kernel's cost is one small record per
 * switch.
 *
 * Never on the hot path: the hooks do not know this file exists.  When
 * the kernel refuses the event (perf_event_paranoid, seccomp, an old
 * kernel) one line says why and the rest of the runtime records as usual.
 *
 * Locks: the table below is changed with ss_rt.lock held and then
 * sc.mu; the background thread looks at the rings under sc.mu alone and
 * takes ss_rt.lock (then sc.mu) only when one of them holds records.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#endif

#define SW_THREADS_MAX 512        /* threads watched at once */
#define SW_PAGES 8        /* data pages per ring: ~1300 records */
#define SW_BATCH 256      /* intervals per SS_META_SWITCH record */

struct sched_ent {
	uint64_t tid, serial;
	struct perf_event_mmap_page *mp;
	size_t mlen;
	uint64_t out_ns;     /* switched out at, while `out` */
	uint32_t out_flags;
	int out;             /* a switch out waits for its switch in */
	int fresh;           /* nothing read since enabled: a first switch
	                      * in means it was out when recording began */
	uint64_t lost;       /* records dropped, not yet written */
};

static struct {
	pthread_mutex_t mu;
	struct sched_ent ents[SW_THREADS_MAX];
	int n;
	int on;              /* a window is open: switches are kept */
	int refused;         /* the kernel said no: stop trying */
	int warned_full;
	uint64_t on_ns;      /* CLOCK_MONOTONIC when it opened */
	uint64_t lost;       /* all threads, for the line at exit */
	pid_t pid;
} sc = { .mu = PTHREAD_MUTEX_INITIALIZER };

static struct ss_switch batch[SW_BATCH];
static size_t nbatch;

static long page_size(void)
{
	static long ps;
	if (!ps)
		ps = sysconf(_SC_PAGESIZE);
	return ps;
}

static void refused(int err)
{
	char par[16] = "?";
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, par, sizeof(par) - 1);
		close(fd);
		par[n > 0 ? n : 0] = 0;
		char *nl = strchr(par, '\n');
		if (nl)
			*nl = 0;
	}
	const char *why;
	switch (err) {
	case EACCES:
	case EPERM:
		why = "not permitted (kernel.perf_event_paranoid is %s: 2 or less "
		      "lets a process watch its own threads; or seccomp or the "
		      "container forbids it)";
		break;
	case ENOSYS:
	case ENOENT:
		why = "not available (a kernel without perf events, or seccomp "
		      "blocks the call; perf_event_paranoid %s)";
		break;
	case EINVAL:
		why = "not supported (context-switch records need Linux 4.3 or "
		      "later; perf_event_paranoid %s)";
		break;
	default:
		why = "failed (perf_event_paranoid %s)";
		break;
	}
	char msg[320];
	snprintf(msg, sizeof(msg), why, par);
	ss_warn("record.sched: perf_event_open %s: %s; off-CPU time is not "
		"recorded (leave record.sched off to not ask)", msg, strerror(err));
}

/* Write the batch as one record (ss_rt.lock held). */
static void flush(struct sched_ent *e)
{
	if ((!nbatch && !e->lost) || ss_rt.fd < 0 || ss_rt.pid != getpid()) {
		nbatch = 0;
		return;
	}
	struct ss_meta_switch h = { e->tid, e->serial, nbatch, e->lost };
	ss_meta_write(SS_META_SWITCH, &h, sizeof(h), batch, nbatch * sizeof(batch[0]));
	e->lost = 0;
	nbatch = 0;
}

static void emit(struct sched_ent *e, uint64_t out, uint64_t in, uint32_t flags)
{
	if (in < out)
		return;
	batch[nbatch++] = (struct ss_switch){ out, in, flags, 0 };
	if (nbatch == SW_BATCH)
		flush(e);
}

/* Bytes the kernel wrote that were not read yet. */
static uint64_t pending(const struct sched_ent *e)
{
	return e->mp ? __atomic_load_n(&e->mp->data_head, __ATOMIC_ACQUIRE) -
			       e->mp->data_tail : 0;
}

/* Read the thread's ring to its end (ss_rt.lock and sc.mu held), keeping
 * the switches from sc.on_ns up to `until`. */
static void drain_one(struct sched_ent *e, uint64_t until)
{
	struct perf_event_mmap_page *mp = e->mp;
	if (!mp)
		return;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	uint64_t size = mp->data_size ? mp->data_size : (uint64_t)SW_PAGES * page_size();
	const char *data = (const char *)mp + (mp->data_offset ? mp->data_offset
							      : (uint64_t)page_size());
	nbatch = 0;
	while (tail < head) {
		union {
			struct perf_event_header h;
			uint64_t w[8];
		} rec;
		const struct perf_event_header *hp =
			(const void *)(data + (tail % size));
		uint16_t len = hp->size;
		if (len < sizeof(*hp) || len > head - tail)
			break;
		size_t take = len < sizeof(rec) ? len : sizeof(rec);
		for (size_t i = 0; i < take; i++) /* it may wrap */
			((char *)&rec)[i] = data[(tail + i) % size];
		tail += len;
		if (rec.h.type == PERF_RECORD_SWITCH && take >= 24) {
			uint64_t t = rec.w[2]; /* sample_id: pid/tid, time */
			if (t < sc.on_ns || t > until)
				continue;
			if (rec.h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
				e->out = 1;
				e->out_ns = t;
				e->out_flags = rec.h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
						       ? SS_SWITCH_PREEMPTED : 0;
			} else if (e->out) {
				emit(e, e->out_ns, t, e->out_flags);
				e->out = 0;
			} else if (e->fresh && sc.on_ns && t > sc.on_ns) {
				emit(e, sc.on_ns, t, SS_SWITCH_FROM_START);
			}
			e->fresh = 0;
		} else if (rec.h.type == PERF_RECORD_LOST && take >= 24) {
			/* the first thing read after a window opened: records
			 * dropped while none was open, which no one wanted */
			if (!e->fresh) {
				e->lost += rec.w[2];
				sc.lost += rec.w[2];
			}
			e->out = 0; /* its switch in may be among them */
			e->fresh = 0;
		}
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	flush(e);
}

/* The end of recording for e (ss_rt.lock and sc.mu held): an interval
 * still open ends now. */
static void close_interval(struct sched_ent *e, uint64_t now)
{
	drain_one(e, now);
	if (e->out) {
		emit(e, e->out_ns, now, e->out_flags | SS_SWITCH_TO_END);
		flush(e);
	}
	e->out = 0;
}

static void release(struct sched_ent *e)
{
	if (e->mp)
		munmap(e->mp, e->mlen);
	e->mp = NULL;
}

/* Empty the ring: what it holds came before the window. */
static void skip_all(struct sched_ent *e)
{
	uint64_t head = __atomic_load_n(&e->mp->data_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&e->mp->data_tail, head, __ATOMIC_RELEASE);
	e->fresh = 1;
	e->out = 0;
}

/* A thread with no ring (ss_rt.lock held): said in the trace, so a reader
 * does not take its time for time on the CPU (90 of 600 threads had their
 * sleeps counted so). */
static void unwatched(const struct ss_thread *t)
{
	if (ss_rt.fd < 0 || ss_rt.pid != getpid())
		return;
	struct ss_meta_switch h = { t->tid, t->serial, 0, 0 };
	ss_meta_write(SS_META_SWITCH_NONE, &h, sizeof(h), NULL, 0);
}

/* ss_thread_init, on the thread itself, ss_rt.lock held. */
void ss_sched_thread_add(struct ss_thread *t)
{
	if (!ss_rt.cfg.record_sched || sc.refused)
		return;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		sc.refused = 1;
		refused(errno);
		return;
	}
	size_t mlen = (size_t)(SW_PAGES + 1) * (size_t)page_size();
	void *mp = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = errno;
	close(fd); /* the mapping keeps the event */
	if (mp == MAP_FAILED) {
		if (!sc.warned_full) {
			sc.warned_full = 1;
			ss_warn("record.sched: no ring for thread %llu's context switches "
				"(%s; kernel.perf_event_mlock_kb limits them): its off-CPU "
				"time is not recorded", (unsigned long long)t->tid,
				strerror(err));
		}
		unwatched(t);
		return;
	}
	pthread_mutex_lock(&sc.mu);
	if (sc.pid != getpid()) {
		sc.pid = getpid();
		sc.n = 0;
	}
	if (sc.n == SW_THREADS_MAX) {
		pthread_mutex_unlock(&sc.mu);
		munmap(mp, mlen);
		if (!sc.warned_full) {
			sc.warned_full = 1;
			ss_warn("record.sched: more than %d threads; the off-CPU time of "
				"the later ones is not recorded", SW_THREADS_MAX);
		}
		unwatched(t);
		return;
	}
	struct sched_ent *e = &sc.ents[sc.n++];
	memset(e, 0, sizeof(*e));
	e->tid = t->tid;
	e->serial = t->serial;
	e->mp = mp;
	e->mlen = mlen;
	/* it runs now: its first record is a switch out.  A window may be
	 * open without a step boundary having said so (schedule: all, a
	 * forked child) */
	if (!sc.on && (ss_hot.gate & SS_GATE_EVENTS)) {
		sc.on = 1;
		sc.on_ns = ss_clock_mono_ns();
	}
	pthread_mutex_unlock(&sc.mu);
}

/* ss_thread_exit (ss_rt.lock held): its last switches, then its event goes. */
void ss_sched_thread_gone(struct ss_thread *t)
{
	pthread_mutex_lock(&sc.mu);
	for (int i = 0; sc.pid == getpid() && i < sc.n; i++) {
		struct sched_ent *e = &sc.ents[i];
		if (e->serial != t->serial)
			continue;
		if (sc.on)
			close_interval(e, ss_clock_mono_ns());
		release(e);
		sc.ents[i] = sc.ents[--sc.n];
		break;
	}
	pthread_mutex_unlock(&sc.mu);
}

/* Each step boundary (window.c, ss_rt.lock held): `open` says whether
 * events are recorded in the step that begins. */
void ss_sched_on_window(int open)
{
	pthread_mutex_lock(&sc.mu);
	if (sc.pid != getpid() || !!open == sc.on) {
		pthread_mutex_unlock(&sc.mu);
		return;
	}
	uint64_t now = ss_clock_mono_ns();
	if (open)
		sc.on_ns = now;
	for (int i = 0; i < sc.n; i++) {
		if (open)
			skip_all(&sc.ents[i]);
		else
			close_interval(&sc.ents[i], now);
	}
	sc.on = !!open;
	pthread_mutex_unlock(&sc.mu);
}

/* The background thread (pool.c), no lock held: write what the rings
 * hold, every SW_EVERY_NS or as soon as one is a quarter full (it comes
 * every 0.1 to 1 ms while recording; ss_rt.lock is the program's too). */
#define SW_EVERY_NS 10000000ull
void ss_sched_drain(void)
{
	static uint64_t last;
	int any = 0;
	if (!ss_rt.cfg.record_sched)
		return;
	uint64_t now = ss_clock_mono_ns(), quarter = (uint64_t)SW_PAGES * page_size() / 4;
	pthread_mutex_lock(&sc.mu);
	for (int i = 0; sc.on && sc.pid == getpid() && i < sc.n && any < 2; i++) {
		uint64_t p = pending(&sc.ents[i]);
		any = p >= quarter ? 2 : p ? 1 : any;
	}
	pthread_mutex_unlock(&sc.mu);
	if (!any || (any == 1 && now - last < SW_EVERY_NS))
		return;
	last = now;
	pthread_mutex_lock(&ss_rt.lock);
	pthread_mutex_lock(&sc.mu);
	for (int i = 0; sc.on && sc.pid == getpid() && i < sc.n; i++)
		if (pending(&sc.ents[i]))
			drain_one(&sc.ents[i], UINT64_MAX);
	pthread_mutex_unlock(&sc.mu);
	pthread_mutex_unlock(&ss_rt.lock);
}

/* At exit (ss_rt.lock held): the rest, and how many records were lost;
 * last SS_META_SWITCH_END, which says the rings were read to the end (a
 * process without it died otherwise), even when the kernel refused them
 * all. */
void ss_sched_stop(void)
{
	pthread_mutex_lock(&sc.mu);
	if (sc.pid == getpid()) {
		uint64_t now = ss_clock_mono_ns();
		for (int i = 0; i < sc.n; i++) {
			if (sc.on)
				close_interval(&sc.ents[i], now);
			release(&sc.ents[i]);
		}
		sc.n = 0;
		sc.on = 0;
		if (sc.lost)
			ss_warn("record.sched: %llu context-switch records lost (a "
				"thread's ring filled before it was read): the off-CPU "
				"times around them are missing",
				(unsigned long long)sc.lost);
	}
	uint64_t lost = sc.pid == getpid() ? sc.lost : 0;
	pthread_mutex_unlock(&sc.mu);
	if (ss_rt.cfg.record_sched && ss_rt.fd >= 0 && ss_rt.pid == getpid()) {
		struct ss_meta_switch h = { 0, 0, 0, lost };
		ss_meta_write(SS_META_SWITCH_END, &h, sizeof(h), NULL, 0);
	}
}

/* _exit or _Exit (exit-wrap.c): the process ends without its destructor,
 * and what the kernel wrote into the rings since the background thread
 * last read them would end with it (three 3 ms sleeps before _exit(0) were
 * reported on the CPU, no loss said).  Read now, as at exit: the intervals
 * still open end here and a loss is said.  Waits for ss_rt.lock 50 ms at
 * most: a signal handler that calls _exit may have interrupted its holder
 * on this very thread.  Once it is held, sc.mu is only ever held briefly
 * by the background thread.  Nothing in a vfork child (another pid, the
 * parent's memory). */
void ss_sched_exit_now(void)
{
	if (!ss_rt.cfg.record_sched || ss_rt.pid != getpid())
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	if (pthread_mutex_timedlock(&ss_rt.lock, &ts))
		return;
	ss_sched_stop();
	pthread_mutex_unlock(&ss_rt.lock);
}

/* In a forked child: the events watch the parent's threads, and their
 * rings were not copied (the kernel maps them VM_DONTCOPY). */
void ss_sched_after_fork(void)
{
	pthread_mutex_init(&sc.mu, NULL);
	sc.n = 0;
	sc.on = 0;
	sc.lost = 0;
	sc.pid = getpid();
}
