/*
 * args-report.c - `stepscope report --group-by args` (record.args,
 * docs/shapes.md): one row per function and distinct argument values,
 * like torch.profiler's key_averages(group_by_input_shape=True), with
 * the FLOPs of its calls (flops:) and the GFLOP/s they reached.
 *
 * Design: an exporter (export.h) that takes the slices of listed
 * functions (those that carry argv) and folds them by their key, the
 * function's name and its non-pointer values in declaration order
 * ("B=4 T=64 C=768 OC=2304"); pointers stay out of the key (a buffer's
 * address says nothing about the work).  Rows keep calls, total, min and
 * max of the calls' own times (begin to end), the FLOPs of the calls that
 * had them and how many did not (a needed parameter optimized out).
 * GFLOP/s = the FLOPs over the time of the calls that had them, less the
 * time they were preempted when the process recorded its switches
 * (record.sched, read/offcpu.h: runnable but switched out for other work,
 * a busy machine's share), else their wall time; the output says which.
 * Time a call was blocked stays in: it waited for its own work (its
 * worker threads, a device), and taking it out would credit the caller
 * with FLOPs other threads did.  A
 * function's per-function row (every group together) is printed after
 * its groups in the json form, and as its own table under it.
 *
 * Must never: merge two different values into one group, or give a row
 * FLOPs it could not compute for every call counted in them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args-report.h"
#include "export.h"
#include "offcpu.h"
#include "agg.h"
#include "outfile.h"
#include "run.h"
#include "svg.h"

struct ss_args_group {
	char *fn;
	char *key;                 /* "B=4 T=64", "" when no scalar */
	uint64_t calls, total_ns, min_ns, max_ns;
	double flops;              /* of the calls with flops */
	uint64_t flops_ns;         /* their time */
	uint64_t flops_run_ns;     /* ... less the time they were preempted */
	uint64_t flops_calls, no_flops;  /* with; needed value missing */
	int fn_row;                /* a per-function total */
	/* per-function rows: calls with a value <optimized out>, and which
	 * parameters, in the order first seen */
	uint64_t out_calls;
	size_t nout;
	char *out_name[SS_ARGS_MAX];
	uint64_t out_n[SS_ARGS_MAX];
};

struct ss_args_report {
	struct ss_args_group *g;
	size_t n, cap;
	uint64_t missing;          /* calls whose FLOPs could not be computed */
	int have_flops;
	const struct ss_offcpu *off; /* record.sched: the current process's */
	uint64_t off_pid;
	int have_off;              /* some process recorded its switches */
	struct ss_exporter ex;
};

static struct ss_args_group *ss_args_group_get(struct ss_args_report *r, const char *fn,
					       const char *key, int fn_row)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->g[i].fn_row == fn_row && !strcmp(r->g[i].fn, fn) &&
		    !strcmp(r->g[i].key, key))
			return &r->g[i];
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 32;
		struct ss_args_group *g = realloc(r->g, cap * sizeof(*g));
		if (!g)
			return NULL;
		r->g = g;
		r->cap = cap;
	}
	struct ss_args_group *g = &r->g[r->n];
	memset(g, 0, sizeof(*g));
	g->fn = strdup(fn);
	g->key = strdup(key);
	if (!g->fn || !g->key) {
		free(g->fn);
		free(g->key);
		return NULL;
	}
	g->fn_row = fn_row;
	g->min_ns = UINT64_MAX;
	r->n++;
	return g;
}

static void ss_args_group_add(struct ss_args_group *g, const struct ss_slice *s, uint64_t off)
{
	uint64_t d = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;

	g->calls++;
	g->total_ns += d;
	if (d < g->min_ns)
		g->min_ns = d;
	if (d > g->max_ns)
		g->max_ns = d;
	if (s->has_flops == 1) {
		g->flops += s->flops;
		g->flops_ns += d;
		g->flops_run_ns += d - (off < d ? off : d);
		g->flops_calls++;
	} else if (s->has_flops == 2) {
		g->no_flops++;
	}
}

void ss_args_key(const struct ss_slice *s, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < s->nargv && used + 1 < len; i++) {
		char v[64];
		if (s->argv[i].kind == SS_ARGV_PTR)
			continue;
		ss_argv_text(&s->argv[i], v, sizeof(v));
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
					 s->argv[i].name, v);
	}
}

