/*
 * step-facts.h - the caller/callee facts `stepscope steps` ranks step functions
 * by and `stepscope record` checks its step.function with: for every
 * function of a run, its calls, their durations, whether it was nested in
 * itself, on how many threads it ran and which functions called it.
 *
 * Built from the slices of a run as they close (post-order, per thread):
 * the parent of a slice is the next slice to close one level below it, so
 * only the closed slices still waiting for their parent are kept, per
 * depth.  Memory grows with distinct functions and stack depth times
 * fan-out, never with the length of the run.
 */
#ifndef SS_STEP_FACTS_H
#define SS_STEP_FACTS_H

#include <stddef.h>
#include <stdint.h>

#define SS_STEPS_CALLERS 4       /* distinct callers kept per function */
#define SS_STEPS_BUCKETS 256
#define SS_STEPS_SIBS 32         /* siblings counted in a function's gaps */
#define SS_STEPS_DISTINCT 64     /* a call of a caller with more distinct
                                  * callees than this is not judged */

struct ss_steps_fn;

/* How often sibling g (called by the same caller) was called in the gaps
 * between two consecutive calls of a function in one call of their
 * caller: in how many gaps once, in how many more than once (none: the
 * function's gaps less both). */
struct ss_steps_gap {
	struct ss_steps_fn *g;
	uint64_t one, more;
};

struct ss_steps_fn {
	char *name;
	uint64_t tid;
	int multi_thread;
	uint64_t calls, total, min, max;
	/* durations on a log scale (4 buckets per power of two), for a
	 * median that one preempted call does not move */
	uint32_t hist[SS_STEPS_BUCKETS];
	uint64_t hsum[SS_STEPS_BUCKETS]; /* their durations, for the median */
	uint64_t weight;              /* for ranking: median x calls */
	double sumsq;                 /* of durations in ms, for the spread */
	uint64_t last_begin;          /* of the last closed call, on tid */
	uint64_t nested;              /* calls nested in a call of itself */
	/* callers: the first few distinct ones (NULL: the thread start) */
	struct ss_steps_fn *caller[SS_STEPS_CALLERS];
	uint64_t caller_calls[SS_STEPS_CALLERS];
	int ncallers;
	uint64_t more_calls;          /* from callers beyond those */
	struct ss_steps_fn *parent;   /* the first caller */
	uint64_t parent_calls;        /* calls from it */
	uint64_t acts;                /* calls of parent that called it */
	uint64_t acts_total;          /* their duration */
	uint64_t mark;                /* activation serial of the last one */
	/* whole-run counts (stats: whole_run), when the run has them: exact
	 * even where the trace stopped at its cap */
	uint64_t run_calls, run_total;
	int untraced;                 /* in the counts, never closed in the
	                               * trace: no callers known */
	/* the caller's iterations, as the trace shows them: between two
	 * consecutive calls of this function in one call of its first
	 * caller, which siblings were called and how often */
	uint64_t gaps;                /* such gaps */
	struct ss_steps_gap *gap;     /* siblings seen in them, ngap */
	int ngap;
	uint64_t seen;                /* scratch: activation last counted */
	unsigned slot;                /* scratch: its index there */
	/* set by the ranking from those: the loop f is judged against */
	const struct ss_steps_fn *loop; /* its iterations: one call of loop
	                               * each (NULL: none) */
	int inner;                    /* f loops inside loop's iterations
	                               * (else: called once in most of them,
	                               * more than once in some) */
	uint64_t iters;               /* iterations of that loop */
	uint64_t extra;               /* calls beyond one per iteration */
};

struct ss_steps_level {
	struct ss_steps_fn **v;
	size_t n, cap;
};

struct ss_steps_thread {
	uint64_t tid;
	struct ss_steps_level *lv;  /* closed slices waiting for their parent */
	size_t nlv;
};

struct ss_steps {
	struct ss_steps_fn **tab;   /* open addressing by name */
	size_t cap, n;
	struct ss_steps_thread *th;
	size_t nth;
	uint64_t serial;
	int oom;
	uint64_t slices;
	int has_stats;              /* run_calls/run_total are filled in */
	int partial;                /* the trace saw fewer calls than the run */
	/* the steps the trace holds, when it has any */
	int has_steps;
	uint64_t step_lo, step_hi;
};

/* Walk run directory dir (every process) into st (zeroed by the caller).
 * 0; 2 (bad input) or 1 (out of memory) with a message in err. */
int ss_steps_walk(struct ss_steps *st, const char *dir, const char *backend, int quiet,
		  char *err, size_t errlen);
/* The function called name, or NULL. */
struct ss_steps_fn *ss_steps_find(const struct ss_steps *st, const char *name);
/* Why f cannot begin steps (nested in itself, on several threads, called
 * from more than one function), in buf; NULL when none of those holds. */
const char *ss_steps_reject(const struct ss_steps_fn *f, char *buf, size_t len);
/* The median duration of one call of f, in ns: the mean of the calls in
 * the bucket that holds the median (within 10% of it; two functions of
 * different times do not tie). */
uint64_t ss_steps_median(const struct ss_steps_fn *f);
/* Calls of f in the whole run: the exact whole-run count when the run
 * has one, else the trace's. */
uint64_t ss_steps_calls(const struct ss_steps_fn *f);
/* Calls of sibling g in f's gaps (NULL: g was never called in one). */
const struct ss_steps_gap *ss_steps_gap_of(const struct ss_steps_fn *f,
					   const struct ss_steps_fn *g);
/* Name of a caller (NULL: "(thread start)"). */
const char *ss_steps_pname(const struct ss_steps_fn *p);
void ss_steps_release(struct ss_steps *st);

#endif /* SS_STEP_FACTS_H */
