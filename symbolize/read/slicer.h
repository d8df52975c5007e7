/*
 * slicer.h - the inside of a struct ss_slicer, shared by slices.c (which
 * builds it from a trace: windows, steps, strings, stacks) and
 * slices-walk.c (which walks one thread's events into slices).  Not a
 * public header: slices.h is.
 */
#ifndef SS_SLICER_H
#define SS_SLICER_H

#include <stdint.h>

#include "slices.h"

struct ss_slices_step {
	uint64_t ns, step, tid, serial;
	uint32_t action, cycle;
};

struct ss_slices_window {
	uint64_t open_ns, close_ns;     /* close UINT64_MAX: end of stream */
	size_t first_step;
};

struct ss_slices_stack {
	uint64_t ns, tid, serial;
	uint64_t *addrs;                /* innermost first */
	size_t n;
};

struct ss_slices_string {
	uint64_t id;
	char *text;
	const char *args;       /* after a TAB in the text (MPI calls), or NULL */
};

struct ss_slices_tname {
	uint64_t tid;
	char name[48];  /* the comm (16), or "COMM/worker-TID" */
};

/* A thread the program did not name carries the comm of the thread that
 * made it (the kernel copies it at clone): every worker of "train" is
 * "train" too.  Such a thread, not the main one, with the main thread's
 * name, is shown as "NAME/worker-TID" so threads are told apart without
 * claiming a name the program gave. */
struct ss_slicer {
	const struct ss_reader *r;
	struct ss_sym_space *sp;
	char *flops;                    /* the run's flops: config, or NULL */
	struct ss_slices_step *steps;
	size_t nsteps;
	struct ss_slices_window *wins;
	size_t nwins;
	int whole_run;                  /* no step records */
	int markers;                    /* hand out SS_SLICE_MARKER slices */
	struct ss_slices_stack *stacks;
	size_t nstacks;
	struct ss_slices_string *strs;
	size_t nstrs;
	struct ss_slices_tname *tnames;
	size_t ntnames;
	uint64_t first_ns;
	/* record.stack: SS_META_STACKDEF records by id, the frame tree */
	struct ss_slices_sdef *sdefs;
	size_t nsdefs;
	struct ss_stack_node *nodes;
	size_t nnodes, capnodes;
	ss_slice_fn open_fn;            /* ss_slicer_on_open, or NULL */
	void *open_ctx;
	int no_leaf_open;               /* ss_slicer_open_leaves(sl, 0) */
	uint32_t *nodemap;              /* hash of (parent, start) -> node */
	size_t capmap;                  /* a power of two */
};

struct ss_slices_frame {
	uint64_t key;                   /* address, or string id for ranges */
	uint64_t begin;
	unsigned flags;
	uint64_t stack;                 /* SS_EV_STACK id, 0 = none */
	unsigned other;                 /* frames of the other kind open when
					 * it was pushed (ranges for a call) */
	uint8_t *args;                  /* record.args: a copy of its ARGS
					 * record's payload, or NULL */
	unsigned nargs;                 /* its words */
	const struct ss_sym_info *info; /* its symbol, looked up when it was
					 * announced; NULL until then */
};

/* A recorded stack; resolved (names, leaf) when a slice first uses it. */
struct ss_slices_sdef {
	struct ss_stack st;
	uint64_t *addrs;
	const char **names;             /* NULL until resolved */
};

struct ss_slices_fstack {
	struct ss_slices_frame *f;
	size_t n, cap;
};

/* State of one thread walk. */
struct ss_slices_walk {
	struct ss_slicer *sl;
	uint64_t tid;
	const struct ss_rthread *t;
	ss_slice_fn fn;
	void *ctx;
	struct ss_slices_fstack calls, ranges;
	uint64_t emitted;
	size_t step_hint;               /* the last ss_slices_step_near */
	/* the closing frame's symbol, if its announcement looked it up at
	 * the same time; the one ss_slices_fill used last */
	const struct ss_sym_info *info, *last_info;
	uint64_t stop_ns;               /* its first SS_EV_STOP, 0 = none */
	uint64_t stack;                 /* of the next slice emitted */
	unsigned why;                   /* unwind reason of the next ones */
	/* with open_fn: the stack whose top frame is pushed but not yet
	 * announced (its SS_EV_STACK may follow), and its category */
	struct ss_slices_fstack *pend;
	enum ss_slice_cat pend_cat;
	/* record.args: the closing frame's record, and its values */
	const uint8_t *args;
	unsigned nargs;
	struct ss_argv argv[SS_ARGS_MAX];
};

const struct ss_stack *ss_slices_stack(struct ss_slicer *sl, uint64_t id);
const struct ss_slices_string *ss_slices_string(const struct ss_slicer *sl,
						uint64_t id);

#endif /* SS_SLICER_H */
