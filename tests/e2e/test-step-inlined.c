/*
 * test-step-inlined.c - end to end: a step function the compiler inlined
 * into its caller.  `stepscope record` says so in one line (which function,
 * how to keep it), steps are still counted, and the trace keeps the frames
 * around the steps: loop and main, which the first window's stack used to
 * lose (its innermost frame was taken for the step function's own), and,
 * with record.stack, no start code drawn between main and the steps.
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

/* Record s-step-inlined ARG (steps 2, 3 and 4), with record.stack when
 * `stack`, into DIR. */
static int record(struct ss_e2e *t, const char *dir, const char *arg,
		  int stack)
{
	return ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o %s "
			    "--set step.function=train_step --set "
			    "schedule.wait=2 --set schedule.active=3 --set "
			    "schedule.repeat=1 %s -- ./s-step-inlined %s",
			 dir, stack ? "--set record.stack=true" : "", arg);
}

/* The step function inlined into `caller` (loop, or main with `arg`). */
static void check_inlined(struct ss_e2e *t, const char *caller,
			  const char *arg)
{
	char cmd[256];
	/* inlined at all?  the caller then has no call to train_step */
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn "
		 "s-step-inlined | awk '/<%s>:/,/^$/' | grep -q "
		 "'call.*<train_step'", caller);
	int inlined = ss_e2e_sh(t, "%s", cmd) != 0;
	print_message("e2e: %s %s: train_step %s %s\n", t->v->cc, t->v->opt,
		      inlined ? "inlined into" : "called from", caller);
	int st = record(t, "rec", arg, 0);
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
	int in_main = !strcmp(caller, "main");
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "loop", 0, in_main ? 0 : 1);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "work", 0, 6);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0,
			    (in_main ? 1 : 2) + 3 + 6);
	if (!in_main)
		SS_E2E_EXPECT_INSIDE(t, tr, "loop", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "train_step", caller);
	SS_E2E_EXPECT_INSIDE(t, tr, "work", "train_step");

	/* with native stacks, the folded paths are the call tree: no start
	 * code (an inlined train_step's stack begins in its caller) */
	st = record(t, "rec2", arg, 1);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -q --format "
			"folded -o f.folded rec2 >/dev/null && "
			"sed 's/ [0-9]*$//' f.folded | grep -v '^s-step-inlined;main$' | sort");
	/* (each line starts at the thread's name; main alone has a line when
	 * it had self time in the window; the recorded steps' calls go
	 * through one ProfilerStep frame under what spans the steps) */
	const char *want = in_main ? "s-step-inlined;main;ProfilerStep;train_step\n"
				     "s-step-inlined;main;ProfilerStep;train_step;work\n"
				   : "s-step-inlined;main;loop\n"
				     "s-step-inlined;main;loop;ProfilerStep;train_step\n"
				     "s-step-inlined;main;loop;ProfilerStep;train_step;work\n";
	SS_E2E_CHECK(t, !strcmp(t->out, want), "folded stacks: expected\n%s"
		     "got\n%s", want, t->out);
	SS_E2E_SH_OK(t, "rm -rf rec rec2 f.folded");
}

static void test_step_inlined(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "step-inlined", NULL);
	check_inlined(t, "loop", "");
	check_inlined(t, "main", "x");
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
