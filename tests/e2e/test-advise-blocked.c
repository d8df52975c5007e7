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
 *     preemptions of a shared 2-core VM do not decide it);
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

static void test_blocked(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[2][512];

	ss_e2e_build(t, "advise-blocked", NULL);
	record_run(t, "bad", "", out[0], sizeof(out[0]));
	record_run(t, "fixed", "prefetch", out[1], sizeof(out[1]));
	SS_E2E_SH_OK(t, SS " advise bad");
	print_message("%s", t->out);
	cJSON *jb = ss_e2e_advise(t, "bad"), *jf = ss_e2e_advise(t, "fixed");
	const cJSON *top = ss_e2e_advise_finding(jb, 0);
	SS_E2E_CHECK(t, top && !strcmp(ss_e2e_advise_str(top, "check"), "blocked"),
		     "the top finding of the planted run is %s, not blocked",
		     top ? ss_e2e_advise_str(top, "check") : "(none)");
	const cJSON *fn = cJSON_GetArrayItem(cJSON_GetObjectItem(top, "functions"), 0);
	SS_E2E_CHECK(t, cJSON_IsString(fn) && !strcmp(fn->valuestring, "load_batch"),
		     "the blocked finding names %s first, not load_batch",
		     cJSON_IsString(fn) ? fn->valuestring : "(nothing)");
	SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(top, "title"), "steps block off the CPU in load_batch: "),
		     "title: %s", ss_e2e_advise_str(top, "title"));
	/* the advice applied: the median step fell by the saving */
	double bad = (double)ss_e2e_printed(t, out[0], "median_step_ns");
	double good = (double)ss_e2e_printed(t, out[1], "median_step_ns");
	double pred = ss_e2e_advise_num(top, "save_ns"), meas = bad - good;
	print_message("blocked: predicted %.0f ns a step, measured %.0f (%.0f - %.0f)\n", pred,
		      meas, bad, good);
	SS_E2E_CHECK(t, meas > 0 && pred >= meas / 2 && pred <= meas * 2,
		     "predicted saving %.0f ns a step, measured %.0f (median step %.0f -> "
		     "%.0f): not within a factor of 2", pred, meas, bad, good);
	/* the prefetching run: nothing above 5% of the step */
	const cJSON *ff = finding(jf, "blocked");
	SS_E2E_CHECK(t, !ff || ss_e2e_advise_num(ff, "save_pct") <= 5.0,
		     "the prefetching run still has a blocked finding of %.1f%% of the step: %s",
		     ss_e2e_advise_num(ff, "save_pct"), ss_e2e_advise_str(ff, "title"));
	cJSON_Delete(jb);
	cJSON_Delete(jf);
	/* without switch records the check does not judge, and says why */
	SS_E2E_SH_OK(t, SS " record -o nosched -- ./s-advise-blocked 4 > /dev/null");
	cJSON *jn = ss_e2e_advise(t, "nosched");
	const cJSON *c, *cn = NULL;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(jn, "checks"))
		if (!strcmp(ss_e2e_advise_str(c, "name"), "blocked"))
			cn = c;
	SS_E2E_CHECK(t, cn && cJSON_IsFalse(cJSON_GetObjectItem(cn, "judged")) &&
			    !strcmp(ss_e2e_advise_str(cn, "why"), "the run has no record.sched (set record.sched: true to see the time steps spend off the CPU)"),
		     "advise's blocked check on nosched: judged %d, why \"%s\"",
		     cn ? cJSON_IsTrue(cJSON_GetObjectItem(cn, "judged")) : -1, cn ? ss_e2e_advise_str(cn, "why") : "");
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
