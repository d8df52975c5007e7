/*
 * s-html-overview.c - fixture for test-html-overview: a training loop
 * whose steps spend their time in parts of known size, so the overview's
 * bars have known segments.
 *
 *   s-html-overview STEPS [deep]
 *
 *   main -> train_step(i) for i < STEPS (config: step.function train_step)
 *     run_step(i)     (deep: through level_00 -> level_01 -> ... ->
 *                      level_41 -> run_step, 42 nested calls whose totals
 *                      are all the step's, so the table's top 40 rows by
 *                      total end before run_step and its callees)
 *       load_batch()   sleeps 4 ms: off the CPU, blocked (record.sched)
 *       forward()      spins 3 ms on the CPU: the user's operators
 *       add_one() x 50000, tiny calls: stepscope's hooks dominate them
 *
 * Functions: main, train_step, run_step, load_batch, forward, add_one,
 * and level_00 .. level_41 when deep.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

enum { TINY = 50000 };

static int deep;

NOINLINE void add_one(long i)
{
	SINK(i);
}

NOINLINE void load_batch(void)
{
	usleep(4000);
}

NOINLINE void forward(void)
{
	SPIN_US(3000);
}

NOINLINE void run_step(int i)
{
	load_batch();
	forward();
	for (long k = 0; k < TINY; k++)
		add_one(k + i);
}

NOINLINE void level_41(int i)
{
	run_step(i);
}

NOINLINE void level_40(int i)
{
	level_41(i);
}

NOINLINE void level_39(int i)
{
	level_40(i);
}

NOINLINE void level_38(int i)
{
	level_39(i);
}

NOINLINE void level_37(int i)
{
	level_38(i);
}

NOINLINE void level_36(int i)
{
	level_37(i);
}

NOINLINE void level_35(int i)
{
	level_36(i);
}

NOINLINE void level_34(int i)
{
	level_35(i);
}

NOINLINE void level_33(int i)
{
	level_34(i);
}

NOINLINE void level_32(int i)
{
	level_33(i);
}

NOINLINE void level_31(int i)
{
	level_32(i);
}

NOINLINE void level_30(int i)
{
	level_31(i);
}

NOINLINE void level_29(int i)
{
	level_30(i);
}

NOINLINE void level_28(int i)
{
	level_29(i);
}

NOINLINE void level_27(int i)
{
	level_28(i);
}

NOINLINE void level_26(int i)
{
	level_27(i);
}

NOINLINE void level_25(int i)
{
	level_26(i);
}

NOINLINE void level_24(int i)
{
	level_25(i);
}

NOINLINE void level_23(int i)
{
	level_24(i);
}

NOINLINE void level_22(int i)
{
	level_23(i);
}

NOINLINE void level_21(int i)
{
	level_22(i);
}

NOINLINE void level_20(int i)
{
	level_21(i);
}

NOINLINE void level_19(int i)
{
	level_20(i);
}

NOINLINE void level_18(int i)
{
	level_19(i);
}

NOINLINE void level_17(int i)
{
	level_18(i);
}

NOINLINE void level_16(int i)
{
	level_17(i);
}

NOINLINE void level_15(int i)
{
	level_16(i);
}

NOINLINE void level_14(int i)
{
	level_15(i);
}

NOINLINE void level_13(int i)
{
	level_14(i);
}

NOINLINE void level_12(int i)
{
	level_13(i);
}

NOINLINE void level_11(int i)
{
	level_12(i);
}

NOINLINE void level_10(int i)
{
	level_11(i);
}

NOINLINE void level_09(int i)
{
	level_10(i);
}

NOINLINE void level_08(int i)
{
	level_09(i);
}

NOINLINE void level_07(int i)
{
	level_08(i);
}

NOINLINE void level_06(int i)
{
	level_07(i);
}

NOINLINE void level_05(int i)
{
	level_06(i);
}

NOINLINE void level_04(int i)
{
	level_05(i);
}

NOINLINE void level_03(int i)
{
	level_04(i);
}

NOINLINE void level_02(int i)
{
	level_03(i);
}

NOINLINE void level_01(int i)
{
	level_02(i);
}

NOINLINE void level_00(int i)
{
	level_01(i);
}

NOINLINE void train_step(int i)
{
	if (deep)
		level_00(i);
	else
		run_step(i);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;

	deep = argc > 2 && !strcmp(argv[2], "deep");
	for (int i = 0; i < steps; i++)
		train_step(i);
	return 0;
}
