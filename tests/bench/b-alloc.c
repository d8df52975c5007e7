/*
 * b-alloc.c - bench: a malloc/free-heavy loop (memory.allocations, issue
 * 34): rounds of N malloc(64)/free pairs, each timed on CLOCK_MONOTONIC;
 * prints "ns/pair X", X the fastest round's ns per pair.
 *   b-alloc outside N ROUNDS   step 1 (recorded, if stepscope records
 *                              it) leaves 64 blocks live, the loop runs
 *                              in step 2 (not recorded): a free looks in
 *                              the runtime's table of live blocks
 *   b-alloc inside N ROUNDS    the loop runs in step 1
 * (stepscope_step() begins step 1 at its first call: step 0 is the start.)
 * Built without instrumentation; steps through stepscope_step() when a
 * runtime is preloaded (a weak reference: the plain run has none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern void stepscope_step(void) __attribute__((weak));

static void *volatile sink;

static void step(void)
{
	if (stepscope_step)
		stepscope_step();
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double rounds(long n, int r)
{
	double best = 0;
	for (int k = 0; k < r; k++) {
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			void *p = malloc(64);
			sink = p;
			free(p);
		}
		double v = (now_ns() - t0) / (double)n;
		if (!k || v < best)
			best = v;
	}
	return best;
}

int main(int argc, char **argv)
{
	int inside = argc > 1 && !strcmp(argv[1], "inside");
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	int r = argc > 3 ? atoi(argv[3]) : 5;
	static void *keep[64];
	double v;

	step(); /* step 1 */
	if (inside) {
		v = rounds(n, r);
	} else {
		for (int i = 0; i < 64; i++)
			keep[i] = malloc(32);
		step(); /* step 2 */
		v = rounds(n, r);
	}
	step();
	printf("ns/pair %.3f\n", v);
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return 0;
}
