/*
 * agg-state.h - the inside of a struct ss_agg, shared by the two halves of
 * the aggregate: agg.c builds it from the slices as they close, and
 * agg-results.c reads the finished one (rows, trees, steps, cycles,
 * folded stacks, sorting).  Not a public header: agg.h is.
 */
#ifndef SS_AGG_STATE_H
#define SS_AGG_STATE_H

#include <stdint.h>
#include "agg.h"

#define SS_AGG_ROOT UINT32_MAX

struct ss_agg_fstat {
	uint64_t calls, self_ns, total_ns, min_ns, max_ns;
	uint64_t clipped;            /* fragments cut by a window's edge */
	uint64_t complete;           /* slices with no edge cut: min/max */
	uint64_t ordered;            /* of them, ended by an ordered EXIT
	                              * (not SS_SLICE_UNORDERED): min */
	uint64_t complete_ns;        /* their time, for avg */
	uint64_t off_ns, off_self_ns, off_most; /* record.sched (agg.h) */
	uint64_t min_off_ns, max_off_ns;        /* in the min and max call */
	uint64_t min_any_ns, min_any_off_ns;    /* fastest of every complete
	                                         * call, ordered or not */
};

struct ss_agg_entry {
	uint64_t begin, end, busy;
	unsigned depth;
	struct ss_agg_node *forest;
};

/* Most frames of code without hooks put above one slice: stack_depth's
 * limit, and one for "[...]" (docs/stacks.md). */
#define SS_AGG_NATIVE_MAX 129

struct ss_agg_pend {
	uint64_t begin, end, step;
	unsigned depth, nest, flags;
	int kind;                    /* enum ss_agg_kind */
	uint32_t id;
	int has_step;
	int in_step;                 /* ss_slice.in_step */
	uint64_t off;                /* record.sched: switched out in it */
	unsigned nnative;
	uint32_t native[SS_AGG_NATIVE_MAX]; /* outermost first */
};

struct ss_agg_builder {
	struct ss_agg_entry *st;
	size_t n, cap;
	struct ss_agg_node *root;    /* finished subtrees (a sibling list) */
};

/* A closed slice of either kind (or consecutive siblings) whose caller or
 * enclosing range has not closed yet: for self time, which is the time
 * in no call and no range nested in the slice. */
struct ss_agg_own {
	uint64_t begin, end, busy;
	uint64_t off;                /* record.sched: the slices' off-CPU time */
	unsigned nest;
	struct ss_agg_node *forest;  /* its flame subtrees (calls and ranges) */
};

struct ss_agg_thread {
	uint64_t pid, tid;
	char *name;
	struct ss_agg_fstat *fs[2];  /* by kind, indexed by name id */
	size_t nfs[2];
	struct ss_agg_builder b[2];
	struct ss_agg_pend *pend;    /* closed at the same time, not yet hung */
	size_t npend, cappend;
	struct ss_agg_own *own;      /* for self time, both kinds together */
	size_t nown, capown;
	struct ss_agg_node *own_root; /* finished flame subtrees */
	struct ss_agg_node *flame;   /* its flame tree, built on demand */
	struct ss_agg_node *tree;    /* its function tree, built on demand */
	int used;
	uint64_t lost;               /* events dropped (SS_EV_LOST markers) */
};

struct ss_agg_aslot {
	uint64_t pid, addr;
	uint32_t id;
	int used;
};

struct ss_agg_stepkey {
	uint64_t pid, step;
	uint32_t name;
	int used;
	uint64_t self_ns;
	uint64_t off_self_ns;        /* record.sched: the part switched out */
};

struct ss_agg {
	struct ss_exporter ex;
	uint64_t t0;
	/* names */
	char **names;
	size_t nnames, capnames;
	uint32_t *nhash;             /* id + 1, 0 = empty */
	size_t nhcap;
	struct ss_agg_aslot *acache; /* (pid, addr) -> name id of functions */
	size_t accap, acn;
	uint32_t step_id;            /* id + 1 of "ProfilerStep", 0 = not yet */
	/* threads */
	struct ss_agg_thread *threads;
	size_t nthreads, capthreads;
	struct ss_agg_thread *cur;
	/* process names */
	uint64_t *pids;
	size_t npids, cappids;
	/* steps */
	struct ss_agg_step *steps;
	size_t nsteps, capsteps;
	struct ss_agg_stepkey *sk;
	size_t skcap, skn;
	/* counters */
	struct ss_agg_counter *ctrs;
	size_t nctrs, capctrs;
	uint64_t self_sum;
	/* record.sched: the current process's off-CPU intervals (valid
	 * while its slices come), and whether any process had some */
	const struct ss_offcpu *off;
	uint64_t off_pid, off_lost;
	uint64_t off_unwatched;         /* threads with no switch ring */
	uint64_t off_cut;               /* processes whose rings were not read
	                                 * to their end (no SWITCH_END) */
	int have_off;
	/* the first stop (SS_EV_STOP marker) of the run */
	int stopped, stop_has_step;
	unsigned stop_reason;
	uint64_t stop_ns, stop_pid, stop_step;
	int finished, totals_done;
	struct ss_agg_node *free_nodes;
	struct ss_agg_node *tree;    /* merged, built on demand */
	struct ss_agg_node *flame;   /* merged flame tree, on demand */
	struct ss_agg_row *rows;
	int oom;
};

/* agg-tree.c: names, nodes, sibling lists */
uint64_t ss_agg_mix(uint64_t x);
uint32_t ss_agg_intern(struct ss_agg *a, const char *s, int add);
struct ss_agg_node *ss_agg_node_new(struct ss_agg *a, uint32_t name);
void ss_agg_node_put(struct ss_agg *a, struct ss_agg_node *n);
void ss_agg_tree_free(struct ss_agg_node *n);
void ss_agg_merge(struct ss_agg *a, struct ss_agg_node **dst, struct ss_agg_node *src);
void ss_agg_merge_copy(struct ss_agg *a, struct ss_agg_node **dst,
		       const struct ss_agg_node *src);
struct ss_agg_fstat *ss_agg_fstat(struct ss_agg *a, struct ss_agg_thread *t,
				  int kind, uint32_t id);

#endif /* SS_AGG_STATE_H */
