/*
 * s-diff.c - fixture for `stepscope diff`: a training loop whose step has
 * three operators of known, fixed work, one of which a second build makes
 * do more.
 *
 *   s-diff [STEPS [SLOW]]   (default 200 steps; in step SLOW, counted
 *                           from 0, attention does 4 times its work: an
 *                           outlier step for report --steps)
 *
 *   main -> train_loop(STEPS) -> train_step, per step:
 *     attention     ATTN_WORK units (default 10; the "slower build" passes
 *                   -DATTN_WORK=14: 40% more work, 50% of the base step)
 *     mlp           7 units
 *     layer_norm    3 units, inside the range "norm"
 *
 * A unit is a dependent chain of 20000 floating-point multiply-adds (no
 * memory traffic, no vectorization; about 35 us), so its time depends on
 * the core's clock only, and a step is short (about 0.7 ms): see
 * test-diff.c for why.  Functions: main, train_loop, train_step, attention, mlp,
 * layer_norm.
 */
#include <stdio.h>
#include <stdlib.h>

#include "stepscope.h"
#include "fixture.h"

#ifndef ATTN_WORK
#define ATTN_WORK 10
#endif
#define UNIT 20000L

DEFINE_SINK;

/* The work, inline in each operator so its time is the operator's own. */
#define BURN(units)                                                            \
	do {                                                                   \
		double x_ = 1.0;                                               \
		for (long i_ = 0; i_ < (units) * UNIT; i_++)                   \
			x_ = x_ * 0.9999999 + 0.5;                             \
		SINK(x_);                                                      \
	} while (0)

static int slow_step; /* this step's attention does 4 times the work */

NOINLINE static void attention(void)
{
	BURN(slow_step ? 4 * ATTN_WORK : ATTN_WORK);
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
	train_loop(argc > 1 ? atoi(argv[1]) : 200, argc > 2 ? atoi(argv[2]) : -1);
	return 0;
}
