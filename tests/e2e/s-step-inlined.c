/*
 * s-step-inlined.c - the step function inlined into the training loop (at
 * -O2 by gcc and clang; at -O0 not).  Calls: main 1, loop 1, and per step
 * train_step 1, work 2; 10 steps.
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

int main(void)
{
	loop(10);
	printf("sink %ld\n", (long)fixture_sink);
	return 0;
}
