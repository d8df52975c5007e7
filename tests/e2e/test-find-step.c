/*
 * test-find-step.c - end to end: picking the step function.
 *   - `stepscope steps -- ./s-find-step 20 wrapped` records the whole run
 *     and picks train_step; forward (also run by validate) and zero_grad
 *     (also called inside the first backward) are listed as traps, with
 *     their exact callers and counts;
 *   - `stepscope steps RUN` on a recorded whole run of the flat loop (no
 *     train_step: the loop calls zero_grad, forward, backward and
 *     optimizer_step itself) picks backward, the only function called once
 *     per iteration that covers most of it;
 *   - record warns at the end when step.function is called from two places
 *     in the recorded steps, when it was re-entered, when no window opened
 *     (with the number of steps seen) and when no step began;
 *   - report counts main and train, open when each of two windows opened,
 *     as clipped parts (Clipped 2), not as calls (Calls 0), and leaves
 *     them out of Avg/Min/Max.
 * The table's time columns (share, mean, spread) are cut before comparing,
 * and the candidates after the first are compared as a set (their order is
 * by time, close enough to vary on a loaded machine); everything else is
 * compared exactly.
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

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
/* the share, mean and spread columns vary from run to run */
#define CUT_TIMES " | sed -E 's/ +[0-9.]+%% +[0-9.]+(ns|us|ms|s) +[0-9]+%%$//'"
/* candidate lines after the first, sorted */
#define SORT_REST " | awk 'NR <= 3 { print; fflush(); next } /^(not step|step\\.function)/ { if (!f) { close(\"sort\"); f = 1 } } !f { print | \"sort\"; next } { print }'"

static void expect_text(struct ss_e2e *t, const char *what, const char *got,
			const char *want)
{
	if (strcmp(got, want)) {
		ss_e2e_show_last(t, -1);
		SS_E2E_FAIL(t, "%s differs:\n--- expected\n%s--- got\n%s", what, want, got);
	}
}

static void test_steps_wrapped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-find-step 20 wrapped" CUT_TIMES SORT_REST);
	expect_text(t, "steps output", t->out,
		    "step function candidates (called in a loop, one thread, never nested), best first:\n"
		    "  function                            calls  loop in                   share       median  spread\n"
		    "  train_step                             20  train\n"
		    "  load_batch                             20  train\n"
		    "  validate                                4  train\n"
		    "not step functions:\n"
		    "  forward                                44  called from validate (24) and train_step (20)\n"
		    "  zero_grad                              21  called from train_step (20) and backward (1)\n"
		    "step.function: train_step\n");
	SS_E2E_CHECK(t, strstr(t->err, "--set step.function=train_step (20 steps in this run)"),
		     "stderr names the --set to use and the 20 steps:\n%s", t->err);
	ss_e2e_pass(t);
}

static void test_steps_flat(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "run", "find-step", "20 flat"), 0);
	SS_E2E_SH_OK(t, SS " steps run" CUT_TIMES SORT_REST);
	expect_text(t, "steps output", t->out,
		    "step function candidates (called in a loop, one thread, never nested), best first:\n"
		    "  function                            calls  loop in                   share       median  spread\n"
		    "  backward                               20  train\n"
		    "  load_batch                             20  train\n"
		    "  optimizer_step                         20  train\n"
		    "  validate                                4  train\n"
		    "not step functions:\n"
		    "  forward                                44  called from validate (24) and train (20)\n"
		    "  zero_grad                              21  called from train (20) and backward (1)\n"
		    "step.function: backward\n");
	/* and the step it picked gives 20 steps of one iteration each */
	SS_E2E_SH_OK(t, SS " record -o run2 --set step.function=backward "
			"--set schedule.active=3 -- ./s-find-step 20 flat");
	SS_E2E_CHECK(t, !strstr(t->err, "warning"), "no warning for backward:\n%s", t->err);
	ss_e2e_pass(t);
}

