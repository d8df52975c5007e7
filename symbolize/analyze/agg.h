/*
 * agg.h - aggregate the slices of a run into per-function statistics, a
 * calling-context tree, step times and counter series: what `report`,
 * `flame`, `html` and `symbolize --format folded` print.
 *
 * An aggregator is an exporter (export.h): feed it through ss_agg_walk (or
 * any driver), then ask for the results.  It keeps one node per distinct
 * call path, one record per distinct (thread, function), one per step and
 * every counter sample: memory grows with those, never with the number of
 * calls.
 *
 * Definitions (the same as torch.profiler's key_averages):
 *   self   time in the function minus time in the functions it called
 *          and in the ranges it pushed (see below)
 *   total  time in the function, callees included; a recursive function is
 *          counted once (an activation inside another activation of the same
 *          function adds nothing to total), so total <= wall time
 *   calls  every activation that began in a recorded window, recursive ones
 *          included (a frame open when a window opened is a clipped
 *          fragment, not a call: see struct ss_agg_row)
 *   avg    total / calls; min and max are over single activations that
 *          no window edge cut
 * Function rows and user-range rows are kept apart: ranges have their own
 * tree.  Self time is shared out between the two kinds: a slice's self is
 * its time in no call and no range nested in it, so the self times of all
 * rows add up to ss_agg_self_sum (a range pushed in a call takes its time
 * out of the call's self).
 */
#ifndef SS_AGG_H
#define SS_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"

/* How much earlier than the call's last instruction an unordered EXIT
 * can be read: the processor's reorder window (a few hundred
 * instructions in flight; seen: 27 ns on a 37 ns dot product). */
#define SS_AGG_EARLY_NS 256

enum ss_agg_kind {
	SS_AGG_FUNCTION = 0,
	SS_AGG_RANGE = 1,
};

/* One row of the table: a function (or range) on one thread, or merged
 * over every thread (pid = tid = 0, thread = NULL). */
struct ss_agg_row {
	const char *name;
	enum ss_agg_kind kind;
	uint64_t pid, tid;
	const char *thread;       /* thread name, NULL when merged */
	uint64_t calls;           /* calls that began in a recorded window */
	uint64_t self_ns, total_ns, min_ns, max_ns;
	/* Fragments of calls cut by a window's start or end (main and the
	 * training loop, open when a window opened): their time in the window
	 * is in self and total; a fragment cut at the start is no new call.
	 * min/max are over the `complete` calls, with neither end cut, and
	 * complete_ns is their time. */
	uint64_t clipped, complete, complete_ns;
	/* Of the complete calls, those whose EXIT was read in order (all of
	 * them in a trace without SS_META_EXIT_ORDER): min_ns is the fastest
	 * of these when there is one, since an unordered EXIT can be read
	 * before the call's last instructions completed (issue 46); but
	 * when an unordered call was faster by more than such a read can
	 * come early (SS_AGG_EARLY_NS), that call was truly shorter and
	 * min_ns is its time: the fastest ordered call is only one in 64 */
	uint64_t ordered;
	/* record.sched: time its thread was switched out by the kernel
	 * inside its calls (off_ns, counted like total) and while it was the
	 * innermost call (off_self_ns, a part of self); off_most: calls
	 * switched out for longer than they ran.  0 without switch records
	 * (ss_agg_have_offcpu). */
	uint64_t off_ns, off_self_ns, off_most;
	/* record.sched: the off-CPU time inside the call that gave min_ns and
	 * the one that gave max_ns (nonzero: that Min or Max includes time
	 * the thread was switched out, not its work alone) */
	uint64_t min_off_ns, max_off_ns;
	/* the fastest complete call of any kind, and its off-CPU time */
	uint64_t min_any_ns, min_any_off_ns;
	/* Whole-run statistics only (stats-read.c): the function below the
	 * first call of this one on its thread; "" the thread's start, NULL
	 * not known (a runtime that did not write it, a merged row) */
	const char *caller;
};

/* Avg of a row: total / calls; for a row with clipped fragments, the mean
 * of its complete calls, as min and max (a fragment's time is no call's:
 * total / calls would exceed max).  0 when there is none to average. */
uint64_t ss_agg_row_avg(const struct ss_agg_row *r);

