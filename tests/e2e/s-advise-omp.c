/*
 * s-advise-omp.c - fixture for `stepscope advise`'s omp check
 * (test-advise-omp): an MLP-shaped training loop whose matmuls are OpenMP
 * parallel for loops, run as in issue 47: a team of as many threads as
 * the process may use CPUs, with another job holding one of them.  The
 * team's waiting threads spin (libgomp's default, or OMP_WAIT_POLICY=
 * active) on the CPU the working ones need; OMP_WAIT_POLICY=passive (the
 * advice) lets them sleep.
 *
 *   s-advise-omp STEPS   main calls train_step(i) STEPS times (default
 *                        20), then stepscope_step();  train_step calls
 *                        forward() then backward(), each LAYERS matmul()
 *                        calls; matmul is `#pragma omp parallel for` over
 *                        ROWS rows, dot() once per row
 *
 * Prints "median_step_ns N": the median wall time of train_step, measured
 * by the fixture.  Functions: main, train_step, forward, backward, matmul,
 * dot, and gcc's outlined region matmul._omp_fn.0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "stepscope.h"
#include "fixture.h"

DEFINE_SINK;

#define LAYERS 8
#define ROWS 32
#define COLS 2048
#define MAXSTEPS 1000

static float w[LAYERS][ROWS][COLS], x[COLS], y[ROWS];

NOINLINE float dot(const float *a, const float *b, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

NOINLINE void matmul(int l)
{
#pragma omp parallel for schedule(static)
	for (int r = 0; r < ROWS; r++)
		y[r] = dot(w[l][r], x, COLS);
}

NOINLINE void forward(void)
{
	for (int l = 0; l < LAYERS; l++) {
		matmul(l);
		x[l] = y[l] * 0.5f;
	}
}

NOINLINE void backward(void)
{
	for (int l = LAYERS - 1; l >= 0; l--) {
		matmul(l);
		x[l] -= y[l] * 1e-3f;
	}
}

NOINLINE void train_step(int step)
{
	x[0] = (float)(step % 7);
	forward();
	backward();
	SINK(y[0]);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	static long long t[MAXSTEPS];
	struct timespec a, b;

	if (steps > MAXSTEPS)
		steps = MAXSTEPS;
	for (int l = 0; l < LAYERS; l++)
		for (int r = 0; r < ROWS; r++)
			for (int c = 0; c < COLS; c++)
				w[l][r][c] = (float)((l + r * 31 + c) % 13) * 0.01f;
	for (int i = 0; i < steps; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		train_step(i);
		clock_gettime(CLOCK_MONOTONIC, &b);
		t[i] = (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec;
		stepscope_step();
	}
	/* insertion sort: no function the test does not count */
	for (int i = 1; i < steps; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			long long v = t[j];
			t[j] = t[j - 1];
			t[j - 1] = v;
		}
	printf("median_step_ns %lld\n", steps ? t[steps / 2] : 0);
	return 0;
}
