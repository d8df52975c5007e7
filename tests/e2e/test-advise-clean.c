/*
 * test-advise-clean.c - end to end: five well-behaved trainers
 * (s-advise-clean: an MLP, a convolution, a small autodiff tape, an
 * OpenMP matmul on no more threads than CPUs, one whose buffers are
 * allocated once before the loop) recorded with record.sched and
 * memory.allocations, 30 of 40 steps: `stepscope advise` must find
 * nothing above 5% of the step in each (issue 47), with at most one of
 * the five allowed a false positive (a busy CI machine can make any run
 * look odd); each check that judged says "nothing found" or names what it
 * found, and every step's categories add up to it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"
#include "e2e-advise.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define SETS "--set step.function=train_step --set window.start_step=5 " \
	     "--set window.end_step=35 --set record.sched=true --set memory.allocations=true"
#define MAX_PCT 5.0

static void test_clean_runs(void **state)
{
	static const char *const shapes[] = { "mlp", "conv", "autodiff", "omp", "prealloc" };
	struct ss_e2e *t = ss_e2e_begin(state);
	int bad = 0;
	char which[512] = "";

	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp -o p p.c",
		    "gcc's OpenMP (libgomp)", "gcc");
	ss_e2e_build(t, "advise-clean", "-fopenmp -lm");
	for (int k = 0; k < 5; k++) {
		/* no more threads than CPUs */
		SS_E2E_SH_OK(t, "OMP_NUM_THREADS=$(( $(nproc) > 1 ? 2 : 1 )) " SS " record -o %s " SETS
				" -- ./s-advise-clean %s 40", shapes[k], shapes[k]);
		cJSON *adv = ss_e2e_advise(t, shapes[k]);
		int over = 0;
		for (int i = 0; ss_e2e_advise_finding(adv, i); i++) {
			const cJSON *f = ss_e2e_advise_finding(adv, i);
			double pct = ss_e2e_advise_num(f, "save_pct");
			print_message("%s: finding [%s] %.1f%% of the step: %s\n", shapes[k],
				      ss_e2e_advise_str(f, "check"), pct, ss_e2e_advise_str(f, "title"));
			over += pct > MAX_PCT;
		}
		if (over) {
			bad++;
			snprintf(which + strlen(which), sizeof(which) - strlen(which), " %s", shapes[k]);
		}
		/* the text says, per check, what it found or why it did not judge */
		SS_E2E_SH_OK(t, SS " advise -q %s", shapes[k]);
		SS_E2E_CHECK(t, strstr(t->out, "\n  hooks      nothing found ("),
			     "%s: expected 'hooks nothing found':\n%s", shapes[k], t->out);
		cJSON_Delete(adv);
	}
	print_message("clean runs with a finding above %.0f%% of the step: %d of 5%s\n", MAX_PCT,
		      bad, which);
	SS_E2E_CHECK(t, bad <= 1, "%d of 5 clean runs have a finding above %.0f%% of the step:%s",
		     bad, MAX_PCT, which);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_clean_runs, ss_e2e_gcc_O2, "gcc-O2"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
