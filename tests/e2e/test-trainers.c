/*
 * test-trainers.c - end to end: `stepscope steps` on trainer-shaped
 * programs, the shapes that fooled it (tracker issue 27).
 *   - s-trainer gpt2: main drives load_batch, forward, zero_grad,
 *     backward and update itself; validation and sampling call forward
 *     inline in main (41 + 25 + 24 = 90 calls); the first backward calls
 *     zero_grad; the layer ops loop inside forward and backward, the
 *     matmul is an OpenMP loop.  steps must propose backward (41 calls,
 *     the count main's other loop bodies share), list forward as called
 *     49 times more than main's 41 iterations and zero_grad with its two
 *     callers;
 *   - s-trainer direct: main calls forward then backward; forward does
 *     ten times the work and must come first, with a median of its own
 *     (OpenMP's threads wait passively: spinning after forward's parallel
 *     loops they took the core from backward, whose median grew from
 *     1.1 ms to 9.2 ms with the other core busy, issue 37);
 *   - s-autodiff: a reader prologue (60 000 read_int calls) and a million
 *     calls a step (6 x 170 000), recorded with a trace cap the prologue
 *     fills (or, on a loaded machine, the first step): the
 *     trace never sees a step return, and steps must still propose
 *     train_step with its exact whole-run count, from the counts of
 *     `stats: whole_run`;
 *   - s-costloop: the same cap, then a step that is one cost function
 *     looping over a hot operator: steps must propose cost, not the
 *     operator (issue 40, item 2).
 * Time columns are not compared; counts, callers and reasons are, exactly.
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

/* t->out has a line beginning with `want` (after the two spaces of a row) */
static void expect_line(struct ss_e2e *t, const char *want)
{
	for (const char *l = t->out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, want, strlen(want)))
			return;
	ss_e2e_show_last(t, -1);
	SS_E2E_FAIL(t, "no line beginning '%s' in:\n%s", want, t->out);
}

/* The first candidate row of steps' table. */
static void expect_first(struct ss_e2e *t, const char *want)
{
	const char *l = strstr(t->out, "best first:\n");
	SS_E2E_CHECK(t, l, "no candidate table:\n%s", t->out);
	l = strchr(l + 12, '\n'); /* the header */
	SS_E2E_CHECK(t, l && !strncmp(l + 1, want, strlen(want)),
		     "first candidate: expected '%s...', got:\n%s", want, t->out);
}

static void test_gpt2(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "trainer", "-fopenmp");
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-trainer 41 gpt2");
	expect_first(t, "  backward                               41  main ");
	expect_line(t, "  update                                 41  main ");
	expect_line(t, "  load_batch                             41  main ");
	expect_line(t, "not step functions:\n");
	expect_line(t, "  forward                                90  called 90 times by main, whose "
		       "loop runs 41 iterations (one backward each): 49 calls are not once per "
		       "iteration (validation, sampling, setup?)\n");
	expect_line(t, "  zero_grad                              42  called from main (41) and "
		       "backward (1)\n");
	expect_line(t, "step.function: backward\n");
	SS_E2E_CHECK(t, strstr(t->err, "--set step.function=backward (41 steps in this run)"),
		     "stderr names backward and its 41 steps:\n%s", t->err);
	ss_e2e_pass(t);
}

/* The median of a call, field 5 of a candidate row ("1.234ms"), in ns. */
static double median_of(struct ss_e2e *t, const char *name)
{
	char key[64], unit[8] = "";
	double v = 0;
	snprintf(key, sizeof(key), "\n  %s ", name);
	const char *l = strstr(t->out, key);
	SS_E2E_CHECK(t, l, "no row %s:\n%s", name, t->out);
	SS_E2E_CHECK(t, sscanf(l, " %*s %*s %*s %*s %lf%7[a-z]", &v, unit) == 2,
		     "row %s: no median", name);
	return v * (!strcmp(unit, "s") ? 1e9 : !strcmp(unit, "ms") ? 1e6 : !strcmp(unit, "us") ? 1e3 : 1);
}

