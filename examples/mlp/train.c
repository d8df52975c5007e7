/*
 * train.c - train a small MLP on the spirals dataset: the training loop.
 *
 * This is the program the stepscope demo profiles.  It has the shape of real
 * training code: a loader that shuffles each epoch and hands out batches, a
 * train_step() per step (forward, loss, backward, Adam), evaluation on a
 * held-out split every --eval-every steps, and matmuls spread over a pool of
 * worker threads.  It builds and runs the same with or without stepscope:
 * the STEPSCOPE_RANGE marks below compile to nothing without it.
 *
 * Never: read files or the clock for anything but timing (runs are
 * deterministic for a --seed), or depend on stepscope to build.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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
#include "train-cli.h"

#define NCLASSES 3

struct options {
	int steps;
	int hidden;
	int threads;
	int batch;
	int points;	/* per class */
	int eval_every; /* steps; 0: only at the end */
	int log_every;
	int step_times; /* 1: each step's time on stderr */
	float lr;
	unsigned long seed;
};

static const char usage[] =
	"usage: train [--steps N] [--hidden H] [--threads T] [--seed S]\n"
	"             [--batch B] [--lr LR] [--eval-every N] [--log-every N]\n"
	"             [--step-times 0|1]\n"
	"Train a 2-hidden-layer MLP on generated 3-class spirals.\n"
	"  --steps N       training steps (default 600)\n"
	"  --hidden H      width of both hidden layers (default 128)\n"
	"  --threads T     matmul worker threads, 1-64 (default 2)\n"
	"  --seed S        seed for data, split, shuffles and weights (default 1)\n"
	"  --batch B       batch size (default 128)\n"
	"  --lr LR         Adam learning rate (default 0.003)\n"
	"  --eval-every N  evaluate every N steps, 0 for only at the end "
	"(default 100)\n"
	"  --log-every N   print the mean loss every N steps (default 50)\n"
	"  --step-times 1  print each training step's time on stderr, by the\n"
	"                  program's own clock: \"step N MS ms\" (default 0)\n";

static int parse_options(int argc, char **argv, struct options *o)
{
	const struct cli_option opts[] = {
		{ "--steps", CLI_INT, 1, INT_MAX, &o->steps },
		{ "--hidden", CLI_INT, 1, 8192, &o->hidden },
		{ "--threads", CLI_INT, 1, 64, &o->threads },
		{ "--seed", CLI_SEED, 0, 0, &o->seed },
		{ "--batch", CLI_INT, 1, 1 << 20, &o->batch },
		{ "--lr", CLI_POSITIVE, 0, 0, &o->lr },
		{ "--eval-every", CLI_INT, 0, INT_MAX, &o->eval_every },
		{ "--log-every", CLI_INT, 1, INT_MAX, &o->log_every },
		{ "--step-times", CLI_INT, 0, 1, &o->step_times },
	};

	*o = (struct options){ .steps = 600,
			       .hidden = 128,
			       .threads = 2,
			       .batch = 128,
			       .points = 1000,
			       .eval_every = 100,
			       .log_every = 50,
			       .lr = 0.003f,
			       .seed = 1 };
	return cli_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
}

/* One training step: forward, loss, backward, optimizer.  Returns the loss. */
static float train_step(struct mlp *model, struct adam *opt,
			const struct batch *batch)
{
	float loss;

	mlp_forward(model, batch->x, batch->n);
	loss = softmax_cross_entropy(model->dlogits, model->logits, batch->y,
				     batch->n, model->classes);
	mlp_backward(model, batch->x, batch->n);
	{
		STEPSCOPE_RANGE("optimizer");
		mlp_update(model, opt);
	}
	return loss;
}

/* Accuracy on d, in batches of at most model->max_batch rows. */
static float evaluate(struct mlp *model, const struct dataset *d)
{
	int start, i, correct = 0;

	for (start = 0; start < d->n; start += model->max_batch) {
		int n = d->n - start < model->max_batch ? d->n - start :
							  model->max_batch;
		const float *logits =
			mlp_forward(model, d->x + start * DATA_DIM, n);

		for (i = 0; i < n; i++) {
			const float *z = logits + i * model->classes;
			int c, best = 0;

			for (c = 1; c < model->classes; c++)
				if (z[c] > z[best])
					best = c;
			correct += best == d->y[start + i];
		}
	}
	return d->n ? (float)correct / (float)d->n : 0.0f;
}

int main(int argc, char **argv)
{
	struct options o;
	struct dataset all = { 0 }, train = { 0 }, eval = { 0 };
	struct loader loader;
	struct pool *pool;
	struct mlp model;
	struct adam opt;
	struct train_log console;
	double t0, elapsed;
	float acc;
	int step, ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	pthread_setname_np(pthread_self(), "mlp-main");

	if (spirals_generate(&all, o.points, NCLASSES, o.seed) ||
	    dataset_split(&all, all.n / 10, o.seed + 1, &train, &eval)) {
		fprintf(stderr, "train: out of memory building the dataset\n");
		return 1;
	}
	dataset_release(&all);
	if (o.batch > train.n) {
		fprintf(stderr,
			"train: --batch %d is larger than the %d training points\n",
			o.batch, train.n);
		return 2;
	}
	pool = pool_create(o.threads);
	if (!pool) {
		fprintf(stderr, "train: cannot start %d worker threads\n",
			o.threads);
		return 1;
	}
	if (loader_init(&loader, &train, o.batch, o.seed + 2) ||
	    mlp_init(&model, DATA_DIM, o.hidden, NCLASSES, o.batch, pool,
		     o.seed + 3)) {
		fprintf(stderr, "train: out of memory setting up the model\n");
		return 1;
	}
	opt = (struct adam){
		.lr = o.lr, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f
	};

	printf("mlp: spirals, %d classes, %d train / %d eval points; "
	       "hidden %d, batch %d, %d threads, seed %lu\n",
	       NCLASSES, train.n, eval.n, o.hidden, o.batch, o.threads, o.seed);
	console = (struct train_log){ .steps = o.steps, .log_every = o.log_every };
	t0 = now_seconds();
	for (step = 1; step <= o.steps; step++) {
		const struct batch *batch;
		float loss;

		{
			STEPSCOPE_RANGE("data");
			batch = loader_next_batch(&loader);
		}
		if (o.step_times) {
			double s0 = now_seconds();
			loss = train_step(&model, &opt, batch);
			fprintf(stderr, "step %d %.3f ms\n", step,
				1e3 * (now_seconds() - s0));
		} else {
			loss = train_step(&model, &opt, batch);
		}
		train_log_step(&console, step, loader.epoch, loss,
			       o.eval_every && step % o.eval_every == 0 ?
				       evaluate(&model, &eval) :
				       -1.0f);
	}
	elapsed = now_seconds() - t0;
	acc = evaluate(&model, &eval);
	printf("done: %d steps in %.2f s (%.2f ms/step), eval accuracy %.1f%%\n",
	       o.steps, elapsed, 1e3 * elapsed / o.steps, 100.0f * acc);

	mlp_release(&model);
	loader_release(&loader);
	pool_free(pool);
	dataset_release(&train);
	dataset_release(&eval);
	return 0;
}
