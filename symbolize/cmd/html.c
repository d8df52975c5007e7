/*
 * html.c - `stepscope html DIR -o report.html`: one self-contained
 * page about a recorded run: the overview of `stepscope advise` (where
 * each step's time went, and the findings: advise-html.c), the summary
 * table, step times (bars and per-cycle mean/p50/p95/max), the flame
 * graph, memory counters when the run has them, and how to open the full
 * trace in the Perfetto UI.
 *
 * Design: the run is walked once, by ss_adv_build (advise.c), whose
 * aggregator the rest of the page reads; the page is static
 * HTML with inline CSS and inline SVG (svg.c) - no script, no font, no
 * image or style sheet from the network, so it opens offline and can be
 * attached to a bug report.  Written through outfile.c (cli.c).
 *
 * Must never: reference an external resource, or print an unescaped name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "advise-html.h"
#include "agg.h"
#include "alloc-html.h"
#include "cli.h"
#include "ranks.h"
#include "args-report.h"
#include "cmds.h"
#include "run-check.h"
#include "offcpu-report.h"
#include "overhead.h"
#include "svg.h"
#include "version.h"

#define SS_HTML_ROWS 40
/* trace.json above this is slow or too big for a browser to open (it
 * needs several times the file's size in memory) */
#define SS_HTML_BIG_JSON (256ull << 20)
/* bytes per slice: Chrome JSON by default, Perfetto (a BEGIN and an END) */
#define SS_HTML_JSON_SLICE 80
#define SS_HTML_PF_SLICE 26

static void ss_html_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope html [-o OUT] [--backend dw|bfd] [-q] DIR\n"
		"       stepscope html --diff [-o OUT] BASE NEW   (see 'stepscope html --diff --help')\n"
		"\n"
		"   -o, --output OUT   write the page here (default DIR/report.html; - is stdout)\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n");
}

static const char ss_html_css[] =
	"body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
	"h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
	"table{border-collapse:collapse;font-size:13px}"
	"th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}"
	"th{background:#f3f3f3}td.n,th.n{text-align:left;font-family:monospace}"
	"code,pre{background:#f6f6f6;padding:2px 4px}.muted{color:#777}.warn{color:#a40}"
	".sw{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:middle}"
	".key{margin-right:14px}svg.stack rect.seg:hover{stroke:#000;stroke-width:1.5}"
	"li.finding{margin-bottom:14px}li.finding p{margin:4px 0}tr:target{background:#fff3b0}";

struct ss_html_ctx {
	const struct ss_cli *c;
	const struct ss_adv_result *adv;  /* NULL: advise refused the run */
	const char *no_overview;          /* ... saying this */
};

/* Whether row i of rows (sorted) has the same name as an earlier row
 * that the table shows: it then gets no id of its own. */
static int ss_html_seen(const struct ss_agg_row *rows, size_t i, const char *show)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (show[k] && !strcmp(rows[k].name, rows[i].name))
			return 1;
	return 0;
}

/* The summary table has a row of every name a finding names (the
 * overview links to it): ss_adv_html's has_row. */
static int ss_html_has_row(void *ctx, const char *name)
{
	struct ss_agg_row *rows;
	size_t n = ss_agg_rows(ctx, 0, &rows), i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return 1;
	return 0;
}

/* The top rows by total, and every row a finding of adv names; each
 * name's first row has the id the overview links to. */
