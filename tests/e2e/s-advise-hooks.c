/*
 * s-advise-hooks.c - fixture for test-advise-hooks: a trainer whose
 * forward pass calls two tiny helpers per element (an activation and a
 * scale, a few ns of work each), so that stepscope's hooks are most of a
 * recorded step; its update is a plain loop with no calls.
 *
 *   s-advise-hooks STEPS N
 *
 *   main
 *     train_step(i) x STEPS              the step function
 *       forward(N)                       act(x) and scale(x) per element
 *         act, scale                     tiny: N calls each a step
 *       update(N)                        8 passes over N floats, no calls
 *
 * Functions: main, train_step, forward, act, scale, update.
 */
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

static float *x, *w;

NOINLINE float act(float v)
{
	return v > 0 ? v : 0.01f * v;
}

NOINLINE float scale(float v)
{
	return v * 0.999f + 0.001f;
}

NOINLINE void forward(long n)
{
	for (long k = 0; k < n; k++)
		x[k] = scale(act(x[k] + w[k]));
}

NOINLINE void update(long n)
{
	for (int p = 0; p < 8; p++)
		for (long k = 0; k < n; k++)
			w[k] = w[k] * 0.9999f + 0.0001f * x[k];
	SINK(w[n / 2]);
}

NOINLINE void train_step(long n)
{
	forward(n);
	update(n);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 50000;

	x = calloc((size_t)n, sizeof(*x));
	w = calloc((size_t)n, sizeof(*w));
	if (!x || !w)
		return 1;
	for (long k = 0; k < n; k++)
		w[k] = (float)(k % 7) - 3.0f;
	for (long i = 0; i < steps; i++)
		train_step(n);
	SINK(x[0]);
	free(x);
	free(w);
	return 0;
}
