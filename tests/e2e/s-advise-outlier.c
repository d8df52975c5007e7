/*
 * s-advise-outlier.c - fixture for `stepscope advise`'s outlier check
 * (test-advise-outlier): a training loop where every 10th step one
 * operator does 20 times its work.
 *
 *   s-advise-outlier STEPS [fixed]
 *       main calls train_step(i) STEPS times (default 40), then
 *       stepscope_step();  train_step calls embed (WORK/8), attention
 *       (WORK; 20 times that in steps 9, 19, 29, ... unless `fixed`: the
 *       outliers' excess, 1.9 WORK a step, is most of the mean step) and
 *       mlp (WORK/4).  Each operator is a loop of so many iterations: work
 *       that takes CPU time, longer in wall time when the thread is
 *       preempted (on a busy machine).
 *
 * Prints "mean_step_ns N" and "mean_step_cpu_ns N": the mean wall time and
 * thread CPU time of a step, measured by the fixture around train_step
 * (the outliers' saving is on the mean; CPU time is the step's work,
 * whatever the machine's load).
 * Functions: main, train_step, embed, attention, mlp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stepscope.h"
#include "fixture.h"

DEFINE_SINK;

#define EVERY 10
#define GROW 20
#define WORK 2000000L            /* loop iterations: about 1 ms at -O2 */

/* n iterations of work (a macro: no function the test does not count) */
#define BURN(n)                                                                 \
	do {                                                                    \
		for (long burn_i_ = 0; burn_i_ < (n); burn_i_++)                \
			fixture_sink += burn_i_;                                \
	} while (0)

NOINLINE void embed(void)
{
	BURN(WORK / 8);
}

NOINLINE void attention(int grow)
{
	BURN(WORK * (grow ? GROW : 1));
}

NOINLINE void mlp(void)
{
	BURN(WORK / 4);
}

NOINLINE void train_step(int step, int fixed)
{
	embed();
	attention(!fixed && step % EVERY == EVERY - 1);
	mlp();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 40;
	int fixed = argc > 2 && !strcmp(argv[2], "fixed");
	long long sum = 0, cpu = 0, w0, c0, w1, c1;

	for (int i = 0; i < steps; i++) {
		CLOCK_PAIR(w0, c0);
		train_step(i, fixed);
		CLOCK_PAIR(w1, c1);
		sum += w1 - w0;
		cpu += c1 - c0;
		stepscope_step();
	}
	printf("mean_step_ns %lld\nmean_step_cpu_ns %lld\n", steps ? sum / steps : 0,
	       steps ? cpu / steps : 0);
	return 0;
}
