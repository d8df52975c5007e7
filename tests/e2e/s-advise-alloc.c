/*
 * s-advise-alloc.c - fixture: a trainer with allocation churn for
 * test-advise-alloc.c (the "alloc" check of `stepscope advise`).
 *
 *   s-advise-alloc STEPS [reuse]
 * Each train_step() takes two scratch buffers of 40 and 36 MiB from
 * get_scratch(), writes them whole (fill), sums them (reduce) and gives
 * them back (put_scratch).  As planted, get_scratch mallocs and
 * put_scratch frees: blocks over glibc's largest mmap threshold (32 MiB),
 * so every step maps fresh pages and faults them in.  With `reuse` (the
 * advice applied) get_scratch mallocs each buffer once and keeps it.
 * At exit: "median_step_ns N" over the steps after the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

#define MIB (1024u * 1024u)
static int reuse;
static float *kept[2];

NOINLINE static float *get_scratch(int i, size_t bytes)
{
	if (!reuse)
		return malloc(bytes);
	if (!kept[i])
		kept[i] = malloc(bytes);
	return kept[i];
}

NOINLINE static void put_scratch(float *p)
{
	if (!reuse)
		free(p);
}

NOINLINE static void fill(float *p, size_t n, int step)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(i & 255) * 0.5f + (float)step;
}

NOINLINE static double reduce(const float *p, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i += 16)
		s += p[i];
	return s;
}

NOINLINE static void train_step(int step)
{
	size_t bytes[2] = { 40 * MIB, 36 * MIB };
	float *b[2];

	for (int i = 0; i < 2; i++) {
		if (!(b[i] = get_scratch(i, bytes[i]))) {
			fprintf(stderr, "s-advise-alloc: out of memory\n");
			exit(1);
		}
		fill(b[i], bytes[i] / sizeof(float), step);
	}
	for (int i = 0; i < 2; i++) {
		SINK(reduce(b[i], bytes[i] / sizeof(float)));
		put_scratch(b[i]);
	}
}

static int cmp_ll(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	long long *ns;

	reuse = argc > 2 && !strcmp(argv[2], "reuse");
	if (steps < 2 || !(ns = malloc((size_t)steps * sizeof(*ns))))
		return 2;
	for (int s = 0; s < steps; s++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		train_step(s);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns[s] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
	}
	qsort(ns + 1, (size_t)steps - 1, sizeof(*ns), cmp_ll);
	printf("median_step_ns %lld\n", ns[1 + (steps - 1) / 2]);
	free(ns);
	return 0;
}