static void test_direct(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "trainer", "-fopenmp");
	SS_E2E_SH_OK(t, "OMP_WAIT_POLICY=passive " SS " steps -o run -- ./s-trainer 30 direct");
	expect_first(t, "  forward                                30  main ");
	expect_line(t, "  backward                               30  main ");
	expect_line(t, "step.function: forward\n");
	double f = median_of(t, "forward"), b = median_of(t, "backward");
	SS_E2E_CHECK(t, f > b, "forward's median %.0f ns should be above backward's %.0f ns", f, b);
	ss_e2e_pass(t);
}

static void test_autodiff_cap(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "autodiff", NULL);
	/* 8 MB: the reader's 80 000 calls fill it before the first step */
	SS_E2E_SH_OK(t, SS " record -o run --set max_trace_mb=8 --set stats=whole_run "
			"-- ./s-autodiff 6 170000 20000");
	SS_E2E_CHECK(t, strstr(t->err, "trace reached max_trace_mb=8"), "the cap was not reached:\n%s",
		     t->err);
	SS_E2E_SH_OK(t, SS " steps run");
	/* the cap comes in the prologue or, on a loaded machine, a little
	 * later: "loop in" is "(after the trace's cap)" or train */
	expect_first(t, "  train_step                              6  ");
	expect_line(t, "step.function: train_step\n");
	SS_E2E_CHECK(t, strstr(t->err, "calls and shares are the whole-run counts"),
		     "steps should say the counts are the whole run's:\n%s", t->err);
	/* `steps -- PROG` keeps the counts by itself; a cap it does not reach */
	SS_E2E_SH_OK(t, SS " steps -o run2 -- ./s-autodiff 3 50000 20000");
	expect_first(t, "  train_step                              3  train ");
	expect_line(t, "step.function: train_step\n");
	ss_e2e_pass(t);
}

/* s-costloop: a prologue fills the 8 MB cap, then the step is one cost
 * function looping over a hot operator, alone in main's loop or beside an
 * update (UPDATE 1).  The trace never sees the loop; the whole-run counts
 * keep each function's first caller, so the operator is known to run
 * inside cost and is never the better step. */
static void test_cost_loop(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "costloop", NULL);
	for (int upd = 0; upd <= 1; upd++) {
		/* 600 000 parse_token calls: 1.2 M events, more than 8 MB;
		 * the loop spins 30 x 6000 x 1 us, above what the prologue's
		 * recorded calls take at clang -O0 on a loaded machine (144 ms
		 * where 30 x 2000 spun 109 ms, and steps rightly ranked
		 * parse_token first) */
		SS_E2E_SH_OK(t, SS " record -o run%d --set max_trace_mb=8 --set stats=whole_run "
				"-- ./s-costloop 30 6000 600000 %d", upd, upd);
		SS_E2E_CHECK(t, strstr(t->err, "trace reached max_trace_mb=8"),
			     "the cap was not reached:\n%s", t->err);
		SS_E2E_SH_OK(t, SS " steps run%d", upd);
		expect_first(t, "  cost                                   30  main ");
		expect_line(t, "  node_op                            180000  cost ");
		expect_line(t, "step.function: cost\n");
		SS_E2E_CHECK(t, strstr(t->err, "--set step.function=cost (30 steps in this run)"),
			     "stderr names cost and its 30 steps:\n%s", t->err);
	}
	ss_e2e_pass(t);
}

/* s-costloop with LAYERS 4: main calls layer_norm 4 times per iteration
 * itself; steps lists it as a loop inside the step, not as calls made for
 * validation or sampling. */
static void test_per_layer_calls(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "costloop", NULL);
	SS_E2E_SH_OK(t, SS " steps -o run -- ./s-costloop 12 200 1000 1 4");
	expect_first(t, "  cost                                   12  main ");
	expect_line(t, "  layer_norm                             48  called 4 times per iteration of "
		       "main's loop (48 calls, 12 iterations of cost): a loop inside the step\n");
	SS_E2E_CHECK(t, !strstr(t->out, "validation"), "no validation hint expected:\n%s", t->out);
	expect_line(t, "step.function: cost\n");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_gpt2),
		SS_E2E_VARIANTS(test_direct),
		SS_E2E_VARIANTS(test_autodiff_cap),
		SS_E2E_VARIANTS(test_cost_loop),
		SS_E2E_VARIANTS(test_per_layer_calls),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
