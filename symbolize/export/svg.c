/*
 * svg.c - flame graph, step bars and counter lines as SVG (see svg.h).
 *
 * Design: plain fprintf of absolute coordinates, no scripts, no external
 * fonts or links, so a file opens anywhere and works offline.  Frame
 * colors are a warm palette indexed by a hash of the function name, so a
 * function keeps its color across runs; user ranges are green, native
 * frames blue, the frame of each thread (the merged graph puts every
 * thread's calls under one) grey, and "ProfilerStep" (every recorded
 * step of a thread, above the calls inside them) lavender.
 *
 * Must never: emit unescaped names (they become XML text), or depend on
 * the order threads were read in (the tree's children are drawn sorted by
 * name).
 */
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define SS_SVG_FRAME_H 16
#define SS_SVG_MIN_W 0.1

void ss_svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, f);
		}
	}
}

static unsigned ss_svg_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static int ss_svg_depth(const struct ss_agg_node *n)
{
	int d = 0;

	for (; n; n = n->next) {
		int k = ss_svg_depth(n->child);
		int c = 1 + (k || !n->off_self_ns ? k : 1); /* an off-CPU frame above */
		if (c > d)
			d = c;
	}
	return d;
}

static int ss_svg_cmp_node(const void *x, const void *y, void *a)
{
	const struct ss_agg_node *p = *(const struct ss_agg_node *const *)x;
	const struct ss_agg_node *q = *(const struct ss_agg_node *const *)y;

	int c = strcmp(ss_agg_name(a, p->name), ss_agg_name(a, q->name));

	return c ? c : p->native - q->native;
}

struct ss_svg_flame {
	FILE *f;
	struct ss_agg *a;
	double scale;           /* px per ns */
	int height, pad;
	int base;               /* y of the bottom of the root frame */
	uint64_t all;
	size_t frames;
};

static void ss_svg_frame(struct ss_svg_flame *fl, const struct ss_agg_node *n,
			 double x, int depth)
{
	const struct ss_agg_node *c, **kids;
	const char *name = n->name == UINT32_MAX ? "all" : ss_agg_name(fl->a, n->name);
	double w = (double)n->total_ns * fl->scale;
	double y = fl->base - (depth + 1) * SS_SVG_FRAME_H;
	unsigned h = ss_svg_hash(name);
	size_t nk = 0, i;
	char t1[32], t2[32];

	if (w < SS_SVG_MIN_W)
		return;
	fl->frames++;
	fprintf(fl->f, "<g><title>");
	ss_svg_text(fl->f, name);
	fprintf(fl->f, " (%stotal %s, %.2f%%, self %s, %llu calls)</title>",
		n->native == SS_AGG_FRAME_NATIVE ? "no hooks, from native stacks: " :
		n->native == SS_AGG_FRAME_RANGE ? "range: " :
		n->native == SS_AGG_FRAME_THREAD ? "thread: " :
		n->native == SS_AGG_FRAME_STEP ? "every recorded step: " : "",
		ss_agg_fmt_time(n->total_ns, t1, sizeof(t1)),
		fl->all ? 100.0 * (double)n->total_ns / (double)fl->all : 0.0,
		ss_agg_fmt_time(n->self_ns, t2, sizeof(t2)),
		(unsigned long long)n->calls);
	if (n->native == SS_AGG_FRAME_THREAD)  /* a thread: grey */
		fprintf(fl->f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			x, y, w, SS_SVG_FRAME_H - 1, 200 + h % 30, 200 + h % 30, 200 + h % 30);
	else if (n->native == SS_AGG_FRAME_STEP)  /* the steps: lavender */
		fprintf(fl->f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(190,170,230)\" rx=\"2\"/>",
			x, y, w, SS_SVG_FRAME_H - 1);
	else if (n->native == SS_AGG_FRAME_RANGE)  /* user ranges: greens */
		fprintf(fl->f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			x, y, w, SS_SVG_FRAME_H - 1, 90 + h % 60, 190 + (h >> 8) % 50,
			90 + (h >> 16) % 50);
	else if (n->native)  /* library frames: a cool palette */
		fprintf(fl->f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			x, y, w, SS_SVG_FRAME_H - 1, 90 + h % 50, 150 + (h >> 8) % 60,
			200 + (h >> 16) % 50);
	else
		fprintf(fl->f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			x, y, w, SS_SVG_FRAME_H - 1, 205 + h % 50, 80 + (h >> 8) % 140,
			30 + (h >> 16) % 55);
	if (w > 30) {
		size_t maxc = (size_t)((w - 6) / 7), len = strlen(name);
		fprintf(fl->f, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + 11.5);
		if (len <= maxc) {
			ss_svg_text(fl->f, name);
		} else if (maxc > 2) {
			char *cut = strndup(name, maxc - 2);
			if (cut)
				ss_svg_text(fl->f, cut);
			fputs("..", fl->f);
			free(cut);
		}
		fputs("</text>", fl->f);
	}
	fputs("</g>\n", fl->f);
	for (c = n->child; c; c = c->next)
		nk++;
	kids = malloc((nk ? nk : 1) * sizeof(*kids));
	if (!kids)
		return;
	for (i = 0, c = n->child; c; c = c->next)
		kids[i++] = c;
	qsort_r(kids, nk, sizeof(*kids), ss_svg_cmp_node, fl->a);
	for (i = 0; i < nk; i++) {
		ss_svg_frame(fl, kids[i], x, depth + 1);
		x += (double)kids[i]->total_ns * fl->scale;
	}
	free(kids);
	/* record.sched: its Off-CPU Self, a grey frame above its self time
	 * (the time it was the innermost call and switched out) */
	if (n->off_self_ns && (double)n->off_self_ns * fl->scale >= SS_SVG_MIN_W) {
		fl->frames++;
		fprintf(fl->f, "<g><title>off-CPU: switched out while ");
		ss_svg_text(fl->f, name);
		fprintf(fl->f, " was the innermost call (%s, %.2f%%)</title>"
			"<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(175,175,175)\" rx=\"2\"/>",
			ss_agg_fmt_time(n->off_self_ns, t1, sizeof(t1)),
			fl->all ? 100.0 * (double)n->off_self_ns / (double)fl->all : 0.0, x,
			y - SS_SVG_FRAME_H, (double)n->off_self_ns * fl->scale, SS_SVG_FRAME_H - 1);
		if ((double)n->off_self_ns * fl->scale > 60)
			fprintf(fl->f, "<text x=\"%.2f\" y=\"%.0f\">off-CPU</text>", x + 3,
				y - SS_SVG_FRAME_H + 11.5);
		fprintf(fl->f, "</g>\n");
	}
}

