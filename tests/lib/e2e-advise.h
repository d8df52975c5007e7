/*
 * e2e-advise.h - helpers for the `stepscope advise` tests: run it with
 * --format json on a run directory, check that every step's categories
 * add up to the step exactly, and read the findings.
 */
#ifndef SS_E2E_ADVISE_H
#define SS_E2E_ADVISE_H

#include <stddef.h>

#include "e2e.h"

struct cJSON;

/* `stepscope advise --format json -o DIR.advise.json DIR` (must exit 0),
 * parsed; fails the test unless every step of "per_step" has its
 * categories ("ns") summing to its "step_ns" exactly and there is at
 * least one step.  cJSON_Delete it. */
struct cJSON *ss_e2e_advise(struct ss_e2e *t, const char *dir);
/* Its "median_step_ns" and "mean_step_ns". */
double ss_e2e_advise_median(const struct cJSON *adv);
double ss_e2e_advise_mean(const struct cJSON *adv);
/* Finding i (0: the first, the largest saving), or NULL. */
const struct cJSON *ss_e2e_advise_finding(const struct cJSON *adv, int i);
/* A string field of a finding ("check", "title", ...; "" when absent) and
 * its saving in percent of the mean step. */
const char *ss_e2e_advise_str(const struct cJSON *finding, const char *key);
double ss_e2e_advise_num(const struct cJSON *finding, const char *key);
/* Whether finding names function fn among its "functions". */
int ss_e2e_advise_names(const struct cJSON *finding, const char *fn);

#endif /* SS_E2E_ADVISE_H */
