/*
 * advise-e2e.h - shared by the test-advise-<check>.c tests of h6's checks
 * (alloc, shape, peak): record a planted trainer and the same trainer with
 * the advice applied, ask `stepscope advise --format json` about both, and
 * compare the predicted saving with the measured one.
 *
 * The trainers print "median_step_ns N" (their own clock around each
 * train_step, the first step left out); a measured saving is the planted
 * run's median less the fixed run's.  Medians over many steps and planted
 * effects of several times the step: the CI machines are noisy 2-CPU VMs.
 * Static functions, one copy per test binary (tests/e2e has no library).
 */
#ifndef SS_ADVISE_E2E_H
#define SS_ADVISE_E2E_H

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "e2e.h"

/* Write `text` to DIR/name. */
static void adv_write(struct ss_e2e *t, const char *name, const char *text)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* Record `prog args` with config yaml into rundir; the trainer's median
 * step in ns. */
static double adv_record(struct ss_e2e *t, const char *yaml, const char *rundir,
			 const char *prog, const char *args)
{
	long long ns = -1;

	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c %s -o %s -- ./s-%s %s", yaml,
		     rundir, prog, args);
	const char *m = strstr(t->out, "median_step_ns ");
	SS_E2E_CHECK(t, m && sscanf(m, "median_step_ns %lld", &ns) == 1 && ns > 0,
		     "s-%s %s printed no median_step_ns:\n%s", prog, args, t->out);
	return (double)ns;
}

/* `stepscope advise rundir --format json` (the machine's peak cached in
 * the test's dir), parsed; freed by the caller. */
static cJSON *adv_json(struct ss_e2e *t, const char *rundir)
{
	SS_E2E_SH_OK(t, "XDG_CACHE_HOME=\"$PWD/cache\" \"$SS_E2E_BUILD/bin/stepscope\" advise "
			"--format json %s",
		     rundir);
	cJSON *root = cJSON_Parse(t->out);
	SS_E2E_CHECK(t, root != NULL, "advise %s: not JSON:\n%s", rundir, t->out);
	return root;
}

static const cJSON *adv_get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The finding ranked first, which must be check's and name fn. */
static const cJSON *adv_top(struct ss_e2e *t, const cJSON *root, const char *check,
			    const char *fn)
{
	const cJSON *fs = adv_get(root, "findings"), *f = cJSON_GetArrayItem(fs, 0), *x;
	int named = 0;

	SS_E2E_CHECK(t, f != NULL, "advise found nothing; expected %s first", check);
	x = adv_get(f, "check");
	SS_E2E_CHECK(t, cJSON_IsString(x) && !strcmp(x->valuestring, check),
		     "first finding is %s, expected %s: %s",
		     cJSON_IsString(x) ? x->valuestring : "?", check,
		     cJSON_GetStringValue(adv_get(f, "title")));
	cJSON_ArrayForEach(x, adv_get(f, "functions")) named |=
		cJSON_IsString(x) && !strcmp(x->valuestring, fn);
	SS_E2E_CHECK(t, named, "the %s finding does not name %s", check, fn);
	x = adv_get(f, "evidence");
	SS_E2E_CHECK(t, cJSON_IsString(x) && strstr(x->valuestring, fn),
		     "the %s finding's evidence does not name %s", check, fn);
	return f;
}

static double adv_num(struct ss_e2e *t, const cJSON *o, const char *k)
{
	const cJSON *x = adv_get(o, k);
	SS_E2E_CHECK(t, cJSON_IsNumber(x), "no number %s in advise's json", k);
	return x->valuedouble;
}

/* The planted run: build s-prog, write config to yaml, record `prog
 * args` into rundir and ask advise about it (*bad, freed by the caller);
 * the trainer's median step in ns. */
static double adv_planted(struct ss_e2e *t, const char *yaml, const char *config,
			  const char *rundir, const char *prog, const char *args, cJSON **bad)
{
	ss_e2e_build(t, prog, NULL);
	adv_write(t, yaml, config);
	double before = adv_record(t, yaml, rundir, prog, args);
	*bad = adv_json(t, rundir);
	return before;
}

static void adv_quiet(struct ss_e2e *t, const cJSON *root, const char *check);

/* The run with the advice applied: record `prog args` into rundir, where
 * check must find nothing above 5% of the step; its median step in ns. */
static double adv_fixed(struct ss_e2e *t, const char *yaml, const char *rundir,
			const char *prog, const char *args, const char *check)
{
	double after = adv_record(t, yaml, rundir, prog, args);
	cJSON *good = adv_json(t, rundir);

	adv_quiet(t, good, check);
	cJSON_Delete(good);
	return after;
}

/* check judged the run and found nothing above 5% of the step. */
static void adv_quiet(struct ss_e2e *t, const cJSON *root, const char *check)
{
	const cJSON *x;
	int judged = 0;

	cJSON_ArrayForEach(x, adv_get(root, "checks")) if (!strcmp(
		cJSON_GetStringValue(adv_get(x, "name")) ? cJSON_GetStringValue(adv_get(x, "name")) : "",
		check)) judged = cJSON_IsTrue(adv_get(x, "judged"));
	SS_E2E_CHECK(t, judged, "check %s did not judge the run without the problem", check);
	cJSON_ArrayForEach(x, adv_get(root, "findings"))
	{
		const char *c = cJSON_GetStringValue(adv_get(x, "check"));
		double pct = adv_num(t, x, "save_pct");
		SS_E2E_CHECK(t, !c || strcmp(c, check) || pct <= 5.0,
			     "without the problem, %s still finds %.1f%% of the step: %s", check, pct,
			     cJSON_GetStringValue(adv_get(x, "title")));
	}
}

/* The predicted saving is within a factor of 2 of the measured one. */
static void adv_within2(struct ss_e2e *t, double predicted, double before, double after)
{
	double measured = before - after;

	fprintf(stderr, "e2e: step %.3f ms -> %.3f ms: saved %.3f ms, predicted %.3f ms\n",
		before / 1e6, after / 1e6, measured / 1e6, predicted / 1e6);
	SS_E2E_CHECK(t, measured > 0, "the step did not get faster: %.0f ns -> %.0f ns", before,
		     after);
	SS_E2E_CHECK(t, predicted >= measured / 2 && predicted <= measured * 2,
		     "predicted saving %.0f ns is not within 2x of the measured %.0f ns", predicted,
		     measured);
}

#endif /* SS_ADVISE_E2E_H */
