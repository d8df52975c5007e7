/*
 * stats.c - whole-run call counts: `stats: whole_run` and
 * `log.every_n_steps`.  For every function, on every thread and for every
 * step of the run (not only the recorded windows): calls, total and self
 * time, at a fraction of the cost of recording.
 *
 * Design: each thread owns a `struct ss_stats`, mapped on its first hook
 * call, with
 *   - an open-addressing table keyed by function address (linear probing,
 *     at most half full; it doubles in place of a full one, up to
 *     SS_STATS_MAX_SLOTS, then functions not yet in it count into one
 *     "other" slot: nothing is lost silently);
 *   - a stack of open activations (slot, enter ticks, ticks spent in
 *     callees) for self time.  Each slot counts its activations on the
 *     stack, so total time is added only when the outermost activation of
 *     a recursive function returns (the report's definition).
 * An activation counts when it returns: calls, total and self then agree.
 * All memory comes from mmap (async-signal-safe), never malloc, so the
 * hooks may grow the table or the stack even inside a signal handler.
 * Replaced tables are kept until the thread exits, because the stepping
 * thread reads every thread's table (racily, under ss_rt.lock) for the
 * trace and the console log.
 *
 * The tables reach the trace as SS_META_STATS records (when stats is
 * whole_run) at each window opening, at thread exit and at process exit.
 * log.every_n_steps prints the top functions of all threads merged at
 * every N-th step boundary, names resolved here (elfsym.c), once each.
 *
 * Never: take a lock, make a syscall, call stdio or malloc, or change
 * errno on the common path of ss_stats_enter/exit.  A signal handler that
 * interrupts an update finds the table busy: its calls are dropped and
 * counted (ss_meta_stats.dropped).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef SS_STATS_FIRST_SLOTS
#define SS_STATS_FIRST_SLOTS 1024u   /* 40 KiB per thread to begin with */
#endif
#ifndef SS_STATS_MAX_SLOTS
#define SS_STATS_MAX_SLOTS (1u << 18) /* 256k functions, 10 MiB */
#endif
#define SS_STATS_FIRST_FRAMES 256u
#define SS_STATS_MAX_FRAMES (1u << 16)
#define SS_STATS_RETIRED 32
#define SS_STATS_LOG_TOP 10

struct ss_stats_slot {
	uintptr_t fn;                  /* 0: free (the "other" slot: 0 too) */
	uint64_t calls, total, self;   /* returned activations; ticks */
	uint64_t active;               /* activations open on the stack */
};

struct ss_stats_table {
	uint32_t cap;                  /* slots, a power of two */
	uint32_t used;
	size_t bytes;                  /* of this mapping */
	struct ss_stats_slot slot[];
};

struct ss_stats_frame {
	uintptr_t fn;
	struct ss_stats_slot *slot;
	uint64_t enter;                /* ticks */
	uint64_t child;                /* ticks in callees that returned */
};

struct ss_stats {
	struct ss_stats_table *tab;    /* published with a release store */
	struct ss_stats_frame *frames;
	uint32_t depth, frames_cap;
	uint32_t max_slots, max_frames;
	uint64_t overflow;             /* activations beyond max_frames */
	uint64_t dropped;
	volatile int busy;             /* an update is in progress */
	struct ss_stats_slot other;    /* functions that found the table full */
	int nretired;
	struct { void *p; size_t bytes; } retired[SS_STATS_RETIRED];
};

static void *ss_stats_map(size_t bytes)
{
	int saved = errno;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved;
	return p == MAP_FAILED ? NULL : p;
}

static void ss_stats_unmap(void *p, size_t bytes)
{
	int saved = errno;
	if (p)
		munmap(p, bytes);
	errno = saved;
}

static struct ss_stats_table *ss_stats_table_new(uint32_t cap)
{
	size_t bytes = sizeof(struct ss_stats_table) + cap * sizeof(struct ss_stats_slot);
	struct ss_stats_table *tab = ss_stats_map(bytes);
	if (tab) {
		tab->cap = cap;
		tab->bytes = bytes;
	}
	return tab;
}

/* A new, empty table set for `max_slots` functions and `max_frames`
 * nested activations (the unit test passes small limits). */
