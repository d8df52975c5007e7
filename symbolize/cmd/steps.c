/*
 * steps.c - `stepscope steps RUN`: which function to give as
 * step.function.  From a whole-run trace (recorded with no step.function
 * and no schedule, as `stepscope steps -- PROG ARGS` and a direct run of an
 * instrumented program do), rank the functions that look like the body of
 * the training loop and print the best as the line to paste:
 *
 *     step.function: train_step
 *
 * A candidate is a function that
 *   - is called at least twice, on one thread only;
 *   - is never nested in itself (a nested call would not begin a step);
 *   - is always called from the same function (a forward that also runs
 *     for validation, or a zero_grad also called inside the first backward,
 *     is not: its calls are not one per iteration);
 *   - is called several times per call of that function: it is the body of
 *     a loop there (backward, called once per train_step, is not a loop
 *     body; train_step, called N times by train, is);
 *   - is called no more often than that loop iterates, as the caller's
 *     calls show it: not a function called once between most two
 *     consecutive calls of a heavier sibling and more than once between
 *     some, never zero times (a forward that main runs for training, and
 *     inline for validation and sampling, between two of main's
 *     backwards).  Loops are judged by the order of the caller's calls,
 *     never by counts that happen to agree: a linear_init called once per
 *     layer and an evaluate called every 20th step, twice each, are no
 *     loop of two iterations that train_step would loop inside;
 *   - does not loop inside the step's iterations (more than once between
 *     most two calls of the function picked: a layer op main calls per
 *     layer after each cost), listed as such.
 * The main thread's candidates come first (a data loader thread's loop,
 * however busy, only feeds the training loop), and of each thread's,
 * bodies of outer loops: an inner loop's function (called many times, and
 * no loop body itself, like a backward that loops over layers) makes its
 * callees candidates too, ranked after.  Within each group
 * candidates are ranked by the share of the run they cover (total time),
 * except that among the bodies of the largest's loop within 80% of it
 * the one called most often wins (a forward and a backward that main
 * calls alike), never a function inside the largest's calls: the step is the iteration of the
 * outermost loop that holds most of the run (the hot operator a cost
 * function loops over, even beside its gradient op, is no step; an epoch
 * function is picked over the train_step it loops over, listed next), nor
 * a sibling that loops inside the largest's iterations.  When
 * the trace stopped at its cap before the end of the run (a long
 * data-reading prologue, millions of calls a step), the whole-run counts
 * (stats: whole_run, which `steps -- PROG` turns on) give the calls and
 * the time to rank by, and a function the trace never saw return is
 * ranked by them alone.  The
 * spread (coefficient of variation of one call's duration) is shown so the
 * user sees whether steps are alike; it does not change the order.
 * Functions called about as often as the best one (half to three times) that
 * break a rule are listed with the reason, so the traps are visible.
 *
 * Design: step-facts.c walks the run into per-function facts (calls,
 * durations, callers, nesting); this file filters, ranks and prints.
 *
 * Must never: print anything on stdout but the table and the
 * `step.function:` line (scripts read that line).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agg.h"
#include "cli.h"
#include "cmds.h"
#include "run.h"
#include "step-facts.h"

#define SS_STEPS_NEAR 0.8        /* "covers about as much" as the largest */
#define SS_STEPS_SHOW 10         /* candidates listed (at least 0.1% of the best) */
#define SS_STEPS_TRAPS 8         /* rejected functions listed */
#define SS_STEPS_TRACE_MB "256"  /* trace bound of `steps -- PROG` */

/* Calls of f from its first caller, over the whole run: a function with
 * one caller in the trace keeps it to the end (the trace may have stopped
 * at its cap; the whole-run counts have the rest). */
static uint64_t ss_steps_pcalls(const struct ss_steps_fn *f)
{
	return f->ncallers == 1 && !f->more_calls ? ss_steps_calls(f) : f->parent_calls;
}

