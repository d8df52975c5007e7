/*
 * stats.c - whole-run call counts: `stats: whole_run` and
 * `log.every_n_steps`.  For every function, on every thread and for every
 * step of the run (not only the recorded windows): calls, exact; total
 * and self time, sampled; at a small fraction of the cost of recording.
 *
 * Design: each thread owns a `struct ss_stats` (stats.h), mapped on its
 * first hook call, with
 *   - one slot per function, in pages that never move (so pointers to
 *     them stay valid while the thread lives);
 *   - an open-addressing index by function address over the slots (at
 *     most half full; it doubles, up to SS_STATS_MAX_SLOTS functions, then
 *     new functions count into one "other" slot: nothing is lost
 *     silently), and in front of it a direct-mapped cache that the inlined
 *     hooks (stats.h) read;
 *   - a shadow stack of the open activations' slots (filter.exclude'd
 *     functions too: their slots are marked, the sampler skips them, so
 *     they are counted and their time stays with the caller).
 * Calls: the exit hook counts the activation when it returns (an
 * activation still open is not in the counts, as with recording).
 * Times: a sampler thread wakes every SS_STATS_SAMPLE_NS, and for each
 * thread charges the ticks since its previous look to the top frame (self)
 * and, once each, to every function on the shadow stack (total; recursion
 * counts once, the report's definition).  Time on a thread with no open
 * frame is charged to nobody.  The step function alone is also timed at
 * each call (an rdtsc at its outermost entry and exit): its total is exact.
 * The sampler takes ss_rt.lock with trylock only: a busy lock skips a look,
 * the next one charges the whole interval.  It installs no signal handler.
 *
 * The tables reach the trace as SS_META_STATS records (when stats is
 * whole_run) at each window opening, at thread exit and at process exit;
 * sample_ticks in the record says the times are sampled.
 * log.every_n_steps prints the top functions of all threads merged at
 * every N-th step boundary, names resolved here (elfsym.c), once each.
 *
 * Never, on the hook path: take a lock, make a syscall, call stdio or
 * malloc, or change errno.  All memory comes from mmap (async-signal-
 * safe), so a hook may add a function even inside a signal handler.  A
 * signal handler that interrupts a change of the index finds it busy: its
 * first calls of new functions are dropped and counted
 * (ss_meta_stats.dropped); cached functions count normally.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "filter.h"
#include "stats.h"

#ifndef SS_STATS_FIRST_SLOTS
#define SS_STATS_FIRST_SLOTS 1024u   /* index entries to begin with */
#endif
#ifndef SS_STATS_MAX_SLOTS
#define SS_STATS_MAX_SLOTS (1u << 18) /* 256k functions */
#endif
#define SS_STATS_PAGE_SLOTS 1023u
#define SS_STATS_LOG_TOP 10

__thread struct ss_stats *ss_stats_self __attribute__((tls_model("initial-exec")));

struct ss_stats_page {
	struct ss_stats_page *next;
	uint32_t n;                    /* slots in use, published with release */
	uint32_t pad;
	struct ss_stats_slot slot[SS_STATS_PAGE_SLOTS];
};

static struct ss_stats *ss_stats_list; /* every live table, ss_rt.lock */

