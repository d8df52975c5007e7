/*
 * s-stack-lib.c - fixture for record.stack through a library without
 * hooks: each step hands an instrumented callback to plain_outer() of
 * libstack-plain.so (lib-stack-plain.c, built without
 * -finstrument-functions), which calls it back through plain_inner().
 *
 *   s-stack-lib STEPS N     STEPS calls of train_step, each making the
 *                           library call on_item N times
 *
 * Prints "items C": the callback's calls (STEPS * N).
 * Functions: main, train_step, on_item.  Link with -lstack-plain.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

void plain_outer(void (*cb)(int), int n);

static long items;

NOINLINE static void on_item(int i)
{
	items++;
	SINK(i);
}

NOINLINE static void train_step(int step, int n)
{
	plain_outer(on_item, n);
	SINK(step); /* after the call: no tail call */
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	int n = argc > 2 ? atoi(argv[2]) : 4;

	for (int i = 0; i < steps; i++)
		train_step(i, n);
	printf("items %ld\n", items);
	return 0;
}
