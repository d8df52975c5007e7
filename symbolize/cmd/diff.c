/*
 * diff.c - `stepscope diff BASE NEW`: what got slower between two recorded
 * runs, by how much per step, and whether it stands out of the noise;
 * `--fail-above PCT` makes it a performance gate for CI.
 *
 * Design: both runs are loaded into per-step series (analyze/diff.c) and
 * compared there; this file checks that the runs are comparable (same
 * program, same step function), prints the step time first, then one row
 * per function and range sorted by the added self time per step, as a
 * table, CSV or JSON, and picks the exit status.
 *
 * Must never: exit 1 for anything but a significant slowdown above
 * --fail-above (2 is usage and bad input, as in every command), or print
 * anything but the comparison on stdout.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "diff.h"
#include "diff-html.h"
#include "export.h"
#include "outfile.h"

static void ss_diff_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope diff [--format table|csv|json] [--fail-above PCT] [--limit N]\n"
		"                      [--min-change PCT] [--alpha P] [--allow-renamed] [--wall] [-o OUT]\n"
		"                      [--backend dw|bfd] [-q] BASE NEW\n"
		"\n"
		"Compare two recorded runs of the same program: the median step time, then\n"
		"per function and range the calls, self and total time per step in BASE and\n"
		"NEW, sorted by the self time added at BASE's machine speed.  A function is\n"
		"judged against the functions that moved together (a machine slower for a whole\n"
		"run moves them all): significant ('*') when a Mann-Whitney U test over the\n"
		"steps, NEW's at BASE's machine speed, gives p < P and the change is at least\n"
		"PCT (and 0.5%% of the base step time).  The verdict line says what\n"
		"the step's change rests on and whether it is conclusive.  Runs recorded with\n"
		"record.sched are compared on on-CPU time (the time switched out left out).\n"
		"\n"
		"   --format FMT       table (default), csv or json\n"
		"   --fail-above PCT   exit 1 when NEW's step is more than PCT%% above BASE's at\n"
		"                      equal machine speed, significantly (the verdict line)\n"
		"   --limit N          rows (default 30, 0 = all)\n"
		"   --min-change PCT   smallest change called significant (default 5)\n"
		"   --alpha P          p below which a change can be significant (default 0.01)\n"
		"   --allow-renamed    compare runs of programs of different names (two builds\n"
		"                      of one program) with the same step.function\n"
		"   --wall             compare wall time even when switches were recorded\n"
		"   -o, --output OUT   write there instead of stdout\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n");
}

static void ss_diff_html_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope html --diff [-o OUT] [--min-change PCT] [--alpha P]\n"
		"                      [--allow-renamed] [--wall] [--backend dw|bfd] [-q] BASE NEW\n"
		"\n"
		"One offline HTML page comparing two runs: the table of 'stepscope diff',\n"
		"both runs' step times side by side and a differential flame graph (NEW's\n"
		"call tree colored by the change of self time per step: red grew, blue shrank).\n"
		"\n"
		"   -o, --output OUT   write the page here (default NEW/diff.html; - is stdout)\n"
		"   --min-change PCT   smallest change called significant (default 5)\n"
		"   --alpha P          p below which a change can be significant (default 0.01)\n"
		"   --allow-renamed    compare runs of programs of different names\n"
		"   --wall             compare wall time even when switches were recorded\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n");
}

enum ss_diff_fmt { SS_DIFF_TABLE, SS_DIFF_CSV, SS_DIFF_JSON };

struct ss_diff_args {
	const char *dir[2], *out, *backend;
	int quiet, fmt, limit, html, renamed, wall;
	double fail_above;           /* < 0: off */
	struct ss_diff_opts o;
};

static int ss_diff_num(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= lo && d <= hi)) {
		fprintf(stderr, "stepscope: diff: %s wants a number in %g..%g, not '%s'\n",
			opt, lo, hi, v);
		return -1;
	}
	*out = d;
	return 0;
}

