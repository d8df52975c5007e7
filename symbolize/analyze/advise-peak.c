/*
 * advise-peak.c - the "peak" check of `stepscope advise` (advise.h): an
 * operator far below the machine's measured peak.
 *
 * Design: the machine's peak is measured once and cached (peak-measure.h:
 * one core's GFLOP/s in an FMA loop, GB/s of a streaming triad).  For
 * every shape of a function with FLOPs (record.args and flops:,
 * args-report.h) the attainable rate is the compute peak, or, when the
 * config has a bytes: formula for it, the roofline's min(peak, FLOPs per
 * byte x GB/s): memory-bound when the second is lower.  A shape's bytes
 * are the formula evaluated on the shape's values (its group's key).  A
 * function whose best shape is under SS_PEAK_FAR of its attainable rate
 * is a finding when the time at the attainable rates would save at least
 * 5% of the median step: saving = sum over its shapes of (time - FLOPs /
 * attainable rate) / steps, an upper bound (hand-written loops rarely
 * reach the peak); its low end assumes SS_PEAK_FAR of it.  Judging by
 * the best shape leaves one slow shape of a fast function to "shape".
 *
 * Must never: count calls whose FLOPs are missing, or measure the peak
 * when the run has no FLOPs to compare with it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "advise.h"
#include "args-read.h"
#include "args-report.h"
#include "flops-expr.h"
#include "peak-measure.h"
#include "reader.h"
#include "run.h"

#define SS_PEAK_FAR 0.05  /* under this share of the attainable rate */
#define SS_PEAK_MIN 0.05  /* of the median step */

struct ss_peak_fn {
	const char *fn;
	double flops, best, best_rate, save_at, ns_at;
	uint64_t ns, calls;
	size_t shapes, membound, have_bytes;
};

/* The run's bytes: text (its first trace's config), malloc'ed, or NULL */
static char *ss_peak_bytes_text(const char *dir)
{
	char **paths = NULL, err[256], *out = NULL;
	size_t n = 0;

	if (ss_run_list_traces(dir, &paths, &n, err, sizeof(err)))
		return NULL;
	struct ss_reader *r = ss_run_reader(paths[0], err, sizeof(err));
	if (r) {
		struct ss_meta_iter it;
		struct ss_meta_rec m;
		ss_reader_meta_begin(r, &it);
		while (!out && ss_reader_meta_next(&it, &m))
			if (m.type == SS_META_CONFIG)
				out = ss_args_config_key((const char *)m.data, m.len, "bytes");
		ss_reader_free(r);
	}
	ss_run_list_free(paths, n);
	return out;
}

/* A name's value in a group's key "m=8 k=1024 n=1024" */
static int ss_peak_look(void *ctx, const char *name, size_t len, double *v)
{
	const char *k = ctx;

	while (*k) {
		const char *eq = strchr(k, '='), *sp;
		if (!eq)
			return -1;
		sp = strchr(eq, ' ');
		if ((size_t)(eq - k) == len && !memcmp(k, name, len)) {
			char *end;
			*v = strtod(eq + 1, &end);
			return end == eq + 1 || (*end && *end != ' ') ? -1 : 0;
		}
		if (!sp)
			return -1;
		k = sp + 1;
	}
	return -1;
}

/* Bytes a call of the shape moves by the bytes: text, or < 0 unknown */
static double ss_peak_bytes(const char *bytes, const struct ss_args_shape *s)
{
	struct ss_flops_entry e;
	const char *p = bytes;
	double v;

	while (bytes && ss_flops_next(&p, &e))
		if (e.fnlen == strlen(s->fn) && !memcmp(e.fn, s->fn, e.fnlen))
			return ss_flops_eval(e.expr, e.exprlen, ss_peak_look, (void *)s->key, &v) ||
					       !(v > 0)
				       ? -1
				       : v;
	return -1;
}

static int ss_peak_ok(const struct ss_args_shape *s)
{
	return s->flops_calls && s->flops_calls == s->calls && s->gflops > 0 && s->total_ns;
}

/* fn's totals over its usable shapes: the time at each shape's
 * attainable rate, and the best share of it a shape reached */