/* A node of a calling-context tree: one call path.  With record.stack a
 * path also holds frames of code without hooks, taken from the slices'
 * native stacks (native set; self 0, calls and total those of the slices
 * under it; docs/stacks.md). */
/* What a node stands for (its `native` field).  The function trees hold
 * calls and native frames; the flame trees (ss_agg_flame_tree) also user
 * ranges, in the call path where they were pushed, "ProfilerStep" above
 * the calls inside steps, and one frame per thread name above each
 * thread's calls. */
enum ss_agg_frame {
	SS_AGG_FRAME_CALL = 0,
	SS_AGG_FRAME_NATIVE = 1,  /* code without hooks, from a native stack */
	SS_AGG_FRAME_RANGE = 2,
	SS_AGG_FRAME_THREAD = 3,
	/* "ProfilerStep": the recorded steps of a thread, one frame for all
	 * of them, above the outermost calls and ranges that lie inside a
	 * step (ss_slice.in_step); self 0 */
	SS_AGG_FRAME_STEP = 4,
};

struct ss_agg_node {
	uint32_t name;            /* ss_agg_name() */
	int native;               /* enum ss_agg_frame: nonzero, not a call */
	uint64_t calls, self_ns, total_ns;
	uint64_t off_ns, off_self_ns;  /* record.sched: as in struct ss_agg_row */
	struct ss_agg_node *child, *next;
};

/* A ProfilerStep slice. */
struct ss_agg_step {
	uint64_t pid, tid, step;
	uint32_t cycle;
	uint64_t begin_ns, end_ns;
	/* record.sched: its thread's time switched out in it, and how much
	 * of that it was preempted (runnable) rather than blocked */
	uint64_t off_ns, off_preempted_ns;
	int off_unknown;            /* its thread had no switch ring */
};

/* Samples of one counter track of one process, in time order. */
struct ss_agg_counter {
	uint64_t pid;
	char *name;
	uint64_t *ns;
	double *value;
	size_t n, cap;
};

struct ss_agg;

struct ss_agg *ss_agg_new(void);
void ss_agg_free(struct ss_agg *a);
/* The exporter that feeds `a`; owned by `a` (its release does nothing). */
struct ss_exporter *ss_agg_exporter(struct ss_agg *a);

/* Results, valid after the exporter's end.  Rows are unsorted; pass
 * per_thread 0 for one row per name.  The array is owned by `a` and valid
 * until the next call of ss_agg_rows. */
size_t ss_agg_rows(struct ss_agg *a, int per_thread, struct ss_agg_row **rows);
/* Whether any process recorded context switches (record.sched): the
 * off-CPU fields of rows, nodes and steps mean something.  *lost (may be
 * NULL): switch records the kernel dropped, all processes. */
int ss_agg_have_offcpu(const struct ss_agg *a, uint64_t *lost);
/* Threads that had no switch ring (record.sched refused them one): their
 * calls' Off-CPU is not known and counts 0. */
uint64_t ss_agg_offcpu_unwatched(const struct ss_agg *a);
/* Processes that ended without exit(), _exit or _Exit (a fatal signal,
 * exit_group): their last switches may be missing. */
uint64_t ss_agg_offcpu_cut(const struct ss_agg *a);
/* Sum of the self time of every function slice (the table's 100%). */
uint64_t ss_agg_self_sum(const struct ss_agg *a);
/* Threads and processes that had slices. */
size_t ss_agg_nthreads(const struct ss_agg *a);
size_t ss_agg_nprocesses(const struct ss_agg *a);
const char *ss_agg_name(const struct ss_agg *a, uint32_t id);
/* Events the runtime dropped on a thread (its SS_EV_LOST counts): from
 * *i on, the next thread with some, *i moved past it; 0 when none is left.
 * name is the thread's name or NULL. */
int ss_agg_lost(const struct ss_agg *a, size_t *i, uint64_t *pid, uint64_t *tid,
		const char **name, uint64_t *lost);
/* Where recording stopped for good (max_trace_mb, a full disk, a write
 * error): the first SS_EV_STOP of the run, the step it came in (*step
 * UINT64_MAX when not known), its time since the run's t0, and why, in
 * words ("max_trace_mb"); 0 when it never stopped. */
int ss_agg_stopped(const struct ss_agg *a, uint64_t *step, uint64_t *at_ns,
		   const char **why);
