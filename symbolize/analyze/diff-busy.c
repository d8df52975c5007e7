/*
 * diff-busy.c - how busy each run's machine was, for `stepscope diff`
 * (record.sched): the share of each step its thread spent switched out,
 * what the comparison therefore compares, and one line when that limits
 * what it can conclude.
 *
 * Design: diff.c already made every figure on-CPU time when switches were
 * recorded (and not --wall) and kept each step's off-CPU share; this file
 * takes the median share of each run and words it.  Runs without switch
 * records get one line saying that wall time is compared and what
 * record.sched would add: nothing is known of their machine's load.
 * Must never: guess the load of a run without switch records, or hide
 * the comparison (it only adds words).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

/* A share at or above this, in either run, limits what diff can say. */
#define SS_DIFF_BUSY 0.10

double ss_diff_busy(const struct ss_diff_run *r)
{
	if (!r->have_off || !r->nsteps)
		return 0;
	return ss_diff_median(r->step_off, r->nsteps);
}

int ss_diff_busy_line(char *buf, size_t len, const struct ss_diff_run *a,
		      const struct ss_diff_run *b, int wall)
{
	const char *what;

	buf[0] = 0;
	if (!a->have_off && !b->have_off) {
		/* the default: say what that leaves open (issue 48: a kann
		 * operator +30% was found in 0-2 of 20 pairs in wall time on a
		 * shared 2-core VM, in 20 of 20 with record.sched) */
		snprintf(buf, len, "compared: wall time (neither run recorded its context "
			 "switches: a step that was preempted holds the wait in whichever "
			 "function it hit; on a shared machine record both with record.sched: "
			 "true to compare on-CPU time)");
		return 1;
	}
	if (a->oncpu && b->oncpu)
		what = "on-CPU time (each step's and call's time less what its thread "
		       "was switched out; --wall for wall time)";
	else if (wall)
		what = "wall time (--wall)";
	else
		what = "wall time (one run recorded no switches: record both with "
		       "record.sched: true to compare on-CPU time)";
	snprintf(buf, len, "compared: %s; steps off the CPU (median): base %.1f%%%s, "
		 "new %.1f%%%s", what, 100.0 * ss_diff_busy(a), a->have_off ? "" : " (not recorded)",
		 100.0 * ss_diff_busy(b), b->have_off ? "" : " (not recorded)");
	return 1;
}

int ss_diff_busy_note(char *buf, size_t len, const struct ss_diff_run *a,
		      const struct ss_diff_run *b)
{
	double x = ss_diff_busy(a), y = ss_diff_busy(b), m = x > y ? x : y;

	buf[0] = 0;
	if ((!a->have_off && !b->have_off) || m < SS_DIFF_BUSY)
		return 0;
	if (a->oncpu && b->oncpu)
		snprintf(buf, len, "the machine was busy (up to %.0f%% of a step off the CPU): "
			 "the waits for a CPU are left out, but a shared CPU still slows what "
			 "runs (caches, memory bandwidth), so a change of a few %% is not "
			 "conclusive", 100.0 * m);
	else
		snprintf(buf, len, "the machine was busy (up to %.0f%% of a step off the CPU): "
			 "wall time holds the waits for a CPU, which differ from run to run%s",
			 100.0 * m, a->have_off && b->have_off
					    ? "; without --wall diff compares on-CPU time"
					    : "; record both runs with record.sched: true");
	return 1;
}
