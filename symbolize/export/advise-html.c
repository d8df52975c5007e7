/*
 * advise-html.c - the "Overview" section of `stepscope html` (see
 * advise-html.h): where each recorded step's time went, as one stacked
 * bar per step (svg.c) with a fixed colour per category and a legend, the
 * mean per step as a table, and the findings of `stepscope advise`,
 * ranked by the time they would save, each with its evidence, advice,
 * how the saving was computed, and links to the rows it names.
 *
 * Design: reads a finished struct ss_adv_result only (ss_adv_build does
 * the judging), so a hand-filled one renders the same way; numbers show
 * on hover through SVG <title> tips, no script.  Row ids come from the
 * name alone (ss_adv_html_row_id) so html.c's table and these links agree
 * without sharing any state.
 *
 * Must never: print an unescaped name or text of a finding, link to a row
 * the page does not have, or leave the page invalid for a run without
 * steps or findings.
 */
#include <stdlib.h>
#include <string.h>

#include "advise-html.h"
#include "svg.h"

/* Tableau 10: told apart by most eyes, and exact in a screenshot (solid
 * fills), which is how tests/e2e/test-html-overview.c finds the bars. */
static const char *const ss_adv_html_colors[SS_ADV_NCAT] = {
	[SS_ADV_OPS] = "#4e79a7",       [SS_ADV_OMP_WAIT] = "#f28e2b",
	[SS_ADV_PREEMPTED] = "#e15759", [SS_ADV_BLOCKED] = "#76b7b2",
	[SS_ADV_ALLOC] = "#59a14f",     [SS_ADV_HOOKS] = "#edc948",
	[SS_ADV_GPU_WAIT] = "#b07aa1",  [SS_ADV_GPU_API] = "#ff9da7",
};

const char *ss_adv_html_color(enum ss_adv_cat c)
{
	return c < SS_ADV_NCAT ? ss_adv_html_colors[c] : "#bab0ac";
}

void ss_adv_html_row_id(FILE *f, const char *name)
{
	fputs("row-", f);
	for (; *name; name++) {
		unsigned char ch = (unsigned char)*name;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-')
			fputc(ch, f);
		else
			fprintf(f, ".%02x", ch);
	}
}

int ss_adv_html_named(const struct ss_adv_result *r, const char *name)
{
	size_t i;
	int j;

	for (i = 0; r && i < r->found.n; i++)
		for (j = 0; j < r->found.v[i].nfuncs && j < SS_ADV_FUNCS; j++)
			if (!strcmp(r->found.v[i].funcs[j], name))
				return 1;
	return 0;
}

struct ss_adv_html_bars {
	const struct ss_adv_run *run;
	const size_t *pick;           /* bar -> step index */
};

/* A segment's tip: the step, the category, its time and share; for the
 * operators, the largest three. */
static void ss_adv_html_tip(FILE *f, void *ctx, size_t bar, size_t seg)
{
	const struct ss_adv_html_bars *b = ctx;
	const struct ss_adv_step *s = &b->run->steps[b->pick[bar]];
	uint64_t d = s->end_ns - s->begin_ns;
	char t[2][32];
	size_t i;

	fprintf(f, "step %llu (pid %llu, tid %llu): %s %s = %.1f%% of %s",
		(unsigned long long)s->step, (unsigned long long)s->pid,
		(unsigned long long)s->tid, ss_adv_cat_name((enum ss_adv_cat)seg),
		ss_agg_fmt_time(s->cat[seg], t[0], 32),
		d ? 100.0 * (double)s->cat[seg] / (double)d : 0.0,
		ss_agg_fmt_time(d, t[1], 32));
	if (seg != SS_ADV_OPS || !s->nop)
		return;
	fputs("; top: ", f);
	for (i = 0; i < s->nop && i < 3; i++) {
		fputs(i ? ", " : "", f);
		ss_svg_text(f, s->op[i].name ? s->op[i].name : "?");
		fprintf(f, " %s", ss_agg_fmt_time(s->op[i].ns, t[0], 32));
	}
}

