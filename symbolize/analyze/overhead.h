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
 * The slowdown (issue 48): the share says where the CPU time went, not
 * how much longer a step took; the program's steps wait for the opening
 * of a window, for the background thread where it takes the program's
 * CPU, for everything the hooks do to the caches.  So the runtime times
 * the steps on the stepping thread, boundary to boundary (SS_META_COST's
 * step figures), and the line states the mean recorded step against the
 * mean unrecorded one of the same run (the first step only when no other
 * ran unrecorded), as a user timing a step with and without
 * STEPSCOPE_DISABLE=1 would.  A run without unrecorded steps (the whole
 * run recorded, an older trace) gets 1 / (1 - share), said to be an
 * estimate.
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
/* fewer recorded calls than `stepscope filter` proposes (--min-calls'
 * default) get no filter advice */
#define SS_OVERHEAD_MIN_CALLS 1000
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
	/* the steps' times (SS_META_COST of 128 bytes), ns summed over the
	 * processes: recorded steps closed by a boundary, closed by exit,
	 * unrecorded ones but the first, the first when unrecorded */
	uint64_t rec_ns, rec_n, tail_ns, tail_n, ref_ns, ref_n, first_ns, first_n;
};

/* What the warning advises */
enum ss_overhead_advice {
	SS_OVERHEAD_FINE,    /* at most 10% slower: nothing */
	SS_OVERHEAD_FILTER,  /* the hooks alone cost over 10%: leave calls out */
	SS_OVERHEAD_WINDOWS, /* the fixed cost: longer windows spread it */
};

/* Read every raw trace of dir (already checked by the caller's walk);
 * a trace that cannot be read adds nothing.  Never fails. */
void ss_overhead_read(const char *dir, struct ss_overhead *o);

/* Recorded function calls of the aggregate (calls ss_agg_rows: fetch
 * rows after it). */
uint64_t ss_overhead_calls(struct ss_agg *a);
/* The recorded steps' time against the unrecorded ones' (mean step
 * each), as measured; 0 when the run lacks either.  `*rec_ns`, `*ref_ns`:
 * the means (may be NULL). */
double ss_overhead_measured(const struct ss_overhead *o, double *rec_ns, double *ref_ns);
/* How much slower the recorded steps ran: measured when the run has both
 * kinds of steps, else 1 / (1 - share) (1.0 when nothing is known). */
double ss_overhead_slowdown(const struct ss_overhead *o, uint64_t calls, uint64_t self_sum);
/* Over 10% slower: a filter when the calls' hooks alone (calls x pair_ns,
 * and the left-out calls' probes) are over 10% of the program's own CPU
 * time while recording (its CPU time less the hooks, the background
 * thread and the switches; where that leaves nothing, the unrecorded
 * steps' time per recorded step; without the runtime's account, the self
 * time less the hooks), since leaving calls out removes that much at
 * least, and there are calls enough for `filter` to propose some
 * (SS_OVERHEAD_MIN_CALLS); else longer windows. */
enum ss_overhead_advice ss_overhead_advice(const struct ss_overhead *o, uint64_t calls,
					   uint64_t self_sum);

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
