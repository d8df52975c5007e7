/*
 * train-cli.h - what the examples' training programs share around their
 * loops: the command line (a table of options, each an integer, a positive
 * number or a seed), a monotonic clock for the ms/step line, and the
 * console line printed every --log-every steps with the mean loss and,
 * every --eval-every steps, the held-out accuracy.
 *
 * Header only, for C (examples/mlp) and CUDA C++ (examples/cuda-mlp).  Bad
 * input gets one line on stderr and exit status 2, like stepscope's own
 * commands.  Never: print anything on a step that neither logs nor
 * evaluates, or read the clock for anything but timing.
 */
#ifndef EXAMPLES_TRAIN_CLI_H
#define EXAMPLES_TRAIN_CLI_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum cli_kind {
	CLI_INT,       /* an int in [min, max] */
	CLI_POSITIVE,  /* a float above 0 */
	CLI_SEED,      /* an unsigned long, any base strtoul reads */
};

/* One option: "--name VALUE" stored into *out (int, float or unsigned long
 * by kind). */
struct cli_option {
	const char *name;
	enum cli_kind kind;
	long min, max;
	void *out;
};

static inline double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Store val into o->out; 0, or 2 after one line saying what was wanted. */
static inline int cli_value(const struct cli_option *o, const char *val)
{
	char *end;

	errno = 0;
	switch (o->kind) {
	case CLI_INT: {
		long v = strtol(val, &end, 10);
		if (errno || end == val || *end || v < o->min || v > o->max)
			break;
		*(int *)o->out = (int)v;
		return 0;
	}
	case CLI_POSITIVE: {
		float v = strtof(val, &end);
		if (end == val || *end || !(v > 0.0f))
			break;
		*(float *)o->out = v;
		return 0;
	}
	case CLI_SEED: {
		unsigned long v = strtoul(val, &end, 0);
		if (errno || end == val || *end)
			break;
		*(unsigned long *)o->out = v;
		return 0;
	}
	}
	if (o->kind == CLI_INT)
		fprintf(stderr, "train: %s needs an integer from %ld to %ld, got '%s'\n",
			o->name, o->min, o->max, val);
	else
		fprintf(stderr, "train: %s needs %s, got '%s'\n", o->name,
			o->kind == CLI_POSITIVE ? "a positive number" : "an unsigned integer",
			val);
	return 2;
}

/* Parse "--name VALUE" pairs against the table of n options; -h/--help
 * prints usage and exits 0.  0, or 2 after one line on stderr. */
static inline int cli_parse(int argc, char **argv, const struct cli_option *opts, size_t n,
			    const char *usage)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct cli_option *o = NULL;
		size_t k;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		for (k = 0; k < n && !o; k++)
			if (!strcmp(arg, opts[k].name))
				o = &opts[k];
		if (!o) {
			fprintf(stderr, "train: unknown option '%s' (train --help lists them)\n",
				arg);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "train: missing value for %s\n", arg);
			return 2;
		}
		if (cli_value(o, argv[++i]))
			return 2;
	}
	return 0;
}

/* The loop's console: the mean loss since the last line every log_every
 * steps and at the last step, the accuracy on the steps that evaluated. */
struct train_log {
	int steps, log_every;
	int last_log;
	double loss_sum;
};

/* After step `step` (from 1) with its loss; acc < 0: no evaluation this
 * step.  Kept out of the profile: the frames under the loop are those of
 * the program's own work (evaluate is called by the loop, not here), and
 * this line's time is the loop's, as when it was written inline. */
__attribute__((no_instrument_function)) static inline void
train_log_step(struct train_log *l, int step, int epoch, float loss, float acc)
{
	int log = step % l->log_every == 0 || step == l->steps;

	l->loss_sum += loss;
	if (log) {
		printf("step %5d  epoch %3d  loss %.4f", step, epoch,
		       l->loss_sum / (step - l->last_log));
		l->loss_sum = 0.0;
		l->last_log = step;
	} else if (acc >= 0.0f) {
		printf("step %5d  epoch %3d              ", step, epoch);
	}
	if (acc >= 0.0f)
		printf("  eval acc %5.1f%%", 100.0f * acc);
	if (log || acc >= 0.0f) {
		printf("\n");
		fflush(stdout);
	}
}

#endif /* EXAMPLES_TRAIN_CLI_H */
