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

/* The first finding of check `check`, or NULL. */
const struct cJSON *ss_e2e_advise_of(const struct cJSON *adv, const char *check);

/* The entry of check `check` in adv's "checks" (judged, why), or NULL. */
const struct cJSON *ss_e2e_advise_check(const struct cJSON *adv, const char *check);
/* The largest saving of check's findings in adv, ns (0: none). */
double ss_e2e_advise_biggest(const struct cJSON *adv, const char *check);
/* ss_e2e_advise, and its findings printed to stderr. */
struct cJSON *ss_e2e_advise_show(struct ss_e2e *t, const char *dir);
/* The advice applied: good's median step is faster than bad's by
 * predicted within 2x, and good has no finding of check above 5% of its
 * median step (label: good, in messages). */
void ss_e2e_advise_saved(struct ss_e2e *t, const struct cJSON *bad, const struct cJSON *good,
			 const char *check, const char *label, double predicted);

/* The first finding of adv (the planted run, `what` in messages), which
 * must be check's. */
const struct cJSON *ss_e2e_advise_first(struct ss_e2e *t, const struct cJSON *adv,
					const char *what, const char *check);

/* The planted run's checks, shared by the test-advise-<check>.c tests
 * (label: the run, in messages). */
/* After st = ss_e2e_sh(t, "... record --set record.sched=true ..."): fail
 * unless the kernel gave the context-switch event and it exited 0. */
void ss_e2e_advise_sched_ok(struct ss_e2e *t, int st);
/* The first finding of adv, which must be check's and name fn first. */
const struct cJSON *ss_e2e_advise_top(struct ss_e2e *t, const struct cJSON *adv,
				      const char *label, const char *check, const char *fn);
/* check's finding in adv (the run with the advice applied), if any, is
 * at most 5% of the step. */
void ss_e2e_advise_quiet(struct ss_e2e *t, const struct cJSON *adv, const char *label,
			 const char *check);
/* `stepscope advise` on dir does not judge check, and says exactly why. */
void ss_e2e_advise_refused(struct ss_e2e *t, const char *dir, const char *check,
			   const char *why);
/* Pair k of a planted and a fixed run (their fixtures' stdout out_bad and
 * out_fixed, each printing "KEY N"): top's predicted saving over the
 * measured one (1e9 when the step did not get faster), both into msg
 * (160 bytes) and printed. */
double ss_e2e_advise_pair(struct ss_e2e *t, const struct cJSON *top, const char *check, int k,
			  const char *out_bad, const char *out_fixed, const char *key,
			  char *msg);
/* The median of n pairs' predicted/measured savings (ratio, sorted here)
 * is within a factor of 2; msg: each pair's numbers, for the message. */
void ss_e2e_advise_ratios(struct ss_e2e *t, double *ratio, char (*msg)[160], int n);

#endif /* SS_E2E_ADVISE_H */