/* Count the call's <optimized out> values in its function's row. */
static void ss_args_count_out(struct ss_args_group *g, const struct ss_slice *s)
{
	int any = 0;

	for (size_t i = 0; i < s->nargv; i++) {
		size_t k;
		if (s->argv[i].kind != SS_ARGV_OUT || !s->argv[i].name)
			continue;
		any = 1;
		for (k = 0; k < g->nout && strcmp(g->out_name[k], s->argv[i].name); k++)
			;
		if (k == g->nout) {
			if (k == SS_ARGS_MAX || !(g->out_name[k] = strdup(s->argv[i].name)))
				continue;
			g->nout++;
		}
		g->out_n[k]++;
	}
	g->out_calls += any;
}

static void ss_args_report_slice(void *ctx, uint64_t pid, uint64_t tid,
				 const struct ss_slice *s)
{
	struct ss_args_report *r = ctx;
	struct ss_args_group *g;
	char key[1024];
	uint64_t off = 0, preempted = 0;

	if (s->cat != SS_SLICE_FUNCTION || !s->argv || !s->name)
		return;
	if (s->has_flops == 1 && r->off && r->off_pid == pid)
		ss_offcpu_in(ss_offcpu_find(r->off, tid), s->begin_ns, s->end_ns, &preempted);
	off = preempted; /* blocked time is the call's own waiting */
	ss_args_key(s, key, sizeof(key));
	if ((g = ss_args_group_get(r, s->name, key, 0)))
		ss_args_group_add(g, s, off);
	if ((g = ss_args_group_get(r, s->name, "", 1))) {
		ss_args_group_add(g, s, off);
		ss_args_count_out(g, s);
	}
	if (s->has_flops)
		r->have_flops = 1;
	if (s->has_flops == 2)
		r->missing++;
}

static void ss_args_report_process(void *ctx, uint64_t pid, const char *name)
{
	(void)pid, (void)name;
	((struct ss_args_report *)ctx)->off = NULL; /* its intervals come next, if any */
}

/* record.sched: the process's off-CPU intervals, for its slices */
static void ss_args_report_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_args_report *r = ctx;

	r->off = d;
	r->off_pid = pid;
	r->have_off = 1;
}

struct ss_exporter *ss_args_report_new(struct ss_args_report **out)
{
	struct ss_args_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ex.ctx = r;
	r->ex.slice = ss_args_report_slice;
	r->ex.process = ss_args_report_process;
	r->ex.offcpu = ss_args_report_offcpu;
	ss_exporter_nops(&r->ex); /* freed by ss_args_report_free, not release */
	*out = r;
	return &r->ex;
}

void ss_args_report_free(struct ss_args_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->g[i].fn);
		free(r->g[i].key);
		for (size_t k = 0; k < r->g[i].nout; k++)
			free(r->g[i].out_name[k]);
	}
	free(r->g);
	free(r);
}

/* Groups by total time, each function's total row after its groups. */
static int ss_args_cmp(const void *a, const void *b)
{
	const struct ss_args_group *x = a, *y = b;
	if (x->fn_row != y->fn_row)
		return x->fn_row - y->fn_row;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	int c = strcmp(x->fn, y->fn);
	return c ? c : strcmp(x->key, y->key);
}

/* GFLOP/s of a group, or < 0 when it has none: over the calls' time less
 * their preempted time when switches were recorded, else their wall time. */
static double ss_args_gflops(const struct ss_args_report *r, const struct ss_args_group *g)
{
	uint64_t ns = r->have_off ? g->flops_run_ns : g->flops_ns;
	return g->flops_calls && ns ? g->flops / (double)ns : -1;
}

/* What GFLOP/s is over, for the line under a table. */
static const char *ss_args_gflops_basis(const struct ss_args_report *r)
{
	return r->have_off ? "GFLOP/s = FLOPs / Total of the calls that have them less the time they "
			     "were preempted (record.sched: runnable but switched out for other work; "
			     "time they waited, for their worker threads or a device, stays in)"
			   : "GFLOP/s = FLOPs / Total (wall time) of the calls that have them "
			     "(record.sched: true would leave out the time they were preempted by "
			     "other work)";
}

void ss_args_report_footer(FILE *f, const struct ss_args_report *r)
{
	if (ss_args_report_flops_shown(r))
		fprintf(f, "FLOPs: from flops: in the config; %s\n", ss_args_gflops_basis(r));
}

