/*
 * test-step-inlined.c - end to end: a step function the compiler inlined
 * into its caller.  `stepscope record` says so in one line (which function,
 * how to keep it), steps are still counted, and the trace keeps the frames
 * around the steps: loop and main, which the first window's stack used to
 * lose (its innermost frame was taken for the step function's own).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

static void test_step_inlined(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "step-inlined", NULL);
	/* inlined at all?  loop then has no call to train_step */
	int inlined = ss_e2e_sh(t, "objdump -d --no-show-raw-insn s-step-inlined "
				   "| awk '/<loop>:/,/^$/' | grep -q "
				   "'call.*<train_step'") != 0;
	print_message("e2e: %s %s: train_step %s\n", t->v->cc, t->v->opt,
		      inlined ? "inlined into loop" : "called");
	/* steps 2, 3 and 4 recorded */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec "
			      "--set step.function=train_step --set "
			      "schedule.wait=2 --set schedule.active=3 --set "
			      "schedule.repeat=1 -- ./s-step-inlined");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	const char *w = "stepscope: step.function 'train_step' is inlined into "
			"its caller";
	const char *p = strstr(t->err, w);
	if (inlined) {
		SS_E2E_CHECK(t, p && !strstr(p + 1, w) &&
				    strstr(p, "__attribute__((noinline))") &&
				    strstr(p, "-fno-inline-functions-called-once"),
			     "stderr: expected one line '%s ...' naming "
			     "noinline and -fno-inline-functions-called-once, "
			     "got: %s", w, t->err);
	} else {
		SS_E2E_CHECK(t, !p, "stderr: expected no inlining note, got: %s",
			     t->err);
	}
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "loop", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "work", 0, 6);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 1 + 3 + 6);
	SS_E2E_EXPECT_INSIDE(t, tr, "loop", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "train_step", "loop");
	SS_E2E_EXPECT_INSIDE(t, tr, "work", "train_step");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_step_inlined),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
