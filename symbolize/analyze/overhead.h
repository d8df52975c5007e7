/*
 * overhead.h - stepscope's own cost in a recorded run: the calibrated cost
 * of one recorded call (SS_META_OVERHEAD, measured by the runtime at
 * start-up), its share of the recorded time, and the compensation of
 * `report --compensate` (as TAU does).
 *
 * The share: with the runtime's own account of the run (SS_META_COST:
 * the process's CPU time while recording, its background thread's part,
 * the hook calls filters left out), what recording cost of the CPU time
 * the process used while recording: recorded calls and calls taken back
 * x pair_ns, calls left out x pair_ns / 2 (a table probe, not a record;
 * their calibration in a tight loop, when more),
 * plus the background thread's CPU time, the time the windows took to
 * open and, with record.sched, 0.8 us in the kernel per switch recorded.  On a machine whose CPUs the
 * program keeps busy (an oversubscribed OpenMP team) that is the share of
 * its wall time recording added; where the program mostly waits it says
 * more than the wall time lost.  Without that account (older traces), the
 * calls x pair_ns of the recorded self time.
 *
 * Model: each recorded call pair costs `pair_ns`, spent in its caller's
 * time.  So a function's self time holds pair_ns per direct recorded
 * callee, its total time pair_ns per recorded call below it.  Compensation
 * subtracts exactly that (never below zero); Min and Max are left as
 * measured.
 */
#ifndef SS_OVERHEAD_H
#define SS_OVERHEAD_H

#include <stdint.h>
#include <stdio.h>

#include "agg.h"

#define SS_OVERHEAD_WARN_PCT 10.0   /* the warning: above 10% slower */
/* record.sched's cost in the kernel per context switch of a recorded
 * thread (docs/config.md: a futex ping-pong on the development VM, 0.8 us
 * more a switch with the event on) */
#define SS_OVERHEAD_SWITCH_NS 800.0

struct ss_overhead {
	int known;          /* some trace had SS_META_OVERHEAD */
	uint64_t pair_ns;   /* per recorded call; mean of the processes' */
	uint64_t inside_ns; /* the part of pair_ns inside a call's own measured
			     * time (its ENTER to its EXIT), at least: the
			     * least of the processes' calibrations */
	int inside_known;   /* every trace measured it (older ones did not) */
	uint64_t events;    /* events in the raw traces */
	uint64_t bytes;     /* bytes of the raw traces */
	uint64_t procs;     /* raw traces read */
	/* SS_META_COST of every trace (cost_known: all had one), summed */
	int cost_known;
	uint64_t cpu_ns, bg_ns, skipped, taken_back, open_ns;
	uint64_t skip_ns;   /* a left-out call's calibrated cost, 0 unknown */
	uint64_t switches;  /* record.sched: switch intervals recorded */
};

/* Read every raw trace of dir (already checked by the caller's walk);
 * a trace that cannot be read adds nothing.  Never fails. */
void ss_overhead_read(const char *dir, struct ss_overhead *o);

/* Recorded function calls of the aggregate (calls ss_agg_rows: fetch
 * rows after it). */
uint64_t ss_overhead_calls(struct ss_agg *a);
/* 1 when opening windows and the background thread are over half of what
 * recording cost (longer windows help, a filter does not) */
int ss_overhead_fixed_most(const struct ss_overhead *o, uint64_t calls);

/* "stepscope overhead: N% of recorded time (C calls x P ns)" and, above
 * SS_OVERHEAD_WARN_PCT, the advice to run `stepscope filter`; nothing
 * when the run has no calibration.  `compensated`: say the times below
 * are compensated. */
void ss_overhead_print(FILE *f, const struct ss_overhead *o, uint64_t calls,
		       uint64_t self_sum, const char *dir, int compensated);
/* The share in percent (0 when unknown or nothing recorded): of the CPU
 * time while recording when the runs' cost is known, else of self_sum,
 * the measured recorded time. */
double ss_overhead_pct(const struct ss_overhead *o, uint64_t calls, uint64_t self_sum);

/* Subtract the hooks' cost from rows (from ss_agg_rows(a, per_thread)):
 * self and total as the model says.  Returns the compensated sum of self
 * time (the table's 100%). */
uint64_t ss_overhead_compensate(struct ss_agg *a, struct ss_agg_row *rows, size_t n,
				int per_thread, uint64_t pair_ns);

#endif /* SS_OVERHEAD_H */
