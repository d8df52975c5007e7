/*
 * filter.c - `stepscope filter DIR [-o FILE]`: what each function costs
 * in the trace and in stepscope's own time, and the list of functions to
 * leave out: the ones called many times for very little time each, never
 * one that holds a real share of the run's time (Score-P's scorep-score,
 * TAU's throttling).
 *
 * Design: the rows come from the recorded windows (agg.c) or, for a run
 * with only whole-run counts (stats: whole_run), from stats-read.c; the
 * cost of one recorded call from the run's calibration (overhead.c).  A
 * function is proposed when all of these hold:
 *   calls >= --min-calls (default 1000)
 *   total time per call <= --max-call-ns (default 1000 ns)
 *   recording it costs more than the work it measures, or that work is
 *   a small share of the run: its own time per call, the table's
 *   Own/call (its fastest call, less the hooks' part inside a call, the
 *   runtime's calibration: an empty call's ENTER to EXIT, and less the
 *   whole calibrated cost of each recorded call below it), is under the
 *   cost of one recorded call; or calls x Own/call, the table's Own %,
 *   is below --max-share percent (default 5) of the recorded time
 *   without the hooks.  A function that does real work has a real
 *   fastest call, which the fenced EXIT keeps from coming out short of
 *   it; a 2 ns helper measured at 16 ns is mostly stepscope.  The share
 *   alone is no rule: where the run is made of tiny calls (an autodiff
 *   library), their own time is most of the recorded time without the
 *   hooks, yet each is a few ns against 30 ns of hooks, and the build
 *   without them runs 2x faster.
 * The footer states that rule in the table's own columns (issue 40 item 3:
 * it said "under 5% of the time" beside a proposed function of 37% Time %).
 * When the calls left would still cost more than the report's warning
 * threshold, it says which functions hold them and which limit kept each.
 * The list file is one name a line, for `stepscope-cc`
 * (STEPSCOPE_EXCLUDE_FILE) and for `filter.exclude_file`.  gcc matches
 * its list by substring: a name that is part of another function's name
 * in the run is written as "runtime-only NAME", which stepscope-cc leaves
 * to the runtime.
 *
 * Must never: propose the step function or a function with a real share
 * of time; write a partial list under the asked name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "cli.h"
#include "cmds.h"
#include "outfile.h"
#include "overhead.h"
#include "run.h"
#include "stats-read.h"
#include "filter-pick.h"


static void ss_filter_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope filter [-o FILE] [--min-calls N] [--max-call-ns NS]\n"
		"                        [--max-share PCT] [--limit N] [--backend dw|bfd] [-q] DIR\n"
		"\n"
		"   -o, --output FILE  write the exclude list there (one name a line)\n"
		"   --min-calls N      propose only functions called at least N times (1000)\n"
		"   --max-call-ns NS   ... taking at most NS per call, callees included (1000)\n"
		"   --max-share PCT    ... whose own time per call (Own/call: its fastest call\n"
		"                      less the hooks inside it) is under one recorded call's\n"
		"                      cost, or whose own time (Own %%: calls x Own/call) is\n"
		"                      under PCT%% of the time without the hooks (5)\n"
		"   --limit N          at most N rows in the table (default 30; 0 = all)\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n"
		"\n"
		"Rebuild with the list: STEPSCOPE_EXCLUDE_FILE=FILE (or stepscope-cc\n"
		"--exclude-file=FILE), or apply it at run time with\n"
		"--set filter.exclude_file=FILE.  See docs/filters.md.\n");
}

static int ss_filter_number(const char *opt, const char *v, double max, double *out)
{
	char *end;
	double d = strtod(v, &end);
	if (end == v || *end || d < 0 || d > max) {
		fprintf(stderr, "stepscope: filter: %s wants a number from 0 to %.0f, not '%s'\n",
			opt, max, v);
		return -1;
	}
	*out = d;
	return 0;
}

static enum ss_cli_took ss_filter_option(struct ss_cli *c, void *ctx, int argc,
					 char **argv, int *i)
{
	struct ss_filter_opts *o = ctx;
	const char *v;
	double d;
	int r;

	if ((r = ss_cli_value(c, argc, argv, i, "--min-calls", &v))) {
		if (r < 0 || ss_filter_number("--min-calls", v, 1e18, &d))
			return SS_CLI_BAD;
		o->min_calls = (uint64_t)d;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--max-call-ns", &v))) {
		if (r < 0 || ss_filter_number("--max-call-ns", v, 1e15, &d))
			return SS_CLI_BAD;
		o->max_call_ns = (uint64_t)d;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--max-share", &v))) {
		if (r < 0 || ss_filter_number("--max-share", v, 100, &d))
			return SS_CLI_BAD;
		o->max_share = d;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--limit", &v))) {
		if (r < 0 || ss_filter_number("--limit", v, 1e9, &d))
			return SS_CLI_BAD;
		o->limit = (int)d;
	} else {
		return SS_CLI_NOT_MINE;
	}
	return SS_CLI_TAKEN;
}

static void ss_filter_table(FILE *f, const struct ss_filter_rows *r, const struct ss_overhead *ov,
			    const char *pick, int limit)
{
	char b[4][32];
	size_t shown = 0;
	fprintf(f, "%-40s %10s %10s %10s %10s %8s %8s %8s %8s %10s  %s\n", "Name", "Calls",
		"Per call", "Fastest", "Own/call", "Time %", "Own %", "Events %", "Bytes %",
		"Overhead", "Exclude");
	for (size_t i = 0; i < r->n; i++) {
		const struct ss_agg_row *w = &r->rows[i];
		if (w->kind != SS_AGG_FUNCTION)
			continue;
		if (limit && shown >= (size_t)limit && !pick[i])
			continue;
		shown++;
		/* events: an ENTER and an EXIT per call, 16 bytes each */
		double ev = ss_filter_pct((double)w->calls, (double)r->calls);
		/* of the trace's events (a compact event is not 16 bytes: a
		 * share of the events is the share of their bytes) */
		double bytes = ov->events >= 2 * r->calls
				       ? ss_filter_pct(2.0 * (double)w->calls, (double)ov->events)
				       : ev;
		/* Fastest: "-" without single calls (whole-run counts, or
		 * only clipped parts of calls) */
		fprintf(f, "%-40.40s %10llu %10s %10s %10s %7.2f%% %7.2f%% %7.2f%% %7.2f%% %10s  %s\n",
			w->name, (unsigned long long)w->calls,
			w->calls ? ss_agg_fmt_time(w->total_ns / w->calls, b[0], sizeof(b[0]))
				 : "-", /* only clipped parts of calls */
			w->max_ns ? ss_agg_fmt_time(w->min_ns, b[2], sizeof(b[2])) : "-",
			w->calls ? ss_agg_fmt_time(ss_filter_own_call(r, i, ov), b[3], sizeof(b[3]))
				 : "-",
			ss_filter_pct((double)w->self_ns, (double)r->self_sum),
			w->calls ? ss_filter_own_pct(r, i, ov) : 0.0, ev,
			bytes > 100 ? 100.0 : bytes,
			ov->known ? ss_agg_fmt_time(w->calls * ov->pair_ns, b[1], sizeof(b[1])) : "?",
			pick[i] ? "yes" : "");
	}
}

