/*
 * s-advise-clean.c - fixture for test-advise-clean: five well-behaved
 * trainers of different shapes, none with a problem `stepscope advise`
 * should report (issue 47: a clean run gets "nothing found").  Each
 * allocates its buffers once, before the loop; each step is a few
 * milliseconds of arithmetic in a handful of calls.
 *
 *   s-advise-clean SHAPE STEPS
 *
 *   mlp       train_step: mlp_forward, mlp_backward, sgd_update (matmuls
 *             of 32 x 128 x 128)
 *   conv      train_step: conv2d (3x3, 8 channels, 64 x 64), pool, sgd_update
 *   autodiff  train_step: tape_forward records 24 vector ops of 16384
 *             floats (op_mul, op_add, op_tanh), tape_backward replays them
 *   omp       train_step: omp_matmul x 4, an OpenMP parallel for over rows
 *             (run with no more threads than CPUs), sgd_update
 *   prealloc  train_step: load_batch copies into a buffer allocated once
 *             by main, mlp_forward, mlp_backward, sgd_update
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

DEFINE_SINK;

#define B 32
#define D 128
static float *xin, *w1, *h1, *g1, *gw;

NOINLINE void mlp_forward(void)
{
	for (int i = 0; i < B; i++)
		for (int j = 0; j < D; j++) {
			float s = 0;
			for (int k = 0; k < D; k++)
				s += xin[i * D + k] * w1[k * D + j];
			h1[i * D + j] = s > 0 ? s : 0;
		}
}

NOINLINE void mlp_backward(void)
{
	for (int k = 0; k < D; k++)
		for (int j = 0; j < D; j++) {
			float s = 0;
			for (int i = 0; i < B; i++)
				s += xin[i * D + k] * (h1[i * D + j] > 0 ? 1e-3f : 0);
			gw[k * D + j] = s;
		}
}

NOINLINE void sgd_update(void)
{
	for (int k = 0; k < D * D; k++)
		w1[k] -= 0.01f * gw[k];
}

#define C 8
#define H 64
static float *img, *ker, *out, *pooled;

NOINLINE void conv2d(void)
{
	for (int c = 0; c < C; c++)
		for (int y = 1; y < H - 1; y++)
			for (int x = 1; x < H - 1; x++) {
				float s = 0;
				for (int d = 0; d < C; d++)
					for (int u = -1; u <= 1; u++)
						for (int v = -1; v <= 1; v++)
							s += img[(d * H + y + u) * H + x + v] *
							     ker[((c * C + d) * 3 + u + 1) * 3 + v + 1];
				out[(c * H + y) * H + x] = s;
			}
}

NOINLINE void pool(void)
{
	for (int c = 0; c < C; c++)
		for (int y = 0; y < H / 2; y++)
			for (int x = 0; x < H / 2; x++)
				pooled[(c * H / 2 + y) * H / 2 + x] =
					fmaxf(out[(c * H + 2 * y) * H + 2 * x],
					      out[(c * H + 2 * y + 1) * H + 2 * x + 1]);
	for (int k = 0; k < C * C * 9; k++)
		ker[k] -= 1e-6f * pooled[k % (C * H * H / 4)];
}

#define N 16384
#define OPS 24
static float *tape[OPS + 1], *grad;

NOINLINE void op_mul(float *o, const float *a)
{
	for (int k = 0; k < N; k++)
		o[k] = a[k] * 0.999f;
}

NOINLINE void op_add(float *o, const float *a)
{
	for (int k = 0; k < N; k++)
		o[k] = a[k] + 0.001f;
}

NOINLINE void op_tanh(float *o, const float *a)
{
	for (int k = 0; k < N; k++)
		o[k] = tanhf(a[k]);
}

NOINLINE void tape_forward(void)
{
	for (int i = 0; i < OPS; i++) {
		if (i % 3 == 0)
			op_mul(tape[i + 1], tape[i]);
		else if (i % 3 == 1)
			op_add(tape[i + 1], tape[i]);
		else
			op_tanh(tape[i + 1], tape[i]);
	}
}

NOINLINE void tape_backward(void)
{
	for (int i = OPS; i > 0; i--)
		for (int k = 0; k < N; k++)
			grad[k] = grad[k] * 0.5f + (1.0f - tape[i][k] * tape[i][k]);
	SINK(grad[N / 2]);
}

NOINLINE void omp_matmul(void)
{
#pragma omp parallel for schedule(static)
	for (int i = 0; i < B; i++)
		for (int j = 0; j < D; j++) {
			float s = 0;
			for (int k = 0; k < D; k++)
				s += xin[i * D + k] * w1[k * D + j];
			h1[i * D + j] = s;
		}
}

static float *batch_src;

NOINLINE void load_batch(long i)
{
	memcpy(xin, batch_src + (i % 4) * D, (size_t)B * D * sizeof(float));
}

NOINLINE void train_step(int shape, long i)
{
	switch (shape) {
	case 0:
		mlp_forward(), mlp_backward(), sgd_update();
		break;
	case 1:
		conv2d(), pool();
		break;
	case 2:
		tape_forward(), tape_backward();
		break;
	case 3:
		for (int r = 0; r < 4; r++)
			omp_matmul();
		sgd_update();
		break;
	default:
		load_batch(i), mlp_forward(), mlp_backward(), sgd_update();
	}
}

static float *buf(size_t n, float v)
{
	float *p = malloc(n * sizeof(*p));
	if (!p)
		exit(1);
	for (size_t k = 0; k < n; k++)
		p[k] = v * (float)(k % 13) / 13.0f;
	return p;
}

int main(int argc, char **argv)
{
	static const char *const shapes[] = { "mlp", "conv", "autodiff", "omp", "prealloc" };
	int shape = -1;
	long steps = argc > 2 ? strtol(argv[2], NULL, 10) : 4;

	for (int k = 0; argc > 1 && k < 5; k++)
		if (!strcmp(argv[1], shapes[k]))
			shape = k;
	if (shape < 0)
		return 2;
	xin = buf(B * D, 1), w1 = buf(D * D, 0.01f), h1 = buf(B * D, 0);
	g1 = buf(B * D, 0), gw = buf(D * D, 0);
	img = buf(C * H * H, 1), ker = buf(C * C * 9, 0.1f), out = buf(C * H * H, 0);
	pooled = buf(C * H * H / 4, 0);
	for (int k = 0; k <= OPS; k++)
		tape[k] = buf(N, 0.5f);
	grad = buf(N, 1);
	batch_src = buf((size_t)B * D + 4 * D, 1);
	for (long i = 0; i < steps; i++)
		train_step(shape, i);
	SINK(h1[7] + out[H * H + 9] + w1[3]);
	return 0;
}
