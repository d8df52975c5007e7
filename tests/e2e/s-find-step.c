/*
 * s-find-step.c - fixture for `stepscope steps`: a training loop whose
 * forward also runs for validation and whose zero_grad is also called
 * inside the first backward (it allocates the gradients), the two traps of
 * picking step.function by name.
 *
 *   s-find-step STEPS wrapped     train(STEPS): load_batch, train_step;
 *                                 every 5th step validate()
 *                                   train_step: zero_grad, forward,
 *                                   backward, optimizer_step
 *   s-find-step STEPS flat        train(STEPS): load_batch, zero_grad,
 *                                 forward, backward, optimizer_step;
 *                                 every 5th step validate()
 *
 * validate() runs forward 6 times on small batches; the first backward
 * calls zero_grad.  backward does the most work, so in the flat loop it is
 * the step.  work(n) spins 2n ns on the clock, so the medians the ranking
 * uses stand in the ratios of the work whatever the load; validate is short
 * (60 us): a call that long is rarely preempted.
 * Functions: main, train, train_step, load_batch, zero_grad, forward,
 * backward, optimizer_step, validate, work.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

static int grads_ready;

/* n units of 2 ns, spun on the clock: the functions' times stand in the
 * ratios of their n however busy the machine (issue 37) */
NOINLINE void work(long n)
{
	SPIN_NS(2 * n);
	SINK(n);
}

NOINLINE void load_batch(int step)
{
	work(50000 + step % 2);
}

NOINLINE void zero_grad(void)
{
	work(20000);
}

NOINLINE void forward(int batch)
{
	work(batch < 0 ? 5000 : 200000 + batch % 2); /* < 0: a validation batch */
}

NOINLINE void backward(void)
{
	if (!grads_ready) { /* the gradients are made on first use */
		zero_grad();
		grads_ready = 1;
	}
	work(600000);
}

NOINLINE void optimizer_step(void)
{
	work(100000);
}

NOINLINE void validate(void)
{
	for (int i = 0; i < 6; i++)
		forward(-1 - i);
}

NOINLINE void train_step(int step)
{
	zero_grad();
	forward(step);
	backward();
	optimizer_step();
}

NOINLINE void train(int steps, int flat)
{
	for (int step = 0; step < steps; step++) {
		load_batch(step);
		if (flat) {
			zero_grad();
			forward(step);
			backward();
			optimizer_step();
		} else {
			train_step(step);
		}
		if (step % 5 == 4)
			validate();
	}
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	train(steps, argc > 2 && !strcmp(argv[2], "flat"));
	return 0;
}
