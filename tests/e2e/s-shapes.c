/*
 * s-shapes.c - fixture: training programs shaped the way people write
 * them, for `stepscope steps` (issue 48: the step finder took two
 * unrelated functions called twice for two iterations of main's loop).
 * Every time is spun on the clock (work), so the shares stand whatever
 * the load.
 *
 *   s-shapes mlp STEPS      main: linear_init once per layer (2 layers),
 *                           then STEPS x train_step (forward, backward,
 *                           sgd_update), evaluate after every 20th step
 *                           (forward x3)
 *   s-shapes warmup STEPS   main: linear_init x2; 3 warm-up train_steps;
 *                           reset_timer; STEPS x (load_batch, train_step),
 *                           save_checkpoint after every 20th step
 *   s-shapes loader STEPS   a data loader thread (loader_main) reads
 *                           STEPS batches into a one-batch queue
 *                           (read_batch, waiting for the slot: each call
 *                           lasts an iteration of main, longer than a
 *                           train_step); main: STEPS x (next_batch,
 *                           train_step, log_metrics), evaluate after
 *                           every 5th step
 *   s-shapes kann STEPS     kann's rnn-bit: main: train(): 2 epochs of
 *                           STEPS/2 batches: kann_switch, kann_cost (the
 *                           graph: 40 x kad_op_dot, 10 x kad_op_add),
 *                           kann_class_error, kann_RMSprop; after each
 *                           epoch report_epoch
 *   s-shapes epoch STEPS    main: 2 x (train_epoch, evaluate); train_epoch:
 *                           STEPS/2 x (load_batch, train_step)
 *   s-shapes capped STEPS READS [grad]
 *                           main: READS x read_value, then STEPS x
 *                           cost_step: 500 x op_dot (with grad: 1 us
 *                           each, then op_grad)
 *   s-shapes llm STEPS      llm.c: main drives load_batch, gpt2_forward,
 *                           gpt2_zero_grad, gpt2_backward, gpt2_update;
 *                           every 10th step validation (load_batch and
 *                           gpt2_forward x4), every 10th from step 10
 *                           sampling (gpt2_forward x30, sample_token x30):
 *                           more forwards than steps
 *
 * Functions: main, work, linear_init, forward, backward, sgd_update,
 * train_step, evaluate, reset_timer, load_batch, save_checkpoint,
 * loader_main, read_batch, next_batch, train, kann_switch, kann_cost,
 * kad_op_dot, kad_op_add, kann_class_error, kann_RMSprop, report_epoch,
 * gpt2_forward, gpt2_zero_grad, gpt2_backward, gpt2_update, sample_token,
 * read_value, op_dot, op_grad, cost_step, train_epoch, log_metrics.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void work(long us)
{
	SPIN_US(us);
	SINK(us);
}

/* ---------------------------------------------------------------- mlp */

NOINLINE void linear_init(int layer)
{
	work(300 + layer);
}

NOINLINE void forward(int batch)
{
	work(batch < 0 ? 100 : 400);
}

NOINLINE void backward(void)
{
	work(800);
}

NOINLINE void sgd_update(void)
{
	work(100);
}

NOINLINE void train_step(int step)
{
	forward(step);
	backward();
	sgd_update();
}

NOINLINE void evaluate(void)
{
	for (int i = 0; i < 3; i++)
		forward(-1);
}

NOINLINE void reset_timer(void)
{
	work(10);
}

NOINLINE void load_batch(int step)
{
	work(step < 0 ? 30 : 50);
}

NOINLINE void save_checkpoint(int step)
{
	work(600 + step % 2);
}

/* ------------------------------------------------------------- loader */

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;  /* a batch is ready */
static pthread_cond_t q_space = PTHREAD_COND_INITIALIZER; /* the slot is free */
static int q_ready;

/* Read batch i (0.3 ms) and hand it over through a one-batch queue,
 * waiting while the previous one is still there: a prefetching loader,
 * whose calls last as long as the main thread's iterations, longer than
 * its train_step. */
NOINLINE void read_batch(int i)
{
	work(300 + i % 2);
	pthread_mutex_lock(&q_lock);
	while (q_ready)
		pthread_cond_wait(&q_space, &q_lock);
	q_ready = 1;
	pthread_cond_signal(&q_cond);
	pthread_mutex_unlock(&q_lock);
}

NOINLINE void *loader_main(void *arg)
{
	int n = (int)(long)arg;
	for (int i = 0; i < n; i++)
		read_batch(i);
	return NULL;
}

NOINLINE void next_batch(void)
{
	pthread_mutex_lock(&q_lock);
	while (!q_ready)
		pthread_cond_wait(&q_cond, &q_lock);
	q_ready = 0;
	pthread_cond_signal(&q_space);
	pthread_mutex_unlock(&q_lock);
}

NOINLINE void log_metrics(int step)
{
	work(800 + step % 2);
}

