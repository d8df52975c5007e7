/*
 * s-memory.c - fixture for the memory poller (test-memory-poll.c): a
 * training loop whose host memory grows at every step and is never given
 * back, the leak `stepscope memory` should point at.
 *
 *   s-memory STEPS MIB [EVERY]
 *                           STEPS calls of step(), each allocating MIB MiB
 *                           more than the one before and touching every
 *                           page of it
 *
 * Each step first sleeps 20 ms, so the poller (woken as the step begins)
 * samples often between steps.  With EVERY (memory.every_n_steps), every
 * EVERY-th step also waits, before it allocates, until the run directory's
 * memory_profile.json ($STEPSCOPE_DIR) holds its entry (10 s at most): an
 * entry is never skipped and always sees the memory of the steps before
 * its own, however late a busy machine runs the poller (issue 37).
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
static int every;
static char profile[4200]; /* $STEPSCOPE_DIR/memory_profile.json */
static char text[1 << 16];

NOINLINE static void step(int i, size_t mib)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	size_t n = (size_t)(i + 1) * mib << 20;

	nanosleep(&nap, NULL);
	/* inline, not a function of its own: the fixture's functions are
	 * counted */
	for (int tries = 0; every > 0 && i > 0 && i % every == 0 && profile[0] && tries < 10000;
	     tries++) {
		FILE *f = fopen(profile, "r");
		size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		int entries = 0;
		if (f)
			fclose(f);
		text[len] = 0;
		for (const char *p = text; (p = strstr(p, "{\"step\": ")); p++)
			entries++;
		if (entries >= i / every)
			break;
		struct timespec ms = { 0, 1000 * 1000 };
		nanosleep(&ms, NULL);
	}
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
	const char *dir = getenv("STEPSCOPE_DIR");

	every = argc > 3 ? atoi(argv[3]) : 0;
	if (dir)
		snprintf(profile, sizeof(profile), "%s/memory_profile.json", dir);

	if (steps > 256)
		steps = 256;
	for (int i = 0; i < steps; i++)
		step(i, mib);
	printf("kept %zu bytes\n", kept_bytes);
	return 0;
}
