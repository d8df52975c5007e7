/*
 * b-trainer.c - benchmark workload: an autodiff-style trainer (micrograd in
 * C, as tests/e2e/s-autodiff.c) whose every step makes CALLS tiny
 * instrumented calls spread over THREADS threads (the main thread and
 * THREADS - 1 workers, which meet at a barrier at each step's start and
 * end).  For the whole-run stats section of make bench (stats.sh): what
 * counting every call costs on a trainer of the shape of issue 36 item 1.
 *
 *   b-trainer STEPS [CALLS [THREADS]]      defaults: 10 1000000 4
 *
 *   main -> train -> train_step (the step function, main thread)
 *     each thread: forward  NODES x (value_new, 2 x vdata)
 *                  backward NODES x (node_backward, 2 x vdata)
 *                  sgd_update PARAMS x sgd
 *   NODES = CALLS / THREADS / 6: a step makes about CALLS calls.
 *
 * Every helper is a real call (noinline); each is a few ns of work.
 * Never: read the clock or depend on time; the output is the checksum.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))
enum { PARAMS = 64 };

struct value {
	double data, grad;
	struct value *a, *b;
};

struct worker {
	pthread_t th;
	struct value *nodes, params[PARAMS];
	long nnodes, n;
	double sum;
};

static pthread_barrier_t start_bar, end_bar;
static volatile int quit;

NOINLINE double vdata(const struct value *v)
{
	return v->data;
}

NOINLINE struct value *value_new(struct worker *w, double d, struct value *a, struct value *b)
{
	struct value *v = &w->nodes[w->nnodes++];
	v->data = d;
	v->grad = 0;
	v->a = a;
	v->b = b;
	return v;
}

NOINLINE void node_backward(struct value *v)
{
	v->a->grad += vdata(v->b) * v->grad;
	v->b->grad += vdata(v->a) * v->grad;
}

NOINLINE void sgd(struct value *p)
{
	p->data -= 1e-6 * p->grad;
	p->grad = 0;
}

NOINLINE void forward(struct worker *w)
{
	struct value *x = &w->params[0];
	w->nnodes = 0;
	for (long i = 0; i < w->n; i++) {
		struct value *p = &w->params[i % PARAMS];
		x = value_new(w, vdata(x) * 0.5 + vdata(p), x, p);
	}
	w->sum += x->data;
}

NOINLINE void backward(struct worker *w)
{
	w->nodes[w->nnodes - 1].grad = 1;
	for (long i = w->nnodes - 1; i >= 0; i--)
		node_backward(&w->nodes[i]);
}

NOINLINE void sgd_update(struct worker *w)
{
	for (int i = 0; i < PARAMS; i++)
		sgd(&w->params[i]);
}

NOINLINE void work(struct worker *w)
{
	forward(w);
	backward(w);
	sgd_update(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (;;) {
		pthread_barrier_wait(&start_bar);
		if (quit)
			return NULL;
		work(w);
		pthread_barrier_wait(&end_bar);
	}
}

NOINLINE void train_step(struct worker *self)
{
	pthread_barrier_wait(&start_bar);
	work(self);
	pthread_barrier_wait(&end_bar);
}

NOINLINE void train(long steps, struct worker *self)
{
	for (long s = 0; s < steps; s++)
		train_step(self);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
	long calls = argc > 2 ? strtol(argv[2], NULL, 10) : 1000000;
	long nth = argc > 3 ? strtol(argv[3], NULL, 10) : 4;
	if (steps < 0 || calls < 6 || nth < 1 || nth > 64) {
		fprintf(stderr, "usage: b-trainer STEPS [CALLS>=6 [THREADS 1..64]]\n");
		return 2;
	}
	struct worker *w = calloc((size_t)nth, sizeof(*w));
	long n = calls / nth / 6;
	for (long t = 0; t < nth; t++) {
		w[t].n = n > 0 ? n : 1;
		w[t].nodes = calloc((size_t)w[t].n + 1, sizeof(struct value));
		for (int i = 0; i < PARAMS; i++)
			w[t].params[i].data = 0.01 * i;
	}
	pthread_barrier_init(&start_bar, NULL, (unsigned)nth);
	pthread_barrier_init(&end_bar, NULL, (unsigned)nth);
	for (long t = 1; t < nth; t++)
		pthread_create(&w[t].th, NULL, worker_main, &w[t]);
	train(steps, &w[0]);
	quit = 1;
	pthread_barrier_wait(&start_bar);
	double sum = 0;
	for (long t = 0; t < nth; t++) {
		if (t)
			pthread_join(w[t].th, NULL);
		sum += w[t].sum;
	}
	printf("%.6f\n", sum);
	return 0;
}
