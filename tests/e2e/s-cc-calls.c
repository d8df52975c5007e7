/*
 * s-cc-calls.c - a plain program in two files (this one and
 * cc/calls-lib.c), used for -Werror, -flto, static libraries, objects built
 * without the wrapper, Makefile and CMake builds, and exclusions.
 * Calls: main 1, alpha 3, beta 2, leaf 3 (one per alpha), lib_fn 4.
 */
#include <stdio.h>

#include "fixture.h"

DEFINE_SINK;

int lib_fn(int x);

static NOINLINE int leaf(int x)
{
	return SINK(x + 1);
}

static NOINLINE int alpha(int x)
{
	return leaf(x) * 2;
}

static NOINLINE int beta(int x)
{
	return SINK(x - 1);
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		alpha(i);
	for (int i = 0; i < 2; i++)
		beta(i);
	for (int i = 0; i < 4; i++)
		lib_fn(i);
	printf("sink %ld\n", (long)fixture_sink);
	return 0;
}
