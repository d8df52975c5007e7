/*
 * test-step-shapes.c - end to end: `stepscope steps` picks the function a
 * user calls the training step on trainers shaped the way people write
 * them (s-shapes.c; issue 48):
 *   - mlp: main calls linear_init once per layer (2 layers), then
 *     train_step 40 (or 60) times with evaluate after every 20th: the two
 *     calls of linear_init and of evaluate are no loop of two iterations,
 *     and train_step is no "loop inside the step";
 *   - warmup: per-layer init, 3 warm-up train_steps, a reset_timer, then
 *     load_batch and train_step 40 times with a checkpoint every 20th;
 *   - loader: a prefetching data loader thread reads every batch
 *     (read_batch, on its own thread, each call as long as one of main's
 *     iterations: longer than train_step), main takes it and runs
 *     train_step and log_metrics, evaluate every 5th: the main thread's
 *     loop comes first;
 *   - kann: kann_cost (the graph's ops looping inside it) beside
 *     kann_switch, kann_class_error and kann_RMSprop, in two epochs;
 *   - llm: llm.c's main loop, gpt2_forward also run for validation and
 *     sampling (146 forwards for 40 steps): gpt2_backward;
 *   - capped: a reader prologue then cost_step looping over op_dot 500
 *     times, with a trace cap reached on the way: cost_step, from the
 *     whole-run counts; also when each op_dot (1 us, most of the step) is
 *     followed by an op_grad and the cap comes after a few hundred steps:
 *     the operator beside its gradient op looks like an iteration of two
 *     bodies inside cost_step, but the step is the iteration of the
 *     outermost loop;
 *   - epoch: main calls train_epoch twice, each looping over load_batch
 *     and train_step: by the same rule train_epoch is picked, train_step
 *     listed right after it.
 * Each asserts the exact function picked and its steps; time columns are
 * not compared.  And the run steps ranks is the one it was asked for:
 *   - `steps -- PROG` within the second of an earlier one (its default
 *     directory, PROG-steps-DATE-TIME, taken: made here for the next few
 *     seconds, each holding an old file) records into a new directory and
 *     ranks that run; `-o DIR` naming a directory that holds something is
 *     refused in one line before the program runs, exit 2;
 *   - `steps DIR` on a run recorded in step windows (step.function and a
 *     schedule) is refused in one line naming DIR and its steps, exit 2.
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

/* t->out has a line beginning with `want` */
static void expect_line(struct ss_e2e *t, const char *want)
{
	for (const char *l = t->out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, want, strlen(want)))
			return;
	ss_e2e_show_last(t, -1);
	SS_E2E_FAIL(t, "no line beginning '%s' in:\n%s", want, t->out);
}

/* steps picked fn, for n steps */
static void expect_pick(struct ss_e2e *t, const char *fn, int n)
{
	char line[128], set[160];
	snprintf(line, sizeof(line), "step.function: %s\n", fn);
	snprintf(set, sizeof(set), "--set step.function=%s (%d steps in this run)", fn, n);
	const char *l = strstr(t->out, "step.function: ");
	if (!l || strcmp(l, line)) {
		ss_e2e_show_last(t, -1);
		SS_E2E_FAIL(t, "expected the last line '%s', got:\n%s", fn, t->out);
	}
	SS_E2E_CHECK(t, strstr(t->err, set), "stderr should say '%s':\n%s", set, t->err);
}

static void test_mlp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-shapes mlp 40");
	expect_pick(t, "train_step", 40);
	expect_line(t, "  evaluate                                2  main ");
	expect_line(t, "  linear_init                             2  main ");
	SS_E2E_CHECK(t, !strstr(t->out, "loop inside the step"), "nothing loops inside:\n%s", t->out);
	SS_E2E_SH_OK(t, SS " steps -o run2 -- ./s-shapes mlp 60");
	expect_pick(t, "train_step", 60);
	expect_line(t, "  evaluate                                3  main ");
	ss_e2e_pass(t);
}

static void test_warmup(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-shapes warmup 40");
	expect_pick(t, "train_step", 43);
	expect_line(t, "  save_checkpoint                         2  main ");
	expect_line(t, "  load_batch                             40  main ");
	ss_e2e_pass(t);
}

static void test_loader(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-shapes loader 40");
	expect_pick(t, "train_step", 40);
	expect_line(t, "  read_batch                             40  loader_main ");
	ss_e2e_pass(t);
}

static void test_kann(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-shapes kann 40");
	expect_pick(t, "kann_cost", 40);
	ss_e2e_pass(t);
}