/* Lines of err that contain "warning". */
static void expect_warnings(struct ss_e2e *t, const char *want)
{
	char got[4096] = "";
	size_t at = 0;
	for (const char *l = t->err; *l;) {
		size_t len = strcspn(l, "\n");
		if (memmem(l, len, "warning", 7) && at + len + 2 < sizeof(got)) {
			memcpy(got + at, l, len);
			at += len;
			got[at++] = '\n';
			got[at] = 0;
		}
		l += len + (l[len] == '\n');
	}
	expect_text(t, "record's warnings", got, want);
}

static void test_record_warns_callers(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	/* step 0: zero_grad in train; step 1: zero_grad inside the first
	 * backward; steps 1-3 recorded */
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=zero_grad --set schedule.wait=1 "
			"--set schedule.active=3 --set schedule.repeat=1 -- ./s-find-step 20 flat");
	expect_warnings(t, "stepscope: warning: step.function 'zero_grad' is called from train (2) "
			   "and backward (1) in the recorded steps: its calls are not one per "
			   "training iteration (see 'stepscope steps')\n");
	ss_e2e_pass(t);
}

static void test_record_warns_reentered(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "recursion", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=down --set schedule.active=3 "
			"-- ./s-recursion 3 3 4");
	expect_warnings(t, "stepscope: warning: step.function 'down' was re-entered: 4 of its 5 "
			   "recorded calls ran inside another call of it and began no step "
			   "(see 'stepscope steps')\n");
	ss_e2e_pass(t);
}

static void test_record_warns_no_window(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=backward --set schedule.skip_first=30 "
			"--set schedule.active=3 -- ./s-find-step 20 flat");
	expect_warnings(t, "stepscope: warning: no step was recorded: the program ran 20 step(s) of "
			   "step.function 'backward', and the schedule skip_first=30 wait=0 warmup=0 "
			   "active=3 records from step 30 on\n");
	SS_E2E_SH_OK(t, SS " record -o run2 --set step.function=backward --set schedule.active=3 "
			"-- ./s-find-step 0 flat");
	expect_warnings(t, "stepscope: warning: no step began: step.function 'backward' was never "
			   "called (run 'stepscope steps -- PROG ARGS' to find the step function)\n");
	ss_e2e_pass(t);
}

static void test_report_clipped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	/* steps 1-2 and 4-5: two windows, main and train open in both */
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set schedule.wait=1 "
			"--set schedule.active=2 --set schedule.repeat=2 -- ./s-find-step 20 wrapped");
	SS_E2E_SH_OK(t, SS " report --format csv run | cut -d, -f1,10,11 | "
			"grep -E '^(name|main|train|train_step|backward),'");
	expect_text(t, "report calls and clipped parts", t->out,
		    "name,calls,clipped\n"
		    "main,0,2\n"
		    "train,0,2\n"
		    "train_step,4,0\n"
		    "backward,4,0\n");
	SS_E2E_SH_OK(t, SS " report run | grep -E '^(main|Clipped: |Name)' | tr -s ' '");
	SS_E2E_CHECK(t, strstr(t->out, "Name Self % Self Total % Total Avg Min Max Calls Clipped\n"),
		     "a Clipped column:\n%s", t->out);
	SS_E2E_CHECK(t, strstr(t->out, " - - - 0 2\n"), "main: Avg/Min/Max '-', Calls 0, "
		     "Clipped 2:\n%s", t->out);
	SS_E2E_CHECK(t, strstr(t->out, "Clipped: parts of calls cut by the start or end of a "
				       "recorded window\n"), "the Clipped footer:\n%s", t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_steps_wrapped),
		SS_E2E_VARIANTS(test_steps_flat),
		SS_E2E_TEST(test_record_warns_callers),
		SS_E2E_TEST(test_record_warns_reentered),
		SS_E2E_TEST(test_record_warns_no_window),
		SS_E2E_VARIANTS(test_report_clipped),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
