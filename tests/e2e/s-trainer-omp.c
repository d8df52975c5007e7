/*
 * s-trainer-omp.c - fixture: a small transformer-shaped training loop
 * whose matmuls are OpenMP parallel for loops, for the report accounting
 * tests (test-report-truth).  Run it with OMP_NUM_THREADS above the number
 * of cores: the thread that starts each matmul's team waits at libgomp's
 * end barrier for the others, the range "omp barrier: wait for the team".
 *
 *   main
 *     train_step(i) x STEPS (argv[1], default 4), then stepscope_step()
 *       embed
 *       layer x 2                  each: matmul_forward x 2, gelu
 *         matmul_forward(n)        #pragma omp parallel for over rows:
 *                                  dot() once per row, 64 rows
 *       loss
 *
 * Functions: main, train_step, embed, layer, matmul_forward, dot, gelu,
 * loss, and gcc's outlined region matmul_forward._omp_fn.0.
 */
#include <stdlib.h>

#include "stepscope.h"
#include "fixture.h"

DEFINE_SINK;

#define ROWS 64
#define COLS 2048

static float w[ROWS][COLS], x[COLS], y[ROWS];

static NOINLINE float dot(const float *a, const float *b, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static NOINLINE void matmul_forward(int n)
{
#pragma omp parallel for schedule(static)
	for (int r = 0; r < ROWS; r++)
		y[r] = dot(w[r], x, n);
}

static NOINLINE void gelu(void)
{
	for (int r = 0; r < ROWS; r++)
		y[r] = y[r] > 0 ? y[r] : y[r] * 0.01f;
	SINK(y[0]);
}

static NOINLINE void embed(int step)
{
	for (int i = 0; i < COLS; i++)
		x[i] = (float)((i + step) % 7) * 0.25f;
}

static NOINLINE void layer(void)
{
	matmul_forward(COLS);
	matmul_forward(COLS / 2);
	gelu();
}

static NOINLINE void loss(void)
{
	float s = 0;
	for (int r = 0; r < ROWS; r++)
		s += y[r];
	SINK(s);
}

static NOINLINE void train_step(int step)
{
	embed(step);
	layer();
	layer();
	loss();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 4;

	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			w[r][c] = (float)((r * 31 + c) % 13) * 0.01f;
	for (int i = 0; i < steps; i++) {
		train_step(i);
		stepscope_step();
	}
	return 0;
}
