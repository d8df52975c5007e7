/*
 * test-advise-alloc.c - end to end: the "alloc" check of `stepscope
 * advise` on s-advise-alloc, a trainer that mallocs and frees two scratch
 * buffers of 40 and 36 MiB in every step (blocks glibc maps fresh each
 * time).  advise must rank allocation churn first, naming get_scratch and
 * both sizes; with the buffers kept (`reuse`, the advice applied) the step
 * gets faster by the predicted saving within a factor of 2, and the check
 * finds nothing above 5% of the step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "advise-e2e.h"

static const char config[] = "step:\n"
			     "  function: train_step\n"
			     "memory:\n"
			     "  allocations: true\n";

static void test_churn(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	cJSON *bad;
	double before = adv_planted(t, "alloc.yaml", config, "churn", "advise-alloc", "9", &bad);
	const cJSON *f = adv_top(t, bad, "alloc", "get_scratch");
	const char *ev = cJSON_GetStringValue(adv_get(f, "evidence"));
	SS_E2E_CHECK(t, ev && strstr(ev, "40.00 MiB") && strstr(ev, "36.00 MiB") &&
				strstr(ev, "in 9 of 9 steps"),
		     "evidence lacks the two sizes in 9 of 9 steps: %s", ev ? ev : "");
	double predicted = adv_num(t, f, "save_ns");

	double after = adv_fixed(t, "alloc.yaml", "reuse", "advise-alloc", "9 reuse", "alloc");
	adv_within2(t, predicted, before, after);
	cJSON_Delete(bad);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_churn, ss_e2e_gcc_O2, "gcc-O2"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
