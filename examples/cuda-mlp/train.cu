/*
 * train.cu - train a two-layer MLP on generated spirals on the GPU: the
 * training loop, the program stepscope profiles in examples/cuda-mlp.
 *
 * Shaped like real training code: a loader that shuffles each epoch and
 * copies every batch to the device, a host train_step() per step (forward,
 * loss, backward, Adam; each a few kernel launches), evaluation on a
 * held-out split every --eval-every steps, a loss printed every
 * --log-every steps.  Builds and runs the same with or without stepscope
 * (the STEPSCOPE_RANGE marks compile to nothing without it).
 *
 * Exit status: 0 done, 1 CUDA or memory error, 2 bad option, 3 no CUDA
 * device (one line on stderr, nothing else), so a test can tell "no GPU
 * here" from a failure.  Never: read files or the clock for anything but
 * timing (a --seed gives the same run every time).
 */
#include <limits.h>
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

#include "check.h"
#include "data.h"
#include "model.h"
#include "train-cli.h"

#define NCLASSES 3
#define EXIT_NO_DEVICE 3

extern "C" {

struct options {
	int steps;
	int hidden;
	int batch;
	int points; /* per class */
	int eval_every; /* steps; 0: only at the end */
	int log_every;
	float lr;
	unsigned long seed;
};

static const char usage[] =
	"usage: train [--steps N] [--hidden H] [--batch B] [--lr LR] [--seed S]\n"
	"             [--eval-every N] [--log-every N]\n"
	"Train a two-layer MLP on generated 3-class spirals with CUDA.\n"
	"  --steps N       training steps (default 500)\n"
	"  --hidden H      width of the hidden layer (default 128)\n"
	"  --batch B       batch size (default 128)\n"
	"  --lr LR         Adam learning rate (default 0.01)\n"
	"  --seed S        seed for data, split, shuffles and weights (default 1)\n"
	"  --eval-every N  evaluate every N steps, 0 for only at the end "
	"(default 100)\n"
	"  --log-every N   print the mean loss every N steps (default 50)\n"
	"Exits 3, saying why in one line, when there is no CUDA device.\n";

static int parse_options(int argc, char **argv, struct options *o)
{
	const struct cli_option opts[] = {
		{ "--steps", CLI_INT, 1, INT_MAX, &o->steps },
		{ "--hidden", CLI_INT, 1, 65536, &o->hidden },
		{ "--batch", CLI_INT, 1, 1 << 20, &o->batch },
		{ "--lr", CLI_POSITIVE, 0, 0, &o->lr },
		{ "--seed", CLI_SEED, 0, 0, &o->seed },
		{ "--eval-every", CLI_INT, 0, INT_MAX, &o->eval_every },
		{ "--log-every", CLI_INT, 1, INT_MAX, &o->log_every },
	};

	o->steps = 500;
	o->hidden = 128;
	o->batch = 128;
	o->points = 1000;
	o->eval_every = 100;
	o->log_every = 50;
	o->lr = 0.01f;
	o->seed = 1;
	return cli_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
}

/* The first CUDA call: 0 with the device's name, or EXIT_NO_DEVICE after
 * one line saying why. */
static int pick_device(char *name, size_t len)
{
	struct cudaDeviceProp prop;
	cudaError_t err;
	int count = 0;

	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess || count == 0) {
		fprintf(stderr, "train: no CUDA device (cudaGetDeviceCount: %s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) :
					     "0 devices");
		return EXIT_NO_DEVICE;
	}
	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	snprintf(name, len, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
	return 0;
}

/* One training step on a batch already on the device: forward, loss,
 * backward, Adam.  Returns the batch's mean loss. */
float train_step(struct mlp *model, struct adam *opt,
		 const struct batch *batch)
{
	float loss;

	mlp_forward(model, batch->x, batch->n);
	loss = mlp_loss(model, batch->y, batch->n);
	mlp_backward(model, batch->x, batch->n);
	{
		STEPSCOPE_RANGE("optimizer");
		mlp_update(model, opt);
	}
	return loss;
}

/* Accuracy on a device-resident set, in batches of at most max_batch rows:
 * logits are copied back and scored on the host. */
float evaluate(struct mlp *model, const struct device_set *set,
	       float *host_logits)
{
	int start, i, correct = 0;

	for (start = 0; start < set->n; start += model->max_batch) {
		int n = set->n - start < model->max_batch ? set->n - start :
							    model->max_batch;
		const float *logits =
			mlp_forward(model, set->x + start * DATA_DIM, n);

		CUDA_CHECK(cudaMemcpy(host_logits, logits,
				      sizeof(float) * (size_t)n *
					      (size_t)model->classes,
				      cudaMemcpyDeviceToHost));
		for (i = 0; i < n; i++) {
			const float *z = host_logits + i * model->classes;
			int c, best = 0;

			for (c = 1; c < model->classes; c++)
				if (z[c] > z[best])
					best = c;
			correct += best == set->y[start + i];
		}
	}
	return set->n ? (float)correct / (float)set->n : 0.0f;
}

} /* extern "C" */

int main(int argc, char **argv)
{
	struct options o;
	struct dataset all = {}, train = {}, eval = {};
	struct device_set eval_dev;
	struct loader loader;
	struct mlp model;
	struct adam opt = { 0.0f, 0.9f, 0.999f, 1e-8f, 0 };
	char device[320];
	struct train_log console = {};
	double t0, elapsed;
	float acc, *host_logits;
	int step, ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	ret = pick_device(device, sizeof(device));
	if (ret)
		return ret;

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
	host_logits = (float *)malloc(sizeof(float) * (size_t)o.batch *
				      NCLASSES);
	if (!host_logits || loader_init(&loader, &train, o.batch, o.seed + 2)) {
		fprintf(stderr, "train: out of memory setting up the loader\n");
		return 1;
	}
	mlp_init(&model, DATA_DIM, o.hidden, NCLASSES, o.batch, o.seed + 3);
	device_set_init(&eval_dev, &eval);
	opt.lr = o.lr;

	printf("cuda mlp: spirals, %d classes, %d train / %d eval points; "
	       "hidden %d, batch %d, seed %lu\n",
	       NCLASSES, train.n, eval.n, o.hidden, o.batch, o.seed);
	printf("device 0: %s; %.1f KiB of parameters, gradients and "
	       "activations\n",
	       device, (double)model.device_bytes / 1024.0);
	fflush(stdout);
	console.steps = o.steps;
	console.log_every = o.log_every;
	t0 = now_seconds();
	for (step = 1; step <= o.steps; step++) {
		const struct batch *batch;
		float loss;

		{
			STEPSCOPE_RANGE("data");
			batch = loader_next_batch(&loader);
		}
		loss = train_step(&model, &opt, batch);
		train_log_step(&console, step, loader.epoch, loss,
			       o.eval_every && step % o.eval_every == 0 ?
				       evaluate(&model, &eval_dev, host_logits) :
				       -1.0f);
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	elapsed = now_seconds() - t0;
	acc = evaluate(&model, &eval_dev, host_logits);
	printf("done: %d steps in %.2f s (%.3f ms/step), eval accuracy %.1f%%\n",
	       o.steps, elapsed, 1e3 * elapsed / o.steps, 100.0f * acc);

	device_set_release(&eval_dev);
	mlp_release(&model);
	loader_release(&loader);
	free(host_logits);
	dataset_release(&train);
	dataset_release(&eval);
	return 0;
}
