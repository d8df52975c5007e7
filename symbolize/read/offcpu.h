/*
 * offcpu.h - when each thread of one trace was off the CPU: the
 * SS_META_SWITCH records (record.sched, runtime/sched.c) as intervals on
 * the reader's timeline, sorted per thread, with the sums that say how
 * much of any stretch of time a thread spent switched out.
 */
#ifndef SS_OFFCPU_H
#define SS_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

struct ss_offcpu_iv {
	uint64_t begin_ns, end_ns;  /* CLOCK_MONOTONIC (+ the reader's shift) */
	uint32_t flags;             /* enum ss_switch_flags (format.h) */
};

struct ss_offcpu_thread {
	uint64_t tid;
	struct ss_offcpu_iv *iv;    /* by begin, disjoint */
	size_t n;
	uint64_t *before;           /* n + 1: off-CPU ns of iv[0 .. i) */
	uint64_t lost;              /* switch records the kernel dropped */
	int unwatched;              /* no switch ring (SS_META_SWITCH_NONE):
	                             * its time is not known on or off the CPU */
};

struct ss_offcpu {
	struct ss_offcpu_thread *th; /* by tid */
	size_t n;
	uint64_t lost;              /* all threads */
	uint64_t unwatched;         /* threads with no switch ring */
	int ended;                  /* SS_META_SWITCH_END: read to the end */
	int cut;                    /* recorded with record.sched, no record
	                             * at all and no SWITCH_END (run.c) */
	uint64_t nrecords;          /* SS_META_SWITCH records read (0: the
	                             * process recorded no switches) */
};

/* Read the switch records of r.  0 (d->n may be 0), -1 out of memory. */
int ss_offcpu_read(const struct ss_reader *r, struct ss_offcpu *d);
void ss_offcpu_release(struct ss_offcpu *d);
/* Thread tid's intervals, or NULL. */
const struct ss_offcpu_thread *ss_offcpu_find(const struct ss_offcpu *d, uint64_t tid);
/* Nanoseconds of [a, b) that thread t spent switched out; with `preempted`
 * not NULL, how many of them it was preempted (runnable, waiting for a
 * CPU) rather than blocked. */
uint64_t ss_offcpu_in(const struct ss_offcpu_thread *t, uint64_t a, uint64_t b,
		      uint64_t *preempted);

#endif /* SS_OFFCPU_H */