/* Several calls per call of its caller.  When the whole-run counts saw
 * more calls than the trace, the caller's calls are counted the same way
 * (the trace's one forward in its one train_step is no loop once the
 * counts say 6 and 6). */
static int ss_steps_is_loop(const struct ss_steps_fn *f)
{
	uint64_t acts = f->acts;
	if (f->run_calls > f->calls && f->parent && ss_steps_calls(f->parent) > acts)
		acts = ss_steps_calls(f->parent);
	return ss_steps_calls(f) >= 2 && acts && ss_steps_pcalls(f) >= 2 * acts;
}

/* Why f is no step function: rejected by its facts (step-facts.c), or
 * called more often than its loop iterates; NULL when it can be one. */
static const char *ss_steps_why(const struct ss_steps_fn *f, char *why, size_t len)
{
	if (ss_steps_reject(f, why, len))
		return why;
	if (f->loop && f->inner) {
		/* more than once between two calls of a heavier sibling: a
		 * loop inside the step (a layer op main calls per layer) */
		uint64_t n = ss_steps_pcalls(f), it = f->iters ? f->iters : 1;
		char per[32];
		if (n % it)
			snprintf(per, sizeof(per), "%.1f", (double)n / (double)it);
		else
			snprintf(per, sizeof(per), "%llu", (unsigned long long)(n / it));
		snprintf(why, len, "called %s times per iteration of %s's loop (%llu calls, "
			 "%llu iterations of %s): a loop inside the step",
			 per, ss_steps_pname(f->parent), (unsigned long long)n,
			 (unsigned long long)f->iters, f->loop->name);
		return why;
	}
	if (f->loop && f->extra) {
		snprintf(why, len, "called %llu times by %s, whose loop runs %llu iterations "
			 "(one %s each): %llu calls are not once per iteration (validation, "
			 "sampling, setup?)",
			 (unsigned long long)ss_steps_pcalls(f), ss_steps_pname(f->parent),
			 (unsigned long long)f->iters, f->loop->name, (unsigned long long)f->extra);
		return why;
	}
	return NULL;
}

/* A loop body by its callers (the trace's, or the first caller the
 * whole-run counts keep); or, when the trace stopped before the function
 * ever returned and no caller is known, by its counts alone (on one
 * thread, called more than once: the ranking by whole-run time does the
 * rest). */
static int ss_steps_loop_or_untraced(const struct ss_steps_fn *f)
{
	return f->untraced && !f->parent ? !f->multi_thread : ss_steps_is_loop(f);
}

static int ss_steps_candidate(const struct ss_steps_fn *f)
{
	char why[600];
	return ss_steps_calls(f) >= 2 && f->name[0] != '[' && !ss_steps_why(f, why, sizeof(why)) &&
	       ss_steps_loop_or_untraced(f);
}

/* g, called by the same function as f, between two consecutive calls of
 * f: in every gap, once in most and more than once in some (a forward
 * that main also runs for validation and sampling, between two
 * backwards): g is called more often than f's loop iterates. */
static int ss_steps_more_often(const struct ss_steps_fn *f, const struct ss_steps_gap *e)
{
	return e->one + e->more == f->gaps && e->more && e->one * 2 >= f->gaps;
}

/* g, between two consecutive calls of f, more than once in most gaps: g
 * loops inside f's iterations (a layer op main calls per layer after
 * each cost; a train_step between two evaluates). */
static int ss_steps_loops_in(const struct ss_steps_fn *f, const struct ss_steps_gap *e)
{
	return e->more * 2 > f->gaps;
}

/* The loop each function is judged against, from the caller's iterations
 * as the trace shows them (step-facts.c: the siblings between two calls
 * of a function), never from call counts that happen to agree (a
 * linear_init called once per layer and an evaluate called after every
 * 20th step, both twice, are no loop of two iterations).  g called more
 * often than the loop of the heaviest function f it runs beside
 * (ss_steps_more_often) gets f as its loop and the calls beyond one per
 * iteration as extra.  Needs the weights. */
