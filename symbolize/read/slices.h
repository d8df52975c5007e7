/*
 * slices.h - turn one process's raw events into complete slices (a
 * function call, a training step, a user range) with begin, end and flags.
 *
 * Shared by every exporter (Chrome JSON now; reports and flame graphs
 * later): they receive finished slices through a callback and never see
 * raw events.  Memory grows with stack depth and distinct addresses,
 * never with the number of events: a slice is handed out as it closes.
 */
#ifndef SS_SLICES_H
#define SS_SLICES_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "sym.h"
#include "args.h"

enum ss_slice_cat {
	SS_SLICE_FUNCTION = 0,
	SS_SLICE_STEP = 1,
	SS_SLICE_RANGE = 2,
	/* an instant (begin == end) saying what happened to the recording:
	 * handed out only after ss_slicer_markers(sl, 1) */
	SS_SLICE_MARKER = 3,
};

enum ss_slice_flags {
	SS_SLICE_CLIPPED_BEGIN = 1 << 0, /* began before its window */
	SS_SLICE_CLIPPED_END = 1 << 1,   /* still open when its window closed */
	SS_SLICE_UNWOUND = 1 << 2,       /* never returned: an outer frame exited */
	/* with ss_slicer_open_leaves(sl, 0): a call that returned before
	 * any other event of its thread came, so it was not announced; no
	 * slice or opening came between its begin and its end */
	SS_SLICE_UNANNOUNCED = 1 << 3,
	/* its ENTER or its EXIT was read unfenced (SS_META_EXIT_ORDER): its
	 * time may hold some of the previous call's work or miss some of its
	 * own last instructions; a function's fastest call is taken from the
	 * others (agg.c) */
	SS_SLICE_UNORDERED = 1 << 4,
};

/* A native call stack recorded with record.stack (SS_META_STACKDEF;
 * docs/stacks.md), its frames resolved.  Frames also form a tree per
 * process (ss_slicer_stack_nodes): one node per distinct call path. */
struct ss_stack {
	uint64_t id;                /* process-unique */
	size_t n;                   /* frames, innermost first */
	const uint64_t *addrs;      /* return addresses as recorded (the first
	                             * one inside the slice's function) */
	const char *const *names;   /* function of each frame */
	uint32_t leaf;              /* node of addrs[0], from 1 */
};

struct ss_stack_node {
	uint32_t parent;            /* caller's node, from 1; 0: outermost */
	const char *name;           /* function */
	uint64_t start;             /* its runtime address */
};

struct ss_slice {
	enum ss_slice_cat cat;
	const char *name;
	const char *file;       /* "path:line" or NULL */
	const char *clone;      /* GCC clone kind ("isra.0", "cold") or NULL */
	uint64_t addr;          /* FUNCTION: runtime address of the function */
	uint64_t begin_ns, end_ns;
	unsigned flags;         /* enum ss_slice_flags */
	unsigned depth;         /* open frames below it on its thread */
	unsigned nest;          /* open frames of both kinds (calls and
				 * ranges) below it when it began: a range
				 * pushed in a call nests one deeper than it */
	int has_step;           /* step/cycle below are known */
	uint64_t step;          /* step the slice began in */
	uint32_t cycle;         /* schedule cycle of that step */
	/* FUNCTION, RANGE: it lies inside one of the ProfilerStep slices of
	 * its thread (begins at or after the step's begin, ends at or before
	 * its end, not clipped at its begin); those step slices are handed
	 * out only after all of the thread's other slices, so this is how a
	 * consumer that builds as slices close (flame graphs) knows. */
	int in_step;
	const struct ss_stack *stack; /* FUNCTION, with record.stack; or NULL */
	/* With a stack: index in it of the innermost frame (from 1) that is an
	 * instrumented call open below this one on its thread (its caller, or
	 * the function its caller was inlined into); frames 1 .. stack_caller-1
	 * are code between them that has no hooks (qsort calling a callback).
	 * 0 when no such frame is in the stack (it was cut by stack_depth, or
	 * the slice has no open caller).  docs/stacks.md */
	size_t stack_caller;
	/* With SS_SLICE_UNWOUND: enum ss_unwind_reason (SS_UNWIND_SKIPPED also
	 * when the exit of an outer frame came first). */
	unsigned unwind;
	/* MARKER: the event it stands for (SS_EV_STOP, SS_EV_LOST) and its
	 * argument (enum ss_stop_reason, events lost) */
	unsigned marker;
	uint64_t marker_arg;
	/* RANGE: its arguments, "key=value" words separated by spaces (the
	 * text after a TAB in the range's name: MPI calls, docs/mpi.md), or
	 * NULL */
	const char *args;
	/* FUNCTION of a function listed in record.args: its parameters in
	 * declaration order (names/args.h), or NULL; nargv of them */
	const struct ss_argv *argv;
	size_t nargv;
	/* with argv and a flops: expression for the function: 1 and flops
	 * its value, or 2 when a parameter it needs was optimized out; 0 */
	int has_flops;
	double flops;
};

