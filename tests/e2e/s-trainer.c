/*
 * s-trainer.c - fixture for `stepscope steps` on from-scratch trainers
 * (the shape of llm.c's train_gpt2.c): main drives the loop itself.
 *
 *   s-trainer STEPS gpt2     main: for each step
 *                              every 10th step (from 0): validation, 5
 *                                forward(-1) inline in main
 *                              every 20th step (from 20): sampling, 12
 *                                forward(-2) inline in main
 *                              load_batch, forward, zero_grad, backward,
 *                              update
 *   s-trainer STEPS direct   main: for each step forward, backward (forward
 *                              does ten times backward's work)
 *
 * forward runs LAYERS layers of layernorm_forward, matmul_forward x 2 and
 * gelu_forward, then matmul_forward for the logits; backward runs
 * matmul_backward x 2, gelu_backward and layernorm_backward per layer (no
 * op is most of it, as in a real backward); matmul_forward is an OpenMP loop (built
 * with -fopenmp: its outlined body runs on every thread).  The first
 * backward calls zero_grad (it makes the gradients).  backward does the
 * most work of main's functions.
 * Functions: main, load_batch, forward, zero_grad, backward, update,
 * layernorm_forward, matmul_forward (and its OpenMP body), gelu_forward,
 * matmul_backward, gelu_backward, layernorm_backward, work.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

enum { LAYERS = 4, DIM = 48 };

static float wa[DIM * DIM], xa[DIM], ya[DIM];
static int grads_ready, direct;

/* n units of 2 ns, spun on the clock: the functions' times stand in the
 * ratios of their n however busy the machine (issue 37) */
NOINLINE void work(long n)
{
	SPIN_NS(2 * n);
	SINK(n);
}

NOINLINE void matmul_forward(int reps)
{
	for (int r = 0; r < reps; r++) {
#pragma omp parallel for
		for (int o = 0; o < DIM; o++) {
			float s = 0;
			for (int i = 0; i < DIM; i++)
				s += wa[o * DIM + i] * xa[i];
			ya[o] = s;
		}
	}
	SINK(ya[0]);
}

NOINLINE void layernorm_forward(void)
{
	work(2000);
}

NOINLINE void gelu_forward(void)
{
	work(2000);
}

NOINLINE void matmul_backward(void)
{
	work(40000);
}

NOINLINE void gelu_backward(void)
{
	work(30000);
}

NOINLINE void layernorm_backward(void)
{
	work(30000);
}

NOINLINE void load_batch(int step)
{
	work(5000 + step % 2);
}

/* batch < 0: validation (-1) or one sampled token (-2) */
NOINLINE void forward(int batch)
{
	int reps = batch == -2 ? 1 : 4;
	for (int l = 0; l < LAYERS; l++) {
		layernorm_forward();
		matmul_forward(reps);
		matmul_forward(reps);
		gelu_forward();
	}
	matmul_forward(reps);
	if (direct) /* 11.2 ms, ten times backward: see test-trainers */
		work(5600000);
}

NOINLINE void zero_grad(void)
{
	work(3000);
}

NOINLINE void backward(void)
{
	if (!grads_ready) { /* the gradients are made on first use */
		zero_grad();
		grads_ready = 1;
	}
	for (int l = 0; l < LAYERS; l++) {
		gelu_backward();
		matmul_backward();
		matmul_backward();
		layernorm_backward();
	}
}

NOINLINE void update(void)
{
	work(20000);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 41;
	int gpt2 = argc > 2 && !strcmp(argv[2], "gpt2");

	direct = !gpt2;

	for (int i = 0; i < DIM * DIM; i++)
		wa[i] = (float)(i % 7) * 0.1f;
	for (int i = 0; i < DIM; i++)
		xa[i] = (float)i;
	for (int step = 0; step < steps; step++) {
		if (!gpt2) {
			forward(step);
			backward();
			continue;
		}
		if (step % 10 == 0)
			for (int i = 0; i < 5; i++)
				forward(-1);
		if (step % 20 == 0 && step > 0)
			for (int t = 0; t < 12; t++)
				forward(-2);
		load_batch(step);
		forward(step);
		zero_grad();
		backward();
		update();
	}
	return 0;
}
