/*
 * alloc-html.c - the HTML report's memory view of recorded allocations
 * (memory.allocations): live bytes over the recorded steps, one line per
 * process and kind (CPU: heap and pinned; CUDA: device and managed, one
 * line per device), with
 * a dashed line at each step's start, and the table of the functions that
 * allocated the most (Allocated, Allocs, Self CPU Mem, CPU Mem and the
 * CUDA pair when recorded).
 *
 * How: a second walk of the run (only when its config says
 * memory.allocations=true): alloc-report.c's exporter for the table, and
 * an exporter here whose alloc callback keeps each process's live bytes
 * at every record (the reader's rule: blocks allocated since the window
 * opened) and its steps.  The plot draws the highest value in each pixel
 * column, so a peak is never lost to the scale.
 *
 * Never: reference anything outside the page, print an unescaped name, or
 * show a view for a run without recorded allocations.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "alloc-html.h"
#include "alloc-read.h"
#include "alloc-report.h"
#include "run.h"
#include "svg.h"

#define W 1000
#define H 220
#define PAD_L 70
#define PAD_B 24
#define TOP_ROWS 20

struct pt {
	uint64_t ns, v;
};

struct line {
	uint64_t pid;
	int cuda;       /* -1: CPU memory, else CUDA memory of device cuda */
	struct pt *p;
	size_t n, cap;
};

struct series {
	struct ss_exporter ex;
	struct line *l;
	size_t nl;
	struct { uint64_t pid, step, ns; } *st;
	size_t nst;
	int oom;
};

static struct line *line_get(struct series *s, uint64_t pid, int cuda)
{
	for (size_t i = 0; i < s->nl; i++)
		if (s->l[i].pid == pid && s->l[i].cuda == cuda)
			return &s->l[i];
	void *p = realloc(s->l, (s->nl + 1) * sizeof(*s->l));
	if (!p)
		return NULL;
	s->l = p;
	memset(&s->l[s->nl], 0, sizeof(s->l[0]));
	s->l[s->nl].pid = pid;
	s->l[s->nl].cuda = cuda;
	return &s->l[s->nl++];
}

static int line_add(struct line *l, uint64_t ns, uint64_t v)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		void *p = realloc(l->p, cap * sizeof(*l->p));
		if (!p)
			return -1;
		l->p = p;
		l->cap = cap;
	}
	l->p[l->n].ns = ns;
	l->p[l->n].v = v;
	l->n++;
	return 0;
}

/* a space's line: -1 the CPU's (heap, pinned), else its CUDA device's */
static int line_key(uint64_t space)
{
	return ss_alloc_space_cuda(space) ? (int)(SS_SPACE_DEVICE(space) & 0xffff) : -1;
}

static void se_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct series *s = ctx;
	uint64_t last[SS_ALLOC_SPACES] = { 0 };
	for (size_t i = 0; i < d->nev && !s->oom; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		int si = ss_alloc_space_index(d, e->space), cuda = line_key(e->space);
		if (si < 0)
			continue;
		last[si] = e->live;
		uint64_t v = 0;
		for (size_t k = 0; k < d->nspaces; k++)
			if (line_key(d->spaces[k]) == cuda)
				v += last[k];
		struct line *l = line_get(s, pid, cuda);
		if (!l || line_add(l, e->ns, v))
			s->oom = 1;
	}
	void *p = realloc(s->st, (s->nst + d->nsteps + 1) * sizeof(*s->st));
	if (!p) {
		s->oom = 1;
		return;
	}
	s->st = p;
	for (size_t i = 0; i < d->nsteps; i++) {
		s->st[s->nst].pid = pid;
		s->st[s->nst].step = d->steps[i].step;
		s->st[s->nst].ns = d->steps[i].begin_ns;
		s->nst++;
	}
}