/* Receives each finished slice; tid is the OS thread id. */
typedef void (*ss_slice_fn)(void *ctx, uint64_t tid, const struct ss_slice *s);

struct ss_slicer;

/* Read the meta records of r (steps, stacks, strings, thread names) and
 * add its MAPS records to sp.  NULL on out of memory. */
struct ss_slicer *ss_slicer_new(const struct ss_reader *r, struct ss_sym_space *sp);
void ss_slicer_free(struct ss_slicer *sl);

/* Earliest time in ns the process has (events and step records); 0 if
 * it has none. */
uint64_t ss_slicer_first_ns(const struct ss_slicer *sl);

/* Name of an OS thread from SS_META_THREAD, or NULL. */
const char *ss_slicer_thread_name(const struct ss_slicer *sl, uint64_t tid);

/* Cycles with recorded steps: fills up to max, returns how many exist. */
size_t ss_slicer_cycles(const struct ss_slicer *sl, uint32_t *out, size_t max);

/* The stack frame tree of the stacks that slices handed out so far
 * carried (node i + 1 is nodes[i]); valid until the next slicer call. */
size_t ss_slicer_stack_nodes(const struct ss_slicer *sl,
			     const struct ss_stack_node **nodes);

/* Hand out SS_SLICE_MARKER slices too (off by default): one at each
 * SS_EV_STOP and SS_EV_LOST, named "stepscope: recording stopped
 * (max_trace_mb)", "stepscope: events lost", ... */
void ss_slicer_markers(struct ss_slicer *sl, int on);

/* Openings, for exporters that write begins and ends in time order: fn
 * gets each FUNCTION or RANGE frame as it opens (end_ns == begin_ns, depth
 * its index among the open frames of its kind, stack once known), before
 * any later event of its thread.  Every opening is later closed by the
 * slice of the same kind, depth and begin_ns; slices with no opening
 * (an EXIT whose ENTER came before the window) and steps, handed out at the
 * thread's end, come unannounced.  NULL turns them off. */
void ss_slicer_on_open(struct ss_slicer *sl, ss_slice_fn fn, void *ctx);
/* 0: a call whose EXIT is the next event of its thread after its ENTER
 * (a leaf, most calls) is not announced; its slice has
 * SS_SLICE_UNANNOUNCED and comes where its opening would have, nothing
 * handed out between (the consumer writes its beginning then: Perfetto).
 * 1, the default: every call is announced. */
void ss_slicer_open_leaves(struct ss_slicer *sl, int on);

/* Emit every slice of reader thread index `thread`; returns the number
 * of slices emitted. */
uint64_t ss_slicer_thread(struct ss_slicer *sl, size_t thread, ss_slice_fn fn,
			  void *ctx);

/* Emit every slice of every thread, thread by thread: the same callbacks
 * in the same order as ss_slicer_thread for each, made on the calling
 * thread while a worker thread walks (slices-pipe.c; STEPSCOPE_JOBS=1:
 * no worker). */
void ss_slicer_walk(struct ss_slicer *sl, ss_slice_fn fn, void *ctx);
/* 0: ss_slicer_walk walks on the calling thread unless STEPSCOPE_JOBS
 * asks for more (a command whose exporters are light next to the walk:
 * the handing over would cost more than the second CPU gives). */
void ss_slicer_pipe_default(int on);

#endif /* SS_SLICES_H */
