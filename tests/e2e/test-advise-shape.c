/*
 * test-advise-shape.c - end to end: the "shape" check of `stepscope
 * advise` on s-advise-shape, a trainer whose matmul reads one operand with
 * a 4 KiB stride for one of its three shapes (bt=1).  With record.args and
 * flops:, advise must rank that shape first, naming matmul and the shape;
 * with the faster loop for it (`fast`, the advice applied) the step gets
 * faster by the predicted saving within a factor of 2, and the check finds
 * nothing above 5% of the step.  Built with -O3 -march=native, so that the
 * other shapes run as a tuned build would (the "peak" check leaves them).
 * With record.sched: GFLOP/s leave out the time a call was preempted, which
 * on a busy machine falls on long calls more than on short ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "advise-e2e.h"

static const struct ss_e2e_variant gcc_O3 = { "gcc", "-O3 -march=native" };

static const char config[] = "step:\n"
			     "  function: train_step\n"
			     "record:\n"
			     "  args: [matmul]\n"
			     "  sched: true\n"
			     "flops:\n"
			     "  matmul: \"2*m*k*n\"\n";

static void test_slow_shape(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	cJSON *bad;
	double before = adv_planted(t, "shape.yaml", config, "slow", "advise-shape", "12", &bad);
	const cJSON *f = adv_top(t, bad, "shape", "matmul");
	const char *ti = cJSON_GetStringValue(adv_get(f, "title"));
	SS_E2E_CHECK(t, ti && strstr(ti, "m=8 k=1024 n=1024 bt=1"),
		     "the finding does not name the slow shape: %s", ti ? ti : "");
	double predicted = adv_num(t, f, "save_ns");
	SS_E2E_CHECK(t, cJSON_GetArraySize(adv_get(bad, "findings")) < 2 ||
				strcmp(cJSON_GetStringValue(adv_get(
					       cJSON_GetArrayItem(adv_get(bad, "findings"), 1),
					       "check")),
				       "shape"),
		     "a second shape of matmul was found slow");

	double after = adv_fixed(t, "shape.yaml", "fast", "advise-shape", "12 fast", "shape");
	adv_within2(t, predicted, before, after);
	cJSON_Delete(bad);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_slow_shape, gcc_O3, "gcc-O3-native"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