static void ss_steps_iterations(struct ss_steps *st)
{
	char why[600];

	for (size_t i = 0; i < st->cap; i++) {
		struct ss_steps_fn *f = st->tab[i];
		if (!f || !f->gaps || f->name[0] == '[' || ss_steps_reject(f, why, sizeof(why)))
			continue;
		for (int k = 0; k < f->ngap; k++) {
			struct ss_steps_fn *g = f->gap[k].g;
			if (!ss_steps_more_often(f, &f->gap[k]) ||
			    (g->loop && g->loop->weight >= f->weight))
				continue;
			g->loop = f;
			g->iters = ss_steps_pcalls(f);
			g->extra = ss_steps_pcalls(g) > g->iters ? ss_steps_pcalls(g) - g->iters : 0;
		}
	}
}

/* g loops inside the iterations of the step s: more than once between
 * two calls of s, in most of those gaps (a layer op main calls per layer
 * after each cost).  Judged against the step only: a load_batch between
 * two checkpoints is no loop inside the step. */
static int ss_steps_in_step(const struct ss_steps_fn *s, const struct ss_steps_fn *g)
{
	const struct ss_steps_gap *e = ss_steps_gap_of(s, g);
	return e && ss_steps_loops_in(s, e);
}

/* 1 for the body of an inner loop: its loop function is called many
 * times and is no loop body itself (linear_backward looping over the
 * layers in each backward), 0 for an outer one (the loop function runs
 * once, like main or train, or is itself the body of a loop, like an
 * epoch function). */
static int ss_steps_inner(const struct ss_steps_fn *f)
{
	return f->parent && ss_steps_calls(f->parent) >= 2 && !ss_steps_candidate(f->parent);
}

/* The thread that ran main, when main ran on one thread (0: not known):
 * its loops are the program's; a data loader thread's loop, however
 * busy, only feeds them. */
static uint64_t ss_steps_main_tid(const struct ss_steps *st)
{
	const struct ss_steps_fn *m = ss_steps_find(st, "main");
	return m && (m->calls || m->untraced) && !m->multi_thread ? m->tid : 0;
}

/* The order of f's group: the main thread's outer loops, its inner
 * loops (ss_steps_inner), then those of other threads the same way. */
static int ss_steps_group(const struct ss_steps_fn *f, uint64_t main_tid)
{
	return (main_tid && f->tid != main_tid ? 2 : 0) + ss_steps_inner(f);
}

/* f's calls all sit inside calls of g: g is on f's chain of (first)
 * callers. */
static int ss_steps_inside(const struct ss_steps_fn *f, const struct ss_steps_fn *g)
{
	int hops = 0;
	for (const struct ss_steps_fn *p = f->parent; p && hops < 256; p = p->parent, hops++)
		if (p == g)
			return 1;
	return 0;
}

/* Once per iteration of its loop, as the trace shows it: a sibling
 * called exactly once between any two of its calls, and it exactly once
 * between any two of the sibling's (a train_step beside its
 * load_batch). */
static int ss_steps_once_per_iter(const struct ss_steps_fn *f)
{
	for (int k = 0; f->gaps && k < f->ngap; k++) {
		const struct ss_steps_fn *g = f->gap[k].g;
		const struct ss_steps_gap *back = ss_steps_gap_of(g, f);
		if (f->gap[k].one == f->gaps && g->gaps && back && back->one == g->gaps)
			return 1;
	}
	return 0;
}

/* The traps by calls (the counts say what is wrong; times would reorder
 * them from run to run), then name. */
