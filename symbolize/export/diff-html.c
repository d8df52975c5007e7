/*
 * diff-html.c - the page of `stepscope html --diff BASE NEW` (diff-html.h):
 * the diff table (the same rows as `stepscope diff`), the step times of
 * both runs side by side, and a differential flame graph.
 *
 * Design: the flame graph has NEW's shape (the merged function tree of
 * NEW, width = time per step) and BASE's colors: each frame is matched to
 * the frame of the same call path in BASE's tree and filled by the change
 * of its self time per step, red where NEW spends more, blue where it
 * spends less, white-grey within 2% (Brendan Gregg's differential flame
 * graphs).  Frames only in NEW are full red.  Times are per step, so runs
 * with different numbers of steps compare.
 *
 * Must never: reference anything outside the page or use a script.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-html.h"
#include "svg.h"

#define SS_DH_WIDTH 1200
#define SS_DH_FRAME 17

struct ss_dh {
	FILE *f;
	const struct ss_diff_run *a, *b;
	double scale;                /* px per ns per step */
	int depth;                   /* deepest level */
	size_t frames;
};

/* The child of BASE node n (may be NULL) named like NEW's child c. */
static const struct ss_agg_node *ss_dh_match(const struct ss_dh *d,
					     const struct ss_agg_node *n,
					     const struct ss_agg_node *c)
{
	const char *name = ss_agg_name(d->b->agg, c->name);

	for (n = n ? n->child : NULL; n; n = n->next)
		if (n->native == c->native && !strcmp(ss_agg_name(d->a->agg, n->name), name))
			return n;
	return NULL;
}

static int ss_dh_depth(const struct ss_agg_node *n)
{
	int m = 0;

	for (n = n->child; n; n = n->next) {
		int k = ss_dh_depth(n) + 1;
		if (k > m)
			m = k;
	}
	return m;
}

static void ss_dh_frame(struct ss_dh *d, const struct ss_agg_node *n,
			const struct ss_agg_node *base, double x, int level)
{
	const struct ss_agg_node *c;
	double nb = (double)(d->a->nsteps ? d->a->nsteps : 1);
	double nn = (double)(d->b->nsteps ? d->b->nsteps : 1);
	double tot = (double)n->total_ns / nn, self = (double)n->self_ns / nn;
	double bself = base ? (double)base->self_ns / nb : 0;
	double btot = base ? (double)base->total_ns / nb : 0;
	double w = tot * d->scale, y, r, m;
	unsigned red, green, blue;
	char t1[32], t2[32], t3[32], t4[32], t5[32];

	if (w < 0.1)
		return;
	y = (double)(d->depth - level) * SS_DH_FRAME;
	/* -1 .. +1: the change of self over the larger total, so a frame
	 * whose own time is a sliver of its width (a loop around the work)
	 * stays grey however its few ns vary */
	m = tot > btot ? tot : btot;
	r = m > 0 ? (self - bself) / m : 0;
	if (!base)
		r = 1;
	if (fabs(r) < 0.02) {
		red = green = blue = 224;
	} else if (r > 0) {
		red = 255;
		green = blue = (unsigned)(215 * (1 - fmin(1, 0.15 + fabs(r) * 2)));
	} else {
		blue = 255;
		red = green = (unsigned)(215 * (1 - fmin(1, 0.15 + fabs(r) * 2)));
	}
	fprintf(d->f, "<g><title>");
	ss_svg_text(d->f, ss_agg_name(d->b->agg, n->name));
	fprintf(d->f, "\nself per step: %s -> %s (%s)\ntotal per step: %s -> %s",
		ss_diff_fmt_time(bself, t1, sizeof(t1)), ss_diff_fmt_time(self, t2, sizeof(t2)),
		ss_diff_fmt_dt(self - bself, t3, sizeof(t3)), ss_diff_fmt_time(btot, t4, sizeof(t4)),
		ss_diff_fmt_time(tot, t5, sizeof(t5)));
	fprintf(d->f, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" stroke=\"#fff\" stroke-width=\"0.5\"/>",
		x, y, w, SS_DH_FRAME - 1, red, green, blue);
	if (w > 40) {
		const char *name = ss_agg_name(d->b->agg, n->name);
		int chars = (int)(w / 7) - 1;
		char label[256];
		snprintf(label, sizeof(label), "%.*s", chars < 255 ? chars : 255, name);
		fprintf(d->f, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + SS_DH_FRAME - 5);
		ss_svg_text(d->f, label);
		fprintf(d->f, "</text>");
	}
	fprintf(d->f, "</g>\n");
	d->frames++;
	for (c = n->child; c; c = c->next) {
		ss_dh_frame(d, c, ss_dh_match(d, base, c), x, level + 1);
		x += (double)c->total_ns / nn * d->scale;
	}
}