static void ss_adv_html_bars(FILE *f, const struct ss_adv_run *run)
{
	size_t n = run->nsteps, every = (n + SS_ADV_HTML_BARS - 1) / SS_ADV_HTML_BARS;
	size_t nb = every ? (n + every - 1) / every : 0, i, c;
	uint64_t *v = calloc(nb ? nb * SS_ADV_NCAT : 1, sizeof(*v));
	size_t *pick = calloc(nb ? nb : 1, sizeof(*pick));
	char (*lab)[24] = calloc(nb ? nb : 1, sizeof(*lab));
	const char **labels = calloc(nb ? nb : 1, sizeof(*labels));
	struct ss_adv_html_bars b = { run, pick };

	if (!v || !pick || !lab || !labels) {
		fprintf(f, "<p class=\"warn\">out of memory drawing the step bars</p>\n");
		goto out;
	}
	for (i = 0; i < nb; i++) {
		const struct ss_adv_step *s = &run->steps[i * every];
		pick[i] = i * every;
		for (c = 0; c < SS_ADV_NCAT; c++)
			v[i * SS_ADV_NCAT + c] = s->cat[c];
		snprintf(lab[i], sizeof(lab[i]), "%llu", (unsigned long long)s->step);
		labels[i] = lab[i];
	}
	ss_svg_stacked(f, "overview-bars", nb, SS_ADV_NCAT, v, ss_adv_html_colors, labels,
		       ss_adv_html_tip, &b, 1000, 220);
	if (every > 1)
		fprintf(f, "<p class=\"muted\">%zu steps: every %zu-th is drawn (%zu bars); "
			"the table is over all of them.</p>\n", n, every, nb);
	fprintf(f, "<p id=\"legend\">");
	for (c = 0; c < SS_ADV_NCAT; c++)
		if (ss_adv_cat_shown(run, (enum ss_adv_cat)c))
			fprintf(f, "<span class=\"key\"><span class=\"sw\" style=\"background:%s\">"
				"</span>%s</span> ", ss_adv_html_colors[c],
				ss_adv_cat_name((enum ss_adv_cat)c));
	fprintf(f, "</p>\n");
out:
	free(v);
	free(pick);
	free(lab);
	free(labels);
}

static void ss_adv_html_table(FILE *f, const struct ss_adv_run *run)
{
	uint64_t sum = 0;
	char t[32];
	size_t c;

	for (c = 0; c < SS_ADV_NCAT; c++)
		sum += run->cat_mean[c];
	fprintf(f, "<table id=\"breakdown\"><tr><th class=\"n\">Category</th>"
		"<th>Mean per step</th><th>Share</th></tr>\n");
	for (c = 0; c < SS_ADV_NCAT; c++) {
		if (!ss_adv_cat_shown(run, (enum ss_adv_cat)c))
			continue;
		fprintf(f, "<tr id=\"cat-%s\"><td class=\"n\"><span class=\"sw\" "
			"style=\"background:%s\"></span>%s</td>", ss_adv_cat_key((enum ss_adv_cat)c),
			ss_adv_html_colors[c], ss_adv_cat_name((enum ss_adv_cat)c));
		fprintf(f, "<td>%s</td><td>%.1f%%</td></tr>\n",
			ss_agg_fmt_time(run->cat_mean[c], t, sizeof(t)),
			sum ? 100.0 * (double)run->cat_mean[c] / (double)sum : 0.0);
	}
	fprintf(f, "<tr><th class=\"n\">step (mean)</th><th>%s</th><th>100%%</th></tr>\n"
		"</table>\n", ss_agg_fmt_time(sum, t, sizeof(t)));
	if (!run->have_offcpu)
		fprintf(f, "<p class=\"muted\">record.sched was off: time off the CPU is not "
			"known and counts as operators (docs/config.md).</p>\n");
}

