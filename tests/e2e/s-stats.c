/*
 * s-stats.c - fixture for the whole-run statistics test: a training loop
 * with a known call structure.
 *
 *   s-stats STEPS
 *
 *   main
 *     worker thread "stats-worker": worker_main -> kernel x100, joined
 *     before the loop (its table is written when it exits)
 *     train_loop(STEPS)
 *       train_step(i)            the step function
 *         load_batch(i)
 *         forward x2             each forward: matmul x2
 *         rec(3)                 recursion: rec(3) rec(2) rec(1) rec(0)
 *         i % 5 == 4: checkpoint()
 *
 * Functions: main, worker_main, kernel, train_loop, train_step,
 * load_batch, forward, matmul, rec, checkpoint.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void kernel(long i)
{
	SINK(i);
}

NOINLINE void *worker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "stats-worker");
	for (long i = 0; i < 100; i++)
		kernel(i);
	return arg;
}

NOINLINE void load_batch(long i)
{
	SINK(i);
}

NOINLINE void matmul(long i)
{
	SINK(i);
}

NOINLINE void forward(long i)
{
	matmul(i);
	matmul(i + 1);
}

NOINLINE long rec(long depth)
{
	SINK(depth);
	return depth ? rec(depth - 1) + 1 : 0;
}

NOINLINE void checkpoint(long i)
{
	SINK(i);
}

NOINLINE void train_step(long i)
{
	load_batch(i);
	forward(i);
	forward(i);
	SINK(rec(3));
	if (i % 5 == 4)
		checkpoint(i);
}

NOINLINE void train_loop(long steps)
{
	for (long i = 0; i < steps; i++)
		train_step(i);
}

int main(int argc, char **argv)
{
	/* not atol: clang -O2 inlines it from stdlib.h and instruments it */
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 50;
	pthread_t w;
	if (pthread_create(&w, NULL, worker_main, NULL) || pthread_join(w, NULL))
		return 1;
	train_loop(steps);
	return 0;
}
