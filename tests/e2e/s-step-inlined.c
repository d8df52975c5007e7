/*
 * s-step-inlined.c - the step function inlined into the training loop (at
 * -O2 by gcc and clang; at -O0 not): into loop, or with an argument into
 * main itself.  Calls: main 1, loop 1 (none with an argument), and per
 * step train_step 1, work 2; 10 steps.
 */
#include <stdio.h>

#include "fixture.h"

DEFINE_SINK;

static NOINLINE void work(int i)
{
	SINK(i);
}

static inline void train_step(int i)
{
	work(i);
	work(i + 1);
}

static NOINLINE void loop(int n)
{
	for (int i = 0; i < n; i++)
		train_step(i);
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		for (int i = 0; i < 10; i++)
			train_step(i);
	} else {
		loop(10);
	}
	printf("sink %ld\n", (long)fixture_sink);
	return 0;
}
