/*
 * s-advise-shape.c - fixture: a trainer whose matmul is slow for one shape
 * only, for test-advise-shape.c (the "shape" check of `stepscope advise`).
 *
 *   s-advise-shape STEPS [fast]
 * Each train_step() calls matmul(c, a, b, m, k, n, bt) for three layers
 * of 16.8 MFLOP each: (m, k, n) = (16, 1024, 512) and (8, 512, 1024) with
 * b as k x n (bt 0), and (8, 1024, 1024) with b stored transposed, n x k
 * (bt 1).  matmul's loop is i-p-j (the innermost walks a row of b and of
 * c); as planted it reads a transposed b in that same order, b[j*k + p]:
 * a stride of 4 KiB on every access.  With `fast` (the advice applied) a
 * transposed b is read along its rows: each element of c is a dot product
 * of a row of a and a row of b, both contiguous, in 32 partial sums that
 * vectorise (k a multiple of 32).
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
			    int m, int k, int n, int bt)
{
	memset(c, 0, (size_t)m * n * sizeof(*c));
	if (bt && !fast) {
		for (int i = 0; i < m; i++)
			for (int p = 0; p < k; p++) {
				float x = a[(size_t)i * k + p];
				float *restrict ci = c + (size_t)i * n;
				for (int j = 0; j < n; j++)
					ci[j] += x * b[(size_t)j * k + p];
			}
		return;
	}
	if (bt) {
		/* rows of a against rows of b: both contiguous, 32 sums at once */
		for (int i = 0; i < m; i++)
			for (int j = 0; j < n; j++) {
				const float *restrict ai = a + (size_t)i * k, *restrict bj = b + (size_t)j * k;
				float s[32] = { 0 };
				for (int p = 0; p + 32 <= k; p += 32)
					for (int q = 0; q < 32; q++)
						s[q] += ai[p + q] * bj[p + q];
				float sum = 0;
				for (int q = 0; q < 32; q++)
					sum += s[q];
				c[(size_t)i * n + j] = sum;
			}
		return;
	}
	for (int i = 0; i < m; i++)
		for (int p = 0; p < k; p++) {
			float x = a[(size_t)i * k + p];
			float *restrict ci = c + (size_t)i * n;
			const float *restrict bp = b + (size_t)p * n;
			for (int j = 0; j < n; j++)
				ci[j] += x * bp[j];
		}
}

static float *w[3], *act[4];
static const int dims[3][4] = { { 16, 1024, 512, 0 }, { 8, 512, 1024, 0 }, { 8, 1024, 1024, 1 } };

NOINLINE static void train_step(void)
{
	matmul(act[1], act[0], w[0], dims[0][0], dims[0][1], dims[0][2], dims[0][3]);
	matmul(act[2], act[1], w[1], dims[1][0], dims[1][1], dims[1][2], dims[1][3]);
	matmul(act[3], act[2], w[2], dims[2][0], dims[2][1], dims[2][2], dims[2][3]);
	SINK(act[3][7]);
}

static int cmp_ll(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 10;
	long long *ns;

	fast = argc > 2 && !strcmp(argv[2], "fast");
	if (steps < 2 || !(ns = malloc((size_t)steps * sizeof(*ns))))
		return 2;
	for (int l = 0; l < 3; l++) {
		size_t kn = (size_t)dims[l][1] * dims[l][2];
		w[l] = malloc(kn * sizeof(float));
		for (size_t i = 0; w[l] && i < kn; i++)
			w[l][i] = (float)((i * 7 + l) % 13) * 0.01f;
	}
	act[0] = calloc(16 * 1024, sizeof(float));
	for (int l = 0; l < 3; l++)
		act[l + 1] = calloc((size_t)16 * dims[l][2], sizeof(float));
	if (!w[0] || !w[1] || !w[2] || !act[0] || !act[1] || !act[2] || !act[3])
		return 2;
	for (int i = 0; i < 16 * 1024; i++)
		act[0][i] = (float)(i % 5) * 0.1f;
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
