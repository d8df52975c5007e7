/*
 * s-diff-paths.c - fixture for `stepscope diff` on call paths
 * (test-diff-damaged.c): two operators share one helper, and one of them
 * calls a tiny function many times.
 *
 *   s-diff-paths [STEPS]   (default 40 steps)
 *
 *   main -> train_loop(STEPS) -> train_step, per step:
 *     op_a      helper(A_US)     (A_US default 100; the "slower build"
 *                                 passes -DA_US=400)
 *     op_b      helper(100), then tiny() TINY_CALLS (2500) times
 *     helper    spins its argument in us
 *     tiny      spins 100 ns (a rebuild excludes it from instrumentation:
 *               its time then is op_b's own)
 *
 * Work spins on CLOCK_MONOTONIC (fixture.h), so load cannot stretch it.
 * Functions: main, train_loop, train_step, op_a, op_b, helper, tiny.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

#ifndef A_US
#define A_US 100
#endif
#define TINY_CALLS 2500

DEFINE_SINK;

NOINLINE static void helper(int us)
{
	SPIN_US(us);
	SINK(us);
}

NOINLINE static void tiny(int i)
{
	SPIN_NS(100);
	SINK(i);
}

NOINLINE static void op_a(void)
{
	helper(A_US);
}

NOINLINE static void op_b(void)
{
	helper(100);
	for (int i = 0; i < TINY_CALLS; i++)
		tiny(i);
}

NOINLINE static void train_step(void)
{
	op_a();
	op_b();
}

NOINLINE static void train_loop(int steps)
{
	for (int i = 0; i < steps; i++)
		train_step();
}

int main(int argc, char **argv)
{
	train_loop(argc > 1 ? atoi(argv[1]) : 40);
	return 0;
}
