/*
 * test-advise-outlier.c - end to end: `stepscope advise`'s outlier check
 * (issue 47) on s-advise-outlier, a training loop where every 10th step
 * attention does 20 times its work.
 *
 *   - advise names the planted problem first: the top finding is the
 *     outlier check's, it names attention (its first function) and says
 *     attention grew in the outlier steps: 6 (9, 19, ..., 59 of 60) or more
 *     (a step the busy machine slowed, where attention, most of a step,
 *     grew too);
 *   - the advice applied (`fixed`: attention does the same work in every
 *     step), the step got faster by the predicted saving within a factor of
 *     2: measured = the mean thread CPU time of a step, planted - fixed, as
 *     the fixture measures it around train_step (CPU time, not wall time:
 *     the test machines are shared 2-core VMs where a step is preempted
 *     for milliseconds at random; the check too judges steps on the CPU);
 *     3 pairs of runs, the median of their predicted/measured ratios (on a
 *     loaded VM the CPU time of the same work varied 2x from run to run);
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
#define REPEAT 3     /* pairs of runs, planted and fixed */

/* Record ./s-advise-outlier STEPS ARGS into dir with record.sched;
 * the fixture's stdout in out. */
static void record_run(struct ss_e2e *t, const char *dir, const char *args, char *out,
			  size_t len)
{
	int st = ss_e2e_sh(t, SS " record -o %s --set record.sched=true -- ./s-advise-outlier "
			   "%d %s", dir, STEPS, args);
	ss_e2e_advise_sched_ok(t, st);
	snprintf(out, len, "%s", t->out);
}

static void test_outlier(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[2][512], dir[2][32], msg[REPEAT][160];
	double ratio[REPEAT];

	ss_e2e_build(t, "advise-outlier", NULL);
	/* REPEAT pairs of runs, planted then fixed: each pair's predicted
	 * saving (its planted run's) against its measured one */
	for (int k = 0; k < REPEAT; k++) {
		snprintf(dir[0], sizeof(dir[0]), "bad%d", k);
		snprintf(dir[1], sizeof(dir[1]), "fixed%d", k);
		record_run(t, dir[0], "", out[0], sizeof(out[0]));
		record_run(t, dir[1], "fixed", out[1], sizeof(out[1]));
		cJSON *jb = ss_e2e_advise(t, dir[0]), *jf = ss_e2e_advise(t, dir[1]);
		if (!k) {
			SS_E2E_SH_OK(t, SS " advise bad0");
			print_message("%s", t->out);
		}
		const cJSON *top = ss_e2e_advise_top(t, jb, dir[0], "outlier", "attention");
		const char *gr = strstr(ss_e2e_advise_str(top, "title"), ": attention grew in ");
		SS_E2E_CHECK(t, gr && atoi(gr + 20) >= 6, "%s: title: %s", dir[0],
			     ss_e2e_advise_str(top, "title"));
		/* the fixed run: nothing above 5% of the step */
		ss_e2e_advise_quiet(t, jf, dir[1], "outlier");
		/* the advice applied: the step's mean CPU time fell by the saving */
		ratio[k] = ss_e2e_advise_pair(t, top, "outlier", k, out[0], out[1],
					      "mean_step_cpu_ns", msg[k]);
		cJSON_Delete(jb);
		cJSON_Delete(jf);
	}
	ss_e2e_advise_ratios(t, ratio, msg, REPEAT);
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