static void *ss_stats_map(size_t bytes)
{
	int saved = errno;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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

static size_t ss_stats_bytes(void)
{
	return sizeof(struct ss_stats) +
	       (SS_STATS_MAX_FRAMES + 1) * sizeof(struct ss_stats_slot *);
}

/* A new, empty table set for `max_slots` functions (the unit test passes
 * small limits); the stack is reserved, its pages come when touched. */
static struct ss_stats *ss_stats_new(uint32_t first_slots, uint32_t max_slots)
{
	struct ss_stats *s = ss_stats_map(ss_stats_bytes());
	if (!s)
		return NULL;
	s->max_slots = max_slots;
	s->icap = first_slots;
	s->index = ss_stats_map(first_slots * sizeof(*s->index));
	if (!s->index) {
		ss_stats_unmap(s, ss_stats_bytes());
		return NULL;
	}
	s->none.flags = s->other.flags = s->lost.flags = SS_STATS_SPECIAL;
	s->lost.fn = 1;
	for (uint32_t i = 0; i < SS_STATS_CACHE; i++)
		s->cache[i] = &s->none;
	s->frames[0] = &s->none;
	return s;
}

static void ss_stats_free(struct ss_stats *s)
{
	if (!s)
		return;
	for (struct ss_stats_page *p = s->pages, *n; p; p = n) {
		n = p->next;
		ss_stats_unmap(p, sizeof(*p));
	}
	ss_stats_unmap(s->index, s->icap * sizeof(*s->index));
	ss_stats_unmap(s, ss_stats_bytes());
}

static inline uint32_t ss_stats_hash(uintptr_t fn)
{
	return (uint32_t)(((uint64_t)fn * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Where fn sits in the index, or the free entry where it would go. */
static struct ss_stats_slot **ss_stats_probe(struct ss_stats_slot **index, uint32_t cap,
					     uintptr_t fn)
{
	uint32_t mask = cap - 1, i = ss_stats_hash(fn) & mask;
	while (index[i] && index[i]->fn != fn)
		i = (i + 1) & mask;
	return &index[i];
}

/* Double the index (only this thread reads it: the old one goes now).
 * 0, or -1 when it cannot grow. */
static int ss_stats_grow(struct ss_stats *s)
{
	uint32_t cap = s->icap * 2;
	struct ss_stats_slot **index;
	if (cap > s->max_slots || !(index = ss_stats_map(cap * sizeof(*index))))
		return -1;
	for (uint32_t i = 0; i < s->icap; i++)
		if (s->index[i])
			*ss_stats_probe(index, cap, s->index[i]->fn) = s->index[i];
	ss_stats_unmap(s->index, s->icap * sizeof(*s->index));
	s->index = index;
	s->icap = cap;
	return 0;
}

/* A new slot for fn, or NULL (no memory). */
static struct ss_stats_slot *ss_stats_slot_new(struct ss_stats *s, uintptr_t fn)
{
	struct ss_stats_page *p = s->pages;
	if (!p || p->n == SS_STATS_PAGE_SLOTS) {
		if (!(p = ss_stats_map(sizeof(*p))))
			return NULL;
		p->next = s->pages;
		__atomic_store_n(&s->pages, p, __ATOMIC_RELEASE);
	}
	struct ss_stats_slot *e = &p->slot[p->n];
	e->fn = fn;
	struct ss_stats_slot *below = s->frames[s->depth]; /* frames[0]: none */
	e->caller = below && below != &s->lost ? below->fn : 0;
	if ((ss_hot.filter & SS_FILTER_SKIP) && ss_filter_excluded((void *)fn))
		e->flags = SS_STATS_EXCLUDED;
	__atomic_store_n(&p->n, p->n + 1, __ATOMIC_RELEASE);
	return e;
}

/* fn's slot, added when new (the "other" slot when the index is at its
 * limit), and put in the cache; NULL when the index is busy (a signal
 * handler interrupted a change of it) or there is no memory. */
static struct ss_stats_slot *ss_stats_lookup(struct ss_stats *s, uintptr_t fn)
{
	if (s->busy)
		return NULL;
	s->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	struct ss_stats_slot **at = ss_stats_probe(s->index, s->icap, fn), *e = *at;
	if (!e) {
		if ((s->used + 1) * 2 > s->icap && ss_stats_grow(s) == 0)
			at = ss_stats_probe(s->index, s->icap, fn);
		if ((s->used + 1) * 4 > s->icap * 3)
			e = &s->other;
		else if ((e = ss_stats_slot_new(s, fn))) {
			*at = e;
			s->used++;
		}
	}
	if (e && e != &s->other)
		s->cache[ss_stats_cache_at(fn)] = e; /* one store: a handler sees
						       * the old entry or this one */
	atomic_signal_fence(memory_order_seq_cst);
	s->busy = 0;
	return e;
}

/* ------------------------------------------------------------ the core */

static inline void ss_stats_push(struct ss_stats *s, struct ss_stats_slot *e)
{
	uint32_t d = s->depth;
	if (d >= SS_STATS_MAX_FRAMES - 1) {
		s->overflow++; /* too deep: this one and its exit are dropped */
		s->dropped++;
		return;
	}
	s->depth = d + 1;
	atomic_signal_fence(memory_order_seq_cst);
	s->frames[d + 1] = e;
}

/* The top frame returns: counted (the "lost" ones were not entered). */
static inline void ss_stats_close(struct ss_stats *s)
{
	uint32_t d = s->depth;
	struct ss_stats_slot *e = s->frames[d];
	if (e && e != &s->lost) /* NULL: see ss_stats_hook_exit */
		ss_stats_inc(&e->calls);
	atomic_signal_fence(memory_order_seq_cst);
	s->depth = d - 1;
}

/* Enter, for fn's slot e (NULL: could not be looked up). */
static void ss_stats_enter_slot(struct ss_stats *s, struct ss_stats_slot *e)
{
	if (!e) {
		s->dropped++;
		e = &s->lost; /* a frame all the same: its exit pops it */
	}
	ss_stats_push(s, e);
}

/* The thread's first call: map its table and register the thread (so
 * its table is written at exit).  NULL when that cannot be done now. */
__attribute__((noinline)) static struct ss_stats *ss_stats_attach(void)
{
	struct ss_thread *t = &ss_tls;
	if (t->in_slow)
		return NULL; /* inside the runtime's slow path (a signal) */
	t->in_slow = 1;
	int saved = errno;
	struct ss_stats *s = ss_stats_new(SS_STATS_FIRST_SLOTS, SS_STATS_MAX_SLOTS);
	pthread_mutex_lock(&ss_rt.lock);
	ss_fork_resume();
	if (s) {
		if (t->state == SS_THREAD_NEW)
			ss_thread_init(t);
		t->stats = s;
		s->sampled_at = ss_clock_now();
		s->next = ss_stats_list;
		ss_stats_list = s;
		ss_stats_self = s;
	}
	pthread_mutex_unlock(&ss_rt.lock);
	errno = saved;
	t->in_slow = 0;
	return s;
}

/* The inlined enter hook missed: first call of the thread or of the
 * function here, a filtered function, a cache conflict. */
void ss_stats_enter_miss(void *fn)
{
	struct ss_stats *s = ss_stats_self;
	if (ss_unlikely(!s) && !(s = ss_stats_attach()))
		return;
	struct ss_stats_slot *e = s->cache[ss_stats_cache_at((uintptr_t)fn)];
	if (e->fn != (uintptr_t)fn)
		e = ss_stats_lookup(s, (uintptr_t)fn);
	ss_stats_enter_slot(s, e);
}

/* The inlined exit hook found another function on top (or none). */
void ss_stats_exit_miss(void *fn)
{
	struct ss_stats *s = ss_stats_self;
	if (!s)
		return;
	if (ss_unlikely(s->overflow)) {
		s->overflow--;
		return;
	}
	uint32_t d = s->depth;
	if (!d)
		return; /* entered before the table existed */
	struct ss_stats_slot *top = s->frames[d];
	if (top == &s->other || top == &s->lost || !top) {
		ss_stats_close(s); /* cannot be checked: taken as fn's */
		return;
	}
	/* frames above fn's never returned (longjmp, an exception through
	 * code without hooks) and end now; no frame of fn: ignored */
	while (d && (!s->frames[d] || s->frames[d]->fn != (uintptr_t)fn))
		d--;
	while (d && s->depth >= d)
		ss_stats_close(s);
}

/* The hooks' slow path (recording, the step function): the same, plus
 * the exact time of the step function. */
void ss_stats_enter(void *fn)
{
	ss_stats_hook_enter(fn);
	struct ss_stats *s = ss_stats_self;
	struct ss_stats_slot *top = s && fn == ss_hot.watch ? s->frames[s->depth] : NULL;
	if (top && top->fn == (uintptr_t)fn && s->watch_depth++ == 0) {
		s->watch = top;
		s->watch_t0 = ss_clock_now();
	}
}

void ss_stats_exit(void *fn)
{
	struct ss_stats *s = ss_stats_self;
	if (fn == ss_hot.watch && s && s->watch_depth && --s->watch_depth == 0) {
		uint64_t now = ss_clock_now();
		struct ss_stats_slot *e = s->frames[s->depth];
		if (e && e->fn == (uintptr_t)fn) {
			e->exact_total += now > s->watch_t0 ? now - s->watch_t0 : 0;
			e->exact = 1;
		}
	}
	ss_stats_hook_exit(fn);
}

/* A function left out by the filters (filter.c), from the slow path: its
 * slot is marked excluded, so the sampler charges its time to the caller;
 * the exit goes through ss_stats_exit. */
void ss_stats_count(void *fn)
{
	ss_stats_hook_enter(fn);
}

/* ------------------------------------------------------------ sampling */

/* One look at s at `now` (ss_rt.lock held, any thread): the ticks since
 * the last look go to the frames open now.  The stack is read racily: a
 * frame pushed or popped meanwhile moves one sample to a neighbour. */
static void ss_stats_sample(struct ss_stats *s, uint64_t now)
{
	uint64_t dt = now > s->sampled_at ? now - s->sampled_at : 0;
	s->sampled_at = now;
	uint32_t d = __atomic_load_n(&s->depth, __ATOMIC_RELAXED);
	if (d > SS_STATS_MAX_FRAMES - 1)
		d = SS_STATS_MAX_FRAMES - 1;
	if (!d || !dt)
		return;
	uint64_t mark = ++s->marks;
	s->samples++;
	struct ss_stats_slot *top = NULL;
	for (uint32_t i = 1; i <= d; i++) {
		struct ss_stats_slot *e = s->frames[i];
		if (!e || e == &s->lost || e == &s->none || (e->flags & SS_STATS_EXCLUDED))
			continue; /* an excluded function's time is its caller's */
		top = e;
		if (e->mark == mark)
			continue; /* recursion: total once */
		e->mark = mark;
		e->total += dt;
	}
	if (top)
		top->self += dt;
}

static pthread_t ss_stats_thread;
static int ss_stats_running;

static void *ss_stats_sampler(void *arg)
{
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) { /* to the end of the process */
		next.tv_nsec += (long)SS_STATS_SAMPLE_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINVAL)
			break;
		if (pthread_mutex_trylock(&ss_rt.lock))
			continue; /* the next look charges this interval too */
		uint64_t now = ss_clock_now();
		for (struct ss_stats *s = ss_stats_list; s; s = s->next)
			ss_stats_sample(s, now);
		pthread_mutex_unlock(&ss_rt.lock);
		struct timespec cur;
		clock_gettime(CLOCK_MONOTONIC, &cur);
		if (cur.tv_sec > next.tv_sec + 1)
			next = cur; /* fell far behind (stopped): no burst */
	}
	return arg;
}

static void ss_stats_start_sampler(void)
{
	int err = ss_thread_start(&ss_stats_thread, ss_stats_sampler, NULL, "stepscope-stats");
	if (err) {
		ss_warn("stats: cannot start the sampler thread (%s); times are not measured",
			strerror(err));
		return;
	}
	pthread_detach(ss_stats_thread);
	ss_stats_running = 1;
}

/* ------------------------------------------------------------ slow side */

static int ss_stats_wanted(void)
{
	return ss_rt.cfg.stats == SS_STATS_WHOLE_RUN || ss_rt.cfg.log_every_n_steps > 0;
}

void ss_stats_init(void)
{
	if (!ss_stats_wanted())
		return;
#if defined(__x86_64__)
	/* for the hooks linked into the program (hooks-exe.c): the table of
	 * the calling thread is at %fs:stats_tp (initial-exec TLS: the same
	 * offset on every thread) */
	uintptr_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	ss_hot.stats_tp = (long)((uintptr_t)&ss_stats_self - tp);
#endif
	__atomic_fetch_or(&ss_hot.gate, SS_GATE_STATS, __ATOMIC_RELEASE);
	ss_stats_start_sampler();
}

/* The sampling period in ticks of the file clock, for the record. */
static uint64_t ss_stats_period_ticks(void)
{
	uint64_t tps = ss_rt.hdr.ticks_per_sec ? ss_rt.hdr.ticks_per_sec : 1000000000ull;
	return (uint64_t)((double)SS_STATS_SAMPLE_NS * (double)tps / 1e9 + 0.5);
}

static void ss_stats_entry(struct ss_meta_stats_entry *o, uintptr_t fn,
			   const struct ss_stats_slot *e)
{
	uint64_t total = e->exact ? e->exact_total : e->total;
	o->fn = fn;
	o->calls = e->calls;
	o->total_ticks = total;
	o->self_ticks = e->self < total ? e->self : total;
}

/* Entries with calls into out (at most max), and each one's first caller
 * into callers (NULL: not wanted), read racily when the table is another
 * thread's: a count may be one call behind. */
static size_t ss_stats_collect(struct ss_stats *s, struct ss_meta_stats_entry *out,
			       uint64_t *callers, size_t max)
{
	size_t n = 0;
	for (struct ss_stats_page *p = __atomic_load_n(&s->pages, __ATOMIC_ACQUIRE); p;
	     p = p->next) {
		uint32_t k = __atomic_load_n(&p->n, __ATOMIC_ACQUIRE);
		for (uint32_t i = 0; i < k && n < max; i++)
			if (p->slot[i].calls) {
				if (callers)
					callers[n] = p->slot[i].caller;
				ss_stats_entry(&out[n++], p->slot[i].fn, &p->slot[i]);
			}
	}
	if (s->other.calls && n < max) {
		if (callers)
			callers[n] = 0;
		ss_stats_entry(&out[n++], 0, &s->other);
	}
	return n;
}

static size_t ss_stats_room(struct ss_stats *s)
{
	size_t n = 1;
	for (struct ss_stats_page *p = __atomic_load_n(&s->pages, __ATOMIC_ACQUIRE); p;
	     p = p->next)
		n += SS_STATS_PAGE_SLOTS;
	return n;
}

/* Lock held. */
void ss_stats_write(struct ss_thread *t)
{
	struct ss_stats *s = t->stats;
	if (!s || ss_rt.cfg.stats != SS_STATS_WHOLE_RUN || ss_rt.disabled)
		return;
	size_t max = ss_stats_room(s);
	/* the entries, then each one's first caller (format.h) */
	struct ss_meta_stats_entry *e = ss_malloc(max * (sizeof(*e) + sizeof(uint64_t)));
	if (!e)
		return;
	uint64_t *callers = (uint64_t *)(e + max);
	struct ss_meta_stats h = {
		.tid = t->tid,
		.serial = t->serial,
		.n = ss_stats_collect(s, e, callers, max),
		.steps = ss_rt.have_step ? ss_rt.step + 1 : 0,
		.dropped = s->dropped,
		.sample_ticks = ss_stats_period_ticks(),
	};
	memmove(e + h.n, callers, h.n * sizeof(uint64_t));
	ss_meta_write(SS_META_STATS, &h, sizeof(h), e, h.n * (sizeof(*e) + sizeof(uint64_t)));
	ss_free(e);
}

/* Lock held. */
void ss_stats_write_all(void)
{
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		ss_stats_write(t);
}

/* Lock held, on the thread itself (thread or process exit): a last look
 * at its stack, then the frames that never returned (pthread_exit, exit()
 * inside them) end now. */
void ss_stats_close_frames(struct ss_thread *t)
{
	struct ss_stats *s = t->stats;
	if (!s || s->busy)
		return;
	uint64_t now = ss_clock_now();
	ss_stats_sample(s, now);
	if (s->watch_depth && s->watch) { /* the step function is open */
		s->watch->exact_total += now > s->watch_t0 ? now - s->watch_t0 : 0;
		s->watch->exact = 1;
		s->watch_depth = 0;
	}
	s->overflow = 0;
	while (s->depth)
		ss_stats_close(s);
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
	if (s == ss_stats_self)
		ss_stats_self = NULL;
	for (struct ss_stats **p = &ss_stats_list; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	size_t max = ss_stats_ngone + ss_stats_room(s);
	struct ss_meta_stats_entry *e;
	if (ss_rt.cfg.log_every_n_steps > 0 && (e = ss_malloc(max * sizeof(*e)))) {
		size_t n = ss_stats_ngone;
		if (n)
			memcpy(e, ss_stats_gone, n * sizeof(*e));
		n += ss_stats_collect(s, e + n, NULL, max - n);
		ss_free(ss_stats_gone);
		ss_stats_gone = e;
		ss_stats_ngone = ss_stats_merge(e, n);
	}
	ss_stats_free(s);
}

/* In the child after fork: count only what the child does (frames open at
 * the fork are not counted in it).  The table is mapped again on the next
 * hook call. */
/* Fork child handler: async-signal-safe, nothing allocated or freed but
 * mappings (the list of threads gone is the parent's malloc'ed memory:
 * left, not freed; the sampler starts again in ss_stats_after_fork_resume). */
void ss_stats_after_fork(struct ss_thread *t)
{
	ss_stats_free(t->stats);
	t->stats = NULL;
	ss_stats_self = NULL;
	ss_stats_list = NULL; /* the other threads' tables are the parent's */
	ss_stats_gone = NULL;
	ss_stats_ngone = 0;
}

/* A forked child's first slow path (lock held): only the forking thread
 * came along, so the sampler runs again from here. */
void ss_stats_after_fork_resume(void)
{
	if (ss_stats_running)
		ss_stats_start_sampler();
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
			char *name = ss_strdup(buf);
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
	struct ss_meta_stats_entry *e = ss_malloc(max * sizeof(*e));
	if (!e)
		return;
	if (n)
		memcpy(e, ss_stats_gone, n * sizeof(*e));
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		if (t->stats)
			n += ss_stats_collect(t->stats, e + n, NULL, max - n);
	size_t m = ss_stats_merge(e, n); /* threads merged: one row a function */
	qsort(e, m, sizeof(*e), ss_stats_by_total);
	char line[512], avg[32], total[32];
	int len = snprintf(line, sizeof(line),
			   "stepscope: --- step %llu: top functions since the start (all threads; times sampled every %llu ms) ---\n",
			   (unsigned long long)step,
			   (unsigned long long)(SS_STATS_SAMPLE_NS / 1000000));
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
	ss_free(e);
}
