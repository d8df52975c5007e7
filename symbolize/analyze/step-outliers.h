/*
 * step-outliers.h - the steps of a run that took much longer than the
 * median step, and the functions that grew in them (`report --steps`).
 */
#ifndef SS_STEP_OUTLIERS_H
#define SS_STEP_OUTLIERS_H

#include <stdio.h>

#include "agg.h"

/* Steps longer than factor x the median step (1.5 in report) */
#define SS_STEP_OUTLIER_FACTOR 1.5
/* Functions named per outlier step */
#define SS_STEP_OUTLIER_TOP 3

/* Print the outlier steps of a (a heading, then one line per step: its
 * time, how many times the median, and the functions whose self time in it
 * is furthest above their median self time per step); returns their
 * number.  Calls ss_agg_rows (the caller's rows array is invalid after). */
size_t ss_step_outliers_text(FILE *f, struct ss_agg *a, double factor);

#endif /* SS_STEP_OUTLIERS_H */