static void ss_dh_flame(struct ss_dh *d)
{
	const struct ss_agg_node *rb = ss_agg_tree(d->b->agg);
	const struct ss_agg_node *ra = ss_agg_tree(d->a->agg);
	const struct ss_agg_node *c;
	double sum = 0, x = 0, nn = (double)(d->b->nsteps ? d->b->nsteps : 1);
	int h;

	for (c = rb ? rb->child : NULL; c; c = c->next)
		sum += (double)c->total_ns / nn;
	d->depth = rb ? ss_dh_depth(rb) - 1 : 0;
	if (d->depth < 0)
		d->depth = 0;
	h = (d->depth + 1) * SS_DH_FRAME;
	d->scale = sum > 0 ? SS_DH_WIDTH / sum : 0;
	fprintf(d->f, "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
		"viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
		SS_DH_WIDTH, h);
	for (c = rb ? rb->child : NULL; c; c = c->next) {
		ss_dh_frame(d, c, ss_dh_match(d, ra, c), x, 0);
		x += (double)c->total_ns / nn * d->scale;
	}
	fprintf(d->f, "</svg>\n");
}

/* One step's bar at x, its time v on a scale of `max` over height h; a
 * step past the scale is drawn to the top with a dark cap. */
static void ss_dh_bar(FILE *f, double x, double w, double v, double max, double top,
		      double h, const char *fill, const char *run, size_t i)
{
	double bh = fmin(v, max) / max * h;
	char t[32];

	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
		"<title>%s step %zu: %s%s</title></rect>\n", x, top + h - bh, w, bh, fill, run, i,
		ss_diff_fmt_time(v, t, sizeof(t)), v > max ? " (past the scale)" : "");
	if (v > max)
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"3\" fill=\"#222\"/>\n",
			x, top, w);
}

/* Both runs' step times, one pair of bars per step index (BASE grey-blue,
 * NEW orange), with their medians as lines.  The scale is the longest
 * step, but at most 3 times the larger median: one step the machine
 * preempted must not flatten all the others; longer ones are cut. */
static void ss_dh_steps(FILE *f, const struct ss_diff_run *a,
			const struct ss_diff_run *b, const struct ss_diff_stat *st)
{
	size_t n = a->nsteps > b->nsteps ? a->nsteps : b->nsteps, i;
	double max = 1, bw, h = 220, top = 10, cap = 3 * fmax(st->base, st->new_);
	char t[32];

	for (i = 0; i < a->nsteps; i++)
		max = fmax(max, (double)a->step_ns[i]);
	for (i = 0; i < b->nsteps; i++)
		max = fmax(max, (double)b->step_ns[i]);
	if (cap >= 1 && cap < max)
		max = cap;
	bw = n ? (double)(SS_DH_WIDTH - 60) / (double)n : 1;
	fprintf(f, "<svg id=\"steps\" xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
		"viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
		SS_DH_WIDTH, h + 30);
	for (i = 0; i < n; i++) {
		double x = 50 + (double)i * bw;
		if (i < a->nsteps)
			ss_dh_bar(f, x, bw * 0.45, (double)a->step_ns[i], max, top, h,
				  "#6b8fb5", "BASE", i);
		if (i < b->nsteps)
			ss_dh_bar(f, x + bw * 0.45, bw * 0.45, (double)b->step_ns[i], max, top, h,
				  "#e8833a", "NEW", i);
	}
	fprintf(f, "<line x1=\"50\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#1d4f80\" stroke-dasharray=\"4 3\"/>\n",
		SS_DH_WIDTH - 10, top + h - st->base / max * h, top + h - st->base / max * h);
	fprintf(f, "<line x1=\"50\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#b0500f\" stroke-dasharray=\"4 3\"/>\n",
		SS_DH_WIDTH - 10, top + h - st->new_ / max * h, top + h - st->new_ / max * h);
	fprintf(f, "<text x=\"2\" y=\"%.0f\">%s</text>\n", top + 4, ss_diff_fmt_time(max, t, sizeof(t)));
	fprintf(f, "<text x=\"2\" y=\"%.0f\">0</text>\n", top + h);
	fprintf(f, "<text x=\"50\" y=\"%.0f\" fill=\"#1d4f80\">BASE (median dashed)</text>"
		"<text x=\"250\" y=\"%.0f\" fill=\"#b0500f\">NEW (median dashed)</text>\n",
		top + h + 16, top + h + 16);
	fprintf(f, "</svg>\n");
}

