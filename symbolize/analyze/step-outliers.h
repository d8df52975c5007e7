/*
 * step-outliers.h - the steps of a run that took much longer than the
 * median step, and the functions that grew in them (`report --steps`).
 */
#ifndef SS_STEP_OUTLIERS_H
#define SS_STEP_OUTLIERS_H

#include <stdint.h>
#include <stdio.h>

#include "agg.h"

/* Steps longer than factor x the median step (1.5 in report) */
#define SS_STEP_OUTLIER_FACTOR 1.5
/* Functions named per outlier step */
#define SS_STEP_OUTLIER_TOP 3

/* One outlier step: steps[step] of ss_agg_steps, its duration and excess
 * over the median step, and the functions that grew in it (self time
 * above their median self time per step, largest first, each at least 5%
 * of the excess). */
struct ss_step_outlier {
	size_t step;
	uint64_t dur_ns, extra_ns;
	struct {
		const char *name;     /* owned by the aggregator */
		uint64_t excess_ns;
	} grew[SS_STEP_OUTLIER_TOP];
	size_t ngrew;
};

/* The outlier steps of a (longer than factor x the median step), in step
 * order, into *out (malloc'ed; free it; NULL when none) and the median step
 * into *median_ns; returns their number, or -1 out of memory.  oncpu (and
 * the run has switch records): steps' times less their preempted time,
 * functions' self times less their time switched out (dur_ns, extra_ns,
 * excess_ns and *median_ns are then such times).  Calls ss_agg_rows (the
 * caller's rows array is invalid after). */
long ss_step_outliers_find(struct ss_agg *a, double factor, int oncpu,
			   struct ss_step_outlier **out, uint64_t *median_ns);

/* Print the outlier steps of a (a heading, then one line per step: its
 * time, how many times the median, and the functions whose self time in it
 * is furthest above their median self time per step); returns their
 * number.  Calls ss_agg_rows (the caller's rows array is invalid after). */
size_t ss_step_outliers_text(FILE *f, struct ss_agg *a, double factor);

#endif /* SS_STEP_OUTLIERS_H */
