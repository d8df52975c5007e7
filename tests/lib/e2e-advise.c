/*
 * e2e-advise.c - `stepscope advise` helpers for the e2e tests
 * (e2e-advise.h): the JSON output, its per-step sums, its findings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
