/*
 * stats.h - the hook path of the whole-run statistics (stats: whole_run,
 * log.every_n_steps; stats.c), inlined into the hooks of hooks.c.
 *
 * Calls are counted exactly, times are sampled: on a hit in the thread's
 * direct-mapped cache (function -> its counter slot) the enter hook pushes
 * the slot on the thread's shadow stack, the exit hook checks that the top
 * is its function, counts the call in the slot and pops.  No clock read,
 * no lock, no atomic read-modify-write beyond one single-instruction add.
 * A sampler thread (stats.c) reads every shadow stack every
 * SS_STATS_SAMPLE_NS and charges the time since its last look to the
 * functions on it.  Everything else (the first call of a function, a
 * cache conflict, an exit that is not the top's) goes to stats.c.
 */
#ifndef SS_STATS_H
#define SS_STATS_H

#include "internal.h"

#define SS_STATS_CACHE 1024u            /* cache entries, a power of two */
#define SS_STATS_MAX_FRAMES (1u << 20)  /* shadow stack, reserved virtual */
#define SS_STATS_SAMPLE_NS 1000000ull   /* the sampler's period: 1 ms */

/* slot flags */
#define SS_STATS_EXCLUDED 1u  /* filter.exclude: counted, its frames are
                               * not charged (their time is the caller's) */
#define SS_STATS_SPECIAL 2u   /* the "none", "other" and "lost" slots */

/* One function of one thread.  Slots never move (stats.c allocates them
 * in pages), so the shadow stack and the cache may point at them. */
struct ss_stats_slot {
	uintptr_t fn;                  /* 0: none or other; 1: lost */
	uint32_t flags;
	uint32_t exact;                /* the step function: exact_total holds
	                                * its total, timed at each call */
	uint64_t calls;                /* returned activations (owner) */
	uint64_t exact_total;          /* ticks (owner) */
	uint64_t total, self;          /* sampled ticks (sampler) */
	uint64_t mark;                 /* last sample that added to total */
	uintptr_t caller;              /* the function below its first call
	                                * on this thread (0: the thread's
	                                * start), for `stepscope steps` */
};

struct ss_stats_page;

struct ss_stats {
	uint32_t depth;                /* open frames: frames[1..depth] */
	volatile int busy;             /* the index is being changed */
	struct ss_stats_slot *cache[SS_STATS_CACHE];
	/* the owner's slow side (stats.c) */
	struct ss_stats_slot **index;  /* open addressing, by function */
	uint32_t icap, used;
	struct ss_stats_page *pages;   /* every slot, newest page first */
	uint64_t overflow;             /* enters beyond SS_STATS_MAX_FRAMES */
	uint64_t dropped;
	uint32_t max_slots;
	uint32_t watch_depth;          /* step function activations open */
	uint64_t watch_t0;             /* ticks at its outermost entry */
	struct ss_stats_slot *watch;
	/* the sampler's (ss_rt.lock held) */
	struct ss_stats *next;         /* registry of tables */
	uint64_t sampled_at;           /* ticks of the last look */
	uint64_t marks;
	uint64_t samples;
	struct ss_stats_slot none, other, lost;
	/* frames[0] is &none, so an exit with no frame finds no match */
	struct ss_stats_slot *volatile frames[];
};

extern __thread struct ss_stats *ss_stats_self
	__attribute__((tls_model("initial-exec"))) SS_HIDDEN;

SS_HIDDEN void ss_stats_enter_miss(void *fn);
SS_HIDDEN void ss_stats_exit_miss(void *fn);

static inline uint32_t ss_stats_cache_at(uintptr_t fn)
{
	return (uint32_t)(fn >> 4) & (SS_STATS_CACHE - 1);
}

/* One add that a signal handler cannot split (it may count the same slot
 * between our load and store otherwise). */
static inline void ss_stats_inc(uint64_t *p)
{
#if defined(__x86_64__)
	__asm__ volatile("addq $1, %0" : "+m"(*p));
#else
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
#endif
}

/* The enter hook on a cache hit: 1 when counted, 0 (nothing changed) when
 * stats.c must see it (no table yet, a miss, the stack full).  The depth
 * is raised before the frame is stored: a signal handler that comes in
 * between pushes above it, and pops back.  Also inlined into the hooks
 * that stepscope-cc links into a program (runtime/exe/hooks-exe.c), with
 * the table read through ss_hot.stats_tp: this layout is SS_HOOKS_ABI. */
static inline int ss_stats_try_enter(struct ss_stats *s, void *fn)
{
	struct ss_stats_slot *e;
	uint32_t d;

	if (ss_unlikely(!s) ||
	    ss_unlikely((e = s->cache[ss_stats_cache_at((uintptr_t)fn)])->fn != (uintptr_t)fn) ||
	    ss_unlikely((d = s->depth) >= SS_STATS_MAX_FRAMES - 1))
		return 0;
	s->depth = d + 1;
	atomic_signal_fence(memory_order_seq_cst);
	s->frames[d + 1] = e;
	return 1;
}

/* The exit hook when the top frame is fn's: 1 when counted and popped,
 * 0 (nothing changed) when stats.c must see it. */
static inline int ss_stats_try_exit(struct ss_stats *s, void *fn)
{
	if (ss_unlikely(!s))
		return 0;
	uint32_t d = s->depth;
	struct ss_stats_slot *e = s->frames[d];
	/* NULL: a frame not stored yet, seen by a signal handler that left
	 * more frames than it entered (longjmp out of it) */
	if (ss_unlikely(!e) || ss_unlikely(e->fn != (uintptr_t)fn))
		return 0;
	ss_stats_inc(&e->calls);
	atomic_signal_fence(memory_order_seq_cst);
	s->depth = d - 1;
	return 1;
}

static inline void ss_stats_hook_enter(void *fn)
{
	if (ss_unlikely(!ss_stats_try_enter(ss_stats_self, fn)))
		ss_stats_enter_miss(fn);
}

static inline void ss_stats_hook_exit(void *fn)
{
	struct ss_stats *s = ss_stats_self;
	if (ss_unlikely(!ss_stats_try_exit(s, fn)) && s)
		ss_stats_exit_miss(fn);
}

#endif /* SS_STATS_H */
