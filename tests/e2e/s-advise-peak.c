/*
 * s-advise-peak.c - fixture: a trainer whose matmul runs far below the
 * machine's peak, for test-advise-peak.c (the "peak" check of `stepscope
 * advise`).
 *
 *   s-advise-peak STEPS [fast]
 * Each train_step() calls matmul(c, a, b, m, k, n) once with (m, k, n) =
 * (8, 1024, 1024).  As planted, matmul is the textbook i-j-p loop: the
 * innermost loop is a dot product down a column of b (a stride of 4 KiB
 * on every access, one dependent add after another).  With `fast` (the
 * advice applied) the loop is i-p-j, whose innermost loop walks rows of
 * b and c and vectorises.
 * At exit: "median_step_ns N" over the steps after the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

static int fast;

NOINLINE static void matmul(float *restrict c, const float *restrict a, const float *restrict b,
			    int m, int k, int n)
{
	if (!fast) {
		for (int i = 0; i < m; i++)
			for (int j = 0; j < n; j++) {
				float s = 0;
				for (int p = 0; p < k; p++)
					s += a[(size_t)i * k + p] * b[(size_t)p * n + j];
				c[(size_t)i * n + j] = s;
			}
		return;
	}
	memset(c, 0, (size_t)m * n * sizeof(*c));
	for (int i = 0; i < m; i++)
		for (int p = 0; p < k; p++) {
			float x = a[(size_t)i * k + p];
			float *restrict ci = c + (size_t)i * n;
			const float *restrict bp = b + (size_t)p * n;
			for (int j = 0; j < n; j++)
				ci[j] += x * bp[j];
		}
}

enum { M = 8, K = 1024, N = 1024 };
static float *a, *b, *c;

NOINLINE static void train_step(void)
{
	matmul(c, a, b, M, K, N);
	SINK(c[5]);
}

static int cmp_ll(const void *x, const void *y)
{
	long long u = *(const long long *)x, v = *(const long long *)y;
	return u < v ? -1 : u > v;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 10;
	long long *ns;

	fast = argc > 2 && !strcmp(argv[2], "fast");
	a = malloc((size_t)M * K * sizeof(float));
	b = malloc((size_t)K * N * sizeof(float));
	c = malloc((size_t)M * N * sizeof(float));
	if (steps < 2 || !a || !b || !c || !(ns = malloc((size_t)steps * sizeof(*ns))))
		return 2;
	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = (float)(i % 7) * 0.1f;
	for (size_t i = 0; i < (size_t)K * N; i++)
		b[i] = (float)(i % 11) * 0.01f;
	for (int s = 0; s < steps; s++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		train_step();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns[s] = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	}
	qsort(ns + 1, (size_t)steps - 1, sizeof(*ns), cmp_ll);
	printf("median_step_ns %lld\n", ns[1 + (steps - 1) / 2]);
	return 0;
}