/* --------------------------------------------------------------- kann */

NOINLINE void kad_op_dot(int i)
{
	work(20 + i % 2);
}

NOINLINE void kad_op_add(int i)
{
	work(5 + i % 2);
}

NOINLINE void kann_switch(int train)
{
	SINK(train);
}

NOINLINE void kann_cost(int batch)
{
	for (int i = 0; i < 40; i++) {
		kad_op_dot(batch + i);
		if (i % 4 == 0)
			kad_op_add(i);
	}
}

NOINLINE void kann_class_error(void)
{
	work(30);
}

NOINLINE void kann_RMSprop(void)
{
	work(60);
}

NOINLINE void report_epoch(int epoch)
{
	SINK(epoch);
}

NOINLINE void train(int steps)
{
	for (int epoch = 0; epoch < 2; epoch++) {
		for (int b = 0; b < steps / 2; b++) {
			kann_switch(1);
			kann_cost(b);
			kann_class_error();
			kann_RMSprop();
		}
		report_epoch(epoch);
	}
}

/* ------------------------------------------------------------- capped */

NOINLINE long read_value(long i)
{
	return SINK(i), i & 3;
}

static int with_grad;

NOINLINE void op_dot(long i)
{
	if (with_grad) /* a real dot product: 1 us */
		SPIN_US(1);
	SINK(i);
}

NOINLINE void op_grad(long i)
{
	SINK(i);
}

/* 500 graph nodes: each an op_dot, then its op_grad (with GRAD) */

NOINLINE void cost_step(long s)
{
	for (long i = 0; i < 500; i++) {
		op_dot(s + i);
		if (with_grad)
			op_grad(i);
	}
}

/* -------------------------------------------------------------- epoch */

NOINLINE void train_epoch(int batches)
{
	for (int b = 0; b < batches; b++) {
		load_batch(b);
		train_step(b);
	}
}

/* ---------------------------------------------------------------- llm */

NOINLINE void gpt2_forward(int batch)
{
	work(batch < 0 ? 250 : 400);
}

NOINLINE void gpt2_zero_grad(void)
{
	work(20);
}

NOINLINE void gpt2_backward(void)
{
	work(800);
}

NOINLINE void gpt2_update(void)
{
	work(150);
}

NOINLINE void sample_token(int t)
{
	SINK(t);
}

int main(int argc, char **argv)
{
	const char *shape = argc > 1 ? argv[1] : "";
	/* strtol, not atoi: clang instruments glibc's inline atoi */
	int steps = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 40;

	if (!strcmp(shape, "mlp")) {
		for (int l = 0; l < 2; l++)
			linear_init(l);
		for (int s = 0; s < steps; s++) {
			train_step(s);
			if (s % 20 == 19)
				evaluate();
		}
	} else if (!strcmp(shape, "warmup")) {
		for (int l = 0; l < 2; l++)
			linear_init(l);
		for (int s = 0; s < 3; s++)
			train_step(-1);
		reset_timer();
		for (int s = 0; s < steps; s++) {
			load_batch(s);
			train_step(s);
			if (s % 20 == 19)
				save_checkpoint(s);
		}
	} else if (!strcmp(shape, "loader")) {
		pthread_t th;
		if (pthread_create(&th, NULL, loader_main, (void *)(long)steps)) {
			perror("pthread_create");
			return 1;
		}
		for (int s = 0; s < steps; s++) {
			next_batch();
			train_step(s);
			log_metrics(s);
			if (s % 5 == 4)
				evaluate();
		}
		pthread_join(th, NULL);
	} else if (!strcmp(shape, "kann")) {
		train(steps);
	} else if (!strcmp(shape, "capped")) {
		long reads = argc > 3 ? strtol(argv[3], NULL, 10) : 100000;
		with_grad = argc > 4 && !strcmp(argv[4], "grad");
		for (long i = 0; i < reads; i++)
			read_value(i);
		for (int s = 0; s < steps; s++)
			cost_step(s);
	} else if (!strcmp(shape, "epoch")) {
		for (int e = 0; e < 2; e++) {
			train_epoch(steps / 2);
			evaluate();
		}
	} else if (!strcmp(shape, "llm")) {
		for (int s = 0; s < steps; s++) {
			if (s % 10 == 0)
				for (int i = 0; i < 4; i++) {
					load_batch(-1);
					gpt2_forward(-1);
				}
			if (s % 10 == 0 && s > 0)
				for (int t = 0; t < 30; t++) {
					gpt2_forward(-2);
					sample_token(t);
				}
			load_batch(s);
			gpt2_forward(s);
			gpt2_zero_grad();
			gpt2_backward();
			gpt2_update();
		}
	} else {
		fprintf(stderr, "usage: s-shapes mlp|warmup|loader|kann|epoch|capped|llm STEPS\n");
		return 2;
	}
	return 0;
}