/* One line per function with values <optimized out>: how many of its
 * calls, and each parameter with the calls it was missing from
 * ("forward: 3 of 3 calls with a value <optimized out>: B 3"). */
static void ss_args_out_footer(FILE *f, const struct ss_args_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct ss_args_group *g = &r->g[i];
		if (!g->fn_row || !g->out_calls)
			continue;
		fprintf(f, "%s: %" PRIu64 " of %" PRIu64 " call%s with a value <optimized out>:", g->fn,
			g->out_calls, g->calls, g->calls == 1 ? "" : "s");
		for (size_t k = 0; k < g->nout; k++)
			fprintf(f, "%s %s %" PRIu64, k ? "," : "", g->out_name[k], g->out_n[k]);
		fputc('\n', f);
	}
}

static void ss_args_table(FILE *f, const struct ss_args_report *r, int fn_rows, size_t limit)
{
	size_t shown = 0, all = 0;
	int w = 24, wk = 8;

	for (size_t i = 0; i < r->n; i++) {
		const struct ss_args_group *g = &r->g[i];
		if (g->fn_row != fn_rows)
			continue;
		if ((int)strlen(g->fn) > w)
			w = (int)strlen(g->fn) > 40 ? 40 : (int)strlen(g->fn);
		if ((int)strlen(g->key) > wk)
			wk = (int)strlen(g->key) > 60 ? 60 : (int)strlen(g->key);
	}
	if (fn_rows)
		wk = 0;
	fprintf(f, "%-*s  ", w, "Name");
	if (!fn_rows)
		fprintf(f, "%-*s  ", wk, "Args");
	fprintf(f, "%9s  %11s  %11s  %11s  %11s", "Calls", "Total", "Avg", "Min", "Max");
	if (r->have_flops)
		fprintf(f, "  %12s  %9s", "FLOPs", "GFLOP/s");
	fputc('\n', f);
	for (size_t i = 0; i < r->n; i++) {
		const struct ss_args_group *g = &r->g[i];
		char t[4][32];
		if (g->fn_row != fn_rows)
			continue;
		all++;
		if (limit && shown >= limit)
			continue;
		shown++;
		ss_agg_fmt_time(g->total_ns, t[0], sizeof(t[0]));
		ss_agg_fmt_time(g->calls ? g->total_ns / g->calls : 0, t[1], sizeof(t[1]));
		ss_agg_fmt_time(g->min_ns, t[2], sizeof(t[2]));
		ss_agg_fmt_time(g->max_ns, t[3], sizeof(t[3]));
		fprintf(f, "%-*.*s  ", w, w, g->fn);
		if (!fn_rows)
			fprintf(f, "%-*s  ", wk, g->key);
		fprintf(f, "%9" PRIu64 "  %11s  %11s  %11s  %11s", g->calls, t[0], t[1], t[2], t[3]);
		if (r->have_flops) {
			double gf = ss_args_gflops(r, g);
			if (gf >= 0)
				fprintf(f, "  %12.4g  %9.3f", g->flops, gf);
			else
				fprintf(f, "  %12s  %9s", "-", "-");
		}
		fputc('\n', f);
	}
	if (all > shown)
		fprintf(f, "%zu more row%s (--limit 0 shows all)\n", all - shown,
			all - shown == 1 ? "" : "s");
}

