/*
 * s-filter-cost.c - fixture for `stepscope filter`'s judged time: two
 * functions whose own cost is known by construction, called many times a
 * step next to a fixed spin.
 *
 *   s-filter-cost STEPS NDOT NGET SPIN_MS
 *
 *   main                       first times dot64's work without hooks:
 *                              prints "plain dot64 N ns" (the fastest of
 *                              20 batches of 2000 calls of dot64_plain,
 *                              the same code marked no_instrument_function)
 *     train_loop(STEPS)
 *       train_step(i)          the step function: spins SPIN_MS on the
 *                              clock, then
 *         dot64(x)  x NDOT     a 64-element dot product of doubles taken 3
 *                              times: 192 dependent multiply-adds, which
 *                              no -O level may reorder (no -ffast-math):
 *                              about 100 ns, well over one recorded call's
 *                              cost; each call starts from the last one's
 *                              result, so calls cannot overlap (here and
 *                              in main)
 *         get(k)    x NGET     a trivial accessor: one load
 *
 * Functions: main, train_loop, train_step, dot64, get.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

static double va[64], vb[64];
static long cell[16];

#define DOT64_BODY                                                              \
	double s = x * 1e-3;                                                    \
	for (int r = 0; r < 3; r++)                                             \
		for (int i = 0; i < 64; i++)                                    \
			s += va[i] * vb[i];                                     \
	return s

NOINLINE double dot64(double x)
{
	DOT64_BODY;
}

/* dot64 without the hooks, for the timing in main (not in the trace) */
__attribute__((no_instrument_function)) NOINLINE double dot64_plain(double x)
{
	DOT64_BODY;
}

NOINLINE long get(long k)
{
	return cell[k & 15];
}

static long ndot = 200000, nget = 30000, spin_ms = 50;

NOINLINE void train_step(long i)
{
	SPIN_US(spin_ms * 1000);
	double s = 0;
	for (long k = 0; k < ndot; k++)
		s = dot64(s);
	long g = 0;
	for (long k = 0; k < nget; k++)
		g += get(k + i);
	SINK(s + (double)g);
}

NOINLINE void train_loop(long steps)
{
	for (long i = 0; i < steps; i++)
		train_step(i);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	if (argc > 2)
		ndot = strtol(argv[2], NULL, 10);
	if (argc > 3)
		nget = strtol(argv[3], NULL, 10);
	if (argc > 4)
		spin_ms = strtol(argv[4], NULL, 10);
	for (int i = 0; i < 64; i++) {
		va[i] = 1.0 + i * 1e-3;
		vb[i] = 1.0 - i * 1e-3;
	}
	/* the fastest batch: load only makes a batch slower */
	long best = -1;
	for (int b = 0; b < 20; b++) {
		struct timespec t0, t1;
		double s = b;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (long k = 0; k < 2000; k++)
			s = dot64_plain(s);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		SINK(s);
		long ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec;
		if (best < 0 || ns < best)
			best = ns;
	}
	printf("plain dot64 %ld ns\n", best / 2000);
	train_loop(steps);
	return 0;
}