static int ss_steps_by_calls(const void *a, const void *b)
{
	const struct ss_steps_fn *x = *(const struct ss_steps_fn *const *)a;
	const struct ss_steps_fn *y = *(const struct ss_steps_fn *const *)b;
	if (ss_steps_calls(x) != ss_steps_calls(y))
		return ss_steps_calls(x) > ss_steps_calls(y) ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int ss_steps_by_weight(const void *a, const void *b)
{
	const struct ss_steps_fn *x = *(const struct ss_steps_fn *const *)a;
	const struct ss_steps_fn *y = *(const struct ss_steps_fn *const *)b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Coefficient of variation of one call's duration, in percent. */
static double ss_steps_spread(const struct ss_steps_fn *f)
{
	double n = (double)f->calls, mean = (double)f->total / 1e6 / n;
	double var = f->sumsq / n - mean * mean;
	return mean > 0 && var > 0 ? 100.0 * sqrt(var) / mean : 0.0;
}

/* What ranks f: its median call times its calls, or, when the trace saw
 * only part of the run, its whole-run total (sampled, but of every call). */
static uint64_t ss_steps_weight(const struct ss_steps *st, const struct ss_steps_fn *f)
{
	if (st->partial)
		return f->run_total;
	return ss_steps_median(f) * f->calls;
}

/* One candidate's line.  A function the trace never saw return has only
 * its whole-run counts: "loop in" is unknown, the share is of the longest
 * function's whole-run time, the mean stands for the median. */
static void ss_steps_row(const struct ss_steps *st, const struct ss_steps_fn *f)
{
	char t1[32];
	if (f->untraced) {
		uint64_t top = 0;
		for (size_t i = 0; i < st->cap; i++)
			if (st->tab[i] && st->tab[i]->run_total > top)
				top = st->tab[i]->run_total;
		printf("  %-32s %8llu  %-24s %5.1f%% %12s %7s\n", f->name,
		       (unsigned long long)ss_steps_calls(f),
		       f->parent ? ss_steps_pname(f->parent) : "(after the trace's cap)",
		       top ? 100.0 * (double)f->run_total / (double)top : 0.0,
		       ss_agg_fmt_time(f->run_total / ss_steps_calls(f), t1, sizeof(t1)), "-");
		return;
	}
	printf("  %-32s %8llu  %-24s %5.1f%% %12s %6.0f%%\n", f->name,
	       (unsigned long long)ss_steps_calls(f), ss_steps_pname(f->parent),
	       f->acts_total ? 100.0 * (double)f->total / (double)f->acts_total : 0.0,
	       ss_agg_fmt_time(ss_steps_median(f), t1, sizeof(t1)), ss_steps_spread(f));
}

static int ss_steps_print(struct ss_steps *st, const char *dir)
{
	struct ss_steps_fn **c = NULL, **bad = NULL;
	size_t nc = 0, nb = 0, i;
	char why[600];
	int rc = 0;

	c = calloc(st->n + 1, sizeof(*c));
	bad = calloc(st->n + 1, sizeof(*bad));
	for (i = 0; i < st->cap; i++)
		if (st->tab[i])
			st->tab[i]->weight = ss_steps_weight(st, st->tab[i]);
	if (!c || !bad) {
		free(c);
		free(bad);
		fprintf(stderr, "stepscope: steps: out of memory\n");
		return 1;
	}
	ss_steps_iterations(st);
	for (i = 0; i < st->cap; i++) {
		struct ss_steps_fn *f = st->tab[i];
		if (!f || ss_steps_calls(f) < 2 || f->name[0] == '[')
			continue;
		if (!ss_steps_why(f, why, sizeof(why))) {
			if (ss_steps_loop_or_untraced(f))
				c[nc++] = f;
		} else if (f->acts) {
			bad[nb++] = f;
		}
	}
	qsort(c, nc, sizeof(*c), ss_steps_by_weight);
	/* the main thread's first, outer loops first, each part still by
	 * total (a stable pass) */
	uint64_t main_tid = ss_steps_main_tid(st);
	{
		size_t k = 0;
		struct ss_steps_fn **tmp = calloc(nc + 1, sizeof(*tmp));
		if (tmp) {
			for (int group = 0; group < 4; group++)
				for (i = 0; i < nc; i++)
					if (ss_steps_group(c[i], main_tid) == group)
						tmp[k++] = c[i];
			memcpy(c, tmp, nc * sizeof(*c));
			free(tmp);
		}
	}
	/* the outermost loop: a candidate whose calls hold the first's and
	 * that covers about as much comes before it (an epoch function
	 * before its train_step, a cost function before its operator, however
	 * the medians of a loaded machine order them) */
	for (int hops = 0, moved = 1; moved && hops < 64; hops++) {
		moved = 0;
		for (i = 1; i < nc && !moved; i++)
			if (ss_steps_group(c[i], main_tid) == ss_steps_group(c[0], main_tid) &&
			    ss_steps_inside(c[0], c[i]) &&
			    (double)c[i]->weight >= SS_STEPS_NEAR * (double)c[0]->weight) {
				struct ss_steps_fn *o = c[i];
				memmove(c + 1, c, i * sizeof(*c));
				c[0] = o;
				moved = 1;
			}
	}
	/* among those near the largest, the one called most often first;
	 * not when the largest is once per iteration of its loop beside a
	 * sibling (a backward that loops over layers stays before its
	 * per-layer matmul_backward) */
	if (nc > 1 && !ss_steps_once_per_iter(c[0])) {
		size_t near = 1, best = 0;
		while (near < nc && ss_steps_group(c[near], main_tid) == ss_steps_group(c[0], main_tid) &&
		       (double)c[near]->weight >= SS_STEPS_NEAR * (double)c[0]->weight)
			near++;
		/* only a body of the same loop: a function inside the
		 * largest's calls never beats it (the step is the iteration of
		 * the outermost loop: the hot operator a cost function loops
		 * over, even beside the operator's gradient, is no step; an
		 * epoch function's train_step comes right after it), nor does
		 * another loop's body (a data reader's prologue whose sampled
		 * time a loaded machine grew), nor a sibling that loops inside
		 * its iterations */
		for (i = 1; i < near; i++)
			if (ss_steps_calls(c[i]) > ss_steps_calls(c[best]) &&
			    c[i]->parent == c[0]->parent && !ss_steps_inside(c[i], c[0]) &&
			    !ss_steps_in_step(c[0], c[i]))
				best = i;
		struct ss_steps_fn *b = c[best];
		memmove(c + 1, c, best * sizeof(*c));
		c[0] = b;
	}
	/* the siblings that loop inside the step's iterations are no step:
	 * listed with the reason */
	for (i = 1; i < nc;) {
		if (!ss_steps_in_step(c[0], c[i])) {
			i++;
			continue;
		}
		c[i]->loop = c[0];
		c[i]->inner = 1;
		c[i]->iters = ss_steps_pcalls(c[0]);
		c[i]->extra = ss_steps_pcalls(c[i]) > c[i]->iters ? ss_steps_pcalls(c[i]) - c[i]->iters : 0;
		bad[nb++] = c[i];
		memmove(c + i, c + i + 1, (nc - i - 1) * sizeof(*c));
		nc--;
	}
	qsort(bad, nb, sizeof(*bad), ss_steps_by_calls);
	if (!nc) {
		fprintf(stderr,
			"stepscope: steps: %s: no function is called in a loop on one thread, once per "
			"iteration (%llu calls seen); record the whole run (stepscope steps -- PROG ARGS) "
			"or mark steps with stepscope_step()\n",
			dir, (unsigned long long)st->slices);
		rc = 2;
	} else {
		printf("step function candidates (called in a loop, one thread, never nested), best first:\n");
		printf("  %-32s %8s  %-24s %6s %12s %7s\n", "function", "calls", "loop in",
		       "share", "median", "spread");
		for (i = 0; i < nc && i < SS_STEPS_SHOW; i++) {
			const struct ss_steps_fn *f = c[i];
			if (i && f->weight * 1000 < c[0]->weight)
				continue; /* under 0.1% of the best: noise */
			ss_steps_row(st, f);
		}
	}
	/* the traps: rejected functions that cover as much as a candidate */
	size_t shown = 0;
	for (i = 0; i < nb && shown < SS_STEPS_TRAPS; i++) {
		const struct ss_steps_fn *f = bad[i];
		/* a helper called many times per step is no trap; a body
		 * called too often is one when its loop runs as many times */
		uint64_t n = f->extra ? f->iters : ss_steps_calls(f), best = nc ? ss_steps_calls(c[0]) : 0;
		if (nc && (f->weight * 100 < c[nc - 1]->weight || n > 3 * best || 2 * n < best))
			continue;
		if (!shown++)
			printf("not step functions:\n");
		printf("  %-32s %8llu  %s\n", f->name, (unsigned long long)ss_steps_calls(f),
		       ss_steps_why(f, why, sizeof(why)));
	}
	if (nc) {
		printf("step.function: %s\n", c[0]->name);
		fflush(stdout);
		fprintf(stderr,
			"stepscope: put the last line into your config, or record with "
			"--set step.function=%s (%llu steps in this run)\n",
			c[0]->name, (unsigned long long)ss_steps_calls(c[0]));
		if (st->partial)
			fprintf(stderr, "stepscope: steps: the trace stopped before the end of the run "
				"(max_trace_mb); calls and shares are the whole-run counts\n");
	}
	free(c);
	free(bad);
	return rc;
}

/* ---------------------------------------------------------------- command */

static void ss_steps_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope steps [--backend dw|bfd] [-q] DIR\n"
		"       stepscope steps [-o DIR] -- PROG [ARGS...]\n"
		"\n"
		"Rank the functions that could be step.function, from a run recorded\n"
		"without step.function (the whole run), and print the best as the line\n"
		"'step.function: NAME' to paste into a config.  With -- PROG, first\n"
		"record PROG's whole run (at most " SS_STEPS_TRACE_MB " MB of trace) into DIR, new\n"
		"or empty (default: a new stepscope-out/PROG-steps-DATE-TIME[-N]).  A run\n"
		"recorded in step windows is refused: its ranking would be wrong.\n"
		"\n"
		"   -o, --output DIR   run directory for -- PROG\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n");
}

