/*
 * advise-shape.c - the "shape" check of `stepscope advise` (advise.h):
 * one shape of an operator far below the GFLOP/s of its other shapes.
 *
 * Design: record.args and flops: give `report --group-by args` one group
 * per function and distinct argument values, with its FLOPs and GFLOP/s
 * (args-report.h).  For every function with at least two groups whose
 * calls all had FLOPs, the fastest group is the reference; a group under
 * a quarter of its GFLOP/s is a finding when running at the reference's rate
 * would save at least 5% of the median step.  The saving per step is
 * (the group's time - its FLOPs / the reference's GFLOP/s) / recorded
 * steps; its low end uses the slowest of the function's other groups
 * that are not findings themselves.
 *
 * Must never: compare groups of two different functions, or count a
 * group whose FLOPs are known for only some of its calls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "advise.h"
#include "args-report.h"

#define SS_SHAPE_FAR 0.25  /* under this share of the best shape's rate */
#define SS_SHAPE_MIN 0.05  /* of the median step */

/* Usable: every call had FLOPs and the rate is known. */
static int ss_shape_ok(const struct ss_args_shape *s)
{
	return s->flops_calls && s->flops_calls == s->calls && s->gflops > 0 && s->total_ns;
}

/* The function's best and its slowest non-far group, over usable groups
 * of fn; how many usable groups it has. */
static size_t ss_shape_ref(const struct ss_args_report *a, const char *fn, size_t *best,
			   double *lo_rate)
{
	struct ss_args_shape s;
	size_t n = 0;
	double top = 0;

	for (size_t i = 0; !ss_args_report_shape(a, i, &s); i++) {
		if (strcmp(s.fn, fn) || !ss_shape_ok(&s))
			continue;
		n++;
		if (s.gflops > top) {
			top = s.gflops;
			*best = i;
		}
	}
	*lo_rate = top;
	for (size_t i = 0; !ss_args_report_shape(a, i, &s); i++)
		if (!strcmp(s.fn, fn) && ss_shape_ok(&s) && s.gflops >= SS_SHAPE_FAR * top &&
		    s.gflops < *lo_rate)
			*lo_rate = s.gflops;
	return n;
}

static int ss_shape_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
			  char *why, size_t whylen)
{
	struct ss_args_shape s, b;
	size_t compared = 0;

	(void)state;
	if (ss_adv_need_args(run, why, whylen))
		return 1;
	for (size_t i = 0; !ss_args_report_shape(run->args, i, &s); i++) {
		size_t best = 0, first = 0;
		double lo_rate, ref;
		struct ss_args_shape t;

		if (!ss_shape_ok(&s))
			continue;
		/* each function once: at its first usable group */
		while (!ss_args_report_shape(run->args, first, &t) &&
		       (strcmp(t.fn, s.fn) || !ss_shape_ok(&t)))
			first++;
		if (ss_shape_ref(run->args, s.fn, &best, &lo_rate) < 2)
			continue;
		if (first == i)
			compared++;
		ss_args_report_shape(run->args, best, &b);
		ref = b.gflops;
		if (s.gflops >= SS_SHAPE_FAR * ref)
			continue;
		double now = (double)s.total_ns / (double)run->nsteps;
		double save = now - s.flops / ref / (double)run->nsteps;
		double save_lo = now - s.flops / lo_rate / (double)run->nsteps;
		if (save < SS_SHAPE_MIN * (double)run->median_step_ns)
			continue;
		struct ss_adv_finding *f = ss_adv_add(out, "shape");
		if (!f)
			return -1;
		char t0[32], t1[32], t2[32];
		f->save_ns = save;
		f->save_lo = save_lo > 0 ? save_lo : 0;
		f->save_hi = save;
		snprintf(f->title, sizeof(f->title),
			 "%s with %s runs at %.3g GFLOP/s, %.1fx below its fastest shape (%.3g GFLOP/s)",
			 s.fn, s.key, s.gflops, ref / s.gflops, ref);
		ss_agg_fmt_time((uint64_t)now, t0, sizeof(t0));
		ss_agg_fmt_time(s.total_ns, t1, sizeof(t1));
		ss_agg_fmt_time((uint64_t)(s.flops / ref / (double)run->nsteps), t2, sizeof(t2));
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s's %" PRIu64 " calls with %s took %s in all, %s a step over %zu "
			 "recorded steps, %.4g FLOPs at %.3g GFLOP/s; its calls with %s (%" PRIu64
			 " calls) reached %.3g GFLOP/s, at which this shape's FLOPs take %s a step. "
			 "Rates from record.args and flops: (report --group-by args)",
			 s.fn, s.calls, s.key, t1, t0, run->nsteps, s.flops, s.gflops, b.key,
			 b.calls, ref, t2);
		snprintf(f->advice, sizeof(f->advice),
			 "look at how %s walks memory for %s: a loop whose innermost index strides "
			 "over a row (a transposed operand, a leading dimension that is a power of "
			 "two) misses the cache on every access; reorder the loops so the innermost "
			 "one walks contiguous memory, or copy the operand to that layout first, and "
			 "check that this shape reaches the others' GFLOP/s",
			 s.fn, s.key);
		snprintf(f->how, sizeof(f->how),
			 "(this shape's time - its FLOPs / the fastest shape's GFLOP/s) / %zu steps; "
			 "low end at the slowest other shape's rate (%.3g GFLOP/s)",
			 run->nsteps, lo_rate);
		snprintf(f->funcs[0], sizeof(f->funcs[0]), "%s", s.fn);
		f->nfuncs = 1;
	}
	if (!compared) {
		snprintf(why, whylen,
			 "no function has two shapes whose calls all have FLOPs (flops: in the config)");
		return 1;
	}
	return 0;
}

const struct ss_adv_check ss_adv_check_shape = {
	.name = "shape",
	.looks_at = "GFLOP/s of each shape (record.args, flops:) against its function's fastest",
	.judge = ss_shape_judge,
};