/* 0 to go on, else the exit status. */
static int ss_diff_parse(struct ss_diff_args *g, int argc, char **argv)
{
	int i, nd = 0;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i], *v = NULL, *eq;
		char name[32];
		double d;
		/* --opt=VALUE as --opt VALUE */
		if (s[0] == '-' && s[1] == '-' && (eq = strchr(s, '=')) &&
		    (size_t)(eq - s) < sizeof(name)) {
			memcpy(name, s, (size_t)(eq - s));
			name[eq - s] = 0;
			s = name;
			v = eq + 1;
		}
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			if (g->html)
				ss_diff_html_usage(stdout);
			else
				ss_diff_usage(stdout);
			return -1;
		}
		if (!strcmp(s, "-q") || !strcmp(s, "--quiet")) {
			g->quiet = 1;
			continue;
		}
		if (g->html && !strcmp(s, "--diff"))
			continue;
		if (!strcmp(s, "--allow-renamed")) {
			g->renamed = 1;
			continue;
		}
		if (!strcmp(s, "--wall")) {
			g->wall = 1;
			continue;
		}
		if (s[0] != '-' || !s[1]) {
			if (nd == 2) {
				fprintf(stderr, "stepscope: diff: one BASE and one NEW run directory, not also '%s'\n", s);
				return 2;
			}
			g->dir[nd++] = s;
			continue;
		}
		if ((g->html || (strcmp(s, "--format") && strcmp(s, "--fail-above") &&
				 strcmp(s, "--limit"))) &&
		    strcmp(s, "--min-change") && strcmp(s, "--alpha") && strcmp(s, "-o") &&
		    strcmp(s, "--output") && strcmp(s, "--backend")) {
			fprintf(stderr, "stepscope: %s: unknown option '%s'; see 'stepscope %s --help'\n",
				g->html ? "html --diff" : "diff", s, g->html ? "html" : "diff");
			return 2;
		}
		if (!v && i + 1 >= argc) {
			fprintf(stderr, "stepscope: diff: option '%s' needs a value\n", s);
			return 2;
		}
		if (!v)
			v = argv[++i];
		if (!strcmp(s, "--format")) {
			if (!strcmp(v, "table"))
				g->fmt = SS_DIFF_TABLE;
			else if (!strcmp(v, "csv"))
				g->fmt = SS_DIFF_CSV;
			else if (!strcmp(v, "json"))
				g->fmt = SS_DIFF_JSON;
			else {
				fprintf(stderr, "stepscope: diff: --format wants table, csv or json, not '%s'\n", v);
				return 2;
			}
		} else if (!strcmp(s, "--fail-above")) {
			if (ss_diff_num(s, v, 0, 1e6, &g->fail_above))
				return 2;
		} else if (!strcmp(s, "--limit")) {
			if (ss_diff_num(s, v, 0, 1e9, &d))
				return 2;
			g->limit = (int)d;
		} else if (!strcmp(s, "--min-change")) {
			if (ss_diff_num(s, v, 0, 1e6, &g->o.min_pct))
				return 2;
		} else if (!strcmp(s, "--alpha")) {
			if (ss_diff_num(s, v, 0, 1, &g->o.alpha))
				return 2;
		} else if (!strcmp(s, "--backend")) {
			g->backend = v;
		} else {
			g->out = v;
		}
	}
	if (nd < 2) {
		fprintf(stderr, "stepscope: %s: two run directories needed, BASE and NEW (usage below)\n",
			g->html ? "html --diff" : "diff");
		if (g->html)
			ss_diff_html_usage(stderr);
		else
			ss_diff_usage(stderr);
		return 2;
	}
	return 0;
}

/* ------------------------------------------------------------ output */

static const char *ss_diff_kind_name(enum ss_agg_kind k)
{
	return k == SS_AGG_RANGE ? "range" : "function";
}

static void ss_diff_runline(FILE *f, const char *tag, const struct ss_diff_run *r)
{
	fprintf(f, "%s %s: %s, step.function %s, %zu steps, %zu process%s, %zu thread%s\n",
		tag, r->dir, r->prog, r->stepfn[0] ? r->stepfn : "-", r->nsteps,
		r->nprocs, r->nprocs == 1 ? "" : "es", r->nthreads,
		r->nthreads == 1 ? "" : "s");
}

