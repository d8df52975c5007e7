/*
 * s-html-overview.c - fixture for test-html-overview: a training loop
 * whose steps spend their time in parts of known size, so the overview's
 * bars have known segments.
 *
 *   s-html-overview STEPS
 *
 *   main -> train_step(i) for i < STEPS (config: step.function train_step)
 *     load_batch()   sleeps 4 ms: off the CPU, blocked (record.sched)
 *     forward()      spins 3 ms on the CPU: the user's operators
 *     add_one() x 50000, tiny calls: stepscope's hooks dominate them
 *
 * Functions: main, train_step, load_batch, forward, add_one.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

enum { TINY = 50000 };

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

NOINLINE void train_step(int i)
{
	load_batch();
	forward();
	for (long k = 0; k < TINY; k++)
		add_one(k + i);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;

	for (int i = 0; i < steps; i++)
		train_step(i);
	return 0;
}