static void plot(FILE *f, const struct series *s)
{
	static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					      "#ff7f0e", "#8c564b" };
	uint64_t t0 = UINT64_MAX, t1 = 0, top = 1;
	char b[48];
	for (size_t i = 0; i < s->nl; i++)
		for (size_t k = 0; k < s->l[i].n; k++) {
			const struct pt *p = &s->l[i].p[k];
			t0 = p->ns < t0 ? p->ns : t0;
			t1 = p->ns > t1 ? p->ns : t1;
			top = p->v > top ? p->v : top;
		}
	for (size_t i = 0; i < s->nst; i++)
		t0 = s->st[i].ns < t0 ? s->st[i].ns : t0;
	if (t1 <= t0)
		t1 = t0 + 1;
	double span = (double)(t1 - t0), pw = W - PAD_L - 10, ph = H - PAD_B - 10;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n", W, H);
	fprintf(f, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%.0f\" stroke=\"#999\"/>"
		"<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\" stroke=\"#999\"/>\n",
		PAD_L, PAD_L, 10 + ph, PAD_L, 10 + ph, W - 10, 10 + ph);
	fprintf(f, "<text x=\"%d\" y=\"16\" text-anchor=\"end\">%s</text>"
		"<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">0</text>\n", PAD_L - 4,
		ss_alloc_fmt_bytes((int64_t)top, b, sizeof(b)), PAD_L - 4, 10 + ph);
	size_t every = s->nst > 40 ? (s->nst + 39) / 40 : 1;
	for (size_t i = 0; i < s->nst; i++) {
		double x = PAD_L + pw * (double)(s->st[i].ns - t0) / span;
		fprintf(f, "<line x1=\"%.1f\" y1=\"10\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#bbb\" "
			"stroke-dasharray=\"3,3\"><title>step %" PRIu64 " (pid %" PRIu64 ")</title>"
			"</line>\n", x, x, 10 + ph, s->st[i].step, s->st[i].pid);
		if (i % every == 0)
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#666\">%" PRIu64 "</text>\n",
				x + 2, H - 6, s->st[i].step);
	}
	int ncol = (int)pw + 1;
	double *cmax = malloc(ncol * sizeof(*cmax)), *cend = malloc(ncol * sizeof(*cend));
	for (size_t i = 0; cmax && cend && i < s->nl; i++) {
		const struct line *l = &s->l[i];
		/* the live bytes hold from one record to the next: per pixel
		 * column its highest value and the value it ends with */
		for (int c = 0; c < ncol; c++)
			cmax[c] = cend[c] = -1;
		for (size_t k = 0; k < l->n; k++) {
			int c = (int)(pw * (double)(l->p[k].ns - t0) / span);
			c = c < 0 ? 0 : c >= ncol ? ncol - 1 : c;
			if ((double)l->p[k].v > cmax[c])
				cmax[c] = (double)l->p[k].v;
			cend[c] = (double)l->p[k].v;
		}
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			colors[i % (sizeof(colors) / sizeof(colors[0]))]);
		double prev = 0, x = PAD_L;
		for (int c = 0; c < ncol; c++) {
			if (cmax[c] < 0)
				continue;
			x = PAD_L + c;
			fprintf(f, "%d,%.1f %d,%.1f %d,%.1f ", PAD_L + c, 10 + ph - ph * prev / (double)top,
				PAD_L + c, 10 + ph - ph * cmax[c] / (double)top, PAD_L + c,
				10 + ph - ph * cend[c] / (double)top);
			prev = cend[c];
		}
		fprintf(f, "%.0f,%.1f", x + 1, 10 + ph - ph * prev / (double)top);
		if (l->cuda >= 0)
			fprintf(f, "\"><title>CUDA memory cuda:%d, pid %" PRIu64 "</title></polyline>\n",
				l->cuda, l->pid);
		else
			fprintf(f, "\"><title>CPU memory, pid %" PRIu64 "</title></polyline>\n", l->pid);
	}
	free(cmax);
	free(cend);
	fprintf(f, "</svg>\n<p class=\"muted\">");
	for (size_t i = 0; i < s->nl; i++) {
		char what[48] = "CPU memory";
		if (s->l[i].cuda >= 0)
			snprintf(what, sizeof(what), "CUDA memory cuda:%d", s->l[i].cuda);
		fprintf(f, "%s<span style=\"color:%s\">&#9632;</span> %s, pid %" PRIu64, i ? " &nbsp; " : "",
			colors[i % (sizeof(colors) / sizeof(colors[0]))], what, s->l[i].pid);
	}
	fprintf(f, ". Dashed: the start of each recorded step (its number below).</p>\n");
}

static void table(FILE *f, const struct ss_alloc_report *m)
{
	const char *names[TOP_ROWS];
	const struct ss_alloc_fstat *st[TOP_ROWS];
	size_t n = ss_alloc_report_top(m, names, st, TOP_ROWS);
	int cuda = ss_alloc_report_have(m, 1);
	char b[6][48];
	fprintf(f, "<table><tr><th class=\"n\">Function</th><th>Allocated</th><th>Allocs</th>"
		"<th>Self CPU Mem</th><th>CPU Mem</th>%s</tr>\n",
		cuda ? "<th>Self CUDA Mem</th><th>CUDA Mem</th>" : "");
	for (size_t i = 0; i < n; i++) {
		fputs("<tr><td class=\"n\">", f);
		ss_svg_text(f, names[i]);
		fprintf(f, "</td><td>%s</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td>",
			ss_alloc_fmt_bytes((int64_t)(st[i]->alloc_bytes[0] + st[i]->alloc_bytes[1]),
					   b[0], sizeof(b[0])),
			st[i]->allocs[0] + st[i]->allocs[1],
			ss_alloc_fmt_bytes(st[i]->self[0], b[1], sizeof(b[1])),
			ss_alloc_fmt_bytes(st[i]->total[0], b[2], sizeof(b[2])));
		if (cuda)
			fprintf(f, "<td>%s</td><td>%s</td>",
				ss_alloc_fmt_bytes(st[i]->self[1], b[3], sizeof(b[3])),
				ss_alloc_fmt_bytes(st[i]->total[1], b[4], sizeof(b[4])));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

void ss_alloc_html(FILE *f, const char *dir, const char *backend)
{
	struct series s;
	struct ss_exporter *rep, *ex[2];
	char err[1024];

	if (!ss_run_traces_config_has(dir, "memory.allocations=true", 1) ||
	    !(rep = ss_alloc_report_new()))
		return;
	memset(&s, 0, sizeof(s));
	s.ex = (struct ss_exporter){ .ctx = &s, .alloc = se_alloc };
	ss_exporter_nops(&s.ex);
	ex[0] = rep;
	ex[1] = &s.ex;
	const struct ss_alloc_report *m = ss_alloc_report_of(rep);
	if (!ss_agg_walk(dir, backend, 1, ex, 2, err, sizeof(err)) && !s.oom && s.nl &&
	    !rep->end(rep->ctx, err, sizeof(err))) {
		fprintf(f, "<h2 id=\"allocations\">Recorded allocations</h2>\n<p class=\"muted\">"
			"memory.allocations: live bytes of the blocks allocated since the recording "
			"window opened (a free of an older block counts 0), at every allocation and "
			"free. Table: <code>stepscope report DIR</code>; leaks: <code>stepscope "
			"memory DIR --leaks</code>.</p>\n");
		plot(f, &s);
		fprintf(f, "<h3>Top allocating functions</h3>\n");
		table(f, m);
	}
	for (size_t i = 0; i < s.nl; i++)
		free(s.l[i].p);
	free(s.l);
	free(s.st);
	ss_exporter_free(rep);
}