/* One line when a trace of either run is cut short: the steps compared. */
static void ss_diff_cutline(FILE *f, const struct ss_diff_run *a,
			    const struct ss_diff_run *b)
{
	const struct ss_diff_run *c = a->cut[0] ? a : b;

	if (!a->cut[0] && !b->cut[0])
		return;
	fprintf(f, "steps compared: base %zu of %zu, new %zu of %zu (%s is cut short at offset %llu: "
		"the steps whose events it lacks are left out)\n",
		a->nsteps, a->nsteps_all, b->nsteps, b->nsteps_all, c->cut, c->cut_off);
}

static size_t ss_diff_shown(const struct ss_diff_args *g, size_t n)
{
	return g->limit && (size_t)g->limit < n ? (size_t)g->limit : n;
}

/* Under row r: the callees gone from NEW that it called in BASE (their
 * time may now be its own), and for a function called from several
 * places whose time changed, which callers' calls of it grew. */
static void ss_diff_paths(FILE *f, const struct ss_diff_run *a, const struct ss_diff_run *b,
			  const struct ss_diff_row *rows, size_t n, const struct ss_diff_row *r)
{
	struct ss_diff_caller c[8];
	const char *gone[8];
	char t[32];
	size_t k, m;

	if (r->kind != SS_AGG_FUNCTION)
		return;
	m = ss_diff_gone_callees(a, rows, n, r->name, gone, 8);
	for (k = 0; k < m && k < 8; k++)
		fprintf(f, "%s%s", k ? ", " : "  callees gone: ", gone[k]);
	if (m > 8)
		fprintf(f, " and %zu more", m - 8);
	if (m)
		fprintf(f, " (their time may have moved into this function's self time)\n");
	if (!r->self.significant && !r->total.significant)
		return;
	m = ss_diff_callers(a, b, r->name, c, 8);
	if (m < 2)
		return;
	for (k = 0; k < m && k < 8; k++)
		fprintf(f, "%s%s (%s)", k ? ", " : "  grew under: ", c[k].name,
			ss_diff_fmt_dt(c[k].delta, t, sizeof(t)));
	fprintf(f, m > 8 ? " and %zu more callers\n" : "\n", m - 8);
}

/* The functions and ranges of one run only, after the table. */
static void ss_diff_only(FILE *f, const struct ss_diff_args *g, const struct ss_diff_run *a,
			 const struct ss_diff_run *b, const struct ss_diff_row *rows, size_t n)
{
	size_t i = ss_diff_ranked(rows, n), k, m, shown = 0;
	struct ss_diff_caller c[4];
	char t1[32], t2[32];

	if (i == n)
		return;
	fprintf(f, "\nIn one run only (not ranked: no change of the same code):\n");
	for (; i < n; i++) {
		const struct ss_diff_row *r = &rows[i];
		if (g->limit && shown == (size_t)g->limit) {
			fprintf(f, "  and %zu more\n", n - i);
			break;
		}
		shown++;
		fprintf(f, "  %s %s%s (%s calls/step in %s, self %s/step", r->only < 0 ? "gone:" : "new: ",
			r->name, r->kind == SS_AGG_RANGE ? " [range]" : "",
			ss_diff_fmt_calls(r->only < 0 ? r->calls_base : r->calls_new, t1, sizeof(t1)),
			r->only < 0 ? "BASE" : "NEW",
			ss_diff_fmt_time(r->only < 0 ? r->self.base : r->self.new_, t2, sizeof(t2)));
		m = r->kind == SS_AGG_FUNCTION ? ss_diff_callers(a, b, r->name, c, 4) : 0;
		for (k = 0; k < m && k < 4; k++)
			fprintf(f, "%s%s", k ? ", " : "; called from ", c[k].name);
		fprintf(f, m > 4 ? " and %zu more)\n" : ")\n", m - 4);
	}
}

