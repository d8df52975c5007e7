/*
 * advise-peak.c - the "peak" check of `stepscope advise` (advise.h): an
 * operator far below the machine's measured peak.
 *
 * Design: the machine's peak is measured once and cached (peak-measure.h:
 * one core's GFLOP/s in an FMA loop, GB/s of a streaming triad).  For
 * every function with FLOPs (record.args and flops:, args-report.h) the
 * best rate any of its shapes reached is compared with the attainable
 * rate, the compute peak (the check does not know the bytes a call moves,
 * so it takes every function as compute-bound and says so).  A function
 * whose best shape is under SS_PEAK_FAR of it is a finding when the time
 * at the attainable rate would save at least 5% of the median step:
 * saving = (the calls' time - their FLOPs / the attainable rate) / steps,
 * an upper bound (hand-written loops rarely reach the peak); its low end
 * assumes SS_PEAK_FAR of the peak.  Judging by the best shape leaves one
 * slow shape of a fast function to the "shape" check.
 *
 * Must never: count calls whose FLOPs are missing, or measure the peak
 * when the run has no FLOPs to compare with it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "advise.h"
#include "args-report.h"
#include "peak-measure.h"

#define SS_PEAK_FAR 0.02  /* under this share of the attainable rate */
#define SS_PEAK_MIN 0.05  /* of the median step */

struct ss_peak_fn {
	const char *fn;
	double flops, best;
	uint64_t ns, calls;
	size_t shapes;
};

static int ss_peak_ok(const struct ss_args_shape *s)
{
	return s->flops_calls && s->flops_calls == s->calls && s->gflops > 0 && s->total_ns;
}

/* fn's totals over its usable shapes */
static void ss_peak_sum(const struct ss_args_report *a, struct ss_peak_fn *f)
{
	struct ss_args_shape s;

	for (size_t i = 0; !ss_args_report_shape(a, i, &s); i++) {
		if (strcmp(s.fn, f->fn) || !ss_peak_ok(&s))
			continue;
		f->flops += s.flops;
		f->ns += s.total_ns;
		f->calls += s.calls;
		f->shapes++;
		if (s.gflops > f->best)
			f->best = s.gflops;
	}
}

static int ss_peak_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
			 char *why, size_t whylen)
{
	struct ss_args_shape s;
	struct ss_peak pk;
	int have = 0;
	char err[200];

	(void)state;
	if (!run->args) {
		snprintf(why, whylen, "the run has no record.args (docs/shapes.md)");
		return 1;
	}
	if (!run->nsteps || !run->median_step_ns) {
		snprintf(why, whylen, "the run has no recorded step");
		return 1;
	}
	for (size_t i = 0; !have && !ss_args_report_shape(run->args, i, &s); i++)
		have = ss_peak_ok(&s);
	if (!have) {
		snprintf(why, whylen, "no call has FLOPs (flops: in the config)");
		return 1;
	}
	if (ss_peak_get(&pk, err, sizeof(err))) {
		snprintf(why, whylen, "the machine's peak could not be measured: %s", err);
		return 1;
	}
	for (size_t i = 0; !ss_args_report_shape(run->args, i, &s); i++) {
		struct ss_args_shape t;
		size_t first = 0;
		struct ss_peak_fn f = { .fn = s.fn };
		double peak = pk.gflops, steps = (double)run->nsteps;

		if (!ss_peak_ok(&s))
			continue;
		while (!ss_args_report_shape(run->args, first, &t) &&
		       (strcmp(t.fn, s.fn) || !ss_peak_ok(&t)))
			first++;
		if (first != i) /* each function once */
			continue;
		ss_peak_sum(run->args, &f);
		if (f.best >= SS_PEAK_FAR * peak)
			continue;
		double now = (double)f.ns / steps, at = f.flops / peak / steps;
		double save = now - at, lo = now - f.flops / (SS_PEAK_FAR * peak) / steps;
		if (save < SS_PEAK_MIN * (double)run->median_step_ns)
			continue;
		struct ss_adv_finding *x = ss_adv_add(out, "peak");
		if (!x)
			return -1;
		char t0[32], t1[32];
		x->save_ns = save;
		x->save_lo = lo > 0 ? lo : 0;
		x->save_hi = save;
		snprintf(x->title, sizeof(x->title),
			 "%s runs at %.3g GFLOP/s at best, %.0fx below this machine's peak of one "
			 "core (%.3g GFLOP/s)",
			 f.fn, f.best, peak / f.best, peak);
		ss_agg_fmt_time((uint64_t)now, t0, sizeof(t0));
		ss_agg_fmt_time((uint64_t)at, t1, sizeof(t1));
		snprintf(x->evidence, sizeof(x->evidence),
			 "%s's %" PRIu64 " calls (%zu shape%s) took %s a step over %zu recorded steps "
			 "for %.4g FLOPs a step, %.3g GFLOP/s in all, %.3g at its best shape; at the "
			 "peak they would take %s. Peak: %.3g GFLOP/s in an FMA loop (%s) and %.3g "
			 "GB/s streaming, %s %s. No bytes: formula, so taken as compute-bound",
			 f.fn, f.calls, f.shapes, f.shapes == 1 ? "" : "s", t0, run->nsteps,
			 f.flops / steps, f.flops / (double)f.ns, f.best, t1, peak, pk.isa, pk.gbs,
			 pk.cached ? "cached in" : "measured now, kept in",
			 pk.path[0] ? pk.path : "(nowhere: no cache dir)");
		snprintf(x->advice, sizeof(x->advice),
			 "rewrite %s's loops so the innermost one walks contiguous memory with "
			 "independent iterations the compiler can vectorise (for a matmul: i-k-j "
			 "order, rows of b and c, or blocks that stay in cache), build with -O3 "
			 "-march=native, or call a tuned library (BLAS)",
			 f.fn);
		snprintf(x->how, sizeof(x->how),
			 "(the calls' time - their FLOPs / the measured one-core peak) / %zu steps: "
			 "an upper bound, loops rarely reach the peak; low end at %.0f%% of it",
			 run->nsteps, 100 * SS_PEAK_FAR);
		snprintf(x->funcs[0], sizeof(x->funcs[0]), "%s", f.fn);
		x->nfuncs = 1;
	}
	return 0;
}

const struct ss_adv_check ss_adv_check_peak = {
	.name = "peak",
	.looks_at = "each function's best GFLOP/s (record.args, flops:) against the machine's "
		    "measured peak",
	.judge = ss_peak_judge,
};
