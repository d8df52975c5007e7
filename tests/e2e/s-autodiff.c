/*
 * s-autodiff.c - fixture: a trainer on a tiny scalar autodiff library
 * (micrograd in C): a data reader called per field before training, then
 * millions of tiny calls a step.
 *
 *   s-autodiff STEPS NODES RECORDS [SPIN_MS]
 *
 *   main
 *     load_data(RECORDS)         RECORDS x read_record, each 3 x read_int
 *     train(STEPS)
 *       train_step               the step function; spins SPIN_MS (default 0)
 *                                on the clock: real work of a fixed time
 *         forward                NODES x (value_new, 2 x vdata)
 *         backward               NODES x node_backward, each 2 x vdata
 *         sgd_update             PARAMS x sgd
 *
 * vdata is a static inline helper (the hooks still see it: two thirds of
 * every step's calls); value_new, node_backward and sgd are a few ns each.
 * A step makes 6 x NODES + PARAMS + 4 calls.  SPIN_MS gives the step
 * work that load cannot shrink next to the tiny calls, so a test that
 * judges the tiny calls' share of the time judges a share load cannot
 * swap (test-filter-advice).
 * Functions: main, load_data, read_record, read_int, train, train_step,
 * forward, backward, sgd_update, value_new, vdata, node_backward, sgd
 * (sgd is part of sgd_update's name: gcc cannot leave out one alone).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

enum { PARAMS = 64 };

struct value {
	double data, grad;
	struct value *a, *b;
};

static struct value *nodes, params[PARAMS];
static long nnodes, spin_ms;
static char *text;

NOINLINE long read_int(const char **p)
{
	long v = 0;
	while (**p == ' ' || **p == '\n')
		(*p)++;
	while (**p >= '0' && **p <= '9')
		v = v * 10 + *(*p)++ - '0';
	return v;
}

NOINLINE long read_record(const char **p)
{
	long a = read_int(p), b = read_int(p), c = read_int(p);
	return a + b + c;
}

NOINLINE void load_data(long records)
{
	size_t at = 0;
	text = malloc((size_t)records * 12 + 1);
	for (long r = 0; r < records; r++)
		at += (size_t)(r % 10 == 0 ? strcpy(text + at, "12 345 6789\n"), 12
					   : (strcpy(text + at, "1 22 333\n"), 9));
	text[at] = 0;
	const char *p = text;
	long s = 0;
	for (long r = 0; r < records; r++)
		s += read_record(&p);
	SINK(s);
}

static inline double vdata(const struct value *v)
{
	return v->data;
}

NOINLINE struct value *value_new(double d, struct value *a, struct value *b)
{
	struct value *v = &nodes[nnodes++];
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

NOINLINE void forward(long n)
{
	struct value *x = &params[0];
	nnodes = 0;
	for (long i = 0; i < n; i++) {
		struct value *w = &params[i % PARAMS];
		x = value_new(vdata(x) * 0.5 + vdata(w), x, w);
	}
	SINK(x->data);
}

NOINLINE void backward(void)
{
	nodes[nnodes - 1].grad = 1;
	for (long i = nnodes - 1; i >= 0; i--)
		node_backward(&nodes[i]);
}

NOINLINE void sgd_update(void)
{
	for (int i = 0; i < PARAMS; i++)
		sgd(&params[i]);
}

NOINLINE void train_step(long n)
{
	SPIN_US(spin_ms * 1000);
	forward(n);
	backward();
	sgd_update();
}

NOINLINE void train(long steps, long n)
{
	for (long s = 0; s < steps; s++)
		train_step(n);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 5;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 125000;
	long records = argc > 3 ? strtol(argv[3], NULL, 10) : 2000;
	spin_ms = argc > 4 ? strtol(argv[4], NULL, 10) : 0;

	nodes = calloc((size_t)n + 1, sizeof(*nodes));
	for (int i = 0; i < PARAMS; i++)
		params[i].data = 0.01 * i;
	load_data(records);
	train(steps, n);
	return 0;
}