static void test_llm(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-shapes llm 40");
	expect_pick(t, "gpt2_backward", 40);
	expect_line(t, "  gpt2_forward                          146  called 146 times by main, whose "
		       "loop runs 40 iterations (one gpt2_backward each): 106 calls are not once per "
		       "iteration (validation, sampling, setup?)\n");
	ss_e2e_pass(t);
}

static void test_capped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	/* 100 000 reads and 2000 x 500 op_dot: 2.2 M events, over 8 MB */
	SS_E2E_SH_OK(t, SS " record -o run --set max_trace_mb=8 --set stats=whole_run "
			"-- ./s-shapes capped 2000 100000");
	SS_E2E_CHECK(t, strstr(t->err, "trace reached max_trace_mb=8"), "the cap was not reached:\n%s",
		     t->err);
	SS_E2E_SH_OK(t, SS " steps run");
	expect_pick(t, "cost_step", 2000);
	/* 20 000 reads, then 2000 x 500 x (op_dot, op_grad): the 8 MB cap
	 * comes after some hundred whole steps */
	SS_E2E_SH_OK(t, SS " record -o run2 --set max_trace_mb=8 --set stats=whole_run "
			"-- ./s-shapes capped 2000 20000 grad");
	SS_E2E_CHECK(t, strstr(t->err, "trace reached max_trace_mb=8"), "the cap was not reached:\n%s",
		     t->err);
	SS_E2E_SH_OK(t, SS " steps run2");
	expect_pick(t, "cost_step", 2000);
	expect_line(t, "  op_dot                            1000000  cost_step ");
	ss_e2e_pass(t);
}

static void test_epoch(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-shapes epoch 40");
	expect_pick(t, "train_epoch", 2);
	const char *l = strstr(t->out, "best first:\n");
	l = l ? strchr(l + 12, '\n') : NULL; /* the header */
	l = l ? strchr(l + 1, '\n') : NULL;  /* train_epoch's row */
	const char *next = "  train_step                             40  train_epoch ";
	SS_E2E_CHECK(t, l && !strncmp(l + 1, next, strlen(next)),
		     "train_step right after train_epoch:\n%s", t->out);
	ss_e2e_pass(t);
}

static void test_new_dir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	/* the default directories of this second and the next four taken */
	SS_E2E_SH_OK(t, "now=$(date +%%s) && for i in 0 1 2 3 4; do "
			"d=stepscope-out/s-shapes-steps-$(date -d @$((now + i)) +%%Y%%m%%d-%%H%%M%%S) && "
			"mkdir -p $d && echo old > $d/old.txt; done");
	SS_E2E_SH_OK(t, SS " steps -- ./s-shapes mlp 3");
	expect_pick(t, "train_step", 3);
	SS_E2E_CHECK(t, !strstr(t->err, "exited with status"), "the program ran and exited 0:\n%s",
		     t->err);
	/* one new directory, next to the five old ones, with the trace */
	SS_E2E_SH_OK(t, "ls stepscope-out/*/*.sstrace | wc -l && ls -d stepscope-out/*/ | wc -l");
	SS_E2E_CHECK(t, !strcmp(t->out, "1\n6\n"), "expected 1 trace in 6 directories, got\n%s",
		     t->out);
	/* -o at a directory that holds something: refused, nothing run */
	SS_E2E_EXPECT_STATUS(t, ss_e2e_sh(t, "d=$(ls -d stepscope-out/*-steps-* | head -n 1) && "
					  SS " steps -o $d -- ./s-shapes mlp 3"), 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, ": output directory is not empty; give a new one with -o, or "
				       "leave -o out (steps records a new run)\n"),
		     "the refusal:\n%s", t->err);
	SS_E2E_CHECK(t, !*t->out, "no table:\n%s", t->out);
	ss_e2e_pass(t);
}

static void test_windowed(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "shapes", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set schedule.wait=2 "
			"--set schedule.active=3 --set schedule.repeat=1 -- ./s-shapes mlp 10");
	SS_E2E_EXPECT_STATUS(t, ss_e2e_sh(t, SS " steps run"), 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, "stepscope: steps: run: recorded with a schedule, in step windows "
				       "(steps 2-4), not the whole run; steps ranks a whole run: "
				       "'stepscope steps -- PROG ARGS' records one\n"),
		     "the refusal names the run and its steps:\n%s", t->err);
	SS_E2E_CHECK(t, !*t->out, "no table:\n%s", t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_mlp),
		SS_E2E_VARIANTS(test_warmup),
		SS_E2E_VARIANTS(test_loader),
		SS_E2E_VARIANTS(test_kann),
		SS_E2E_VARIANTS(test_llm),
		SS_E2E_TEST(test_capped),
		SS_E2E_VARIANTS(test_epoch),
		SS_E2E_TEST(test_new_dir),
		SS_E2E_TEST(test_windowed),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