/* The picture's opening: <svg>, background and the title centred on top. */
static void ss_svg_flame_head(FILE *f, int width, int height, const char *title,
			      int standalone)
{
	if (standalone)
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (standalone)
		fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
			width, height, width, height);
	else  /* in a page: as wide as the page, scaled by its viewBox */
		fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
			"viewBox=\"0 0 %d %d\" preserveAspectRatio=\"xMinYMin meet\" "
			"font-family=\"monospace\" font-size=\"11\">\n",
			width, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fdf8ee\"/>\n",
		width, height);
	fprintf(f, "<text x=\"%d\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">",
		width / 2);
	ss_svg_text(f, title);
	fprintf(f, "</text>\n");
}

size_t ss_svg_flame(FILE *f, struct ss_agg *a, int width, const char *title,
		    int standalone)
{
	const struct ss_agg_node *root = ss_agg_flame_tree(a);
	struct ss_svg_flame fl;
	int depth = root ? ss_svg_depth(root) : 1;

	memset(&fl, 0, sizeof(fl));
	fl.f = f;
	fl.a = a;
	fl.pad = 10;
	fl.height = depth * SS_SVG_FRAME_H + 2 * fl.pad + 24;
	fl.base = fl.height - fl.pad;
	fl.all = root ? root->total_ns : 0;
	fl.scale = fl.all ? (double)(width - 20) / (double)fl.all : 0;
	ss_svg_flame_head(f, width, fl.height, title ? title : "Flame graph", standalone);
	if (root && fl.all) {
		fprintf(f, "<g transform=\"translate(10,0)\">\n");
		ss_svg_frame(&fl, root, 0, 0);
		fprintf(f, "</g>\n");
	} else {
		fprintf(f, "<text x=\"10\" y=\"40\">no function slices recorded</text>\n");
	}
	fprintf(f, "</svg>\n");
	return fl.frames;
}

#define SS_SVG_HEAD_H 22     /* a thread's heading */

