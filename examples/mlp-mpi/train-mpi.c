/*
 * train-mpi.c - the spirals MLP of examples/mlp trained data-parallel with
 * MPI: every rank holds the same model (same seed), draws its own batches
 * (seed + rank), and after each backward pass the gradients are averaged
 * over the ranks with MPI_Allreduce before the Adam update, as in DDP and
 * Horovod.  --delay-rank R --delay-ms M make rank R slow down each step by
 * M ms, a straggler for `stepscope report RUN --ranks` to find.
 *
 * Never: depend on stepscope to build (STEPSCOPE_RANGE compiles to nothing
 * without it).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* stepscope's annotations (README.md, "Annotations"): with stepscope.h on
 * the include path they mark ranges for `stepscope record`; without it
 * (plain gcc, stepscope not installed) they compile to nothing */
#if defined(__has_include)
#if __has_include(<stepscope.h>)
#include <stepscope.h>
#endif
#endif
#ifndef STEPSCOPE_RANGE
#define STEPSCOPE_RANGE(name) ((void)(name))
#define stepscope_step() ((void)0)
#define stepscope_range_push(name) ((void)(name))
#define stepscope_range_pop() ((void)0)
#define stepscope_recording() 0
#endif

#include "data.h"
#include "model.h"
#include "pool.h"

#define NCLASSES 3

struct options {
	int steps, hidden, batch, delay_rank, delay_ms, log_every;
	unsigned long seed;
};

static int parse(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .steps = 100, .hidden = 64, .batch = 64, .delay_rank = -1,
			       .delay_ms = 0, .log_every = 25, .seed = 1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc) {
			fprintf(stderr, "train-mpi: %s needs a value\n", a);
			return 2;
		}
		int v = atoi(argv[++i]);
		if (!strcmp(a, "--steps"))
			o->steps = v;
		else if (!strcmp(a, "--hidden"))
			o->hidden = v;
		else if (!strcmp(a, "--batch"))
			o->batch = v;
		else if (!strcmp(a, "--delay-rank"))
			o->delay_rank = v;
		else if (!strcmp(a, "--delay-ms"))
			o->delay_ms = v;
		else if (!strcmp(a, "--log-every"))
			o->log_every = v > 0 ? v : 1;
		else if (!strcmp(a, "--seed"))
			o->seed = (unsigned long)v;
		else {
			fprintf(stderr, "usage: train-mpi [--steps N] [--hidden H] [--batch B] "
				"[--delay-rank R --delay-ms M] [--log-every N] [--seed S]\n");
			return 2;
		}
	}
	return o->steps > 0 && o->hidden > 0 && o->batch > 0 ? 0 : 2;
}

/* Average the gradients of every parameter over the ranks. */
static void allreduce_gradients(struct mlp *m, int size)
{
	struct param *ps[] = { &m->l1.w, &m->l1.b, &m->l2.w, &m->l2.b, &m->l3.w, &m->l3.b };
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		MPI_Allreduce(MPI_IN_PLACE, ps[k]->grad, ps[k]->n, MPI_FLOAT, MPI_SUM,
			      MPI_COMM_WORLD);
		for (int i = 0; i < ps[k]->n; i++)
			ps[k]->grad[i] /= (float)size;
	}
}

static void straggle(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* One data-parallel step: local forward/backward, averaged update. */
static float train_step(struct mlp *model, struct adam *opt, const struct batch *b,
			int size, int delay_ms)
{
	float loss;

	mlp_forward(model, b->x, b->n);
	loss = softmax_cross_entropy(model->dlogits, model->logits, b->y, b->n,
				     model->classes);
	mlp_backward(model, b->x, b->n);
	if (delay_ms)
		straggle(delay_ms);
	allreduce_gradients(model, size);
	{
		STEPSCOPE_RANGE("optimizer");
		mlp_update(model, opt);
	}
	return loss;
}

int main(int argc, char **argv)
{
	struct options o;
	struct dataset all = { 0 }, train = { 0 }, eval = { 0 };
	struct loader loader;
	struct mlp model;
	struct adam opt = { .lr = 0.003f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
	struct pool *pool = NULL;
	int rank, size, ret;
	double loss_sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	ret = parse(argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret;
	}
	if (spirals_generate(&all, 1000, NCLASSES, o.seed) ||
	    dataset_split(&all, all.n / 10, o.seed + 1, &train, &eval) ||
	    !(pool = pool_create(1)) ||
	    loader_init(&loader, &train, o.batch, o.seed + 2 + (unsigned long)rank) ||
	    mlp_init(&model, DATA_DIM, o.hidden, NCLASSES, o.batch, pool, o.seed + 3)) {
		fprintf(stderr, "train-mpi: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	dataset_release(&all);
	if (rank == 0)
		printf("mlp-mpi: %d ranks, %d steps, hidden %d, batch %d per rank%s\n", size,
		       o.steps, o.hidden, o.batch, o.delay_rank >= 0 ? ", one straggler" : "");
	for (int step = 1; step <= o.steps; step++) {
		const struct batch *b = loader_next_batch(&loader);
		loss_sum += train_step(&model, &opt, b, size,
				       rank == o.delay_rank ? o.delay_ms : 0);
		if (step % o.log_every == 0 || step == o.steps) {
			double mean = 0, local = loss_sum / o.log_every;
			MPI_Reduce(&local, &mean, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			if (rank == 0)
				printf("step %5d  loss %.4f (mean over ranks)\n", step, mean / size);
			loss_sum = 0;
		}
	}
	mlp_release(&model);
	loader_release(&loader);
	pool_free(pool);
	dataset_release(&train);
	dataset_release(&eval);
	MPI_Finalize();
	return 0;
}