/* "50.0->58.3%": a row's median share of the step in BASE and NEW */
static char *ss_diff_fmt_share(const struct ss_diff_stat *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f->%.1f%%", 100 * s->share_base, 100 * s->share_new);
	return buf;
}

/* "+30.1%": the change against the rest of the step, "-" not judged */
static char *ss_diff_fmt_adj(const struct ss_diff_stat *s, char *buf, size_t len)
{
	if (isnan(s->adj_pct))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", s->adj_pct);
	return buf;
}

static void ss_diff_table(FILE *f, const struct ss_diff_args *g,
			  const struct ss_diff_run *a, const struct ss_diff_run *b,
			  const struct ss_diff_stat *st, const struct ss_diff_row *rows,
			  size_t n, const char *note, const char *verdict)
{
	char t1[32], t2[32], t3[32], t4[32], t5[32], t6[32], t7[32], t8[32], t9[32], t10[32];
	size_t i, nr = ss_diff_ranked(rows, n), shown = ss_diff_shown(g, nr), w = 4;

	ss_diff_runline(f, "base", a);
	ss_diff_runline(f, "new ", b);
	ss_diff_cutline(f, a, b);
	{ /* record.sched: what is compared, how busy the machine was */
		char busy[512];
		if (ss_diff_busy_line(busy, sizeof(busy), a, b, g->wall))
			fprintf(f, "%s\n", busy);
	}
	if (note)
		fprintf(f, "note: %s\n", note);
	fprintf(f, "\n%s (median): %s -> %s  %s  %s  as measured (Mann-Whitney over steps p=%.2g)\n"
		"verdict: %s\n\n",
		a->oncpu && b->oncpu ? "step on-CPU time (every thread's calls)" : "step time",
		ss_diff_fmt_time(st->base, t1, sizeof(t1)), ss_diff_fmt_time(st->new_, t2, sizeof(t2)),
		ss_diff_fmt_dt(st->delta, t3, sizeof(t3)), ss_diff_fmt_pct(st, t4, sizeof(t4)),
		st->p, verdict);
	for (i = 0; i < shown; i++) {
		size_t l = strlen(rows[i].name) + (rows[i].kind == SS_AGG_RANGE ? 8 : 0);
		if (l > w)
			w = l;
	}
	if (w > 60)
		w = 60;
	fprintf(f, "%-*s  %13s  %10s  %10s  %10s  %8s  %13s  %8s  %10s  %10s  %10s  %8s  %s\n",
		(int)w, "Name", "Calls/step", "Self base", "Self new", "+Self",
		"+Self%", "Share", "+vsRest", "Total base", "Total new", "+Total", "+Total%", "Sig");
	for (i = 0; i < shown; i++) {
		const struct ss_diff_row *r = &rows[i];
		char name[512], calls[32];
		snprintf(name, sizeof(name), "%s%s", r->name,
			 r->kind == SS_AGG_RANGE ? " [range]" : "");
		snprintf(calls, sizeof(calls), "%s->%s",
			 ss_diff_fmt_calls(r->calls_base, t1, sizeof(t1)),
			 ss_diff_fmt_calls(r->calls_new, t2, sizeof(t2)));
		fprintf(f, "%-*.*s  %13s  %10s  %10s  %10s  %8s  %13s  %8s  %10s  %10s  %10s  %8s  %s\n",
			(int)w, (int)w, name, calls,
			ss_diff_fmt_time(r->self.base, t1, sizeof(t1)),
			ss_diff_fmt_time(r->self.new_, t2, sizeof(t2)),
			ss_diff_fmt_dt(r->self.delta, t3, sizeof(t3)),
			ss_diff_fmt_pct(&r->self, t4, sizeof(t4)),
			ss_diff_fmt_share(&r->self, t9, sizeof(t9)),
			ss_diff_fmt_adj(&r->self, t10, sizeof(t10)),
			ss_diff_fmt_time(r->total.base, t5, sizeof(t5)),
			ss_diff_fmt_time(r->total.new_, t6, sizeof(t6)),
			ss_diff_fmt_dt(r->total.delta, t7, sizeof(t7)),
			ss_diff_fmt_pct(&r->total, t8, sizeof(t8)),
			r->self.significant ? "*" : r->total.significant ? "(*)" : "");
		ss_diff_paths(f, a, b, rows, n, r);
	}
	ss_diff_only(f, g, a, b, rows, n);
	fprintf(f, "\nTimes are medians per step over the recorded steps (every thread); Calls/step is the mean.\n"
		"Share: the median share of a step's work (every function's self time) in each run; +vsRest:\n"
		"the self time's change measured by the functions that moved together (the machine's speed;\n"
		"-: not judged).  Rows by the time that change adds at BASE's speed.  *: significant (Mann-\n"
		"Whitney over the steps, NEW's at BASE's speed, p < %g, +vsRest at least %g%%); (*): only the\n"
		"total is.  %zu of %zu rows shown.\n",
		g->o.alpha, g->o.min_pct, shown, nr);
}