static int ss_steps_rank(const char *dir, const char *backend, int quiet)
{
	struct ss_steps st;
	char err[1024];
	int rc;

	memset(&st, 0, sizeof(st));
	rc = ss_steps_walk(&st, dir, backend, quiet, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: %s%s\n", rc == 1 ? "steps: " : "", err);
	} else if (ss_run_traces_config_has(dir, "\nschedule.active=", 1)) {
		/* a schedule (the config lists it only then): windows of
		 * steps, so the loop's caller and the calls outside the
		 * windows are not in it, and no ranking would be right */
		char steps[64] = "";
		if (st.has_steps)
			snprintf(steps, sizeof(steps), " (steps %llu-%llu)",
				 (unsigned long long)st.step_lo, (unsigned long long)st.step_hi);
		fprintf(stderr, "stepscope: steps: %s: recorded with a schedule, in step windows%s, "
			"not the whole run; steps ranks a whole run: 'stepscope steps -- PROG ARGS' "
			"records one\n", dir, steps);
		rc = 2;
	} else {
		rc = ss_steps_print(&st, dir);
	}
	ss_steps_release(&st);
	return rc;
}

/* A new run directory of its own, stepscope-out/PROG-steps-DATE-TIME
 * (-2, -3... when that exists: two runs within a second never share one).
 * 0, or -1 with errno. */