/* The words for enum ss_stop_reason r. */
const char *ss_agg_stop_why(unsigned r);
/* Function tree of all threads merged; root has name UINT32_MAX. */
const struct ss_agg_node *ss_agg_tree(struct ss_agg *a);
/* The function tree of one thread (root named UINT32_MAX). */
struct ss_agg_thread_tree {
	uint64_t pid, tid;
	const char *thread;       /* thread name, or NULL */
	const struct ss_agg_node *root;
};
/* Every thread with function slices, sorted by (pid, tid); the array is
 * malloc'ed (free it), the trees are owned by `a`. */
size_t ss_agg_thread_trees(struct ss_agg *a, struct ss_agg_thread_tree **out);
/* The trees for pictures (flame graphs, folded stacks): calls and the
 * user ranges between them, so each node's self time is the one of the
 * report's rows; a "ProfilerStep" frame (SS_AGG_FRAME_STEP) above the
 * outermost calls and ranges inside a recorded step, under the frames
 * that span the steps (docs/report.md, "Steps").  ss_agg_flame_tree:
 * every thread under a frame named for
 * it (threads of one name merged; root named UINT32_MAX);
 * ss_agg_flame_threads: as ss_agg_thread_trees, one per thread. */
const struct ss_agg_node *ss_agg_flame_tree(struct ss_agg *a);
size_t ss_agg_flame_threads(struct ss_agg *a, struct ss_agg_thread_tree **out);
/* Steps sorted by (pid, begin). */
size_t ss_agg_steps(const struct ss_agg *a, const struct ss_agg_step **steps);
/* Self time of function `name` (a row name) in step `s` (ss_agg_steps). */
/* record.sched: the part of it the thread was switched out (0 without). */
uint64_t ss_agg_step_off_self(const struct ss_agg *a, const char *name,
			      const struct ss_agg_step *s);
uint64_t ss_agg_step_self(const struct ss_agg *a, const char *name,
			  const struct ss_agg_step *s);
/* Step times of one schedule cycle (every process's steps together). */
struct ss_agg_cycle {
	uint32_t cycle;
	size_t count;
	uint64_t mean_ns, p50_ns, p95_ns, max_ns, min_ns, sum_ns;
};
/* Cycles in ascending order; the array is malloc'ed (free it). */
size_t ss_agg_cycles(const struct ss_agg *a, struct ss_agg_cycle **out);

size_t ss_agg_counters(const struct ss_agg *a, const struct ss_agg_counter **c);
/* Earliest time given to begin (t0 of the run). */
uint64_t ss_agg_t0(const struct ss_agg *a);

/* Folded stacks of the merged tree ("a;b;c SELF_NS\n", self > 0 only,
 * sorted by path) into f; 0 or -1 on a write error. */
#include <stdio.h>
int ss_agg_write_folded(struct ss_agg *a, FILE *f);

/* Sorting of rows (descending; ties by name, then thread). */
enum ss_agg_sort {
	SS_AGG_SORT_TOTAL = 0,
	SS_AGG_SORT_SELF,
	SS_AGG_SORT_AVG,
	SS_AGG_SORT_CALLS,
	SS_AGG_SORT_MAX,
	SS_AGG_SORT_MIN,
	SS_AGG_SORT_NAME,
};
/* "total", "self", ...; -1 if unknown. */
int ss_agg_sort_parse(const char *s);
void ss_agg_sort_rows(struct ss_agg_row *rows, size_t n, enum ss_agg_sort by);

/* Nearest-rank percentile (q in 0..1) of n sorted values. */
uint64_t ss_agg_percentile(const uint64_t *sorted, size_t n, double q);

/* A time with a unit as torch prints it: "850ns", "12.345us", "1.234ms",
 * "2.500s".  Returns buf. */
char *ss_agg_fmt_time(uint64_t ns, char *buf, size_t len);

/* Drive exporters over every raw trace of run directory `dir` (run.h:
 * begin, then for each process ss_run_feed).  backend: "dw", "bfd" or
 * NULL.  Returns 0, 2 (bad input: message in err) or 1 (internal failure).
 * Does not call end. */
int ss_agg_walk(const char *dir, const char *backend, int quiet,
		struct ss_exporter **ex, size_t nex, char *err, size_t errlen);

#endif /* SS_AGG_H */
