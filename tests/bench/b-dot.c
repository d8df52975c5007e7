/*
 * b-dot.c - benchmark workload for the floor section (floor.sh): a
 * 64-term dot product of doubles (64 dependent adds, about 33 ns on the
 * development VM, no -O level may reorder them without -ffast-math), timed
 * first without hooks, then called NDOT times a step by the step function.
 *
 *   b-dot STEPS NDOT   ->  "plain dot64 X ns" (the fastest of 20 batches
 *                          of 5000 calls of dot64_plain, the same code
 *                          marked no_instrument_function; load only makes
 *                          a batch slower)
 *
 * Each call starts from the last one's result, so calls never overlap,
 * here and in the timed loop alike.  Functions: main, train_step, dot64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double va[64], vb[64];
static volatile double sink;

#define DOT64_BODY                                                              \
	double s = x * 1e-3;                                                    \
	for (int i = 0; i < 64; i++)                                            \
		s += va[i] * vb[i];                                             \
	return s

__attribute__((noinline)) double dot64(double x)
{
	DOT64_BODY;
}

/* dot64 without the hooks, for the timing in main (not in the trace) */
__attribute__((noinline, no_instrument_function)) double dot64_plain(double x)
{
	DOT64_BODY;
}

__attribute__((noinline)) void train_step(long ndot)
{
	double s = 0;
	for (long k = 0; k < ndot; k++)
		s = dot64(s);
	sink = s;
}

__attribute__((no_instrument_function)) static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 3;
	long ndot = argc > 2 ? strtol(argv[2], NULL, 10) : 200000;
	for (int i = 0; i < 64; i++) {
		va[i] = 1.0 + i * 1e-3;
		vb[i] = 1.0 - i * 1e-3;
	}
	double best = -1;
	for (int b = 0; b < 20; b++) {
		double s = b, t0 = now_ns();
		for (long k = 0; k < 5000; k++)
			s = dot64_plain(s);
		double ns = now_ns() - t0;
		sink = s;
		if (best < 0 || ns < best)
			best = ns;
	}
	printf("plain dot64 %.2f ns\n", best / 5000);
	for (long i = 0; i < steps; i++)
		train_step(ndot);
	return 0;
}
