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
	ss_e2e_advise_sched_ok(t, st);
	snprintf(out, len, "%s", t->out);
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
		if (!k) {
			SS_E2E_SH_OK(t, SS " advise bad0");
			print_message("%s", t->out);
		}
		const cJSON *top = ss_e2e_advise_top(t, jb, dir[0], "blocked", "load_batch");
		SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(top, "title"),
				       "steps block off the CPU in load_batch: "),
			     "%s: title: %s", dir[0], ss_e2e_advise_str(top, "title"));
		/* the prefetching run: nothing above 5% of the step */
		ss_e2e_advise_quiet(t, jf, dir[1], "blocked");
		/* the advice applied: the median step fell by the saving */
		ratio[k] = ss_e2e_advise_pair(t, top, "blocked", k, out[0], out[1],
					      "median_step_ns", msg[k]);
		cJSON_Delete(jb);
		cJSON_Delete(jf);
	}
	ss_e2e_advise_ratios(t, ratio, msg, REPEAT);
	/* without switch records the check does not judge, and says why */
	SS_E2E_SH_OK(t, SS " record -o nosched -- ./s-advise-blocked 4 > /dev/null");
	ss_e2e_advise_refused(t, "nosched", "blocked", NOSCHED);
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
