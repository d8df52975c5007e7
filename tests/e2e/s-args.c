/*
 * s-args.c - fixture: a GPT-2-shaped training loop for record.args (issue
 * 33, test-args*.c).  Its ledger, written by the callers around every call
 * of the three operators, is the oracle the tests compare stepscope's
 * recovered arguments with: integers in decimal, floats in %a (bit-exact),
 * pointers in %p, and the call's own time (CLOCK_MONOTONIC ns read right
 * before and after the call) with the FLOPs it did.
 *
 *   s-args LEDGER [STEPS]
 *   main
 *     train_step(step) x STEPS, then stepscope_step()
 *       per layer (2): matmul_forward x 4 shapes (C->3C, C->C, C->4C, 4C->C)
 *                      attention_forward(.., B, T, C, NH)
 *       adamw_update(params.., n, lr, beta1, beta2, eps, weight_decay, t)
 *         with lr, beta1, beta2, eps, weight_decay changing every step
 *
 * matmul_forward's rows are an OpenMP parallel for (its outlined body,
 * matmul_forward._omp_fn.0, is not one of the user's functions).
 * Ledger lines:
 *   matmul_forward out inp weight bias B T C OC ns
 *   attention_forward out inp B T C NH ns
 *   adamw_update params grads m v n lr beta1 beta2 eps weight_decay t ns
 *   residual x y n a 0        (inlined: its time is not taken)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "stepscope.h"
#include "fixture.h"

#define B 2
#define T 16
#define CH 48
#define NH 4
#define LAYERS 2
#define ATT_REPS 64      /* attention_forward: 2*B*NH*T*T*(C/NH)*64 FLOPs */

static FILE *ledger;

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

NOINLINE void matmul_forward(float *out, const float *inp, const float *weight,
			     const float *bias, int b, int t, int c, int oc)
{
#pragma omp parallel for collapse(2)
	for (int i = 0; i < b; i++)
		for (int j = 0; j < t; j++) {
			const float *x = inp + (i * t + j) * c;
			for (int o = 0; o < oc; o++) {
				float s = bias ? bias[o] : 0.0f;
				for (int k = 0; k < c; k++)
					s += x[k] * weight[o * c + k];
				out[(i * t + j) * oc + o] = s;
			}
		}
}

NOINLINE void attention_forward(float *out, const float *inp, int b, int t, int c,
				int nh)
{
	int hs = c / nh;
	/* every query against every key, ATT_REPS times over: long enough
	 * that its GFLOP/s is measured on calls far longer than the hooks */
	for (int rep = 0; rep < ATT_REPS; rep++)
		for (int i = 0; i < b; i++)
			for (int h = 0; h < nh; h++)
				for (int q = 0; q < t; q++) {
					const float *qv = inp + (i * t + q) * 3 * c + h * hs;
					float acc = 0;
					for (int k = 0; k < t; k++) {
						const float *kv = inp + (i * t + k) * 3 * c + c + h * hs;
						float d = 0;
						for (int e = 0; e < hs; e++)
							d += qv[e] * kv[e];
						acc += d;
					}
					out[(i * t + q) * c + h * hs] += acc;
				}
}

NOINLINE void adamw_update(float *params, const float *grads, float *m, float *v, long n,
			   float lr, float beta1, float beta2, float eps,
			   float weight_decay, int t)
{
	float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
	for (long i = 0; i < n; i++) {
		float g = grads[i];
		m[i] = beta1 * m[i] + (1 - beta1) * g;
		v[i] = beta2 * v[i] + (1 - beta2) * g * g;
		float mh = m[i] / c1, vh = v[i] / c2;
		params[i] -= lr * (mh / (sqrtf(vh) + eps) + weight_decay * params[i]);
	}
}

/* inlined into train_step (the hooks still run, with its address): its
 * parameters come from the inlined copy's DWARF, or <optimized out> */
static inline __attribute__((always_inline)) void residual(float *x, const float *y, int n,
							   float a)
{
	for (int i = 0; i < n; i++)
		x[i] += a * y[i];
}

static float act[B * T * 4 * CH], act2[B * T * 4 * CH], qkv[B * T * 3 * CH];
static float wts[4 * CH * CH * 4], bias[4 * CH];
static float grads[4 * CH * CH * 4], mom[4 * CH * CH * 4], vel[4 * CH * CH * 4];

static void mm(float *out, const float *inp, const float *w, const float *b, int c, int oc)
{
	fprintf(ledger, "matmul_forward %p %p %p %p %d %d %d %d", (void *)out,
		(const void *)inp, (const void *)w, (const void *)b, B, T, c, oc);
	long t0 = now_ns();
	matmul_forward(out, inp, w, b, B, T, c, oc);
	long t1 = now_ns();
	fprintf(ledger, " %ld\n", t1 - t0);
}

static NOINLINE void train_step(int step)
{
	for (int l = 0; l < LAYERS; l++) {
		mm(qkv, act, wts, bias, CH, 3 * CH);
		fprintf(ledger, "attention_forward %p %p %d %d %d %d", (void *)act2,
			(void *)qkv, B, T, CH, NH);
		long t0 = now_ns();
		attention_forward(act2, qkv, B, T, CH, NH);
		fprintf(ledger, " %ld\n", now_ns() - t0);
		mm(act, act2, wts, NULL, CH, CH);
		mm(act2, act, wts, bias, CH, 4 * CH);
		mm(act, act2, wts, bias, 4 * CH, CH);
		fprintf(ledger, "residual %p %p %d %a 0\n", (void *)act, (void *)act2, B * T * CH,
			0.5f + (float)l);
		residual(act, act2, B * T * CH, 0.5f + (float)l);
	}
	/* hyperparameters that change every step, some not exactly
	 * representable in decimal */
	float lr = 3e-4f / (float)(step + 1), beta1 = 0.9f + 0.001f * (float)step;
	float beta2 = 0.999f - 1e-5f * (float)step, eps = 1e-8f * (float)(step + 1);
	float wd = step % 2 ? 0.0f : 0.1f / 3.0f;
	long n = 4L * CH * CH + step;
	fprintf(ledger, "adamw_update %p %p %p %p %ld %a %a %a %a %a %d", (void *)wts,
		(void *)grads, (void *)mom, (void *)vel, n, lr, beta1, beta2, eps, wd, step + 1);
	long t0 = now_ns();
	adamw_update(wts, grads, mom, vel, n, lr, beta1, beta2, eps, wd, step + 1);
	fprintf(ledger, " %ld\n", now_ns() - t0);
}

int main(int argc, char **argv)
{
	int steps = argc > 2 ? atoi(argv[2]) : 3;
	if (argc < 2 || !(ledger = fopen(argv[1], "w"))) {
		fprintf(stderr, "usage: s-args LEDGER [STEPS]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(wts) / sizeof(wts[0]); i++) {
		wts[i] = (float)(i % 13) * 0.01f;
		grads[i] = (float)(i % 7) * 0.001f;
	}
	for (int s = 0; s < steps; s++) {
		train_step(s);
		stepscope_step();
	}
	fclose(ledger);
	printf("steps %d\n", steps);
	return 0;
}