static void ss_diff_csv_num(FILE *f, double v)
{
	if (isnan(v))
		fputc(',', f);
	else
		fprintf(f, ",%.6g", v);
}

static void ss_diff_csv_stat(FILE *f, const struct ss_diff_stat *s)
{
	fprintf(f, ",%.0f,%.0f,%.0f", s->base, s->new_, s->delta);
	ss_diff_csv_num(f, s->pct);
}

static void ss_diff_csv(FILE *f, const struct ss_diff_args *g,
			const struct ss_diff_stat *st, const struct ss_diff_verdict *v,
			const struct ss_diff_row *rows, size_t n)
{
	size_t i, shown = ss_diff_shown(g, n);

	fprintf(f, "name,kind,calls_base,calls_new,self_base_ns,self_new_ns,self_delta_ns,"
		"self_delta_pct,total_base_ns,total_new_ns,total_delta_ns,total_delta_pct,"
		"share_base_pct,share_new_pct,vs_rest_pct,p,significant\n");
	fprintf(f, "step time,step,1,1,,,,");
	ss_diff_csv_stat(f, st);
	/* the step: vs_rest is its change at equal machine speed */
	fprintf(f, ",,");
	ss_diff_csv_num(f, v->pct);
	fprintf(f, ",%.3g,%d\n", st->p, st->significant);
	for (i = 0; i < shown; i++) {
		const struct ss_diff_row *r = &rows[i];
		char c1[48], c2[48];
		ss_out_csv_field(f, r->name);
		fprintf(f, ",%s,%s,%s", ss_diff_kind_name(r->kind),
			ss_diff_fmt_num(r->calls_base, c1, sizeof(c1)),
			ss_diff_fmt_num(r->calls_new, c2, sizeof(c2)));
		ss_diff_csv_stat(f, &r->self);
		ss_diff_csv_stat(f, &r->total);
		fprintf(f, ",%.4g,%.4g", 100 * r->self.share_base, 100 * r->self.share_new);
		ss_diff_csv_num(f, r->self.adj_pct);
		fprintf(f, ",%.3g,%d\n", r->self.p, r->self.significant);
	}
}

static void ss_diff_json_pct(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else
		fprintf(f, "%.4g", v);
}

static void ss_diff_json_stat(FILE *f, const char *key, const struct ss_diff_stat *s,
			      int share)
{
	fprintf(f, "\"%s\":{\"base_ns\":%.0f,\"new_ns\":%.0f,\"delta_ns\":%.0f,\"delta_pct\":",
		key, s->base, s->new_, s->delta);
	ss_diff_json_pct(f, s->pct);
	if (share) {
		fprintf(f, ",\"share_base\":%.4f,\"share_new\":%.4f,\"vs_rest_pct\":",
			s->share_base, s->share_new);
		ss_diff_json_pct(f, s->adj_pct);
	}
	fprintf(f, ",\"p\":%.4g,\"significant\":%s}", s->p, s->significant ? "true" : "false");
}

