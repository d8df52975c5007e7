/*
 * test-advise-omp.c - end to end: `stepscope advise`'s omp check (issue
 * 47) on s-advise-omp, an MLP-shaped trainer whose matmuls are OpenMP
 * parallel for loops, run as in the issue: a team of 2 threads on 2 CPUs
 * where a busy loop (another job) holds one (on a 1-CPU machine both share
 * it), libgomp's default wait policy (its waiting threads spin).
 *
 *   - advise names the planted problem first: the top finding is the omp
 *     check's, for a team of 2 threads, naming the region matmul._omp_fn.0;
 *   - the advice applied (OMP_WAIT_POLICY=passive, same neighbour): the
 *     predicted saving and the measured one (mean recorded step of the two
 *     runs) are printed, NOT asserted.  The same set-up runs in one of two
 *     regimes, at random: every step stalls (51 ms a step; passive or one
 *     thread: 2-2.6 ms; the check predicted 50.4 ms, right), or only a few
 *     steps stall (2.4-2.8 ms mean; passive: 2.1-2.4 ms, once 7 ms with the
 *     team bound; the check predicted 1.4-1.8 ms, 4-30x too much).  On a
 *     quiet CI machine the second is the common one, so the saving of the
 *     omp check is not yet a promise (docs/advise.md, omp, known limits);
 *   - the passive run: the omp check says nothing above 5% of the step
 *     (its team no longer spins);
 *   - a program without OpenMP: the check says why it cannot judge.
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
#define REPEAT 2     /* pairs of runs, planted and passive */

/* Record ./s-advise-omp STEPS into dir with record.sched, a busy loop on
 * the last CPU, the program on CPUs 0 and that one, environment ENV. */
static void record_run(struct ss_e2e *t, const char *dir, const char *env)
{
	int st = ss_e2e_sh(t,
		"C=$(($(nproc) - 1)); CPUS=0,$C; [ $C = 0 ] && CPUS=0; "
		"taskset -c $C sh -c 'while :; do :; done' >/dev/null 2>&1 & H=$!; "
		"%s OMP_NUM_THREADS=2 taskset -c $CPUS " SS " record -o %s "
		"--set record.sched=true -- ./s-advise-omp %d; rc=$?; kill $H; exit $rc",
		env, dir, STEPS);
	ss_e2e_advise_sched_ok(t, st);
}

static void test_omp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp -o p p.c",
		    "gcc's OpenMP (libgomp)", "gcc");
	ss_e2e_need(t, "command -v taskset", "taskset", "util-linux");
	ss_e2e_build(t, "advise-omp", "-fopenmp");
	/* REPEAT pairs of runs, planted then passive */
	char dir[2][32];
	for (int k = 0; k < REPEAT; k++) {
		snprintf(dir[0], sizeof(dir[0]), "bad%d", k);
		snprintf(dir[1], sizeof(dir[1]), "fixed%d", k);
		record_run(t, dir[0], "");
		record_run(t, dir[1], "OMP_WAIT_POLICY=passive");
		if (!k) {
			SS_E2E_SH_OK(t, SS " advise bad0");
			print_message("%s", t->out);
		}
		cJSON *jb = ss_e2e_advise(t, dir[0]), *jf = ss_e2e_advise(t, dir[1]);
		const cJSON *top = ss_e2e_advise_top(t, jb, dir[0], "omp", "matmul._omp_fn.0");
		SS_E2E_CHECK(t, !strncmp(ss_e2e_advise_str(top, "title"),
					 "the OpenMP team of 2 threads spins ", 35),
			     "title: %s", ss_e2e_advise_str(top, "title"));
		SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(top, "advice"), "OMP_WAIT_POLICY=passive"),
			     "advice: %s", ss_e2e_advise_str(top, "advice"));
		/* the advice applied: the saving predicted and measured */
		double bad = ss_e2e_advise_mean(jb), good = ss_e2e_advise_mean(jf);
		double pred = ss_e2e_advise_num(top, "save_ns"), meas = bad - good;
		print_message("omp: pair %d: predicted %.0f ns a step, measured %.0f (mean step "
			      "%.0f -> %.0f; not asserted, see above)\n", k, pred, meas, bad, good);
		/* the passive run: nothing above 5% of the step */
		ss_e2e_advise_quiet(t, jf, dir[1], "omp");
		cJSON_Delete(jb);
		cJSON_Delete(jf);
	}
	/* no OpenMP: not judged, and why */
	ss_e2e_build(t, "advise-outlier", NULL);
	SS_E2E_SH_OK(t, SS " record -o noomp -- ./s-advise-outlier 4 > /dev/null");
	ss_e2e_advise_refused(t, "noomp", "omp",
			      "the run has no OpenMP parallel region in its steps");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_omp, ss_e2e_gcc_O2, "gcc-O2"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
