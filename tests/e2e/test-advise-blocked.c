/*
 * test-advise-blocked.c - end to end: `stepscope advise`'s blocked check
 * (issue 47) on s-advise-blocked, a training loop whose step loads its own
 * batch (reads a file, then sleeps 6 ms: a slow disk's wait) before 10 ms
 * of compute.
 *
 *   - advise names the planted problem first: the top finding is the
 *     blocked check's and names load_batch first;
 *   - the advice applied (`prefetch`: a loader thread loads the next batch
 *     while the step computes), the median step got faster by the
 *     predicted saving within a factor of 2 (the fixture's median wall
 *     time of a step: the median, as the check's, so that the long
 *     preemptions of a shared 2-core VM do not decide it); 3 pairs of runs,
 *     the median of their predicted/measured ratios;
 *   - the prefetching run: the blocked check says nothing above 5% of the
 *     step;
 *   - a run without record.sched: the check says why it cannot judge.
 *   - in every run advise reads, each step's categories add up to it
 *     exactly (e2e-advise.c).
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

#include "e2e.h"
#include "e2e-advise.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define STEPS 40
#define REPEAT 3     /* pairs of runs, planted and prefetching */

/* Record ./s-advise-blocked STEPS ARGS into dir with record.sched;
 * the fixture's stdout in out. */
static void record_run(struct ss_e2e *t, const char *dir, const char *args, char *out,
			  size_t len)
{
	int st = ss_e2e_sh(t, SS " record -o %s --set record.sched=true -- ./s-advise-blocked "
			   "%d %s", dir, STEPS, args);
	SS_E2E_CHECK(t, !strstr(t->err, "record.sched:"),
		     "the kernel refused the context-switch event, which this test needs "
		     "(perf_event_open as root, perf_event_paranoid <= 2): %s", t->err);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	snprintf(out, len, "%s", t->out);
}

/* The first finding of check `name` in advise's json, or NULL. */
static const cJSON *finding(const cJSON *j, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "findings"))
	{
		const cJSON *c = cJSON_GetObjectItem(f, "check");
		if (cJSON_IsString(c) && !strcmp(c->valuestring, name))
			return f;
	}
	return NULL;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

#define NOSCHED "the run has no record.sched (set record.sched: true to see the time " \
		"steps spend off the CPU)"

static void test_blocked(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[2][512], dir[2][32], msg[REPEAT][160];
	double ratio[REPEAT];

	ss_e2e_build(t, "advise-blocked", NULL);
	/* REPEAT pairs of runs, planted then prefetching: each pair's
	 * predicted saving (its planted run's) against its measured one */
	for (int k = 0; k < REPEAT; k++) {
		snprintf(dir[0], sizeof(dir[0]), "bad%d", k);
		snprintf(dir[1], sizeof(dir[1]), "fixed%d", k);
		record_run(t, dir[0], "", out[0], sizeof(out[0]));
		record_run(t, dir[1], "prefetch", out[1], sizeof(out[1]));
		cJSON *jb = ss_e2e_advise(t, dir[0]), *jf = ss_e2e_advise(t, dir[1]);
		const cJSON *top = ss_e2e_advise_finding(jb, 0);
		if (!k) {
			SS_E2E_SH_OK(t, SS " advise bad0");
			print_message("%s", t->out);
		}
		SS_E2E_CHECK(t, top && !strcmp(ss_e2e_advise_str(top, "check"), "blocked"),
			     "%s: the top finding of the planted run is %s, not blocked", dir[0],
			     top ? ss_e2e_advise_str(top, "check") : "(none)");
		const cJSON *fn = cJSON_GetArrayItem(cJSON_GetObjectItem(top, "functions"), 0);
		SS_E2E_CHECK(t, cJSON_IsString(fn) && !strcmp(fn->valuestring, "load_batch"),
			     "%s: the blocked finding names %s first, not load_batch", dir[0],
			     cJSON_IsString(fn) ? fn->valuestring : "(nothing)");
		SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(top, "title"),
				       "steps block off the CPU in load_batch: "),
			     "%s: title: %s", dir[0], ss_e2e_advise_str(top, "title"));
		/* the prefetching run: nothing above 5% of the step */
		const cJSON *ff = finding(jf, "blocked");
		SS_E2E_CHECK(t, !ff || ss_e2e_advise_num(ff, "save_pct") <= 5.0,
			     "%s still has a blocked finding of %.1f%% of the step: %s", dir[1],
			     ss_e2e_advise_num(ff, "save_pct"), ss_e2e_advise_str(ff, "title"));
		/* the advice applied: the median step fell by the saving */
		double b = (double)ss_e2e_printed(t, out[0], "median_step_ns");
		double g = (double)ss_e2e_printed(t, out[1], "median_step_ns");
		double pred = ss_e2e_advise_num(top, "save_ns");
		ratio[k] = b > g ? pred / (b - g) : 1e9;
		snprintf(msg[k], sizeof(msg[k]), "predicted %.0f ns a step, measured %.0f (%.0f - "
			 "%.0f)", pred, b - g, b, g);
		print_message("blocked: pair %d: %s\n", k, msg[k]);
		cJSON_Delete(jb);
		cJSON_Delete(jf);
	}
	qsort(ratio, REPEAT, sizeof(ratio[0]), cmp_d);
	SS_E2E_CHECK(t, ratio[REPEAT / 2] >= 0.5 && ratio[REPEAT / 2] <= 2,
		     "median predicted/measured saving %.2f, not within a factor of 2 (%s; %s; %s)",
		     ratio[REPEAT / 2], msg[0], msg[1], msg[2]);
	/* without switch records the check does not judge, and says why */
	SS_E2E_SH_OK(t, SS " record -o nosched -- ./s-advise-blocked 4 > /dev/null");
	cJSON *jn = ss_e2e_advise(t, "nosched");
	const cJSON *c, *cn = NULL;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(jn, "checks"))
		if (!strcmp(ss_e2e_advise_str(c, "name"), "blocked"))
			cn = c;
	SS_E2E_CHECK(t, cn && cJSON_IsFalse(cJSON_GetObjectItem(cn, "judged")) &&
			    !strcmp(ss_e2e_advise_str(cn, "why"), NOSCHED),
		     "advise's blocked check on nosched: judged %d, why \"%s\"",
		     cn ? cJSON_IsTrue(cJSON_GetObjectItem(cn, "judged")) : -1,
		     cn ? ss_e2e_advise_str(cn, "why") : "");
	cJSON_Delete(jn);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_blocked, ss_e2e_gcc_O2, "gcc-O2"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
