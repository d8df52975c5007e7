/*
 * b-mlp.c - bench trainer for tests/bench/diff.sh (issue 48): shaped like
 * a small MLP trainer written from scratch: per step train_step runs the
 * forward pass (linear_fwd, gelu_fwd, linear_fwd, softmax_xent), the
 * backward pass (linear_bwd twice, gelu_bwd) and sgd_update: a few large
 * operators, the largest the matrix products.
 *
 *   b-mlp STEPS      main calls train_step STEPS times
 *
 * -DSLOW=1 builds the "changed" program: gelu_fwd does 30% more work
 * (the same loop over 1.3x the elements of a wider buffer), nothing else
 * changes.  The work is real arithmetic, as in b-kann.c.
 */
#include <math.h>
#include <stdlib.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#ifndef SLOW
#define SLOW 0
#endif
#define BATCH 128
#define IN 64
#define HID 256
#define OUT 10
#define NH (BATCH * HID)
#define NGELU (SLOW ? NH * 13 / 10 : NH)

static float W1[HID * IN], W2[OUT * HID], G1[HID * IN], G2[OUT * HID];
static float X[BATCH * IN], Z1[NH], A1[NH * 13 / 10], Z2[BATCH * OUT], D2[BATCH * OUT], D1[NH];
volatile float bench_sink;

/* y[b][o] = sum_i w[o][i] x[b][i] */
NOINLINE void linear_fwd(float *y, const float *w, const float *x, int nin, int nout)
{
	for (int b = 0; b < BATCH; b++)
		for (int o = 0; o < nout; o++) {
			float s = 0;
			for (int i = 0; i < nin; i++)
				s += w[o * nin + i] * x[b * nin + i];
			y[b * nout + o] = s;
		}
}

NOINLINE void gelu_fwd(float *y, const float *x, int n)
{
	for (int i = 0; i < n; i++) {
		float v = x[i % NH];
		y[i] = 0.5f * v * (1.0f + tanhf(0.7978845f * (v + 0.044715f * v * v * v)));
	}
}

NOINLINE float softmax_xent(float *d, const float *z, int step)
{
	float loss = 0;
	for (int b = 0; b < BATCH; b++) {
		float m = z[b * OUT], s = 0;
		for (int o = 1; o < OUT; o++)
			m = z[b * OUT + o] > m ? z[b * OUT + o] : m;
		for (int o = 0; o < OUT; o++)
			s += expf(z[b * OUT + o] - m);
		for (int o = 0; o < OUT; o++) {
			float p = expf(z[b * OUT + o] - m) / s;
			int y = (b + step) % OUT == o;
			d[b * OUT + o] = p - (float)y;
			if (y)
				loss -= logf(p + 1e-7f);
		}
	}
	return loss / BATCH;
}

/* weight gradient g[o][i] += d[b][o] x[b][i], and dx = d w */
NOINLINE void linear_bwd(float *g, float *dx, const float *w, const float *x, const float *d,
			 int nin, int nout)
{
	for (int b = 0; b < BATCH; b++)
		for (int o = 0; o < nout; o++) {
			float v = d[b * nout + o];
			for (int i = 0; i < nin; i++)
				g[o * nin + i] += v * x[b * nin + i];
		}
	if (!dx)
		return;
	for (int b = 0; b < BATCH; b++)
		for (int i = 0; i < nin; i++) {
			float s = 0;
			for (int o = 0; o < nout; o++)
				s += d[b * nout + o] * w[o * nin + i];
			dx[b * nin + i] = s;
		}
}

NOINLINE void gelu_bwd(float *d, const float *z, int n)
{
	for (int i = 0; i < n; i++)
		d[i] *= z[i] > 0 ? 1.0f : 0.1f;
}

NOINLINE void sgd_update(float *w, float *g, int n, float lr)
{
	for (int i = 0; i < n; i++) {
		w[i] -= lr * g[i];
		g[i] = 0;
	}
}

NOINLINE float train_step(int step)
{
	float loss;

	X[step % (BATCH * IN)] += 0.01f;
	linear_fwd(Z1, W1, X, IN, HID);
	gelu_fwd(A1, Z1, NGELU);
	linear_fwd(Z2, W2, A1, HID, OUT);
	loss = softmax_xent(D2, Z2, step);
	linear_bwd(G2, D1, W2, A1, D2, HID, OUT);
	gelu_bwd(D1, Z1, NH);
	linear_bwd(G1, NULL, W1, X, D1, IN, HID);
	sgd_update(W1, G1, HID * IN, 1e-3f);
	sgd_update(W2, G2, OUT * HID, 1e-3f);
	return loss;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	float loss = 0;

	for (int i = 0; i < HID * IN; i++)
		W1[i] = (float)((i * 7) % 23) * 0.002f - 0.02f;
	for (int i = 0; i < OUT * HID; i++)
		W2[i] = (float)((i * 5) % 19) * 0.004f - 0.03f;
	for (int i = 0; i < BATCH * IN; i++)
		X[i] = (float)(i % 9) * 0.1f;
	for (int s = 0; s < steps; s++)
		loss += train_step(s);
	bench_sink = loss;
	return 0;
}