/* What Own % is, in the table's columns and the run's numbers. */
static void ss_filter_rule(FILE *f, const struct ss_filter_rows *r, const struct ss_overhead *ov)
{
	char in[32], pair[32], sum[32];
	int whole = !strcmp(r->source, "whole run");
	ss_agg_fmt_time(ss_filter_inside(ov), in, sizeof(in));
	ss_agg_fmt_time(ov->pair_ns, pair, sizeof(pair));
	ss_agg_fmt_time(r->own_sum, sum, sizeof(sum));
	if (!ov->known)
		fprintf(f, "Own/call: %s; Own %%: calls x Own/call, of the %s recorded (no "
			"calibration in this run: the hooks' cost is unknown and not taken off)\n",
			whole ? "the mean call" : "Fastest", sum);
	else if (whole)
		fprintf(f, "Own/call: the mean call - %s of its own hooks%s; Own %%: calls x "
			"Own/call, of the %s recorded without the hooks (whole-run counts: no single "
			"calls, no Fastest)\n",
			in, ov->inside_known ? "" : " (half a recorded call: this run predates the "
			"measure)", sum);
	else
		fprintf(f, "Own/call: Fastest - %s of its own hooks inside it%s - %s per recorded "
			"call below it, callees included; Own %%: calls x Own/call, of the %s recorded "
			"without the hooks; Time %% is the measured self time, hooks included\n",
			in, ov->inside_known ? "" : " (half a recorded call: this run predates the "
			"measure)", pair, sum);
}

/* The proposed names a rebuild cannot take (gcc would leave out more),
 * each with the way out. */
static void ss_filter_clashes(FILE *f, const struct ss_filter_rows *r, const char *pick)
{
	for (size_t i = 0; i < r->n; i++) {
		const char *other = pick[i] ? ss_filter_clash(r, pick, i) : NULL;
		if (!other)
			continue;
		fprintf(f, "runtime only: %s (%llu calls): gcc matches parts of names and would also "
			"leave out %s, so the list has it as 'runtime-only' and only the run-time "
			"filter skips it (the hooks are still called); to drop its hooks, rename it "
			"or mark it __attribute__((no_instrument_function))\n",
			r->rows[i].name, (unsigned long long)r->rows[i].calls, other);
	}
}

