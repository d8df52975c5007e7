/*
 * test-direct-run.c - end to end: an instrumented program run on its own,
 * without `stepscope record` and without a config, records the whole run
 * with a bounded trace (max_trace_mb=128) and whole-run statistics, names
 * its directory PROG-DATE-TIME-PID under stepscope-out/, and says so in one
 * line at exit that points at `stepscope steps`.  `stepscope steps` on
 * that directory picks the step function.  A config (STEPSCOPE_SET here)
 * or `stepscope record` keeps the documented defaults (4096, window), and
 * STEPSCOPE_DISABLE=1 records nothing.  A run with a config names it in
 * its line at exit, and where it was found: a ./stepscope.yaml in the
 * working directory (which changes what a bare run records), a
 * STEPSCOPE_CONFIG file, STEPSCOPE_SET.  test_first_program walks
 * docs/first-program.md sections 1-3 on a copy of examples/mlp: built with
 * PROFILE=1, a bare ./train there records the whole run (no config of its
 * own is found in the example's directory) and `stepscope steps` on it
 * picks train_step.
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
#define CLEAN_ENV "env -u STEPSCOPE_CONFIG -u STEPSCOPE_SET -u STEPSCOPE_DIR -u STEPSCOPE_DISABLE "

static void test_direct_run(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	SS_E2E_SH_OK(t, CLEAN_ENV "./s-find-step 20 wrapped");
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	/* the one line, with the run directory's name checked by shape */
	SS_E2E_SH_OK(t, "d=$(ls -d stepscope-out/s-find-step-*) && "
			"echo \"$d\" | grep -Ex 'stepscope-out/s-find-step-[0-9]{8}-[0-9]{6}-[0-9]+' && "
			"grep -Ex \"stepscope: recorded the whole run into $PWD/$d \\(0\\.[0-9] MB of trace, "
			"whole-run statistics\\); next: 'stepscope steps $PWD/$d' picks the step function; "
			"STEPSCOPE_DISABLE=1 runs the program without recording\" cmd-1.err");
	SS_E2E_SH_OK(t, "strings stepscope-out/*/*.sstrace | grep -E '^(max_trace_mb|stats)='");
	if (strcmp(t->out, "max_trace_mb=128\nstats=whole_run\n"))
		SS_E2E_FAIL(t, "direct-run config: expected max_trace_mb=128 and stats=whole_run, got\n%s",
			    t->out);
	SS_E2E_SH_OK(t, SS " steps stepscope-out/s-find-step-* | tail -n 1");
	if (strcmp(t->out, "step.function: train_step\n"))
		SS_E2E_FAIL(t, "steps on the direct run: expected train_step, got\n%s", t->out);
	SS_E2E_SH_OK(t, SS " report --whole-run --format csv stepscope-out/s-find-step-* | "
			"grep -c '^train_step,'");
	ss_e2e_pass(t);
}

static void test_direct_run_configured(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "find-step", NULL);
	SS_E2E_SH_OK(t, CLEAN_ENV "STEPSCOPE_SET=log.every_n_steps=0 ./s-find-step 3 wrapped");
	SS_E2E_SH_OK(t, "strings stepscope-out/*/*.sstrace | grep -E '^(max_trace_mb|stats)='");
	if (strcmp(t->out, "max_trace_mb=4096\nstats=window\n"))
		SS_E2E_FAIL(t, "with STEPSCOPE_SET: expected the defaults, got\n%s", t->out);
	SS_E2E_SH_OK(t, "d=$PWD/$(ls -d stepscope-out/s-find-step-*) && grep -Fx \"stepscope: trace "
			"written to $d; no config file, STEPSCOPE_SET; next: stepscope symbolize $d\" "
			"cmd-1.err");
	/* ./stepscope.yaml, found in the working directory: said, with where */
	SS_E2E_SH_OK(t, "rm -rf stepscope-out && printf 'step: {function: train_step}\\n' > "
			"stepscope.yaml && " CLEAN_ENV "./s-find-step 3 wrapped 2> run.err && d=$PWD/$(ls -d "
			"stepscope-out/s-find-step-*) && grep -Fx \"stepscope: trace written to $d; "
			"config ./stepscope.yaml, found in the working directory $PWD; next: stepscope "
			"symbolize $d\" run.err");
	/* STEPSCOPE_CONFIG, relative, with its whole path; and STEPSCOPE_SET on top */
	SS_E2E_SH_OK(t, "rm -rf stepscope-out && mv stepscope.yaml c.yaml && " CLEAN_ENV
			"STEPSCOPE_CONFIG=c.yaml STEPSCOPE_SET=log.every_n_steps=0 ./s-find-step 3 "
			"wrapped 2> run.err && d=$PWD/$(ls -d stepscope-out/s-find-step-*) && grep -Fx "
			"\"stepscope: trace written to $d; config STEPSCOPE_CONFIG=c.yaml ($PWD/c.yaml) "
			"+ STEPSCOPE_SET; next: stepscope symbolize $d\" run.err");
	SS_E2E_SH_OK(t, CLEAN_ENV SS " record -o rec -- ./s-find-step 3 wrapped && "
			"strings rec/*.sstrace | grep -E '^(max_trace_mb|stats)='");
	if (strcmp(t->out, "max_trace_mb=4096\nstats=window\n"))
		SS_E2E_FAIL(t, "under record: expected the defaults, got\n%s", t->out);
	SS_E2E_SH_OK(t, "rm -rf stepscope-out && " CLEAN_ENV
			"STEPSCOPE_DISABLE=1 ./s-find-step 3 wrapped && test ! -e stepscope-out");
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 0);
	ss_e2e_pass(t);
}

static void test_first_program(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	/* 1. build the program through the wrapper (a copy: the tree's own
	 * examples/mlp/build is left alone) */
	SS_E2E_SH_OK(t, "mkdir -p examples/mlp examples/common && cp \"$SS_E2E_SRC\"/examples/common/* "
			"examples/common/ && cd \"$SS_E2E_SRC/examples/mlp\" && cp *.c *.h *.yaml Makefile "
			"\"$OLDPWD/examples/mlp/\"");
	SS_E2E_SH_OK(t, "make -s -C examples/mlp PROFILE=1 "
			"STEPSCOPE_CC=\"$SS_E2E_BUILD/bin/stepscope-cc\"");
	/* 2. run it once on its own, from its directory */
	SS_E2E_SH_OK(t, "cd examples/mlp && " CLEAN_ENV "./train --steps 20 --eval-every 10");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "stepscope: recorded the whole run into ") == 1 &&
			     ss_e2e_lines_with(t->err, "stepscope:") == 1,
		     "a bare ./train in examples/mlp: expected docs/first-program.md's one line "
		     "'stepscope: recorded the whole run into ...', got:\n%s", t->err);
	/* 3. pick the step function */
	SS_E2E_SH_OK(t, SS " steps examples/mlp/stepscope-out/train-*");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, "step.function: train_step") == 1,
		     "stepscope steps on the bare run: expected 'step.function: train_step', got:\n%s",
		     t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_direct_run),
		SS_E2E_TEST(test_direct_run_configured),
		SS_E2E_TEST(test_first_program),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