static void ss_html_table(FILE *f, struct ss_agg *a, const struct ss_adv_result *adv)
{
	struct ss_agg_row *rows;
	size_t n = ss_agg_rows(a, 0, &rows), i, shown = 0, extra = 0;
	uint64_t sum = ss_agg_self_sum(a), clipped = 0;
	int off = ss_agg_have_offcpu(a, NULL);  /* record.sched */
	char b[8][32], *show = calloc(n ? n : 1, 1);

	if (!show) {
		fprintf(f, "<p class=\"warn\">out of memory writing the summary table</p>\n");
		return;
	}
	for (i = 0; i < n; i++)
		clipped += rows[i].clipped;
	ss_agg_sort_rows(rows, n, SS_AGG_SORT_TOTAL);
	for (i = 0; i < n; i++) {
		show[i] = i < SS_HTML_ROWS || (ss_adv_html_named(adv, rows[i].name) &&
					       !ss_html_seen(rows, i, show));
		shown += show[i];
		extra += show[i] && i >= SS_HTML_ROWS;
	}
	fprintf(f, "<table id=\"summary\"><tr><th class=\"n\">Name</th><th>Self %%</th>"
		"<th>Self</th><th>Total %%</th><th>Total</th><th>Avg</th><th>Min</th>"
		"<th>Max</th><th>Calls</th>%s%s</tr>\n", clipped ? "<th>Clipped</th>" : "",
		off ? "<th>Off-CPU Self</th><th>Off-CPU</th>" : "");
	for (i = 0; i < n; i++) {
		const struct ss_agg_row *r = &rows[i];
		if (!show[i])
			continue;
		fprintf(f, "<tr");
		if (!ss_html_seen(rows, i, show)) {
			fprintf(f, " id=\"");
			ss_adv_html_row_id(f, r->name);
			fprintf(f, "\"");
		}
		fprintf(f, "><td class=\"n\">");
		ss_svg_text(f, r->name);
		if (r->kind == SS_AGG_RANGE)
			fprintf(f, " <span class=\"muted\">(range)</span>");
		/* the cells of the text table (report.c): no Avg without a
		 * call, no Min/Max from fragments cut by a window's edge */
		ss_agg_fmt_time(ss_agg_row_avg(r), b[2], 32);
		ss_agg_fmt_time(r->min_ns, b[3], 32);
		ss_agg_fmt_time(r->max_ns, b[4], 32);
		if (!r->calls || (r->clipped && !r->complete))
			snprintf(b[2], 32, "-");
		if (r->clipped && !r->complete)
			snprintf(b[3], 32, "-"), snprintf(b[4], 32, "-");
		ss_offcpu_report_minmax(r, b[3], b[4], 32);
		fprintf(f, "</td><td>%.2f%%</td><td>%s</td><td>%.2f%%</td><td>%s</td>"
			"<td>%s</td><td>%s</td><td>%s</td><td>%llu</td>",
			sum ? 100.0 * (double)r->self_ns / (double)sum : 0.0,
			ss_agg_fmt_time(r->self_ns, b[0], 32),
			sum ? 100.0 * (double)r->total_ns / (double)sum : 0.0,
			ss_agg_fmt_time(r->total_ns, b[1], 32), b[2], b[3], b[4],
			(unsigned long long)r->calls);
		if (clipped)
			fprintf(f, "<td>%llu</td>", (unsigned long long)r->clipped);
		if (off)
			fprintf(f, "<td>%s</td><td>%s</td>", ss_agg_fmt_time(r->off_self_ns, b[6], 32),
				ss_agg_fmt_time(r->off_ns, b[7], 32));
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n<p class=\"muted\">%zu of %zu rows, by total time%s. "
		"Self time total: %s (the 100%%). Recursive functions count once in Total; "
		"Avg = Total / Calls.%s Full table: <code>stepscope report DIR --limit 0</code></p>\n",
		shown, n, extra ? ", and the rows the findings name" : "",
		ss_agg_fmt_time(sum, b[5], 32),
		clipped ? " Clipped: parts of calls cut by the start or end of a "
			  "recorded window; a part cut at the start is not a call, "
			  "Min/Max leave them out." : "");
	if (off)
		fprintf(f, "<p class=\"muted\">Off-CPU: time the kernel had the thread switched "
			"out inside the call (preempted or blocked); Off-CPU Self is the part of "
			"Self, so Self - Off-CPU Self ran on a CPU. A Min or Max with '*': that "
			"call was switched out for part of its time, not its work alone.</p>\n");
	free(show);
}

static void ss_html_cycles(FILE *f, struct ss_agg *a)
{
	struct ss_agg_cycle *cy;
	size_t n = ss_agg_cycles(a, &cy), i;
	char b[5][32];

	if (!n)
		return;
	fprintf(f, "<table><tr><th>Cycle</th><th>Steps</th><th>Mean</th><th>p50</th>"
		"<th>p95</th><th>Max</th></tr>\n");
	for (i = 0; i < n; i++)
		fprintf(f, "<tr><td>%u</td><td>%zu</td><td>%s</td><td>%s</td><td>%s</td>"
			"<td>%s</td></tr>\n", cy[i].cycle, cy[i].count,
			ss_agg_fmt_time(cy[i].mean_ns, b[0], 32),
			ss_agg_fmt_time(cy[i].p50_ns, b[1], 32),
			ss_agg_fmt_time(cy[i].p95_ns, b[2], 32),
			ss_agg_fmt_time(cy[i].max_ns, b[3], 32));
	fprintf(f, "</table>\n");
	free(cy);
}

