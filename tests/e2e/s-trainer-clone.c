/*
 * s-trainer-clone.c - fixture: a training loop whose forward pass gcc
 * clones (test-report-truth test_clones).  Built with -O2
 * -fipa-cp-clone (on at -O3; gcc 12's -O2 clones no function that has
 * hooks), gpt2_forward has two constprop clones, one per set of constant
 * arguments (training: the tokens as targets, B = 4; evaluation: NULL,
 * B = 1), as llm.c's has; the test checks with nm that they exist.  The
 * hooks gcc puts in a clone name the function itself, but a native stack
 * names the clone.
 *
 *   main: STEPS (argv[1], default 6) x train_step(i)
 *     train_step(i): gpt2_forward(&model, tokens, tokens, B, T), then
 *                    for even i, an evaluation gpt2_forward(.., NULL, 1, T)
 *     gpt2_forward: encoder, then the loss when targets are given
 *
 * Calls per step: train_step 1, gpt2_forward 1 or 2 (2 for even steps),
 * encoder as many.  Functions: main, train_step, gpt2_forward, encoder.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

struct model {
	float w[256];
	float loss;
};

static struct model model;
static int tokens[4 * 64];

static NOINLINE float encoder(const struct model *m, const int *in, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += m->w[(in[i] + i) % 256];
	return s;
}

/* not static, not noclone: gcc keeps it and adds the clones */
__attribute__((noinline)) void gpt2_forward(struct model *m, const int *in,
					    const int *targets, int B, int T)
{
	float s = encoder(m, in, B * T);

	if (targets != NULL) {
		float l = 0;
		for (int i = 0; i < B * T; i++)
			l += m->w[targets[i] % 256] * s;
		m->loss = l;
	} else {
		m->loss = -1.0f;
	}
}

static NOINLINE void train_step(int i)
{
	gpt2_forward(&model, tokens, tokens, 4, 64);
	if (i % 2 == 0)
		gpt2_forward(&model, tokens, NULL, 1, 64);
	SINK(model.loss);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 6;

	for (int i = 0; i < 4 * 64; i++)
		tokens[i] = i * 7;
	for (int i = 0; i < steps; i++)
		train_step(i);
	return 0;
}
