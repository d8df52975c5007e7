/*
 * b-kann.c - bench trainer for tests/bench/diff.sh (issue 48): shaped like
 * kann's rnn-bit, an RNN trained through a small autodiff graph: per step
 * kann_cost unrolls T time steps, each evaluating its nodes one operator
 * call at a time (kad_eval_at -> kad_op_cmul, kad_op_add, kad_op_sigm,
 * kad_op_tanh, kad_op_mul), then the binary cross-entropy, the backward
 * pass (kad_grad, again per node) and the update (kad_saxpy): many small
 * operator calls, the largest of them the matrix products.
 *
 *   b-kann STEPS     main calls kann_cost STEPS times
 *
 * -DSLOW=1 builds the "changed" program: kad_op_sigm does 30% more work
 * (the same loop over 1.3x the elements of a wider buffer), nothing else
 * changes.  The work is real arithmetic, not a spin on the clock: a busy
 * machine slows it as it slows a real trainer.
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
#define H 64                     /* hidden units */
#define B 8                      /* sequences a minibatch */
#define T 96                     /* time steps unrolled a step */
#define N (B * H)
#define NG (4 * N)               /* the gates' elements: sigm's work */
#define NSIG (SLOW ? NG * 13 / 10 : NG)

static float Wx[H * H], Wh[H * H], Gx[H * H], Gh[H * H];
static float X[T][N], Hs[T + 1][N], Z[T][N], S[T][NG * 13 / 10], U[T][N], Dh[N], Tmp[N];
volatile float bench_sink;

/* y[b][i] = sum_j a[b][j] * w[i][j] */
NOINLINE void kad_op_cmul(float *y, const float *a, const float *w)
{
	for (int b = 0; b < B; b++)
		for (int i = 0; i < H; i++) {
			float s = 0;
			for (int j = 0; j < H; j++)
				s += a[b * H + j] * w[i * H + j];
			y[b * H + i] = s;
		}
}

NOINLINE void kad_op_add(float *y, const float *a, const float *b, int n)
{
	for (int i = 0; i < n; i++)
		y[i] = a[i] + b[i];
}

NOINLINE void kad_op_sigm(float *y, const float *a, int n)
{
	for (int i = 0; i < n; i++)
		y[i] = 1.0f / (1.0f + expf(-a[i % N] - (float)(i / N) * 0.1f));
}

NOINLINE void kad_op_tanh(float *y, const float *a, int n)
{
	for (int i = 0; i < n; i++)
		y[i] = tanhf(a[i]);
}

NOINLINE void kad_op_mul(float *y, const float *a, const float *b, int n)
{
	for (int i = 0; i < n; i++)
		y[i] = a[i] * b[i];
}

/* h[t+1] = sigm(z) * tanh(z), z = x Wx + h Wh; sigm over the four
 * gates of an LSTM cell (z four times) */
NOINLINE void kad_eval_at(int t)
{
	kad_op_cmul(Tmp, X[t], Wx);
	kad_op_cmul(Z[t], Hs[t], Wh);
	kad_op_add(Z[t], Z[t], Tmp, N);
	kad_op_sigm(S[t], Z[t], NSIG);
	kad_op_tanh(U[t], Z[t], N);
	kad_op_mul(Hs[t + 1], S[t], U[t], N);
}

NOINLINE float kad_op_ce_bin(const float *p, int n)
{
	float c = 0;
	for (int i = 0; i < n; i++)
		c -= logf(p[i] * 0.5f + 0.25f);
	return c / (float)n;
}

/* the gradient of one time step: back through the product and into both
 * weight matrices (an outer product each) */
NOINLINE void kad_grad(int t)
{
	kad_op_mul(Tmp, Dh, S[t], N);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < H; i++) {
			float g = Tmp[b * H + i] * 1e-3f;
			for (int j = 0; j < H; j++) {
				Gx[i * H + j] += g * X[t][b * H + j];
				Gh[i * H + j] += g * Hs[t][b * H + j];
			}
		}
	kad_op_cmul(Dh, Tmp, Wh);
}

NOINLINE void kad_saxpy(float *w, float *g, int n, float a)
{
	for (int i = 0; i < n; i++) {
		w[i] -= a * g[i];
		g[i] = 0;
	}
}

NOINLINE float kann_cost(int step)
{
	float c;

	for (int i = 0; i < N; i++)
		X[step % T][i] = (float)((i * 7 + step) % 13) * 0.05f;
	for (int t = 0; t < T; t++)
		kad_eval_at(t);
	c = kad_op_ce_bin(Hs[T], N);
	for (int i = 0; i < N; i++)
		Dh[i] = Hs[T][i] - 0.5f;
	for (int t = T - 1; t >= 0; t--)
		kad_grad(t);
	kad_saxpy(Wx, Gx, H * H, 1e-4f);
	kad_saxpy(Wh, Gh, H * H, 1e-4f);
	return c;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	float c = 0;

	for (int i = 0; i < H * H; i++) {
		Wx[i] = (float)((i * 5) % 17) * 0.01f - 0.08f;
		Wh[i] = (float)((i * 3) % 19) * 0.01f - 0.09f;
	}
	for (int s = 0; s < steps; s++)
		c += kann_cost(s);
	bench_sink = c;
	return 0;
}