static struct ss_stats *ss_stats_new(uint32_t first_slots, uint32_t max_slots,
				     uint32_t max_frames)
{
	struct ss_stats *s = ss_stats_map(sizeof(*s));
	if (!s)
		return NULL;
	s->max_slots = max_slots;
	s->max_frames = max_frames;
	s->tab = ss_stats_table_new(first_slots);
	s->frames_cap = SS_STATS_FIRST_FRAMES < max_frames ? SS_STATS_FIRST_FRAMES : max_frames;
	s->frames = ss_stats_map(s->frames_cap * sizeof(struct ss_stats_frame));
	if (!s->tab || !s->frames) {
		ss_stats_unmap(s->tab, s->tab ? s->tab->bytes : 0);
		ss_stats_unmap(s->frames, s->frames_cap * sizeof(struct ss_stats_frame));
		ss_stats_unmap(s, sizeof(*s));
		return NULL;
	}
	return s;
}

static void ss_stats_free(struct ss_stats *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nretired; i++)
		ss_stats_unmap(s->retired[i].p, s->retired[i].bytes);
	ss_stats_unmap(s->tab, s->tab->bytes);
	ss_stats_unmap(s->frames, s->frames_cap * sizeof(struct ss_stats_frame));
	ss_stats_unmap(s, sizeof(*s));
}