static int ss_steps_new_dir(const char *prog, char *dir, size_t len)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (mkdir("stepscope-out", 0777) && errno != EEXIST)
		return -1;
	for (int k = 1; k < 1000; k++) {
		int n = k == 1 ? snprintf(dir, len, "stepscope-out/%s-steps-%s", prog, stamp)
			       : snprintf(dir, len, "stepscope-out/%s-steps-%s-%d", prog, stamp, k);
		if (n < 0 || (size_t)n >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (!mkdir(dir, 0700))
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* dir exists and holds something. */
static int ss_steps_dir_nonempty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int any = 0;

	if (!d)
		return 0;
	while (!any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return any;
}

/* `steps -- PROG ARGS`: record the whole run (a config of our own, so a
 * ./stepscope.yaml with a schedule does not apply) into a directory of
 * its own, then rank it.  A directory given with -o that holds something
 * is refused before PROG runs: an earlier run there is never ranked as
 * this one. */
static int ss_steps_record(const char *outdir, int argc, char **argv)
{
	char cfg[] = "/tmp/stepscope-steps-XXXXXX";
	char dir[4096];
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int fd, rc;
	FILE *f;

	if (outdir) {
		if (ss_steps_dir_nonempty(outdir)) {
			fprintf(stderr, "stepscope: steps: %s: output directory is not empty; give "
				"a new one with -o, or leave -o out (steps records a new run)\n", outdir);
			return 2;
		}
		snprintf(dir, sizeof(dir), "%s", outdir);
	} else if (ss_steps_new_dir(prog, dir, sizeof(dir))) {
		fprintf(stderr, "stepscope: steps: stepscope-out: cannot create a run directory: %m\n");
		return 2;
	}
	fd = mkstemp(cfg);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "stepscope: steps: %s: cannot create: %m\n", cfg);
		return 1;
	}
	/* the counts go on past the cap: the steps are counted exactly even
	 * when a long prologue or millions of calls a step fill the trace */
	fprintf(f, "# stepscope steps: the whole run, bounded\nmax_trace_mb: %s\n"
		   "stats: whole_run\n", SS_STEPS_TRACE_MB);
	fclose(f);
	char **av = calloc((size_t)argc + 8, sizeof(*av));
	if (!av) {
		unlink(cfg);
		return 1;
	}
	int n = 0;
	av[n++] = "steps"; /* record: no line about this config of ours */
	av[n++] = "-c";
	av[n++] = cfg;
	av[n++] = "-o";
	av[n++] = dir;
	av[n++] = "--";
	for (int i = 0; i < argc; i++)
		av[n++] = argv[i];
	rc = cmd_record(n, av);
	unlink(cfg);
	free(av);
	if (rc) {
		fprintf(stderr, "stepscope: steps: %s exited with status %d; ranking what was recorded\n",
			prog, rc);
	}
	struct stat sb;
	if (stat(dir, &sb))
		return rc ? rc : 2;
	int r = ss_steps_rank(dir, NULL, 0);
	return r ? r : 0;
}

