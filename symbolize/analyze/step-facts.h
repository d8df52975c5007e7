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
	uint64_t iters;               /* set by the ranking: iterations of
	                               * parent's loop (0: not known) */
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
/* Name of a caller (NULL: "(thread start)"). */
const char *ss_steps_pname(const struct ss_steps_fn *p);
void ss_steps_release(struct ss_steps *st);

#endif /* SS_STEP_FACTS_H */