size_t ss_svg_flame_threads(FILE *f, struct ss_agg *a, int width, const char *title,
			    int standalone)
{
	struct ss_agg_thread_tree *tt;
	size_t n = ss_agg_flame_threads(a, &tt), i;
	struct ss_svg_flame fl;
	int y;
	char t1[32];

	memset(&fl, 0, sizeof(fl));
	fl.f = f;
	fl.a = a;
	fl.pad = 10;
	fl.height = 24 + fl.pad;
	for (i = 0; i < n; i++)
		fl.height += SS_SVG_HEAD_H + ss_svg_depth(tt[i].root) * SS_SVG_FRAME_H +
			     fl.pad;
	if (!n)
		fl.height += 30;
	ss_svg_flame_head(f, width, fl.height, title ? title : "Flame graphs by thread",
			  standalone);
	if (!n)
		fprintf(f, "<text x=\"10\" y=\"40\">no function slices recorded</text>\n");
	y = 24;
	for (i = 0; i < n; i++) {
		int depth = ss_svg_depth(tt[i].root);
		char who[160];
		snprintf(who, sizeof(who), "%s (pid %llu, tid %llu)",
			 tt[i].thread ? tt[i].thread : "thread",
			 (unsigned long long)tt[i].pid, (unsigned long long)tt[i].tid);
		fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"12\">", y + 15);
		ss_svg_text(f, who);
		fprintf(f, ": %s</text>\n",
			ss_agg_fmt_time(tt[i].root->total_ns, t1, sizeof(t1)));
		y += SS_SVG_HEAD_H + depth * SS_SVG_FRAME_H;
		fl.all = tt[i].root->total_ns;
		fl.scale = fl.all ? (double)(width - 20) / (double)fl.all : 0;
		fl.base = y;
		if (fl.all) {
			fprintf(f, "<g transform=\"translate(10,0)\">\n");
			ss_svg_frame(&fl, tt[i].root, 0, 0);
			fprintf(f, "</g>\n");
		}
		y += fl.pad;
	}
	fprintf(f, "</svg>\n");
	free(tt);
	return fl.frames;
}

size_t ss_svg_steps(FILE *f, struct ss_agg *a, int width, int height)
{
	const struct ss_agg_step *st;
	size_t n = ss_agg_steps(a, &st), i;
	uint64_t max = 0;
	double bw;
	int left = 70, bottom = 24, plot_h = height - bottom - 10;
	char t[32];

	for (i = 0; i < n; i++)
		if (st[i].end_ns - st[i].begin_ns > max)
			max = st[i].end_ns - st[i].begin_ns;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n", width, height);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#ccc\"/>\n",
		width, height);
	if (!n || !max) {
		fprintf(f, "<text x=\"10\" y=\"20\">no recorded steps</text></svg>\n");
		return 0;
	}
	/* one slot per step, and an empty one between schedule cycles */
	{
		size_t slots = n, g0 = 0;
		double x;
		for (i = 1; i < n; i++)
			slots += st[i].cycle != st[i - 1].cycle;
		bw = (double)(width - left - 10) / (double)slots;
		fprintf(f, "<text x=\"4\" y=\"16\">%s</text>\n",
			ss_agg_fmt_time(max, t, sizeof(t)));
		fprintf(f, "<text x=\"4\" y=\"%d\">0</text>\n", 10 + plot_h);
		x = left;
		for (i = 0; i < n; i++) {
			uint64_t d = st[i].end_ns - st[i].begin_ns;
			double h = (double)plot_h * (double)d / (double)max;
			if (i && st[i].cycle != st[i - 1].cycle)
				x += bw;
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"%s\"><title>step %llu (cycle %u, pid %llu): %s</title></rect>\n",
				x, 10 + plot_h - h, bw > 2 ? bw - 1 : bw, h,
				st[i].cycle % 2 ? "#6a8fd4" : "#3b6bc7",
				(unsigned long long)st[i].step, st[i].cycle,
				(unsigned long long)st[i].pid, ss_agg_fmt_time(d, t, sizeof(t)));
			if (bw >= 16)  /* room for each step's number */
				fprintf(f, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" "
					"font-size=\"10\">%llu</text>\n", x + bw / 2, 10 + plot_h + 11,
					(unsigned long long)st[i].step);
			x += bw;
			/* a cycle ends: its label under its bars */
			if (i + 1 == n || st[i + 1].cycle != st[i].cycle) {
				double gx = x - bw * (double)(i + 1 - g0);
				fprintf(f, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\">cycle %u: "
					"steps %llu..%llu</text>\n", gx, height - 4,
					st[i].cycle, (unsigned long long)st[g0].step,
					(unsigned long long)st[i].step);
				g0 = i + 1;
			}
		}
	}
	fprintf(f, "</svg>\n");
	return n;
}

