/*
 * s-window-open.c - fixture for test-window-open: a loop of STEPS cheap
 * train_step calls (one leaf call each), so that whatever the runtime does
 * when a window opens would dominate the first recorded step if it were
 * charged to it.
 *   s-window-open STEPS
 * Functions: main, train_step, leaf.
 */
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE static void leaf(int i)
{
	SINK(i);
}

NOINLINE void train_step(int i)
{
	leaf(i);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;
	for (int i = 0; i < steps; i++)
		train_step(i);
	return 0;
}