static void ss_diff_json_run(FILE *f, const char *key, const struct ss_diff_run *r)
{
	size_t i;

	fprintf(f, "\"%s\":{\"dir\":", key);
	ss_export_json_fputs(f, r->dir);
	fputs(",\"prog\":", f);
	ss_export_json_fputs(f, r->prog);
	fputs(",\"step_function\":", f);
	ss_export_json_fputs(f, r->stepfn);
	fprintf(f, ",\"steps\":%zu,\"steps_recorded\":%zu,\"cut\":", r->nsteps, r->nsteps_all);
	if (r->cut[0])
		ss_export_json_fputs(f, r->cut);
	else
		fputs("null", f);
	fprintf(f, ",\"processes\":%zu,\"threads\":%zu,\"step_ns\":[",
		r->nprocs, r->nthreads);
	for (i = 0; i < r->nsteps; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)r->step_ns[i]);
	fputs("]}", f);
}

/* "callers" (the time of r's calls each made, per step) and
 * "callees_gone" of function row r. */
static void ss_diff_json_paths(FILE *f, const struct ss_diff_run *a,
			       const struct ss_diff_run *b, const struct ss_diff_row *rows,
			       size_t n, const struct ss_diff_row *r)
{
	struct ss_diff_caller c[16];
	const char *gone[16];
	size_t k, m = ss_diff_callers(a, b, r->name, c, 16);

	fputs(",\"callers\":[", f);
	for (k = 0; k < m && k < 16; k++) {
		fputs(k ? ",{\"name\":" : "{\"name\":", f);
		ss_export_json_fputs(f, c[k].name);
		fprintf(f, ",\"base_ns\":%.0f,\"new_ns\":%.0f,\"delta_ns\":%.0f}",
			c[k].base, c[k].new_, c[k].delta);
	}
	fputs("],\"callees_gone\":[", f);
	m = ss_diff_gone_callees(a, rows, n, r->name, gone, 16);
	for (k = 0; k < m && k < 16; k++) {
		if (k)
			fputc(',', f);
		ss_export_json_fputs(f, gone[k]);
	}
	fputc(']', f);
}