static void ss_html_size(char *b, size_t n, double bytes)
{
	if (bytes >= 1e9)
		snprintf(b, n, "%.1f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(b, n, "%.0f MB", bytes / 1e6);
	else
		snprintf(b, n, "%.0f kB", bytes / 1e3);
}

/* How to open the whole trace, with its size: a large trace.json is not
 * for a browser, the Perfetto file is about a third of it. */
static void ss_html_full_trace(FILE *f, struct ss_agg *a, const char *dir)
{
	struct ss_agg_row *rows;
	size_t n = ss_agg_rows(a, 0, &rows), i;
	uint64_t slices = 0;
	double json;
	char path[4200], js[32], ps[32];
	struct stat st;
	int have;

	for (i = 0; i < n; i++)
		slices += rows[i].calls;
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	have = !stat(path, &st) && S_ISREG(st.st_mode);
	json = have ? (double)st.st_size : (double)slices * SS_HTML_JSON_SLICE;
	ss_html_size(js, sizeof(js), json);
	ss_html_size(ps, sizeof(ps), (double)slices * SS_HTML_PF_SLICE);
	fprintf(f, "<h2>Full trace</h2>\n");
	if (json >= (double)SS_HTML_BIG_JSON) {
		fprintf(f, "<p id=\"size-note\"><b>Size:</b> <code>trace.json</code> %s %s "
			"(%llu slices): too large for a browser to open comfortably, a JSON "
			"trace needs several times its size in memory. Open the Perfetto file "
			"instead, about %s: <code>stepscope symbolize --format perfetto ",
			have ? "is" : "would be about", js, (unsigned long long)slices, ps);
		ss_svg_text(f, dir);
		fprintf(f, "</code></p>\n");
	}
	fprintf(f, "<ol><li><code>stepscope symbolize --format perfetto ");
	ss_svg_text(f, dir);
	fprintf(f, "</code> writes <code>trace.perfetto-trace</code> (about %s; or use "
		"<code>trace.json</code> from a plain <code>stepscope symbolize</code>, "
		"%s%s).</li>\n"
		"<li>Open <code>https://ui.perfetto.dev</code>, choose <i>Open trace file</i> "
		"and pick that file; the trace is read in the browser, nothing is uploaded.</li>\n"
		"<li>Offline: <code>chrome://tracing</code> opens <code>trace.json</code>.</li></ol>\n",
		ps, have ? "" : "about ", js);
}

static void ss_html_page(FILE *f, struct ss_agg *a, const char *dir,
			 const struct ss_adv_result *adv, const char *no_overview)
{
	const struct ss_agg_step *st;
	const struct ss_agg_counter *c;
	size_t nsteps = ss_agg_steps(a, &st);
	char b[32];

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<title>stepscope report: ");
	ss_svg_text(f, dir);
	fprintf(f, "</title><style>%s</style></head><body>\n", ss_html_css);
	fprintf(f, "<h1>stepscope report</h1>\n<p>Run <code>");
	ss_svg_text(f, dir);
	fprintf(f, "</code>: %zu process%s, %zu thread%s, %zu recorded step%s, "
		"self time total %s. <span class=\"muted\">stepscope %s</span></p>\n",
		ss_agg_nprocesses(a), ss_agg_nprocesses(a) == 1 ? "" : "es",
		ss_agg_nthreads(a), ss_agg_nthreads(a) == 1 ? "" : "s", nsteps,
		nsteps == 1 ? "" : "s", ss_agg_fmt_time(ss_agg_self_sum(a), b, sizeof(b)),
		SS_TOOL_VERSION);
	{ /* stepscope's own cost (overhead.c) */
		struct ss_overhead o;
		ss_overhead_read(dir, &o);
		if (o.known) {
			uint64_t calls = ss_overhead_calls(a), sum = ss_agg_self_sum(a);
			double pct = ss_overhead_pct(&o, calls, sum);
			enum ss_overhead_advice adv = ss_overhead_advice(&o, calls, sum);
			fprintf(f, "<p id=\"overhead\"%s>stepscope overhead: %.1f%% of recorded time "
				"(%llu calls x %llu ns), recorded steps about %.2fx slower than "
				"unrecorded%s%s</p>\n",
				adv != SS_OVERHEAD_FINE ? " class=\"warn\"" : "", pct,
				(unsigned long long)calls, (unsigned long long)o.pair_ns,
				ss_overhead_slowdown(&o, calls, sum),
				ss_overhead_measured(&o, NULL, NULL) > 0 ? "" : " (by that share)",
				adv == SS_OVERHEAD_FINE ? ""
				: adv == SS_OVERHEAD_WINDOWS
					? ": mostly stepscope's fixed cost (opening windows and its "
					  "background thread), not its hooks: longer windows "
					  "(schedule.active) spread it over more steps"
					: ": the hooks of the recorded calls cost over 10% by themselves; "
					  "run <code>stepscope filter</code> on this run to find the "
					  "calls to leave out");
		}
	}
	{ /* a run stopped by max_trace_mb looks complete otherwise */
		uint64_t step, at;
		const char *why;
		if (ss_agg_stopped(a, &step, &at, &why)) {
			fprintf(f, "<p id=\"stopped\" class=\"warn\">Recording stopped");
			if (step != UINT64_MAX)
				fprintf(f, " in step %llu", (unsigned long long)step);
			fprintf(f, ", %s into the run (%s): nothing after it is recorded, "
				"the program ran on.</p>\n", ss_agg_fmt_time(at, b, sizeof(b)), why);
		}
	}
	if (adv) {
		ss_adv_html(f, adv, ss_html_has_row, a);
	} else {
		fprintf(f, "<h2 id=\"overview\">Overview</h2>\n<p id=\"no-overview\">No "
			"overview: ");
		ss_svg_text(f, no_overview ? no_overview : "advise could not judge this run");
		fprintf(f, "</p>\n");
	}
	fprintf(f, "<h2>Functions</h2>\n");
	ss_html_table(f, a, adv);
	fprintf(f, "<h2>Step time</h2>\n");
	ss_svg_steps(f, a, 1000, 180);
	ss_html_cycles(f, a);
	fprintf(f, "<h2>Flame graph</h2>\n<p class=\"muted\">Width is time, all threads "
		"merged; hover a frame for its numbers.</p>\n");
	ss_svg_flame(f, a, 1200, "all threads", 0);
	ss_ranks_html(f, dir, NULL); /* MPI runs: per-rank step chart */
	ss_args_html(f, dir, NULL);  /* record.args: args-report.c */
	if (ss_agg_counters(a, &c)) {
		fprintf(f, "<h2>Memory</h2>\n");
		ss_svg_counters(f, a, 1000, 220);
	}
	ss_alloc_html(f, dir, NULL); /* memory.allocations: alloc-html.c */
	ss_html_full_trace(f, a, dir);
	fprintf(f, "</body></html>\n");
}

static void ss_html_write(FILE *f, struct ss_agg *a, void *ctx)
{
	const struct ss_html_ctx *h = ctx;

	ss_html_page(f, a, h->c->dir, h->adv, h->no_overview);
}

int cmd_html(int argc, char **argv)
{
	struct ss_cli c = { "html", ss_html_usage, SS_CLI_SYMBOLS, NULL, NULL, NULL, 0 };
	int rc, i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--diff"))
			return cmd_diff_html(argc, argv); /* two runs: diff.c */
	rc = ss_cli_parse(&c, argc, argv, NULL, NULL);
	if (rc != SS_CLI_GO)
		return rc;
	{ /* not a page of empty tables */
		char why[600];
		if (ss_run_check_empty(c.dir, why, sizeof(why))) {
			fprintf(stderr, "stepscope: html: %s: nothing was recorded: %s\n", c.dir, why);
			return 2;
		}
	}
	{ /* one walk: the overview's, whose aggregator the page reads */
		struct ss_adv_result adv;
		struct ss_html_ctx h = { &c, &adv, NULL };
		char err[1024];
		rc = ss_adv_build(c.dir, c.backend, c.quiet, &adv, err, sizeof(err));
		if (!rc) {
			rc = ss_cli_write(&c, "report.html", adv.run.agg, ss_html_write, &h);
			ss_adv_release(&adv);
			return rc;
		}
		/* advise refused the run (no recorded step) or failed: the
		 * page without the overview, saying why; a run nothing can
		 * read fails here with the walk's own message and status, as
		 * it did before the overview */
		h.adv = NULL;
		h.no_overview = err;
		return ss_cli_agg_write(&c, "report.html", ss_html_write, &h);
	}
}