/* Which limit keeps row i off the list (NULL: none, or not a function). */
static const char *ss_filter_kept_by(const struct ss_filter_rows *r, size_t i,
				     const struct ss_overhead *ov,
				     const struct ss_filter_opts *o, char *buf, size_t len)
{
	const struct ss_agg_row *w = &r->rows[i];
	if (w->kind != SS_AGG_FUNCTION || !w->calls)
		return NULL;
	if (!ss_filter_plain(w->name))
		snprintf(buf, len, "not a plain name");
	else if (w->calls < o->min_calls)
		snprintf(buf, len, "fewer calls than --min-calls %llu",
			 (unsigned long long)o->min_calls);
	else if (w->total_ns / w->calls > o->max_call_ns)
		snprintf(buf, len, "%llu ns a call, over --max-call-ns %llu",
			 (unsigned long long)(w->total_ns / w->calls),
			 (unsigned long long)o->max_call_ns);
	else
		snprintf(buf, len, "Own/call %llu ns, not under a recorded call's %llu ns, and Own "
			 "%% %.1f, not under --max-share %.1f (it does real work)",
			 (unsigned long long)ss_filter_own_call(r, i, ov),
			 (unsigned long long)ov->pair_ns, ss_filter_own_pct(r, i, ov), o->max_share);
	return buf;
}

/* What stepscope would still cost after a rebuild with the list; above
 * the report's warning, why the rest stays: the functions that hold most
 * of the calls left, each with the limit that kept it. */
static void ss_filter_left(FILE *f, const struct ss_filter_rows *r, const struct ss_overhead *ov,
			   const struct ss_filter_opts *o, const char *pick)
{
	uint64_t left = 0;
	/* a runtime-only name still calls the hooks in a rebuild */
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].kind == SS_AGG_FUNCTION && (!pick[i] || ss_filter_clash(r, pick, i)))
			left += r->rows[i].calls;
	double pct = ss_filter_pct((double)left * (double)ov->pair_ns, (double)r->own_sum);
	fprintf(f, "without them: %llu calls, stepscope overhead about %.1f%% of the time without "
		"the hooks\n", (unsigned long long)left, pct);
	if (pct <= SS_OVERHEAD_WARN_PCT)
		return;
	fprintf(f, "still above %.0f%%: the calls left are in\n", SS_OVERHEAD_WARN_PCT);
	char why[160];
	int shown = 0;
	for (size_t i = 0; i < r->n && shown < 5; i++) { /* rows are by calls */
		if (pick[i] || !ss_filter_kept_by(r, i, ov, o, why, sizeof(why)))
			continue;
		if (r->rows[i].calls * 100 < left)
			break;
		fprintf(f, "  %s (%llu calls): %s\n", r->rows[i].name,
			(unsigned long long)r->rows[i].calls, why);
		shown++;
	}
}

