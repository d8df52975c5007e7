/*
 * export.h - the one interface every output format implements.
 *
 * cmd-symbolize drives an exporter in this order: begin, then for each
 * process: process, thread (each thread), slice (any order, any number),
 * counter; and end once.  Times are absolute CLOCK_MONOTONIC ns; `t0_ns`
 * given to begin is the earliest time of the whole run, which exporters
 * subtract.  An exporter writes as it goes and never holds slices.
 */
#ifndef SS_EXPORT_H
#define SS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu.h"
#include "offcpu.h"
#include "alloc-read.h"
#include "slices.h"

/* A step slice ends where the next step begins; viewers given two slices
 * that touch nest the second in the first, so exporters end a step this
 * much earlier (in ns): consecutive steps never share an instant. */
#define SS_EXPORT_STEP_GAP 1

struct ss_exporter {
	void *ctx;
	int (*begin)(void *ctx, uint64_t t0_ns);
	void (*process)(void *ctx, uint64_t pid, const char *name);
	void (*thread)(void *ctx, uint64_t pid, uint64_t tid, const char *name);
	void (*slice)(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s);
	/* Optional: each function or range as it opens, in time order with
	 * the slices that close (ss_slicer_on_open), for exporters that write
	 * begins and ends as they go.  NULL: slices only. */
	void (*open)(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s);
	void (*counter)(void *ctx, uint64_t pid, const char *name, uint64_t ns,
			double value);
	/* record.stack: process pid's stack frame tree (ss_slicer_stack_nodes),
	 * given after its slices, whose s->stack->leaf name nodes of it.  NULL
	 * in exporters that read s->stack only (or ignore stacks). */
	void (*stack_nodes)(void *ctx, uint64_t pid,
			    const struct ss_stack_node *nodes, size_t n);
	/* Optional: process pid's GPU activity (gpu.enabled: kernels, copies
	 * and CUDA API calls, docs/cuda.md), after its threads and before its
	 * slices; only called when there is some.  NULL: ignored. */
	void (*gpu)(void *ctx, uint64_t pid, const struct ss_gpu_data *g);
	/* Finish and close; 0, or -1 with a message in err. */
	int (*end)(void *ctx, char *err, size_t errlen);
	void (*release)(void *ctx);
	uint64_t events;        /* trace events written (slices + counters) */
	/* (Last, so initialisers in field order need not name it.)
	 * Optional: when process pid's threads were switched out by the
	 * kernel (record.sched: off-CPU intervals, docs/report.md), after
	 * its threads and its GPU activity and before its slices; d stays
	 * valid until its last slice was given.  Only called when the
	 * process recorded switches.  NULL: ignored. */
	void (*offcpu)(void *ctx, uint64_t pid, const struct ss_offcpu *d);
	/* Optional: process pid's recorded allocations (memory.allocations,
	 * read/alloc.h), after its threads and before its slices; d stays
	 * valid until its last slice was given.  Only called when the
	 * process recorded some.  NULL: ignored (and nothing is read). */
	void (*alloc)(void *ctx, uint64_t pid, const struct ss_alloc_data *d);
};

/* Chrome trace-event JSON into `path`.  NULL with err on failure. */
struct ss_exporter *ss_export_chrome_open(const char *path, char *err,
					  size_t errlen);
/* Function slices carry args file ("path:line") and addr too (off: ~80
 * bytes a slice).  Call before begin. */
void ss_export_chrome_details(struct ss_exporter *e, int on);
/* Native Perfetto protobuf (.perfetto-trace) into `path`. */
struct ss_exporter *ss_export_perfetto_open(const char *path, char *err,
					    size_t errlen);
/* Bytes and TrackEvents (BEGIN, END, COUNTER) a Perfetto exporter wrote. */
void ss_export_perfetto_stats(const struct ss_exporter *e, uint64_t *bytes,
			      uint64_t *track_events);
/* Folded stacks ("a;b;c SELF_NS" lines) into `path`. */
struct ss_exporter *ss_export_folded_open(const char *path, char *err,
					  size_t errlen);
/* speedscope's file format (evented profiles, one per thread, in ns,
 * steps as the top level) into `path`. */
struct ss_exporter *ss_export_speedscope_open(const char *path, char *err,
					      size_t errlen);
/* The JSON string body of s into dst (room for 6 * strlen(s)), always
 * valid UTF-8; its length (dst NULL: only the length). */
size_t ss_export_json_escape(char *dst, const char *s);
/* s as a quoted JSON string on f (escaped as above; "" when out of memory). */
void ss_export_json_fputs(FILE *f, const char *s);
/* export-nop.c: fill e's NULL begin, process, thread, slice, counter,
 * end and release with callbacks that do nothing (begin and end return 0);
 * the optional ones stay as they are.  Call after setting the others. */
void ss_exporter_nops(struct ss_exporter *e);
/* An `end` that fails only on oom: -1 with "out of memory" in err, else 0. */
int ss_export_oom_end(int oom, char *err, size_t errlen);
/* Free an exporter after end (or instead of it, on an error path). */
void ss_exporter_free(struct ss_exporter *e);

#endif /* SS_EXPORT_H */
