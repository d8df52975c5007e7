/*
 * s-diff.c - fixture for `stepscope diff`: a training loop whose step has
 * three operators of known, fixed work, one of which a second build makes
 * do more.
 *
 *   s-diff [STEPS [SLOW [TIMES]]]
 *                           (default 200 steps; in step SLOW, counted
 *                           from 0, attention does TIMES (4) times its
 *                           work: an outlier step for report --steps)
 *
 *   main -> train_loop(STEPS) -> train_step, per step:
 *     attention     ATTN_WORK units (default 10; the "slower build" passes
 *                   -DATTN_WORK=14: 40% more work, 50% of the base step)
 *     mlp           7 units
 *     layer_norm    3 units, inside the range "norm"
 *
 * A unit is 35 us spun on CLOCK_MONOTONIC, so a unit takes 35 us whatever
 * the machine's load (a loop of fixed work, as before, ran slower while
 * another program shared the core, and two runs of the same build then
 * differed for real: issue 37), and a step is short (0.7 ms): see
 * test-diff.c for why.  Functions: main, train_loop, train_step, attention, mlp,
 * layer_norm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "stepscope.h"
#include "fixture.h"

#ifndef ATTN_WORK
#define ATTN_WORK 10
#endif
#define UNIT_US 35

DEFINE_SINK;

/* The work, inline in each operator so its time is the operator's own. */
#define BURN(units)                                                            \
	do {                                                                   \
		SPIN_US((units) * UNIT_US);                                    \
		SINK(units);                                                   \
	} while (0)

static int slow_step; /* this step's attention does slow_times the work */
static int slow_times = 4;

NOINLINE static void attention(void)
{
	BURN(slow_step ? slow_times * ATTN_WORK : ATTN_WORK);
}

NOINLINE static void mlp(void)
{
	BURN(7);
}

NOINLINE static void layer_norm(void)
{
	BURN(3);
}

NOINLINE static void train_step(void)
{
	attention();
	mlp();
	stepscope_range_push("norm");
	layer_norm();
	stepscope_range_pop();
}

NOINLINE static void train_loop(int steps, int slow)
{
	for (int i = 0; i < steps; i++) {
		slow_step = i == slow;
		train_step();
	}
}

int main(int argc, char **argv)
{
	if (argc > 3)
		slow_times = atoi(argv[3]);
	train_loop(argc > 1 ? atoi(argv[1]) : 200, argc > 2 ? atoi(argv[2]) : -1);
	return 0;
}
