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
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stepscope.h>

#include "data.h"
#include "model.h"
#include "pool.h"

#define NCLASSES 3

struct options {
	int steps;
	int hidden;
	int threads;
	int batch;
	int points;	/* per class */
	int eval_every; /* steps; 0: only at the end */
	int log_every;
	float lr;
	unsigned long seed;
};

static const char usage[] =
	"usage: train [--steps N] [--hidden H] [--threads T] [--seed S]\n"
	"             [--batch B] [--lr LR] [--eval-every N] [--log-every N]\n"
	"Train a 2-hidden-layer MLP on generated 3-class spirals.\n"
	"  --steps N       training steps (default 600)\n"
	"  --hidden H      width of both hidden layers (default 128)\n"
	"  --threads T     matmul worker threads, 1-64 (default 2)\n"
	"  --seed S        seed for data, split, shuffles and weights (default 1)\n"
	"  --batch B       batch size (default 128)\n"
	"  --lr LR         Adam learning rate (default 0.003)\n"
	"  --eval-every N  evaluate every N steps, 0 for only at the end "
	"(default 100)\n"
	"  --log-every N   print the mean loss every N steps (default 50)\n";

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bad_value(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "train: %s needs %s, got '%s'\n", opt, want, val);
	return 2;
}

static int parse_int(const char *opt, const char *val, int min, int max,
		     int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < min || v > max) {
		char want[64];

		snprintf(want, sizeof(want), "an integer from %d to %d", min,
			 max);
		return bad_value(opt, val, want);
	}
	*out = (int)v;
	return 0;
}

static int is_option(const char *s)
{
	static const char *const names[] = {
		"--steps", "--hidden", "--threads",    "--seed",
		"--batch", "--lr",     "--eval-every", "--log-every",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return 1;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int i, ret;

	*o = (struct options){ .steps = 600,
			       .hidden = 128,
			       .threads = 2,
			       .batch = 128,
			       .points = 1000,
			       .eval_every = 100,
			       .log_every = 50,
			       .lr = 0.003f,
			       .seed = 1 };
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i],
			   *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		if (!is_option(opt)) {
			fprintf(stderr,
				"train: unknown option '%s' (train --help lists them)\n",
				opt);
			return 2;
		}
		if (!val) {
			fprintf(stderr, "train: missing value for %s\n", opt);
			return 2;
		}
		i++;
		if (!strcmp(opt, "--steps"))
			ret = parse_int(opt, val, 1, INT_MAX, &o->steps);
		else if (!strcmp(opt, "--hidden"))
			ret = parse_int(opt, val, 1, 8192, &o->hidden);
		else if (!strcmp(opt, "--threads"))
			ret = parse_int(opt, val, 1, 64, &o->threads);
		else if (!strcmp(opt, "--batch"))
			ret = parse_int(opt, val, 1, 1 << 20, &o->batch);
		else if (!strcmp(opt, "--eval-every"))
			ret = parse_int(opt, val, 0, INT_MAX, &o->eval_every);
		else if (!strcmp(opt, "--seed")) {
			errno = 0;
			o->seed = strtoul(val, &end, 0);
			ret = errno || end == val || *end ?
				      bad_value(opt, val,
						"an unsigned integer") :
				      0;
		} else if (!strcmp(opt, "--lr")) {
			o->lr = strtof(val, &end);
			ret = end == val || *end || !(o->lr > 0.0f) ?
				      bad_value(opt, val, "a positive number") :
				      0;
		} else { /* --log-every */
			ret = parse_int(opt, val, 1, INT_MAX, &o->log_every);
		}
		if (ret)
			return ret;
	}
	return 0;
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
	double t0, elapsed, loss_sum = 0.0;
	float acc;
	int step, ret, log, ev, last_log = 0;

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
	t0 = now_seconds();
	for (step = 1; step <= o.steps; step++) {
		const struct batch *batch;

		{
			STEPSCOPE_RANGE("data");
			batch = loader_next_batch(&loader);
		}
		loss_sum += train_step(&model, &opt, batch);

		log = step % o.log_every == 0 || step == o.steps;
		ev = o.eval_every && step % o.eval_every == 0;
		if (log) {
			printf("step %5d  epoch %3d  loss %.4f", step,
			       loader.epoch, loss_sum / (step - last_log));
			loss_sum = 0.0;
			last_log = step;
		} else if (ev) {
			printf("step %5d  epoch %3d              ", step,
			       loader.epoch);
		}
		if (ev)
			printf("  eval acc %5.1f%%",
			       100.0f * evaluate(&model, &eval));
		if (log || ev) {
			printf("\n");
			fflush(stdout);
		}
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