static void ss_dh_run(FILE *f, const char *tag, const struct ss_diff_run *r)
{
	fprintf(f, "<li><b>%s</b> <code>", tag);
	ss_svg_text(f, r->dir);
	fprintf(f, "</code>: ");
	ss_svg_text(f, r->prog);
	fprintf(f, ", step.function ");
	ss_svg_text(f, r->stepfn[0] ? r->stepfn : "-");
	fprintf(f, ", %zu steps, %zu process%s, %zu thread%s</li>\n", r->nsteps, r->nprocs,
		r->nprocs == 1 ? "" : "es", r->nthreads, r->nthreads == 1 ? "" : "s");
}

void ss_diff_html_write(FILE *f, const struct ss_diff_run *a,
			const struct ss_diff_run *b, const struct ss_diff_opts *o,
			const struct ss_diff_stat *st,
			const struct ss_diff_row *rows, size_t nrows,
			const char *note)
{
	struct ss_dh d = { f, a, b, 0, 0, 0 };
	char t1[32], t2[32], t3[32], t4[32], t5[32], t6[32], t7[32], t8[32];
	size_t i, nr = ss_diff_ranked(rows, nrows), shown = nr < 40 ? nr : 40;

	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>stepscope diff: ");
	ss_svg_text(f, b->prog);
	fprintf(f, "</title>\n<style>\n"
		"body{font-family:sans-serif;margin:20px;color:#222}\n"
		"table{border-collapse:collapse;font-size:13px}\n"
		"td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}\n"
		"td:first-child,th:first-child{text-align:left;font-family:monospace}\n"
		"tr.sig td{font-weight:bold}\n"
		".up{color:#c0201a}.down{color:#1a4fc0}\n"
		"svg text{pointer-events:none}\n"
		"</style></head><body>\n<h1>stepscope diff: ");
	ss_svg_text(f, b->prog);
	fprintf(f, "</h1>\n<ul>\n");
	ss_dh_run(f, "BASE", a);
	ss_dh_run(f, "NEW", b);
	fprintf(f, "</ul>\n");
	if (note) {
		fprintf(f, "<p>note: ");
		ss_svg_text(f, note);
		fprintf(f, "</p>\n");
	}
	{ /* record.sched: what is compared, how busy each machine was */
		char busy[512];
		/* both recorded switches yet wall time: --wall */
		if (ss_diff_busy_line(busy, sizeof(busy), a, b, a->have_off && b->have_off)) {
			fprintf(f, "<p>");
			ss_svg_text(f, busy);
			fprintf(f, "</p>\n");
		}
	}
	fprintf(f, "<p id=\"step\">%s (median): <b>%s &rarr; %s</b>, <span class=\"%s\">%s %s</span>, "
		"%s (Mann-Whitney p=%.2g)</p>\n",
		a->oncpu && b->oncpu ? "Step on-CPU time (every thread's calls)" : "Step time",
		ss_diff_fmt_time(st->base, t1, sizeof(t1)), ss_diff_fmt_time(st->new_, t2, sizeof(t2)),
		st->delta > 0 ? "up" : "down", ss_diff_fmt_dt(st->delta, t3, sizeof(t3)),
		ss_diff_fmt_pct(st, t4, sizeof(t4)),
		st->significant ? "<b>significant</b>" : "not significant", st->p);

	fprintf(f, "<h2>Per function and range, per step</h2>\n<table id=\"diff\">\n"
		"<tr><th>Name</th><th>Calls/step</th><th>Self base</th><th>Self new</th>"
		"<th>+Self</th><th>+Self%%</th><th>Total base</th><th>Total new</th>"
		"<th>+Total</th><th>+Total%%</th><th>Sig</th></tr>\n");
	for (i = 0; i < shown; i++) {
		const struct ss_diff_row *r = &rows[i];
		char c1[32], c2[32];
		fprintf(f, "<tr%s><td>", r->self.significant ? " class=\"sig\"" : "");
		ss_svg_text(f, r->name);
		fprintf(f, "%s</td><td>%s&rarr;%s</td><td>%s</td><td>%s</td>"
			"<td class=\"%s\">%s</td><td class=\"%s\">%s</td><td>%s</td><td>%s</td>"
			"<td>%s</td><td>%s</td><td>%s</td></tr>\n",
			r->kind == SS_AGG_RANGE ? " [range]" : "",
			ss_diff_fmt_calls(r->calls_base, c1, sizeof(c1)),
			ss_diff_fmt_calls(r->calls_new, c2, sizeof(c2)),
			ss_diff_fmt_time(r->self.base, t1, sizeof(t1)), ss_diff_fmt_time(r->self.new_, t2, sizeof(t2)),
			r->self.delta > 0 ? "up" : "down", ss_diff_fmt_dt(r->self.delta, t3, sizeof(t3)),
			r->self.delta > 0 ? "up" : "down", ss_diff_fmt_pct(&r->self, t4, sizeof(t4)),
			ss_diff_fmt_time(r->total.base, t5, sizeof(t5)), ss_diff_fmt_time(r->total.new_, t6, sizeof(t6)),
			ss_diff_fmt_dt(r->total.delta, t7, sizeof(t7)), ss_diff_fmt_pct(&r->total, t8, sizeof(t8)),
			r->self.significant ? "*" : r->total.significant ? "(*)" : "");
	}
	fprintf(f, "</table>\n<p>Medians per step over the recorded steps (every thread); "
		"Calls/step is the mean.  *: the self time changed significantly measured by "
		"the functions that moved together (Mann-Whitney over the steps at BASE's machine "
		"speed, p &lt; %g, change &ge; %g%%); (*): only the total did.  "
		"%zu of %zu rows.</p>\n", o->alpha, o->min_pct, shown, nr);
	if (nr < nrows)
		fprintf(f, "<p>In one run only (not ranked: no change of the same code):</p>\n<ul>\n");
	for (i = nr; i < nrows && i < nr + 40; i++) {
		char c1[32];
		fprintf(f, "<li>%s <code>", rows[i].only < 0 ? "gone:" : "new:");
		ss_svg_text(f, rows[i].name);
		fprintf(f, "</code>%s (%s calls/step in %s)</li>\n",
			rows[i].kind == SS_AGG_RANGE ? " [range]" : "",
			ss_diff_fmt_calls(rows[i].only < 0 ? rows[i].calls_base : rows[i].calls_new,
					  c1, sizeof(c1)),
			rows[i].only < 0 ? "BASE" : "NEW");
	}
	if (nr < nrows)
		fprintf(f, "</ul>\n");

	fprintf(f, "<h2>Step times</h2>\n");
	ss_dh_steps(f, a, b, st);

	fprintf(f, "<h2>Differential flame graph</h2>\n<p>NEW's call tree, width = time per step; "
		"color = change of each frame's self time per step against BASE: "
		"<span class=\"up\">red grew</span>, <span class=\"down\">blue shrank</span>, "
		"grey within 2%% of the frame.  Hover a frame for its figures.</p>\n");
	ss_dh_flame(&d);
	fprintf(f, "</body></html>\n");
}