static int ss_filter_write(const char *path, const char *dir, const struct ss_filter_rows *r,
			   const char *pick, size_t npick)
{
	struct ss_out out;
	char err[4200];
	if (ss_out_open(&out, path, err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		return 2;
	}
	FILE *f = out.f;
	if (!npick) /* an empty list: no advice to act on it */
		fprintf(f, "# stepscope filter %s: nothing to exclude (no function is called often "
			   "for very little time)\n", dir);
	else
		fprintf(f, "# stepscope filter %s: functions called often for very little time\n"
			   "# rebuild:    STEPSCOPE_EXCLUDE_FILE=%s make CC=\"stepscope-cc gcc\"\n"
			   "# or at run time: stepscope record --set filter.exclude_file=%s ...\n"
			   "# runtime-only: gcc would also leave out other functions (it matches parts of names)\n",
			dir, path, path);
	for (size_t i = 0; i < r->n; i++) {
		if (!pick[i])
			continue;
		const char *other = ss_filter_clash(r, pick, i);
		if (other)
			fprintf(f, "runtime-only %s  # part of %s\n", r->rows[i].name, other);
		else
			fprintf(f, "%s\n", r->rows[i].name);
	}
	int rc = ss_out_commit(&out, 0, err, sizeof(err));
	if (rc)
		fprintf(stderr, "stepscope: %s\n", err);
	ss_out_abort(&out);
	return rc ? 1 : 0;
}

int cmd_filter(int argc, char **argv)
{
	struct ss_cli c = { "filter", ss_filter_usage, SS_CLI_SYMBOLS | SS_CLI_EQUALS,
			    NULL, NULL, NULL, 0 };
	struct ss_filter_opts o = SS_FILTER_OPTS_DEFAULT;
	struct ss_filter_rows r = { 0 };
	struct ss_stats_result res = { 0 };
	struct ss_overhead ov;
	struct ss_agg *a = NULL;
	char err[1024], *pick = NULL;
	int rc = ss_cli_parse(&c, argc, argv, ss_filter_option, &o);

	if (rc != SS_CLI_GO)
		return rc;
	a = ss_agg_new();
	if (!a) {
		fprintf(stderr, "stepscope: filter: out of memory\n");
		return 1;
	}
	struct ss_exporter *ex = ss_agg_exporter(a);
	rc = ss_agg_walk(c.dir, c.backend, c.quiet, &ex, 1, err, sizeof(err));
	if (!rc && ex->end(ex->ctx, err, sizeof(err)))
		rc = 1;
	if (rc) {
		fprintf(stderr, "stepscope: %s\n", err);
		goto out;
	}
	ss_overhead_read(c.dir, &ov);
	r.calls = ss_overhead_calls(a);
	r.n = ss_agg_rows(a, 0, &r.rows);
	r.self_sum = ss_agg_self_sum(a);
	r.source = "recorded steps";
	if (!r.calls) { /* nothing recorded: the whole-run counts, if kept */
		if (ss_stats_read(c.dir, c.backend, c.quiet, 0, &res, err, sizeof(err)) == 0) {
			r.rows = res.rows;
			r.n = res.nrows;
			r.self_sum = res.self_sum;
			r.source = "whole run";
			for (size_t i = 0; i < r.n; i++)
				r.calls += r.rows[i].calls;
			ov.bytes = 0; /* not recorded: bytes as if they were */
		}
	}
	if (!r.calls) {
		fprintf(stderr, "stepscope: filter: %s: no recorded calls and no whole-run counts "
			"(record with a window, or with 'stats: whole_run')\n", c.dir);
		rc = 2;
		goto out;
	}
	qsort(r.rows, r.n, sizeof(*r.rows), ss_filter_by_calls);
	pick = calloc(r.n ? r.n : 1, 1);
	if (!pick || ss_filter_below(&r, r.rows == res.rows ? NULL : a, &ov)) {
		fprintf(stderr, "stepscope: filter: out of memory\n");
		rc = 1;
		goto out;
	}
	size_t npick = ss_filter_pick(&r, &ov, &o, pick);
	FILE *f = stdout;
	fprintf(f, "%s: %llu calls (%s)", c.dir, (unsigned long long)r.calls, r.source);
	if (ov.known)
		fprintf(f, ", %llu ns per recorded call, overhead %.1f%% of recorded time",
			(unsigned long long)ov.pair_ns,
			ss_overhead_pct(&ov, r.calls, r.self_sum));
	fprintf(f, "\n");
	ss_filter_table(f, &r, &ov, pick, o.limit);
	uint64_t left = 0;
	for (size_t i = 0; i < r.n; i++)
		if (pick[i])
			left += r.rows[i].calls;
	fprintf(f, "exclude: %zu function%s, %.1f%% of the calls (Calls >= %llu, Per call <= %llu "
		"ns, and Own/call < %llu ns (one recorded call) or Own %% < %.1f)\n", npick,
		npick == 1 ? "" : "s", ss_filter_pct((double)left, (double)r.calls),
		(unsigned long long)o.min_calls, (unsigned long long)o.max_call_ns,
		(unsigned long long)(ov.known ? ov.pair_ns : 0), o.max_share);
	ss_filter_rule(f, &r, &ov);
	for (size_t i = 0; i < r.n; i++)
		if (pick[i])
			fprintf(f, "  %s\n", r.rows[i].name);
	ss_filter_clashes(f, &r, pick);
	if (!npick)
		fprintf(f, "nothing to exclude: no function meets all of these limits, so a rebuild "
			"or a run-time filter with this list would change nothing\n");
	else if (ov.known)
		ss_filter_left(f, &r, &ov, &o, pick);
	fflush(f);
	if (c.out) {
		rc = ss_filter_write(c.out, c.dir, &r, pick, npick);
		if (!rc && !npick)
			fprintf(stderr, "stepscope: wrote %s, an empty list (nothing to exclude)\n",
				c.out);
		else if (!rc)
			fprintf(stderr, "stepscope: wrote %s (rebuild with STEPSCOPE_EXCLUDE_FILE=%s)\n",
				c.out, c.out);
	}
	if (fflush(f) && !rc)
		rc = 1;
out:
	free(pick);
	free(r.below);
	if (r.rows == res.rows && res.rows)
		ss_stats_result_release(&res);
	ss_agg_free(a);
	return rc;
}
