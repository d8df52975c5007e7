/*
 * s-window-quiet.c - fixture for test-window-quiet: STEPS calls of
 * train_step, each sleeping SLEEP_MS (time for the runtime's background
 * thread to prepare the next window), with a marker system call on each
 * side of the step boundary, so that a system-call trace of the main
 * thread shows what the boundary itself did:
 *   write(-1, "B", 1) in main right before each call of train_step,
 *   write(-1, "E", 1) first thing in train_step's body
 * (both fail with EBADF and write nothing).
 *   s-window-quiet STEPS SLEEP_MS
 * Functions: main, train_step, leaf.
 */
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE static void leaf(int i)
{
	SINK(i);
}

NOINLINE void train_step(int i, int sleep_ms)
{
	SINK(write(-1, "E", 1));
	leaf(i);
	usleep((useconds_t)sleep_ms * 1000);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;
	int sleep_ms = argc > 2 ? atoi(argv[2]) : 100;
	for (int i = 0; i < steps; i++) {
		SINK(write(-1, "B", 1));
		train_step(i, sleep_ms);
	}
	return 0;
}