static void ss_peak_sum(const struct ss_args_report *a, const struct ss_peak *pk,
			const char *bytes, struct ss_peak_fn *f)
{
	struct ss_args_shape s;

	for (size_t i = 0; !ss_args_report_shape(a, i, &s); i++) {
		if (strcmp(s.fn, f->fn) || !ss_peak_ok(&s))
			continue;
		double b = ss_peak_bytes(bytes, &s), att = pk->gflops;
		if (b > 0) {
			double roof = s.flops / (double)s.calls / b * pk->gbs;
			f->have_bytes++;
			if (roof < att) {
				att = roof;
				f->membound++;
			}
		}
		f->flops += s.flops;
		f->ns += s.total_ns;
		f->ns_at += s.flops / att;
		f->calls += s.calls;
		f->shapes++;
		if (s.gflops / att > f->best_rate) {
			f->best_rate = s.gflops / att;
			f->best = s.gflops;
		}
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
	if (ss_adv_need_args(run, why, whylen))
		return 1;
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
	char *bytes = ss_peak_bytes_text(run->dir);
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
		ss_peak_sum(run->args, &pk, bytes, &f);
		if (f.best_rate >= SS_PEAK_FAR)
			continue;
		double now = (double)f.ns / steps, at = f.ns_at / steps;
		double save = now - at, lo = now - at / SS_PEAK_FAR;
		if (save < SS_PEAK_MIN * (double)run->median_step_ns)
			continue;
		struct ss_adv_finding *x = ss_adv_add(out, "peak");
		if (!x) {
			free(bytes);
			return -1;
		}
		char bound[160];
		if (!f.have_bytes)
			snprintf(bound, sizeof(bound), "No bytes: formula for it, so taken as compute-bound");
		else
			snprintf(bound, sizeof(bound),
				 "By its bytes: formula %zu of its %zu shapes are memory-bound, %zu "
				 "compute-bound%s",
				 f.membound, f.shapes, f.have_bytes - f.membound,
				 f.have_bytes < f.shapes ? " (the others have no bytes)" : "");
		char t0[32], t1[32];
		x->save_ns = save;
		x->save_lo = lo > 0 ? lo : 0;
		x->save_hi = save;
		snprintf(x->title, sizeof(x->title),
			 "%s runs at %.3g GFLOP/s at best, %.0fx below what one core of this machine "
			 "attains for it (%s)",
			 f.fn, f.best, 1 / f.best_rate,
			 f.membound == f.shapes ? "memory-bound" : "compute peak");
		ss_agg_fmt_time((uint64_t)now, t0, sizeof(t0));
		ss_agg_fmt_time((uint64_t)at, t1, sizeof(t1));
		snprintf(x->evidence, sizeof(x->evidence),
			 "%s's %" PRIu64 " calls (%zu shape%s) took %s a step over %zu recorded steps "
			 "for %.4g FLOPs a step, %.3g GFLOP/s in all, %.3g at its best shape; at the "
			 "attainable rate they would take %s. Peak: %.3g GFLOP/s in an FMA loop (%s) "
			 "and %.3g GB/s streaming, %s %s. %s",
			 f.fn, f.calls, f.shapes, f.shapes == 1 ? "" : "s", t0, run->nsteps,
			 f.flops / steps, f.flops / (double)f.ns, f.best, t1, peak, pk.isa, pk.gbs,
			 pk.cached ? "cached in" : "measured now, kept in",
			 pk.path[0] ? pk.path : "(nowhere: no cache dir)", bound);
		snprintf(x->advice, sizeof(x->advice),
			 "rewrite %s's loops so the innermost one walks contiguous memory with "
			 "independent iterations the compiler can vectorise (for a matmul: i-k-j "
			 "order, rows of b and c, or blocks that stay in cache), build with -O3 "
			 "-march=native, or call a tuned library (BLAS)",
			 f.fn);
		snprintf(x->how, sizeof(x->how),
			 "(the calls' time - their FLOPs / the attainable rate: one core's measured "
			 "peak, or GB/s x FLOPs per byte when lower) / %zu steps: an upper bound; "
			 "low end at %.0f%% of it",
			 run->nsteps, 100 * SS_PEAK_FAR);
		snprintf(x->funcs[0], sizeof(x->funcs[0]), "%s", f.fn);
		x->nfuncs = 1;
	}
	free(bytes);
	return 0;
}

const struct ss_adv_check ss_adv_check_peak = {
	.name = "peak",
	.looks_at = "each function's best GFLOP/s (record.args, flops:) against the machine's "
		    "measured peak",
	.judge = ss_peak_judge,
};
