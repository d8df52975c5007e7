/*
 * s-memory.c - fixture for the memory poller (test-memory-poll.c): a
 * training loop whose host memory grows at every step and is never given
 * back, the leak `stepscope memory` should point at.
 *
 *   s-memory STEPS MIB      STEPS calls of step(), each allocating MIB MiB
 *                           more than the one before and touching every
 *                           page of it
 *
 * Each step first sleeps 20 ms, so the poller (woken as the step begins)
 * samples before the step allocates, and samples often between steps.
 * Prints "kept N bytes" at the end.  Functions: main, step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

static char *kept[256];
static size_t kept_bytes;

NOINLINE static void step(int i, size_t mib)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	size_t n = (size_t)(i + 1) * mib << 20;

	nanosleep(&nap, NULL);
	kept[i] = malloc(n);
	if (!kept[i])
		return;
	memset(kept[i], i + 1, n); /* touched: resident */
	kept_bytes += n;
	SINK(kept[i][n - 1]);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 16;
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1;

	if (steps > 256)
		steps = 256;
	for (int i = 0; i < steps; i++)
		step(i, mib);
	printf("kept %zu bytes\n", kept_bytes);
	return 0;
}
