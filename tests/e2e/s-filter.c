/*
 * s-filter.c - fixture for the filter tests: a step with one long operator
 * and many calls of a tiny helper.
 *
 *   s-filter STEPS SPIN_MS NTINY
 *
 *   main
 *     train_loop(STEPS)
 *       train_step(i)            the step function
 *         op_long(i)             spins SPIN_MS (wall clock), no calls
 *         helper_caller(i)       spins SPIN_MS, then tiny x NTINY
 *           tiny(k)
 *
 * Functions: main, train_loop, train_step, op_long, helper_caller, tiny.
 * Built with -DSTEP_CLOCK, each step's time by the program's own clock
 * goes to stderr: "step I NS ns".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

static long spin_ms = 2, ntiny = 100000;

/* no instrumented call inside: clock_gettime is libc */
#define SPIN()                                                                  \
	do {                                                                    \
		struct timespec a, b;                                           \
		clock_gettime(CLOCK_MONOTONIC, &a);                             \
		do {                                                            \
			clock_gettime(CLOCK_MONOTONIC, &b);                     \
		} while ((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec < \
			 spin_ms * 1000000L);                                   \
	} while (0)

NOINLINE long tiny(long k)
{
	return k * 3 + 1;
}

NOINLINE void op_long(long i)
{
	SINK(i);
	SPIN();
}

NOINLINE void helper_caller(long i)
{
	SPIN();
	long s = 0;
	for (long k = 0; k < ntiny; k++)
		s += tiny(k + i);
	SINK(s);
}

NOINLINE void train_step(long i)
{
	op_long(i);
	helper_caller(i);
}

NOINLINE void train_loop(long steps)
{
	for (long i = 0; i < steps; i++) {
#ifdef STEP_CLOCK /* tests/bench/overhead-line.sh: the program's own clock */
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
#endif
		train_step(i);
#ifdef STEP_CLOCK
		clock_gettime(CLOCK_MONOTONIC, &b);
		fprintf(stderr, "step %ld %ld ns\n", i,
			(b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec);
#endif
	}
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	if (argc > 2)
		spin_ms = strtol(argv[2], NULL, 10);
	if (argc > 3)
		ntiny = strtol(argv[3], NULL, 10);
	train_loop(steps);
	return 0;
}
