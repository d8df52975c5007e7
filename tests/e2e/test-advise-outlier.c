/*
 * test-advise-outlier.c - end to end: `stepscope advise`'s outlier check
 * (issue 47) on s-advise-outlier, a training loop where every 10th step
 * attention does 20 times its work.
 *
 *   - advise names the planted problem first: the top finding is the
 *     outlier check's, it names attention (its first function) and says
 *     attention grew in the 6 outlier steps 9, 19, ..., 59 of 60;
 *   - the advice applied (`fixed`: attention does the same work in every
 *     step), the step got faster by the predicted saving within a factor of
 *     2: measured = the mean thread CPU time of a step, planted - fixed, as
 *     the fixture measures it around train_step (CPU time, not wall time:
 *     the test machines are shared 2-core VMs where a step is preempted
 *     for milliseconds at random; the check too judges steps on the CPU);
 *   - the fixed run: the outlier check says nothing above 5% of the step.
 *   - in every run advise reads, each step's categories add up to it
 *     exactly (e2e-advise.c).
 * Both runs record with record.sched (the check leaves preempted time out).
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
#define STEPS 60

/* Record ./s-advise-outlier STEPS ARGS into dir with record.sched;
 * the fixture's stdout in out. */
static void record_run(struct ss_e2e *t, const char *dir, const char *args, char *out,
			  size_t len)
{
	int st = ss_e2e_sh(t, SS " record -o %s --set record.sched=true -- ./s-advise-outlier "
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

static void test_outlier(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[2][512];

	ss_e2e_build(t, "advise-outlier", NULL);
	record_run(t, "bad", "", out[0], sizeof(out[0]));
	record_run(t, "fixed", "fixed", out[1], sizeof(out[1]));
	SS_E2E_SH_OK(t, SS " advise bad");
	print_message("%s", t->out);
	cJSON *jb = ss_e2e_advise(t, "bad"), *jf = ss_e2e_advise(t, "fixed");
	const cJSON *top = ss_e2e_advise_finding(jb, 0);
	SS_E2E_CHECK(t, top && !strcmp(ss_e2e_advise_str(top, "check"), "outlier"),
		     "the top finding of the planted run is %s, not outlier",
		     top ? ss_e2e_advise_str(top, "check") : "(none)");
	const cJSON *fn = cJSON_GetArrayItem(cJSON_GetObjectItem(top, "functions"), 0);
	SS_E2E_CHECK(t, cJSON_IsString(fn) && !strcmp(fn->valuestring, "attention"),
		     "the outlier finding names %s first, not attention",
		     cJSON_IsString(fn) ? fn->valuestring : "(nothing)");
	SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(top, "title"), ": attention grew in 6 of them"),
		     "title: %s", ss_e2e_advise_str(top, "title"));
	/* the advice applied: the step's mean CPU time fell by the saving */
	double bad = (double)ss_e2e_printed(t, out[0], "mean_step_cpu_ns");
	double good = (double)ss_e2e_printed(t, out[1], "mean_step_cpu_ns");
	double pred = ss_e2e_advise_num(top, "save_ns"), meas = bad - good;
	print_message("outlier: predicted %.0f ns a step, measured %.0f (%.0f - %.0f)\n", pred,
		      meas, bad, good);
	SS_E2E_CHECK(t, meas > 0 && pred >= meas / 2 && pred <= meas * 2,
		     "predicted saving %.0f ns a step, measured %.0f (mean step CPU %.0f -> "
		     "%.0f): not within a factor of 2", pred, meas, bad, good);
	/* the fixed run: nothing above 5% of the step */
	const cJSON *ff = finding(jf, "outlier");
	SS_E2E_CHECK(t, !ff || ss_e2e_advise_num(ff, "save_pct") <= 5.0,
		     "the fixed run still has an outlier finding of %.1f%% of the step: %s",
		     ss_e2e_advise_num(ff, "save_pct"), ss_e2e_advise_str(ff, "title"));
	cJSON_Delete(jb);
	cJSON_Delete(jf);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_outlier, ss_e2e_gcc_O2, "gcc-O2"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
