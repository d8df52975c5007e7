/*
 * s-stack.c - fixture for record.stack: an instrumented function sorts with
 * libc's qsort, which calls back an instrumented comparator, so the
 * comparator's stacks run through frames of code that was not instrumented
 * (qsort's, in libc) between the comparator and its instrumented caller.
 *
 *   s-stack STEPS N     STEPS calls of train_step, each sorting N ints
 *
 * Prints "compares C": the comparator's calls, which depend on libc's sort.
 * Functions: main, train_step, sort_them, by_value.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

static long compares;

NOINLINE static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	compares++;
	return (x > y) - (x < y);
}

NOINLINE static void sort_them(int *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	SINK(v[0]);
}

NOINLINE static void train_step(int step, int n)
{
	int v[64];
	for (int i = 0; i < n; i++)
		v[i] = (i * 37 + step * 11) % 17;
	sort_them(v, n);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	int n = argc > 2 ? atoi(argv[2]) : 8;
	if (n > 64)
		n = 64;
	for (int i = 0; i < steps; i++)
		train_step(i, n);
	printf("compares %ld\n", compares);
	return 0;
}