static void ss_adv_html_finding(FILE *f, const struct ss_adv_finding *x, size_t rank,
				uint64_t median, ss_adv_html_row_fn has_row, void *ctx)
{
	char t[3][32];
	int j;

	fprintf(f, "<li id=\"finding-%zu\" class=\"finding\"><b>", rank);
	ss_svg_text(f, x->title);
	fprintf(f, "</b> <span class=\"muted\">(");
	ss_svg_text(f, x->check ? x->check : "?");
	fprintf(f, ")</span><br>Saves about <b>%s</b> per step",
		ss_agg_fmt_time(x->save_ns > 0 ? (uint64_t)x->save_ns : 0, t[0], 32));
	if (x->save_lo != x->save_hi)
		fprintf(f, " (%s to %s)",
			ss_agg_fmt_time(x->save_lo > 0 ? (uint64_t)x->save_lo : 0, t[1], 32),
			ss_agg_fmt_time(x->save_hi > 0 ? (uint64_t)x->save_hi : 0, t[2], 32));
	if (median)
		fprintf(f, ", %.1f%% of the median step", 100.0 * x->save_ns / (double)median);
	fprintf(f, ".\n<p class=\"ev\">");
	ss_svg_text(f, x->evidence);
	fprintf(f, "</p>\n<p class=\"adv\"><b>What to do:</b> ");
	ss_svg_text(f, x->advice);
	fprintf(f, "</p>\n");
	if (x->how[0]) {
		fprintf(f, "<p class=\"muted\">Saving: ");
		ss_svg_text(f, x->how);
		fprintf(f, "</p>\n");
	}
	if (x->nfuncs > 0) {
		fprintf(f, "<p class=\"funcs\">Functions:");
		for (j = 0; j < x->nfuncs && j < SS_ADV_FUNCS; j++) {
			const char *n = x->funcs[j];
			fputs(j ? ", " : " ", f);
			if (has_row && has_row(ctx, n)) {
				fprintf(f, "<a href=\"#");
				ss_adv_html_row_id(f, n);
				fprintf(f, "\"><code>");
				ss_svg_text(f, n);
				fprintf(f, "</code></a>");
			} else {
				fprintf(f, "<code>");
				ss_svg_text(f, n);
				fprintf(f, "</code>");
			}
		}
		fprintf(f, "</p>\n");
	}
	fprintf(f, "</li>\n");
}

/* What every built-in check judged: nothing found, or why it could not. */
static void ss_adv_html_checks(FILE *f, const struct ss_adv_result *r)
{
	size_t i, k;

	fprintf(f, "<p class=\"muted\">What each check judged:</p>\n"
		"<ul id=\"checks\" class=\"muted\">\n");
	for (i = 0; i < r->nchecks && i < ss_adv_nchecks; i++) {
		const struct ss_adv_check *c = ss_adv_checks[i];
		size_t nf = 0;
		if (!c)
			continue;
		for (k = 0; k < r->found.n; k++)
			nf += r->found.v[k].check && !strcmp(r->found.v[k].check, c->name);
		fprintf(f, "<li><code>");
		ss_svg_text(f, c->name);
		fprintf(f, "</code>: ");
		if (r->status && r->status[i]) {
			fprintf(f, "not judged: ");
			ss_svg_text(f, r->why ? r->why[i] : "");
		} else if (nf) {
			fprintf(f, "%zu finding%s", nf, nf == 1 ? "" : "s");
		} else {
			fprintf(f, "nothing found (");
			ss_svg_text(f, c->looks_at ? c->looks_at : "");
			fprintf(f, ")");
		}
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
}

void ss_adv_html(FILE *f, const struct ss_adv_result *r, ss_adv_html_row_fn has_row,
		 void *ctx)
{
	const struct ss_adv_run *run = &r->run;
	char t[32];
	size_t i;

	fprintf(f, "<h2 id=\"overview\">Overview</h2>\n");
	if (!run->nsteps) {
		fprintf(f, "<p id=\"no-steps\">No recorded steps: nothing to split. Name the "
			"step function (<code>step.function</code>, docs/config.md) or mark "
			"steps with <code>stepscope_step()</code>.</p>\n");
	} else {
		fprintf(f, "<p>%zu recorded step%s, median %s. Each bar is one step, split "
			"into where its time went; hover a segment for its numbers.</p>\n",
			run->nsteps, run->nsteps == 1 ? "" : "s",
			ss_agg_fmt_time(run->median_step_ns, t, sizeof(t)));
		ss_adv_html_bars(f, run);
		ss_adv_html_table(f, run);
	}
	fprintf(f, "<h3>Findings</h3>\n");
	if (!r->found.n) {
		fprintf(f, "<p id=\"no-findings\">Nothing found: no check predicts a saving "
			"in this run.</p>\n");
	} else {
		fprintf(f, "<p class=\"muted\">Ranked by the time each would save per step, "
			"computed from this run (docs/advise.md says how, per check); "
			"<code>stepscope advise</code> prints the same.</p>\n<ol id=\"findings\">\n");
		for (i = 0; i < r->found.n; i++)
			ss_adv_html_finding(f, &r->found.v[i], i + 1, run->median_step_ns, has_row,
					    ctx);
		fprintf(f, "</ol>\n");
	}
	ss_adv_html_checks(f, r);
}