static void ss_diff_json(FILE *f, const struct ss_diff_args *g,
			 const struct ss_diff_run *a, const struct ss_diff_run *b,
			 const struct ss_diff_stat *st, const struct ss_diff_verdict *v,
			 const char *verdict, const struct ss_diff_row *rows,
			 size_t n, const char *note)
{
	size_t i, shown = ss_diff_shown(g, n);

	fputc('{', f);
	ss_diff_json_run(f, "base", a);
	fputc(',', f);
	ss_diff_json_run(f, "new", b);
	fprintf(f, ",\"alpha\":%g,\"min_change_pct\":%g,", g->o.alpha, g->o.min_pct);
	fprintf(f, "\"compared\":\"%s\",", a->oncpu && b->oncpu ? "on_cpu" : "wall");
	if (a->have_off || b->have_off) /* record.sched: median share of a step */
		fprintf(f, "\"off_cpu_share\":{\"base\":%.4f,\"new\":%.4f},", ss_diff_busy(a),
			ss_diff_busy(b));
	ss_diff_json_stat(f, "step", st, 0);
	fputs(",\"verdict\":{\"pct_equal_speed\":", f);
	ss_diff_json_pct(f, v->pct);
	fputs(",\"machine_pct\":", f);
	ss_diff_json_pct(f, v->machine_pct);
	fprintf(f, ",\"p\":%.4g,\"significant\":%s,\"judged\":%s,\"changed\":%zu,\"why\":",
		v->p, v->significant ? "true" : "false", v->judged ? "true" : "false", v->nchanged);
	ss_export_json_fputs(f, verdict);
	fputc('}', f);
	fputs(",\"note\":", f);
	if (note)
		ss_export_json_fputs(f, note);
	else
		fputs("null", f);
	fputs(",\"rows\":[", f);
	for (i = 0; i < shown; i++) {
		const struct ss_diff_row *r = &rows[i];
		char c1[48], c2[48];
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		ss_export_json_fputs(f, r->name);
		fprintf(f, ",\"kind\":\"%s\",\"presence\":\"%s\",\"calls_base\":%s,\"calls_new\":%s,",
			ss_diff_kind_name(r->kind),
			r->only < 0 ? "gone" : r->only > 0 ? "new" : "both",
			ss_diff_fmt_num(r->calls_base, c1, sizeof(c1)),
			ss_diff_fmt_num(r->calls_new, c2, sizeof(c2)));
		ss_diff_json_stat(f, "self", &r->self, 1);
		fputc(',', f);
		ss_diff_json_stat(f, "total", &r->total, 1);
		if (r->kind == SS_AGG_FUNCTION)
			ss_diff_json_paths(f, a, b, rows, n, r);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

/* ------------------------------------------------------------ command */

static int ss_diff_main(int argc, char **argv, int html)
{
	struct ss_diff_args g;
	struct ss_diff_run r[2];
	struct ss_diff_stat st;
	struct ss_diff_verdict v;
	struct ss_diff_row *rows = NULL;
	struct ss_out o;
	char err[1024], note[1536] = "", verdict[768], *defout = NULL;
	long n;
	int rc, i;
	FILE *f = stdout;

	memset(&g, 0, sizeof(g));
	memset(r, 0, sizeof(r));
	g.html = html;
	g.limit = 30;
	g.fail_above = -1;
	ss_diff_opts_default(&g.o);
	rc = ss_diff_parse(&g, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	for (i = 0; i < 2; i++) {
		rc = ss_diff_load(&r[i], g.dir[i], g.backend, g.quiet, g.wall, err, sizeof(err));
		/* one run without switch records: both in wall time */
		if (!rc && i == 1 && r[0].oncpu != r[1].oncpu) {
			int k = r[0].oncpu ? 0 : 1;
			ss_diff_release(&r[k]);
			rc = ss_diff_load(&r[k], g.dir[k], g.backend, 1, 1, err, sizeof(err));
		}
		if (rc) {
			fprintf(stderr, "stepscope: diff: %s\n", err);
			goto out;
		}
		/* a trace cut short: compared over the steps it holds whole,
		 * refused when too few are left to tell a change from noise */
		if (r[i].cut[0] && r[i].nsteps < SS_DIFF_MIN_STEPS) {
			fprintf(stderr, "stepscope: diff: %s is cut short at offset %llu: "
				"%zu of its %zu recorded steps are whole, too few to compare (%d needed)\n",
				r[i].cut, r[i].cut_off, r[i].nsteps, r[i].nsteps_all,
				SS_DIFF_MIN_STEPS);
			rc = 2;
			goto out;
		}
		if (!r[i].nsteps) {
			fprintf(stderr, "stepscope: diff: %s: no recorded steps (record with step.function set)\n",
				g.dir[i]);
			rc = 2;
			goto out;
		}
	}
	/* two builds of one program may have other names (train_old,
	 * train_new): with --allow-renamed the step function matches them */
	if (strcmp(r[0].stepfn, r[1].stepfn) || (strcmp(r[0].prog, r[1].prog) && !g.renamed)) {
		fprintf(stderr, "stepscope: diff: not comparable: %s runs %s (step.function %s), %s runs %s (step.function %s)\n",
			g.dir[0], r[0].prog, r[0].stepfn[0] ? r[0].stepfn : "-", g.dir[1],
			r[1].prog, r[1].stepfn[0] ? r[1].stepfn : "-");
		if (!strcmp(r[0].stepfn, r[1].stepfn))
			fprintf(stderr, "stepscope: diff: two builds of one program under other names? "
				"--allow-renamed compares them\n");
		rc = 2;
		goto out;
	}
	if (strcmp(r[0].prog, r[1].prog))
		snprintf(note, sizeof(note),
			 "programs of different names compared (--allow-renamed): %s in BASE with %s in NEW, "
			 "matched by step.function %s; functions are matched by name",
			 r[0].prog, r[1].prog, r[0].stepfn[0] ? r[0].stepfn : "-");
	if (r[0].nprocs != r[1].nprocs || r[0].nthreads != r[1].nthreads)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "%sthe runs differ in processes (%zu, %zu) or threads (%zu, %zu): functions are compared by name over all of them",
			 note[0] ? "; " : "", r[0].nprocs, r[1].nprocs, r[0].nthreads, r[1].nthreads);
	{ /* a busy machine: say what that leaves open */
		char busy[512];
		if (ss_diff_busy_note(busy, sizeof(busy), &r[0], &r[1]))
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s",
				 note[0] ? "; " : "", busy);
	}
	n = ss_diff_compare(&r[0], &r[1], &g.o, &st, &rows);
	if (n >= 0 && ss_diff_verdict(&r[0], &r[1], rows, (size_t)n, &g.o, &st, &v))
		n = -1;
	if (n < 0) {
		fprintf(stderr, "stepscope: diff: out of memory\n");
		rc = 1;
		goto out;
	}
	if (html && !g.out) {
		if (asprintf(&defout, "%s/diff.html", g.dir[1]) < 0) {
			fprintf(stderr, "stepscope: diff: out of memory\n");
			rc = 1;
			goto out;
		}
		g.out = defout;
	}
	if (g.out && strcmp(g.out, "-")) {
		if (ss_out_open(&o, g.out, err, sizeof(err))) {
			fprintf(stderr, "stepscope: diff: %s\n", err);
			rc = 2;
			goto out;
		}
		f = o.f;
	}
	ss_diff_verdict_line(verdict, sizeof(verdict), &v, &st, &g.o);
	if (html) { /* the page takes the verdict with the notes */
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sverdict: %s",
			 note[0] ? "; " : "", verdict);
		ss_diff_html_write(f, &r[0], &r[1], &g.o, &st, rows, (size_t)n, note);
	}
	else if (g.fmt == SS_DIFF_CSV) {
		char busy[512];
		ss_diff_cutline(stderr, &r[0], &r[1]);
		if (ss_diff_busy_line(busy, sizeof(busy), &r[0], &r[1], g.wall))
			fprintf(stderr, "%s\n%s%s%s", busy, note[0] ? "note: " : "", note,
				note[0] ? "\n" : "");
		fprintf(stderr, "verdict: %s\n", verdict);
		ss_diff_csv(f, &g, &st, &v, rows, (size_t)n);
	}
	else if (g.fmt == SS_DIFF_JSON)
		ss_diff_json(f, &g, &r[0], &r[1], &st, &v, verdict, rows, (size_t)n,
			     note[0] ? note : NULL);
	else
		ss_diff_table(f, &g, &r[0], &r[1], &st, rows, (size_t)n, note[0] ? note : NULL,
			      verdict);
	if (f != stdout) {
		if (ss_out_commit(&o, 0, err, sizeof(err))) {
			fprintf(stderr, "stepscope: diff: %s\n", err);
			ss_out_abort(&o);
			rc = 1;
			goto out;
		}
		fprintf(stderr, "stepscope: wrote %s\n", o.name);
		ss_out_abort(&o);
	} else if (fflush(stdout)) {
		rc = 1;
		goto out;
	}
	rc = 0;
	/* the gate: the step's change at equal machine speed, never a
	 * change every function shares (one run a side cannot tell it from
	 * the machine: said, not failed) */
	if (g.fail_above >= 0 && v.significant && v.pct > g.fail_above) {
		fprintf(stderr, "stepscope: diff: the median step time grew %.1f%% at equal machine "
			"speed (more than %g%%, significant; %+.1f%% as measured): %s\n",
			v.pct, g.fail_above, st.pct, verdict);
		rc = 1;
	} else if (g.fail_above >= 0 && st.p < g.o.alpha && st.pct > g.fail_above)
		fprintf(stderr, "stepscope: diff: not failed: the step time grew %.1f%% as measured, "
			"but %s\n", st.pct, verdict);
out:
	free(defout);
	free(rows);
	ss_diff_release(&r[0]);
	ss_diff_release(&r[1]);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	return ss_diff_main(argc, argv, 0);
}

int cmd_diff_html(int argc, char **argv)
{
	return ss_diff_main(argc, argv, 1);
}