int cmd_steps(int argc, char **argv)
{
	const char *outdir = NULL, *backend = NULL, *dir = NULL;
	int quiet = 0, i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			ss_steps_usage(stdout);
			return 0;
		} else if (!strcmp(a, "--")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "stepscope: steps: no program after '--'\n");
				return 2;
			}
			if (dir) {
				fprintf(stderr, "stepscope: steps: give a run directory or -- PROG, not both\n");
				return 2;
			}
			return ss_steps_record(outdir, argc - i - 1, argv + i + 1);
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
			   !strcmp(a, "--backend")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "stepscope: steps: option '%s' needs a value\n", a);
				return 2;
			}
			if (!strcmp(a, "--backend"))
				backend = argv[++i];
			else
				outdir = argv[++i];
		} else if (!strncmp(a, "--output=", 9)) {
			outdir = a + 9;
		} else if (!strncmp(a, "--backend=", 10)) {
			backend = a + 10;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (a[0] == '-') {
			fprintf(stderr, "stepscope: steps: unknown option '%s'; see 'stepscope steps --help'\n", a);
			return 2;
		} else if (dir) {
			fprintf(stderr, "stepscope: steps: one run directory, not '%s' too\n", a);
			return 2;
		} else {
			dir = a;
		}
	}
	if (!dir) {
		fprintf(stderr, "stepscope: steps: no run directory or -- PROG given (usage below)\n");
		ss_steps_usage(stderr);
		return 2;
	}
	return ss_steps_rank(dir, backend, quiet);
}
