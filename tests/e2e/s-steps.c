/*
 * s-steps.c - fixture: a training loop with a known call structure, for the
 * step-window tests.
 *
 *   s-steps MODE STEPS
 *     MODE fn   steps are marked by train_step (config: step.function)
 *     MODE api  steps are marked by stepscope_step() after each train_step
 *
 *   main
 *     train_loop(STEPS)
 *       fn:  load_batch(0); then per step i: train_step(i); load_batch(i+1)
 *            (no load_batch after the last step), so the loading between
 *            two calls of train_step belongs to the earlier step
 *       api: per step i: load_batch(i); train_step(i); stepscope_step()
 *     train_step(i, 0)
 *       forward x2                  each forward: matmul x2
 *       i % 3 == 2: train_step(i, 1), a recursive re-entry (same step) that
 *                   runs forward x2 only
 *       run_workers(): workers W0..W2 each call kernel() once, between two
 *                   barriers, so every kernel runs inside the step
 *       range "optimizer": optimizer_update(), which opens range "clip"
 *
 * Worker threads "worker-0".."worker-2" run worker_main, started before
 * train_loop and joined after it.  Prints "pid P", "tid main T" and
 * "tid worker-i T".  Creates ./started first thing in main, so a test can
 * tell whether the program ran at all.  Functions: main, train_loop,
 * load_batch, train_step, forward, matmul, run_workers, optimizer_update,
 * worker_main, kernel.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stepscope.h"
#include "fixture.h"

DEFINE_SINK;

enum { WORKERS = 3 };

static pthread_barrier_t go, done;
static volatile int quit;
static int api_mode;

NOINLINE void kernel(long i)
{
	SINK(i);
}

NOINLINE void *worker_main(void *arg)
{
	long w = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%ld", w);
	pthread_setname_np(pthread_self(), name);
	printf("tid %s %ld\n", name, (long)gettid());
	for (long step = 0;; step++) {
		pthread_barrier_wait(&go);
		if (quit)
			break;
		kernel(step * WORKERS + w);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

NOINLINE void matmul(int i)
{
	SINK(i);
}

NOINLINE void forward(int i)
{
	matmul(i);
	matmul(i + 1);
}

NOINLINE void run_workers(void)
{
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
}

NOINLINE void optimizer_update(int i)
{
	STEPSCOPE_RANGE("clip");
	SINK(i);
}

NOINLINE void train_step(int i, int micro)
{
	forward(i);
	forward(i + 1);
	if (micro)
		return;
	if (i % 3 == 2)
		train_step(i, 1);
	run_workers();
	{
		STEPSCOPE_RANGE("optimizer");
		optimizer_update(i);
	}
}

NOINLINE void load_batch(int i)
{
	SINK(i);
}

NOINLINE void train_loop(int steps)
{
	if (api_mode) {
		for (int i = 0; i < steps; i++) {
			load_batch(i);
			train_step(i, 0);
			stepscope_step();
		}
		return;
	}
	load_batch(0);
	for (int i = 0; i < steps; i++) {
		train_step(i, 0);
		if (i + 1 < steps)
			load_batch(i + 1);
	}
}

int main(int argc, char **argv)
{
	int fd = open("started", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	if (argc != 3 || (strcmp(argv[1], "fn") && strcmp(argv[1], "api"))) {
		fprintf(stderr, "usage: s-steps fn|api STEPS\n");
		return 2;
	}
	api_mode = !strcmp(argv[1], "api");
	/* strtol, not atoi: clang instruments glibc's inline atoi */
	int steps = (int)strtol(argv[2], NULL, 10);

	pthread_t th[WORKERS];
	pthread_barrier_init(&go, NULL, WORKERS + 1);
	pthread_barrier_init(&done, NULL, WORKERS + 1);
	for (long w = 0; w < WORKERS; w++)
		if (pthread_create(&th[w], NULL, worker_main, (void *)w) != 0) {
			perror("pthread_create");
			return 1;
		}
	train_loop(steps);
	quit = 1;
	pthread_barrier_wait(&go);
	for (int w = 0; w < WORKERS; w++)
		pthread_join(th[w], NULL);
	printf("pid %ld\ntid main %ld\n", (long)getpid(), (long)gettid());
	return 0;
}