static void ss_args_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void ss_args_report_print(FILE *f, struct ss_args_report *r, const char *format,
			  size_t limit)
{
	if (r->n > 1)  /* r->g is NULL with no listed call */
		qsort(r->g, r->n, sizeof(*r->g), ss_args_cmp);
	if (!strcmp(format, "csv")) {
		fprintf(f, "name,args,calls,total_ns,avg_ns,min_ns,max_ns,flops,gflops_per_s,calls_without_flops\n");
		for (size_t i = 0, k = 0; i < r->n; i++) {
			const struct ss_args_group *g = &r->g[i];
			if (g->fn_row || (limit && k >= limit))
				continue;
			k++;
			ss_out_csv_field(f, g->fn);
			fputc(',', f);
			ss_out_csv_field(f, g->key);
			fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, g->calls,
				g->total_ns, g->calls ? g->total_ns / g->calls : 0, g->min_ns, g->max_ns);
			if (ss_args_gflops(r, g) >= 0)
				fprintf(f, ",%.17g,%.6f", g->flops, ss_args_gflops(r, g));
			else
				fputs(",,", f);
			fprintf(f, ",%" PRIu64 "\n", g->no_flops);
		}
		return;
	}
	if (!strcmp(format, "json")) {
		fputs("{\"group_by\":\"args\",\"rows\":[", f);
		for (size_t i = 0, k = 0; i < r->n; i++) {
			const struct ss_args_group *g = &r->g[i];
			if (g->fn_row == 0 && limit && k++ >= limit)
				continue;
			fputs(i ? ",\n{" : "\n{", f);
			fputs("\"name\":", f);
			ss_args_json_str(f, g->fn);
			if (!g->fn_row) {
				fputs(",\"args\":", f);
				ss_args_json_str(f, g->key);
			} else {
				fputs(",\"all_args\":true", f);
			}
			fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
				   ",\"max_ns\":%" PRIu64, g->calls, g->total_ns, g->min_ns, g->max_ns);
			if (ss_args_gflops(r, g) >= 0)
				fprintf(f, ",\"flops\":%.17g,\"gflops_per_s\":%.6f", g->flops,
					ss_args_gflops(r, g));
			fprintf(f, ",\"calls_without_flops\":%" PRIu64, g->no_flops);
			if (g->fn_row) {
				fprintf(f, ",\"calls_with_optimized_out\":%" PRIu64
					   ",\"optimized_out\":{", g->out_calls);
				for (size_t k = 0; k < g->nout; k++) {
					fputs(k ? "," : "", f);
					ss_args_json_str(f, g->out_name[k]);
					fprintf(f, ":%" PRIu64, g->out_n[k]);
				}
				fputc('}', f);
			}
			fputc('}', f);
		}
		fprintf(f, "\n],\"calls_without_flops\":%" PRIu64 ",\"gflops_time\":\"%s\"}\n",
			r->missing, r->have_off ? "wall_less_preempted" : "wall");
		return;
	}
	ss_args_table(f, r, 0, limit);
	fputc('\n', f);
	ss_args_table(f, r, 1, 0);
	if (!r->n)
		fputs("no calls with arguments (record.args lists the functions whose calls keep them)\n", f);
	ss_args_report_footer(f, r);
	if (r->missing)
		fprintf(f, "%" PRIu64 " call%s without FLOPs: a parameter its flops: expression needs was <optimized out>\n",
			r->missing, r->missing == 1 ? "" : "s");
	ss_args_out_footer(f, r);
}

/* ------------------------------------------------------------ html */

