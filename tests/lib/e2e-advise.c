/*
 * e2e-advise.c - `stepscope advise` helpers for the e2e tests
 * (e2e-advise.h): the JSON output, its per-step sums, its findings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e-advise.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""

struct cJSON *ss_e2e_advise(struct ss_e2e *t, const char *dir)
{
	char out[4200];
	cJSON *adv, *steps, *s;
	int n = 0;

	snprintf(out, sizeof(out), "%s.advise.json", dir);
	SS_E2E_SH_OK(t, SS " advise -q --format json -o %s %s", out, dir);
	adv = ss_e2e_load_json(t, out);
	steps = cJSON_GetObjectItem(adv, "per_step");
	SS_E2E_CHECK(t, cJSON_IsArray(steps) && cJSON_GetArraySize(steps) > 0,
		     "%s: advise's json has no per_step array of steps", dir);
	cJSON_ArrayForEach(s, steps) {
		cJSON *ns = cJSON_GetObjectItem(s, "ns"), *c;
		double sum = 0, want = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "step_ns"));
		SS_E2E_CHECK(t, cJSON_IsObject(ns), "%s: a step without \"ns\"", dir);
		cJSON_ArrayForEach(c, ns) {
			SS_E2E_CHECK(t, cJSON_IsNumber(c) && c->valuedouble >= 0,
				     "%s: category %s is not a time", dir, c->string);
			sum += c->valuedouble;
		}
		SS_E2E_CHECK(t, sum == want && want > 0,
			     "%s: step %d: categories add up to %.0f ns, the step is %.0f ns", dir,
			     n, sum, want);
		n++;
	}
	return adv;
}

double ss_e2e_advise_median(const struct cJSON *adv)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(adv, "median_step_ns"));
}

double ss_e2e_advise_mean(const struct cJSON *adv)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(adv, "mean_step_ns"));
}

const struct cJSON *ss_e2e_advise_finding(const struct cJSON *adv, int i)
{
	cJSON *f = cJSON_GetObjectItem(adv, "findings");

	return cJSON_IsArray(f) && i < cJSON_GetArraySize(f) ? cJSON_GetArrayItem(f, i) : NULL;
}

const char *ss_e2e_advise_str(const struct cJSON *finding, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(finding, key));

	return s ? s : "";
}

double ss_e2e_advise_num(const struct cJSON *finding, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(finding, key));
}

int ss_e2e_advise_names(const struct cJSON *finding, const char *fn)
{
	cJSON *f, *a = cJSON_GetObjectItem(finding, "functions");

	cJSON_ArrayForEach(f, a)
		if (cJSON_IsString(f) && !strcmp(f->valuestring, fn))
			return 1;
	return 0;
}

const struct cJSON *ss_e2e_advise_of(const struct cJSON *adv, const char *check)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItem(adv, "findings"))
	{
		const cJSON *c = cJSON_GetObjectItem(f, "check");
		if (cJSON_IsString(c) && !strcmp(c->valuestring, check))
			return f;
	}
	return NULL;
}

const struct cJSON *ss_e2e_advise_check(const struct cJSON *adv, const char *check)
{
	const cJSON *c, *found = NULL;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(adv, "checks"))
		if (!strcmp(ss_e2e_advise_str(c, "name"), check))
			found = c;
	return found;
}

double ss_e2e_advise_biggest(const struct cJSON *adv, const char *check)
{
	const cJSON *f;
	double best = 0;

	for (int i = 0; (f = ss_e2e_advise_finding(adv, i)); i++)
		if (!strcmp(ss_e2e_advise_str(f, "check"), check) &&
		    ss_e2e_advise_num(f, "save_ns") > best)
			best = ss_e2e_advise_num(f, "save_ns");
	return best;
}

struct cJSON *ss_e2e_advise_show(struct ss_e2e *t, const char *dir)
{
	cJSON *adv = ss_e2e_advise(t, dir);
	const cJSON *f;

	for (int i = 0; (f = ss_e2e_advise_finding(adv, i)); i++)
		fprintf(stderr, "  %s: [%s] saves %.3f ms: %s\n", dir,
			ss_e2e_advise_str(f, "check"), ss_e2e_advise_num(f, "save_ns") / 1e6,
			ss_e2e_advise_str(f, "title"));
	return adv;
}

void ss_e2e_advise_saved(struct ss_e2e *t, const struct cJSON *bad, const struct cJSON *good,
			 const char *check, const char *label, double predicted)
{
	double left = ss_e2e_advise_biggest(good, check), before = ss_e2e_advise_median(bad);
	double after = ss_e2e_advise_median(good), measured = before - after;

	SS_E2E_CHECK(t, left <= 0.05 * after,
		     "%s: a finding of check %s of %.3f ms, median step %.3f ms", label, check,
		     left / 1e6, after / 1e6);
	fprintf(stderr, "  median step %.3f ms -> %.3f ms: saved %.3f ms, predicted %.3f ms\n",
		before / 1e6, after / 1e6, measured / 1e6, predicted / 1e6);
	SS_E2E_CHECK(t, measured > 0 && predicted <= 2 * measured && measured <= 2 * predicted,
		     "saved %.3f ms, predicted %.3f ms: not within a factor of 2", measured / 1e6,
		     predicted / 1e6);
}

const struct cJSON *ss_e2e_advise_first(struct ss_e2e *t, const struct cJSON *adv,
					const char *what, const char *check)
{
	const cJSON *f = ss_e2e_advise_finding(adv, 0);

	SS_E2E_CHECK(t, f != NULL, "%s: advise found nothing", what);
	SS_E2E_CHECK(t, !strcmp(ss_e2e_advise_str(f, "check"), check),
		     "%s: first finding is %s's (%s), expected %s's", what,
		     ss_e2e_advise_str(f, "check"), ss_e2e_advise_str(f, "title"), check);
	return f;
}

void ss_e2e_advise_sched_ok(struct ss_e2e *t, int st)
{
	SS_E2E_CHECK(t, !strstr(t->err, "record.sched:"),
		     "the kernel refused the context-switch event, which this test needs "
		     "(perf_event_open as root, perf_event_paranoid <= 2): %s", t->err);
	SS_E2E_EXPECT_STATUS(t, st, 0);
}

const struct cJSON *ss_e2e_advise_top(struct ss_e2e *t, const struct cJSON *adv,
				      const char *label, const char *check, const char *fn)
{
	const cJSON *top = ss_e2e_advise_finding(adv, 0), *f;

	SS_E2E_CHECK(t, top && !strcmp(ss_e2e_advise_str(top, "check"), check),
		     "%s: the top finding of the planted run is %s, not %s", label,
		     top ? ss_e2e_advise_str(top, "check") : "(none)", check);
	f = cJSON_GetArrayItem(cJSON_GetObjectItem(top, "functions"), 0);
	SS_E2E_CHECK(t, cJSON_IsString(f) && !strcmp(f->valuestring, fn),
		     "%s: the %s finding names %s first, not %s", label, check,
		     cJSON_IsString(f) ? f->valuestring : "(nothing)", fn);
	return top;
}

void ss_e2e_advise_quiet(struct ss_e2e *t, const struct cJSON *adv, const char *label,
			 const char *check)
{
	const cJSON *f = ss_e2e_advise_of(adv, check);

	SS_E2E_CHECK(t, !f || ss_e2e_advise_num(f, "save_pct") <= 5.0,
		     "%s still has a finding of check %s of %.1f%% of the step: %s", label, check,
		     ss_e2e_advise_num(f, "save_pct"), ss_e2e_advise_str(f, "title"));
}

void ss_e2e_advise_refused(struct ss_e2e *t, const char *dir, const char *check,
			   const char *why)
{
	cJSON *adv = ss_e2e_advise(t, dir);
	const cJSON *cn = ss_e2e_advise_check(adv, check);

	SS_E2E_CHECK(t, cn && cJSON_IsFalse(cJSON_GetObjectItem(cn, "judged")) &&
			    !strcmp(ss_e2e_advise_str(cn, "why"), why),
		     "advise's %s check on %s: judged %d, why \"%s\"", check, dir,
		     cn ? cJSON_IsTrue(cJSON_GetObjectItem(cn, "judged")) : -1,
		     cn ? ss_e2e_advise_str(cn, "why") : "");
	cJSON_Delete(adv);
}

double ss_e2e_advise_pair(struct ss_e2e *t, const struct cJSON *top, const char *check, int k,
			  const char *out_bad, const char *out_fixed, const char *key,
			  char *msg)
{
	double b = (double)ss_e2e_printed(t, out_bad, key);
	double g = (double)ss_e2e_printed(t, out_fixed, key);
	double pred = ss_e2e_advise_num(top, "save_ns");

	snprintf(msg, 160, "predicted %.0f ns a step, measured %.0f (%.0f - %.0f)", pred, b - g,
		 b, g);
	print_message("%s: pair %d: %s\n", check, k, msg);
	return b > g ? pred / (b - g) : 1e9;
}

static int ss_e2e_advise_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

void ss_e2e_advise_ratios(struct ss_e2e *t, double *ratio, char (*msg)[160], int n)
{
	char all[1024] = "";
	size_t len = 0;

	for (int k = 0; k < n && len < sizeof(all); k++)
		len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s", k ? "; " : "",
					msg[k]);
	qsort(ratio, (size_t)n, sizeof(ratio[0]), ss_e2e_advise_cmp);
	SS_E2E_CHECK(t, ratio[n / 2] >= 0.5 && ratio[n / 2] <= 2,
		     "median predicted/measured saving %.2f, not within a factor of 2 (%s)",
		     ratio[n / 2], all);
}
