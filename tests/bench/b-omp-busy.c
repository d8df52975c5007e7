/*
 * b-omp-busy.c - bench trainer for tests/bench/offcpu.sh (issue 35): a
 * training loop whose forward and backward are `#pragma omp parallel for
 * num_threads(4)` over rows, run on a machine where a busy loop holds one
 * of two CPUs, as in the issue.
 *
 *   b-omp-busy STEPS     main calls train_step STEPS times and prints
 *                        "loop_ns N": the training loop's wall time
 *
 * Per step: forward (rows: matvec, the operator, then act on each row's
 * result) and backward (rows: update, which calls axpy8 on 8 elements at a
 * time: many small calls, what makes the hooks cost).  -DSLOW=1 builds the
 * "changed" program: matvec does 30% more work (the same loop over 1.3x
 * the columns of a wider matrix), nothing else changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#ifndef SLOW
#define SLOW 0
#endif
#define ROWS 128
#define COLS 1024                /* backward: COLS / 8 calls of axpy8 a row */
#define MV 4096                  /* forward: matvec over MV columns a row */
#define MV_COLS (SLOW ? MV * 13 / 10 : MV)

static float W[ROWS][MV * 13 / 10], X[MV * 13 / 10], Y[ROWS], G[ROWS];
volatile float bench_sink;

NOINLINE float matvec(const float *w, const float *x, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += w[i] * x[i];
	return s;
}

NOINLINE float act(float v)
{
	return v > 0 ? v : v * 0.01f;
}

NOINLINE void axpy8(float *w, const float *x, float a)
{
	for (int i = 0; i < 8; i++)
		w[i] -= a * x[i];
}

NOINLINE void update(int r)
{
	float a = G[r] * 1e-6f;
	for (int c = 0; c < COLS; c += 8)
		axpy8(&W[r][c], &X[c], a);
}

NOINLINE void forward(void)
{
#pragma omp parallel for num_threads(4) schedule(static)
	for (int r = 0; r < ROWS; r++)
		Y[r] = act(matvec(W[r], X, MV_COLS));
}

NOINLINE void backward(void)
{
#pragma omp parallel for num_threads(4) schedule(static)
	for (int r = 0; r < ROWS; r++) {
		G[r] = Y[r] - 1.0f;
		update(r);
	}
}

NOINLINE void train_step(int step)
{
	X[step % MV] += 0.001f;
	forward();
	backward();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 100;
	struct timespec a, b;
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < MV * 13 / 10; c++)
			W[r][c] = (float)((r * 7 + c * 3) % 11) * 0.01f;
	for (int c = 0; c < MV * 13 / 10; c++)
		X[c] = (float)(c % 5) * 0.1f;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int s = 0; s < steps; s++)
		train_step(s);
	clock_gettime(CLOCK_MONOTONIC, &b);
	bench_sink = Y[0] + W[0][0];
	printf("loop_ns %lld\n",
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return 0;
}