void ss_args_html(FILE *f, const char *dir, const char *backend)
{
	struct ss_args_report *r = NULL;
	struct ss_exporter *ex;
	char err[1024];
	size_t shown = 0;

	/* record.args in the first trace's config */
	if (!ss_run_traces_config_has(dir, "record.args=", 0) ||
	    !(ex = ss_args_report_new(&r)))
		return;
	if (ss_agg_walk(dir, backend, 1, &ex, 1, err, sizeof(err)) || !r->n) {
		ss_args_report_free(r);
		return;
	}
	if (r->n > 1)  /* r->g is NULL with no listed call */
		qsort(r->g, r->n, sizeof(*r->g), ss_args_cmp);
	fprintf(f, "<h2>Calls by arguments</h2>\n<p class=\"muted\">record.args: one row per "
		"function and argument values (pointers left out)%s. Table: <code>stepscope "
		"report DIR --group-by args</code></p>\n<table><tr><th>Name</th><th>Args</th>"
		"<th>Calls</th><th>Total</th><th>Avg</th>%s</tr>\n",
		r->have_flops ? (r->have_off ? "; GFLOP/s = FLOPs / Total less the time preempted "
					       "(record.sched)"
					     : "; GFLOP/s = FLOPs / Total (wall time)") : "",
		r->have_flops ? "<th>FLOPs</th><th>GFLOP/s</th>" : "");
	for (size_t i = 0; i < r->n && shown < 40; i++) {
		const struct ss_args_group *g = &r->g[i];
		char t[2][32];
		if (g->fn_row)
			continue;
		shown++;
		ss_agg_fmt_time(g->total_ns, t[0], sizeof(t[0]));
		ss_agg_fmt_time(g->total_ns / g->calls, t[1], sizeof(t[1]));
		fputs("<tr><td>", f);
		ss_svg_text(f, g->fn);
		fputs("</td><td>", f);
		ss_svg_text(f, g->key);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td>", g->calls, t[0], t[1]);
		if (r->have_flops && ss_args_gflops(r, g) >= 0)
			fprintf(f, "<td>%.4g</td><td>%.3f</td>", g->flops, ss_args_gflops(r, g));
		else if (r->have_flops)
			fputs("<td>-</td><td>-</td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (r->missing)
		fprintf(f, "<p class=\"muted\">%" PRIu64 " calls without FLOPs: a parameter their "
			"expression needs was &lt;optimized out&gt;</p>\n", r->missing);
	for (size_t i = 0; i < r->n; i++) {
		const struct ss_args_group *g = &r->g[i];
		if (!g->fn_row || !g->out_calls)
			continue;
		fputs("<p class=\"muted\">", f);
		ss_svg_text(f, g->fn);
		fprintf(f, ": %" PRIu64 " of %" PRIu64 " calls with a value &lt;optimized out&gt;:",
			g->out_calls, g->calls);
		for (size_t k = 0; k < g->nout; k++) {
			fputs(k ? ", " : " ", f);
			ss_svg_text(f, g->out_name[k]);
			fprintf(f, " %" PRIu64, g->out_n[k]);
		}
		fputs("</p>\n", f);
	}
	ss_args_report_free(r);
}

/* ------------------------------------------------------------ report columns */

int ss_args_report_flops_shown(const struct ss_args_report *r)
{
	return r && r->have_flops;
}

void ss_args_report_cells(const struct ss_args_report *r, const char *fn, char *flops,
			  char *gflops, size_t len)
{
	snprintf(flops, len, "-");
	snprintf(gflops, len, "-");
	if (!r || !fn)
		return;
	for (size_t i = 0; i < r->n; i++) {
		const struct ss_args_group *g = &r->g[i];
		if (!g->fn_row || strcmp(g->fn, fn) || ss_args_gflops(r, g) < 0)
			continue;
		snprintf(flops, len, "%.4g", g->flops);
		snprintf(gflops, len, "%.3f", ss_args_gflops(r, g));
		return;
	}
}

/* report --format csv/json of a run with flops: each function's FLOPs and
 * GFLOP/s after its other columns (empty / absent for one without) */
void ss_args_report_csv_header(FILE *f, const struct ss_args_report *r)
{
	if (ss_args_report_flops_shown(r))
		fputs(",flops,gflops_per_s", f);
}

static const struct ss_args_group *ss_args_fn_row(const struct ss_args_report *r, const char *fn)
{
	for (size_t i = 0; r && fn && i < r->n; i++)
		if (r->g[i].fn_row && !strcmp(r->g[i].fn, fn) && ss_args_gflops(r, &r->g[i]) >= 0)
			return &r->g[i];
	return NULL;
}

void ss_args_report_csv_row(FILE *f, const struct ss_args_report *r, const char *fn)
{
	const struct ss_args_group *g = ss_args_fn_row(r, fn);

	if (!ss_args_report_flops_shown(r))
		return;
	if (g)
		fprintf(f, ",%.17g,%.6f", g->flops, ss_args_gflops(r, g));
	else
		fputs(",,", f);
}

void ss_args_report_json_row(FILE *f, const struct ss_args_report *r, const char *fn)
{
	const struct ss_args_group *g = ss_args_fn_row(r, fn);

	if (g)
		fprintf(f, ",\"flops\":%.17g,\"gflops_per_s\":%.6f", g->flops, ss_args_gflops(r, g));
}

int ss_args_report_shape(const struct ss_args_report *r, size_t i, struct ss_args_shape *out)
{
	size_t k = 0;

	for (size_t j = 0; r && j < r->n; j++) {
		const struct ss_args_group *g = &r->g[j];
		if (g->fn_row || k++ != i)
			continue;
		out->fn = g->fn;
		out->key = g->key;
		out->calls = g->calls;
		out->total_ns = g->total_ns;
		out->flops = g->flops;
		out->flops_calls = g->flops_calls;
		out->gflops = ss_args_gflops(r, g);
		return 0;
	}
	return -1;
}