static inline uint32_t ss_stats_hash(uintptr_t fn)
{
	return (uint32_t)(((uint64_t)fn * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Where fn sits in tab, or the free slot where it would go. */
static inline struct ss_stats_slot *ss_stats_probe(struct ss_stats_table *tab,
						   uintptr_t fn)
{
	uint32_t mask = tab->cap - 1, i = ss_stats_hash(fn) & mask;
	for (;;) {
		struct ss_stats_slot *e = &tab->slot[i];
		if (ss_likely(e->fn == fn) || !e->fn)
			return e;
		i = (i + 1) & mask;
	}
}

/* Double the table: copy every slot, point the open frames at the new
 * slots, publish it, keep the old one for readers.  0, or -1 when it
 * cannot grow. */
static int ss_stats_grow(struct ss_stats *s)
{
	struct ss_stats_table *old = s->tab, *tab;
	if (old->cap * 2 > s->max_slots || s->nretired == SS_STATS_RETIRED ||
	    !(tab = ss_stats_table_new(old->cap * 2)))
		return -1;
	for (uint32_t i = 0; i < old->cap; i++)
		if (old->slot[i].fn)
			*ss_stats_probe(tab, old->slot[i].fn) = old->slot[i];
	tab->used = old->used;
	for (uint32_t d = 0; d < s->depth; d++)
		if (s->frames[d].slot != &s->other)
			s->frames[d].slot = ss_stats_probe(tab, s->frames[d].fn);
	s->retired[s->nretired].p = old;
	s->retired[s->nretired].bytes = old->bytes;
	s->nretired++;
	__atomic_store_n(&s->tab, tab, __ATOMIC_RELEASE);
	return 0;
}

/* fn is not in the table: add it (growing the table at half full), or
 * count it as "other" when the table is at its limit. */
__attribute__((noinline)) static struct ss_stats_slot *
ss_stats_insert(struct ss_stats *s, uintptr_t fn)
{
	struct ss_stats_table *tab = s->tab;
	if ((tab->used + 1) * 2 > tab->cap) {
		if (ss_stats_grow(s) == 0)
			tab = s->tab;
		else if ((tab->used + 1) * 4 > tab->cap * 3)
			return &s->other;
	}
	struct ss_stats_slot *e = ss_stats_probe(tab, fn);
	tab->used++;
	__atomic_store_n(&e->fn, fn, __ATOMIC_RELEASE);
	return e;
}

__attribute__((noinline)) static int ss_stats_grow_frames(struct ss_stats *s)
{
	uint32_t cap = s->frames_cap * 2;
	if (cap > s->max_frames)
		return -1;
	struct ss_stats_frame *f = ss_stats_map(cap * sizeof(*f));
	if (!f)
		return -1;
	memcpy(f, s->frames, s->depth * sizeof(*f));
	ss_stats_unmap(s->frames, s->frames_cap * sizeof(*f)); /* only ours */
	s->frames = f;
	s->frames_cap = cap;
	return 0;
}

/* ------------------------------------------------------------ the core
 * Called with the table marked busy, `now` read by the caller. */

static inline void ss_stats_push(struct ss_stats *s, uintptr_t fn, uint64_t now)
{
	uint32_t d = s->depth;
	if (ss_unlikely(d >= s->frames_cap || s->overflow) &&
	    (s->overflow || ss_stats_grow_frames(s))) {
		s->overflow++; /* too deep: this one and its exit are dropped */
		s->dropped++;
		return;
	}
	struct ss_stats_slot *e = ss_stats_probe(s->tab, fn);
	if (ss_unlikely(!e->fn))
		e = ss_stats_insert(s, fn);
	e->active++;
	struct ss_stats_frame *f = &s->frames[d];
	f->fn = fn;
	f->slot = e;
	f->enter = now;
	f->child = 0;
	s->depth = d + 1;
}

/* The innermost open activation returns at `now`. */
static inline void ss_stats_close(struct ss_stats *s, uint64_t now)
{
	struct ss_stats_frame *f = &s->frames[--s->depth];
	struct ss_stats_slot *e = f->slot;
	uint64_t el = now > f->enter ? now - f->enter : 0;
	e->calls++;
	e->self += el > f->child ? el - f->child : 0;
	if (--e->active == 0)
		e->total += el;
	if (s->depth)
		s->frames[s->depth - 1].child += el;
}

/* An exit that is not the innermost frame's: frames above the matching
 * one never returned (longjmp, an exception through code without hooks)
 * and end now.  An exit with no matching frame (entered before the table
 * existed) is ignored. */
__attribute__((noinline)) static void ss_stats_pop_slow(struct ss_stats *s,
							uintptr_t fn, uint64_t now)
{
	uint32_t d = s->depth;
	while (d && s->frames[d - 1].fn != fn)
		d--;
	if (!d)
		return;
	while (s->depth >= d)
		ss_stats_close(s, now);
}

static inline void ss_stats_pop(struct ss_stats *s, uintptr_t fn, uint64_t now)
{
	if (ss_unlikely(s->overflow)) {
		s->overflow--;
		return;
	}
	uint32_t d = s->depth;
	if (ss_likely(d && s->frames[d - 1].fn == fn))
		ss_stats_close(s, now);
	else
		ss_stats_pop_slow(s, fn, now);
}

/* ------------------------------------------------------------ the hooks */

/* The thread's first call: map its table and register the thread (so
 * its table is written at exit).  NULL when that cannot be done now. */
__attribute__((noinline)) static struct ss_stats *ss_stats_attach(struct ss_thread *t)
{
	if (t->in_slow)
		return NULL; /* inside the runtime's slow path (a signal) */
	t->in_slow = 1;
	int saved = errno;
	struct ss_stats *s = ss_stats_new(SS_STATS_FIRST_SLOTS, SS_STATS_MAX_SLOTS,
					  SS_STATS_MAX_FRAMES);
	pthread_mutex_lock(&ss_rt.lock);
	if (s) {
		if (t->state == SS_THREAD_NEW)
			ss_thread_init(t);
		t->stats = s;
	}
	pthread_mutex_unlock(&ss_rt.lock);
	errno = saved;
	t->in_slow = 0;
	return s;
}

void ss_stats_enter(void *fn)
{
	struct ss_thread *t = &ss_tls;
	struct ss_stats *s = t->stats;
	if (ss_unlikely(!s) && !(s = ss_stats_attach(t)))
		return;
	if (ss_unlikely(s->busy)) {
		s->dropped++;
		return;
	}
	s->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	ss_stats_push(s, (uintptr_t)fn, ss_clock_now());
	atomic_signal_fence(memory_order_seq_cst);
	s->busy = 0;
}

void ss_stats_exit(void *fn)
{
	uint64_t now = ss_clock_now();
	struct ss_stats *s = ss_tls.stats;
	if (ss_unlikely(!s || s->busy))
		return; /* its enter was dropped as well */
	s->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	ss_stats_pop(s, (uintptr_t)fn, now);
	atomic_signal_fence(memory_order_seq_cst);
	s->busy = 0;
}

/* A function left out by the filters (filter.c): counted, never timed,
 * no frame (its time stays in its caller's self time).  No clock read. */
void ss_stats_count(void *fn)
{
	struct ss_thread *t = &ss_tls;
	struct ss_stats *s = t->stats;
	if (ss_unlikely(!s) && !(s = ss_stats_attach(t)))
		return;
	if (ss_unlikely(s->busy)) {
		s->dropped++;
		return;
	}
	s->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	struct ss_stats_slot *e = ss_stats_probe(s->tab, (uintptr_t)fn);
	if (ss_unlikely(!e->fn))
		e = ss_stats_insert(s, (uintptr_t)fn);
	e->calls++;
	atomic_signal_fence(memory_order_seq_cst);
	s->busy = 0;
}

/* ------------------------------------------------------------ slow side */

static int ss_stats_wanted(void)
{
	return ss_rt.cfg.stats == SS_STATS_WHOLE_RUN || ss_rt.cfg.log_every_n_steps > 0;
}

void ss_stats_init(void)
{
	if (ss_stats_wanted())
		__atomic_fetch_or(&ss_hot.gate, SS_GATE_STATS, __ATOMIC_RELAXED);
}

/* Entries with calls into out (n at most tab->cap + 1), read racily when
 * the table is another thread's: a count may be one call behind. */
static size_t ss_stats_collect(struct ss_stats *s, struct ss_meta_stats_entry *out,
			       size_t max)
{
	struct ss_stats_table *tab = __atomic_load_n(&s->tab, __ATOMIC_ACQUIRE);
	size_t n = 0;
	for (uint32_t i = 0; i < tab->cap && n < max; i++) {
		const struct ss_stats_slot *e = &tab->slot[i];
		uintptr_t fn = __atomic_load_n(&e->fn, __ATOMIC_ACQUIRE);
		uint64_t calls = e->calls;
		if (!fn || !calls)
			continue;
		out[n].fn = fn;
		out[n].calls = calls;
		out[n].total_ticks = e->total;
		out[n].self_ticks = e->self;
		n++;
	}
	if (s->other.calls && n < max) {
		out[n].fn = 0;
		out[n].calls = s->other.calls;
		out[n].total_ticks = s->other.total;
		out[n].self_ticks = s->other.self;
		n++;
	}
	return n;
}

static size_t ss_stats_room(struct ss_stats *s)
{
	return __atomic_load_n(&s->tab, __ATOMIC_ACQUIRE)->cap + 1;
}

/* Lock held. */
void ss_stats_write(struct ss_thread *t)
{
	struct ss_stats *s = t->stats;
	if (!s || ss_rt.cfg.stats != SS_STATS_WHOLE_RUN || ss_rt.disabled)
		return;
	size_t max = ss_stats_room(s);
	struct ss_meta_stats_entry *e = malloc(max * sizeof(*e));
	if (!e)
		return;
	struct ss_meta_stats h = {
		.tid = t->tid,
		.serial = t->serial,
		.n = ss_stats_collect(s, e, max),
		.steps = ss_rt.have_step ? ss_rt.step + 1 : 0,
		.dropped = s->dropped,
	};
	ss_meta_write(SS_META_STATS, &h, sizeof(h), e, h.n * sizeof(*e));
	free(e);
}

/* Lock held. */
void ss_stats_write_all(void)
{
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		ss_stats_write(t);
}

/* Lock held, on the thread itself (thread or process exit): frames that
 * never returned (pthread_exit, exit() inside them) end now. */
void ss_stats_close_frames(struct ss_thread *t)
{
	struct ss_stats *s = t->stats;
	if (!s || s->busy)
		return;
	uint64_t now = ss_clock_now();
	s->busy = 1;
	s->overflow = 0;
	while (s->depth)
		ss_stats_close(s, now);
	s->busy = 0;
}

/* Counts of the threads that exited, for the log (lock held). */
static struct ss_meta_stats_entry *ss_stats_gone;
static size_t ss_stats_ngone;

static int ss_stats_by_fn(const void *a, const void *b);

/* Sort by function and add up the entries of one function; new count. */
static size_t ss_stats_merge(struct ss_meta_stats_entry *e, size_t n)
{
	size_t m = 0;
	qsort(e, n, sizeof(*e), ss_stats_by_fn);
	for (size_t i = 0; i < n; i++) {
		if (m && e[m - 1].fn == e[i].fn) {
			e[m - 1].calls += e[i].calls;
			e[m - 1].total_ticks += e[i].total_ticks;
			e[m - 1].self_ticks += e[i].self_ticks;
		} else {
			e[m++] = e[i];
		}
	}
	return m;
}

/* Lock held, at thread exit (after ss_stats_write): the log keeps the
 * thread's counts. */
void ss_stats_release(struct ss_thread *t)
{
	struct ss_stats *s = t->stats;
	if (!s)
		return;
	t->stats = NULL;
	size_t max = ss_stats_ngone + ss_stats_room(s);
	struct ss_meta_stats_entry *e;
	if (ss_rt.cfg.log_every_n_steps > 0 && (e = malloc(max * sizeof(*e)))) {
		size_t n = ss_stats_ngone;
		if (n)
			memcpy(e, ss_stats_gone, n * sizeof(*e));
		n += ss_stats_collect(s, e + n, max - n);
		free(ss_stats_gone);
		ss_stats_gone = e;
		ss_stats_ngone = ss_stats_merge(e, n);
	}
	ss_stats_free(s);
}

/* In the child after fork: count only what the child does (frames open at
 * the fork are not counted in it).  The table is mapped again on the next
 * hook call. */
void ss_stats_after_fork(struct ss_thread *t)
{
	ss_stats_free(t->stats);
	t->stats = NULL;
	free(ss_stats_gone);
	ss_stats_gone = NULL;
	ss_stats_ngone = 0;
}

/* ------------------------------------------------------------ the log */

#define SS_STATS_NAMES 1024

static struct {
	uintptr_t fn;
	char *name;
} ss_stats_names[SS_STATS_NAMES];

/* Name of fn, resolved once (lock held). */
static const char *ss_stats_name(uintptr_t fn)
{
	if (!fn)
		return "[other]";
	uint32_t i = ss_stats_hash(fn) % SS_STATS_NAMES;
	for (uint32_t k = 0; k < SS_STATS_NAMES; k++, i = (i + 1) % SS_STATS_NAMES) {
		if (ss_stats_names[i].fn == fn)
			return ss_stats_names[i].name;
		if (!ss_stats_names[i].fn) {
			char buf[256];
			if (ss_elfsym_name(fn, buf, sizeof(buf)))
				snprintf(buf, sizeof(buf), "%#lx", (unsigned long)fn);
			char *name = strdup(buf);
			if (!name)
				return "?";
			ss_stats_names[i].fn = fn;
			ss_stats_names[i].name = name;
			return name;
		}
	}
	return "?"; /* cache full */
}

static int ss_stats_by_fn(const void *a, const void *b)
{
	const struct ss_meta_stats_entry *x = a, *y = b;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static int ss_stats_by_total(const void *a, const void *b)
{
	const struct ss_meta_stats_entry *x = a, *y = b;
	if (x->total_ticks != y->total_ticks)
		return x->total_ticks > y->total_ticks ? -1 : 1;
	return ss_stats_by_fn(a, b);
}

static void ss_stats_fmt_time(uint64_t ticks, char *buf, size_t len)
{
	double tps = (double)(ss_rt.hdr.ticks_per_sec ? ss_rt.hdr.ticks_per_sec
						      : 1000000000ull);
	double ns = (double)ticks * 1e9 / tps;
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.3fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
}

/* Lock held, at the beginning of step `step` (the stepping thread): every
 * log.every_n_steps steps, the top functions by total time since the
 * start, all threads merged, on stderr. */
void ss_stats_on_step(uint64_t step)
{
	int64_t every = ss_rt.cfg.log_every_n_steps;
	if (every <= 0 || !step || step % (uint64_t)every)
		return;
	size_t max = ss_stats_ngone + 1, n = ss_stats_ngone;
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		if (t->stats)
			max += ss_stats_room(t->stats);
	struct ss_meta_stats_entry *e = malloc(max * sizeof(*e));
	if (!e)
		return;
	if (n)
		memcpy(e, ss_stats_gone, n * sizeof(*e));
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		if (t->stats)
			n += ss_stats_collect(t->stats, e + n, max - n);
	size_t m = ss_stats_merge(e, n); /* threads merged: one row a function */
	qsort(e, m, sizeof(*e), ss_stats_by_total);
	char line[512], avg[32], total[32];
	int len = snprintf(line, sizeof(line),
			   "stepscope: --- step %llu: top functions since the start (all threads) ---\n",
			   (unsigned long long)step);
	ssize_t w = write(STDERR_FILENO, line, (size_t)len);
	for (size_t i = 0; i < m && i < SS_STATS_LOG_TOP; i++) {
		ss_stats_fmt_time(e[i].total_ticks / e[i].calls, avg, sizeof(avg));
		ss_stats_fmt_time(e[i].total_ticks, total, sizeof(total));
		len = snprintf(line, sizeof(line), "stepscope: %s: avg=%s, total=%s, count=%llu\n",
			       ss_stats_name((uintptr_t)e[i].fn), avg, total,
			       (unsigned long long)e[i].calls);
		if (len >= (int)sizeof(line))
			len = (int)sizeof(line) - 1;
		w = write(STDERR_FILENO, line, (size_t)len);
	}
	(void)w;
	free(e);
}