size_t ss_svg_stacked(FILE *f, const char *id, size_t nbars, size_t nseg, const uint64_t *v,
		      const char *const *colors, const char *const *labels, ss_svg_tip_fn tip,
		      void *ctx, int width, int height)
{
	uint64_t max = 0;
	int left = 70, bottom = 24, plot_h = height - bottom - 10;
	double bw, base = 10 + plot_h;
	size_t i, j;
	char t[32];

	for (i = 0; i < nbars; i++) {
		uint64_t s = 0;
		for (j = 0; j < nseg; j++)
			s += v[i * nseg + j];
		if (s > max)
			max = s;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"stack\" "
		"width=\"100%%\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
		"font-size=\"11\">\n", id, width, height);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#ccc\"/>\n",
		width, height);
	if (!nbars || !max) {
		fprintf(f, "<text x=\"10\" y=\"20\">no recorded steps</text></svg>\n");
		return 0;
	}
	bw = (double)(width - left - 10) / (double)nbars;
	fprintf(f, "<text x=\"4\" y=\"16\">%s</text>\n", ss_agg_fmt_time(max, t, sizeof(t)));
	fprintf(f, "<text x=\"4\" y=\"%d\">0</text>\n", 10 + plot_h);
	for (i = 0; i < nbars; i++) {
		double x = left + bw * (double)i, y = base;
		for (j = 0; j < nseg; j++) {
			double h = (double)plot_h * (double)v[i * nseg + j] / (double)max;
			if (!v[i * nseg + j])
				continue;
			y -= h;
			fprintf(f, "<rect class=\"seg\" data-bar=\"%zu\" data-seg=\"%zu\" "
				"x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"%s\"><title>", i, j, x, y, bw > 2 ? bw - 1 : bw, h,
				colors[j]);
			tip(f, ctx, i, j);
			fprintf(f, "</title></rect>\n");
		}
		if (labels && bw >= 16) {  /* room for the bar's label */
			fprintf(f, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" "
				"font-size=\"10\">", x + bw / 2, 10 + plot_h + 11);
			ss_svg_text(f, labels[i]);
			fprintf(f, "</text>\n");
		}
	}
	fprintf(f, "</svg>\n");
	return nbars;
}

size_t ss_svg_counters(FILE *f, struct ss_agg *a, int width, int height)
{
	static const char *const colors[] = { "#c0392b", "#2980b9", "#27ae60",
					      "#8e44ad", "#d35400", "#16a085" };
	const struct ss_agg_counter *c;
	size_t n = ss_agg_counters(a, &c), i, j, drawn = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	double vmax = 0;
	int left = 70, plot_w = width - left - 10, plot_h = height - 40;
	char t[32];

	for (i = 0; i < n; i++)
		for (j = 0; j < c[i].n; j++) {
			if (c[i].ns[j] < t0)
				t0 = c[i].ns[j];
			if (c[i].ns[j] > t1)
				t1 = c[i].ns[j];
			if (c[i].value[j] > vmax)
				vmax = c[i].value[j];
		}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n", width, height);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#ccc\"/>\n",
		width, height);
	if (!n || vmax <= 0) {
		fprintf(f, "<text x=\"10\" y=\"20\">no memory counters recorded</text></svg>\n");
		return 0;
	}
	fprintf(f, "<text x=\"4\" y=\"16\">%.1f MiB</text>\n", vmax / 1048576.0);
	fprintf(f, "<text x=\"4\" y=\"%d\">0</text>\n", 10 + plot_h);
	for (i = 0; i < n; i++) {
		const char *col = colors[i % 6];
		double span = t1 > t0 ? (double)(t1 - t0) : 1;
		if (!c[i].n)
			continue;
		/* earlier lines wider and paler under later ones: two series with
		 * equal values (current and peak RSS) both stay visible */
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" "
			"stroke-opacity=\"%.2f\"%s stroke-linejoin=\"round\" points=\"", col,
			1.5 + 3.0 * (double)(n - 1 - i) / (double)(n > 1 ? n - 1 : 1),
			i + 1 < n ? 0.55 : 1.0, i ? " stroke-dasharray=\"7 4\"" : "");
		for (j = 0; j < c[i].n; j++) {
			double x = left + plot_w * (double)(c[i].ns[j] - t0) / span;
			double y = 10 + plot_h - plot_h * c[i].value[j] / vmax;
			/* a value holds until the next sample: draw steps */
			if (j)
				fprintf(f, "%.1f,%.1f ", x,
					10 + plot_h - plot_h * c[i].value[j - 1] / vmax);
			fprintf(f, "%.1f,%.1f ", x, y);
		}
		fprintf(f, "\"><title>");
		ss_svg_text(f, c[i].name);
		fprintf(f, " (pid %llu)</title></polyline>\n", (unsigned long long)c[i].pid);
		fprintf(f, "<text x=\"%zu\" y=\"%d\" fill=\"%s\">", left + drawn * 150,
			height - 8, col);
		ss_svg_text(f, c[i].name);
		fprintf(f, "</text>\n");
		drawn++;
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", width - 10,
		height - 22, ss_agg_fmt_time(t1 - t0, t, sizeof(t)));
	fprintf(f, "</svg>\n");
	return drawn;
}
