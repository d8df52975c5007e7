/*
 * memory.c - `stepscope memory DIR [-o OUT.svg]`: plot the memory a run
 * used, per device (host, cuda:N), and say when it looks like a leak.
 *
 * Design: two sources, both written by the runtime's memory poller
 * (docs/memory.md).  memory_profile*.json (one per process, parsed with
 * cJSON) gives current and peak bytes per device at every
 * memory.every_n_steps-th step: the "over steps" panel.  The SS_META_COUNTER
 * records of the raw traces give every sample with its time: the "over
 * time" panel.  The output is one self-contained SVG (no scripts, fonts or
 * links).  A device whose bytes in use rose at almost every one of the last
 * entries gets a one-line hint on stderr, the seeds' "memory leak" symptom.
 *
 * Must never: write into DIR anything but the SVG asked for, or exit 0 when
 * DIR holds no memory data (exit 2, one line).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cmds.h"
#include "memory-leaks.h"
#include "outfile.h"
#include "reader.h"
#include "run.h"
#include "util.h"

#define SS_MEMPLOT_W 960
#define SS_MEMPLOT_PANEL_H 340
#define SS_MEMPLOT_LEAK_WINDOW 10  /* entries looked at for the hint */

/* One line of a panel: x ascending. */
struct ss_memplot_series {
	char name[96];              /* "host", "cuda:0", "host.rss" ... */
	uint64_t pid;
	int peak;                   /* drawn dashed */
	double *x, *y;
	size_t n, cap;
};

struct ss_memplot {
	struct ss_memplot_series *steps;  /* from memory_profile*.json */
	size_t nsteps, capsteps;
	struct ss_memplot_series *time;   /* from counter records, x in s */
	size_t ntime, captime;
	size_t nprofiles;                 /* processes with a profile */
	size_t ntraces;                   /* processes with counter records */
};

static struct ss_memplot_series *ss_memplot_get(struct ss_memplot_series **v,
						size_t *n, size_t *cap,
						uint64_t pid, const char *name,
						int peak)
{
	struct ss_memplot_series *s;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i].pid == pid && (*v)[i].peak == peak &&
		    !strcmp((*v)[i].name, name))
			return &(*v)[i];
	if (ss_grow((void **)v, cap, *n, sizeof(**v), 8))
		return NULL;
	s = &(*v)[(*n)++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->pid = pid;
	s->peak = peak;
	return s;
}

static int ss_memplot_add(struct ss_memplot_series *s, double x, double y)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		double *nx = realloc(s->x, nc * sizeof(double));
		double *ny;
		if (!nx)
			return -1;
		s->x = nx;
		ny = realloc(s->y, nc * sizeof(double));
		if (!ny)
			return -1;
		s->y = ny;
		s->cap = nc;
	}
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->n++;
	return 0;
}

static void ss_memplot_free(struct ss_memplot *mp)
{
	size_t i;

	for (i = 0; i < mp->nsteps; i++) {
		free(mp->steps[i].x);
		free(mp->steps[i].y);
	}
	for (i = 0; i < mp->ntime; i++) {
		free(mp->time[i].x);
		free(mp->time[i].y);
	}
	free(mp->steps);
	free(mp->time);
}

/* ------------------------------------------------------------ reading */

/* Parse one memory_profile.json text.  0, or -1 with err (not an array). */
static int ss_memplot_parse_profile(struct ss_memplot *mp, const char *text,
				    const char *path, char *err, size_t errlen)
{
	cJSON *root = cJSON_Parse(text), *e;
	int any = 0;

	if (!cJSON_IsArray(root)) {
		snprintf(err, errlen, "%s: not a memory profile (a JSON array of entries expected)",
			 path);
		cJSON_Delete(root);
		return -1;
	}
	cJSON_ArrayForEach(e, root) {
		cJSON *step = cJSON_GetObjectItemCaseSensitive(e, "step");
		cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
		cJSON *mem = cJSON_GetObjectItemCaseSensitive(e, "memory"), *d;
		if (!cJSON_IsNumber(step) || !cJSON_IsObject(mem))
			continue;
		cJSON_ArrayForEach(d, mem) {
			cJSON *cur = cJSON_GetObjectItemCaseSensitive(d, "bytes_in_use");
			cJSON *peak = cJSON_GetObjectItemCaseSensitive(d, "peak_bytes_in_use");
			uint64_t p = cJSON_IsNumber(pid) ? (uint64_t)pid->valuedouble : 0;
			struct ss_memplot_series *s;
			if (!d->string || !cJSON_IsNumber(cur))
				continue;
			s = ss_memplot_get(&mp->steps, &mp->nsteps, &mp->capsteps, p,
					   d->string, 0);
			if (!s || ss_memplot_add(s, step->valuedouble, cur->valuedouble))
				goto oom;
			any = 1;
			if (!cJSON_IsNumber(peak))
				continue;
			s = ss_memplot_get(&mp->steps, &mp->nsteps, &mp->capsteps, p,
					   d->string, 1);
			if (!s || ss_memplot_add(s, step->valuedouble, peak->valuedouble))
				goto oom;
		}
	}
	mp->nprofiles += any;
	cJSON_Delete(root);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	cJSON_Delete(root);
	return -1;
}

static char *ss_memplot_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
		size_t got = fread(buf, 1, (size_t)n, f);
		buf[got] = 0;
	}
	fclose(f);
	return buf;
}

/* Counter records of one trace; x is ns for now (made relative later). */
static int ss_memplot_read_trace(struct ss_memplot *mp, const char *path)
{
	char err[512];
	struct ss_reader *r = ss_reader_open(path, err, sizeof(err));
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	int any = 0;

	if (!r) {
		fprintf(stderr, "stepscope: warning: %s\n", err);
		return 0;
	}
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_counter c;
		struct ss_memplot_series *s;
		size_t l;
		if (m.type != SS_META_COUNTER || m.len < sizeof(c))
			continue;
		memcpy(&c, m.data, sizeof(c));
		c.track[sizeof(c.track) - 1] = 0;
		l = strlen(c.track);
		if (l > 6 && !strcmp(c.track + l - 6, ".total"))
			continue; /* a device's size: a flat line that hides the rest */
		s = ss_memplot_get(&mp->time, &mp->ntime, &mp->captime, r->hdr.pid,
				   c.track, l > 5 && !strcmp(c.track + l - 5, "_peak"));
		if (!s || ss_memplot_add(s, (double)ss_reader_ns(r, m.ts),
					 (double)c.value)) {
			ss_reader_free(r);
			return -1;
		}
		any = 1;
	}
	mp->ntraces += any;
	ss_reader_free(r);
	return 0;
}

/* memory_profile*.json and raw traces, and a few more looked at below */
static int ss_memplot_match(const char *name)
{
	return !strncmp(name, "memory_profile", 14) || strstr(name, SS_FILE_SUFFIX);
}

/* Everything of run directory `dir`: 0, or 2 with err. */
static int ss_memplot_load(struct ss_memplot *mp, const char *dir, char *err,
			   size_t errlen)
{
	char **paths;
	size_t n, i;
	double t0 = 0;
	int rc = 0;

	if (ss_run_list(dir, ss_memplot_match, &paths, &n)) {
		snprintf(err, errlen, "%s: %s", dir,
			 errno == ENOENT ? "no such directory" : strerror(errno));
		return 2;
	}
	for (i = 0; i < n && !rc; i++) {
		const char *path = paths[i], *name = path + strlen(dir) + 1;
		size_t l = strlen(name);
		if (!strncmp(name, "memory_profile", 14) && l > 5 &&
		    !strcmp(name + l - 5, ".json")) {
			char *text = ss_memplot_slurp(path);
			if (text && ss_memplot_parse_profile(mp, text, path, err, errlen))
				rc = 2;
			free(text);
		} else if (ss_run_is_trace(name)) {
			if (ss_memplot_read_trace(mp, path)) {
				snprintf(err, errlen, "out of memory");
				rc = 1;
			}
		}
	}
	ss_run_list_free(paths, n);
	if (rc)
		return rc;
	/* time relative to the first sample of the run, in seconds */
	for (i = 0; i < mp->ntime; i++)
		if (mp->time[i].n && (!t0 || mp->time[i].x[0] < t0))
			t0 = mp->time[i].x[0];
	for (i = 0; i < mp->ntime; i++)
		for (size_t j = 0; j < mp->time[i].n; j++)
			mp->time[i].x[j] = (mp->time[i].x[j] - t0) / 1e9;
	if (!mp->nsteps && !mp->ntime) {
		snprintf(err, errlen,
			 "%s: no memory data (no memory_profile.json, no memory samples in the traces); record with --set memory.enabled=true",
			 dir);
		return 2;
	}
	return 0;
}

/* ------------------------------------------------------------ the hint */

/* "41 MiB": bytes in a unit a person reads at a glance. */
static void ss_memplot_fmt_bytes(double b, char *buf, size_t len)
{
	if (b < 1024.0 * 1024)
		snprintf(buf, len, "%.0f KiB", b / 1024);
	else if (b < 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.0f MiB", b / (1024.0 * 1024));
	else
		snprintf(buf, len, "%.1f GiB", b / (1024.0 * 1024 * 1024));
}

/* The leak hint for one series of bytes in use, or 0 if it looks fine:
 * over the last (up to) 10 changes from entry to entry, at most one was not
 * a rise, and the total rise is at least 1 MiB. */
static int ss_memplot_leak_hint(const char *who, const double *y, size_t n,
				char *buf, size_t len)
{
	size_t m, k = 0, i;
	double grew;
	char amount[32];

	if (n < 4)
		return 0;
	m = n - 1 < SS_MEMPLOT_LEAK_WINDOW ? n - 1 : SS_MEMPLOT_LEAK_WINDOW;
	for (i = n - m; i < n; i++)
		k += y[i] > y[i - 1];
	grew = y[n - 1] - y[n - 1 - m];
	if (k + 1 < m || grew < 1024.0 * 1024)
		return 0;
	ss_memplot_fmt_bytes(grew, amount, sizeof(amount));
	snprintf(buf, len,
		 "stepscope: %s memory grew in %zu of the last %zu entries (+%s): a leak? see docs/memory.md",
		 who, k, m, amount);
	return 1;
}

static size_t ss_memplot_hints(const struct ss_memplot *mp, FILE *out)
{
	size_t i, nh = 0;
	char who[160], line[512];

	for (i = 0; i < mp->nsteps; i++) {
		const struct ss_memplot_series *s = &mp->steps[i];
		if (s->peak)
			continue;
		if (mp->nprofiles > 1)
			snprintf(who, sizeof(who), "%s (pid %llu)", s->name,
				 (unsigned long long)s->pid);
		else
			snprintf(who, sizeof(who), "%s", s->name);
		if (ss_memplot_leak_hint(who, s->y, s->n, line, sizeof(line))) {
			fprintf(out, "%s\n", line);
			nh++;
		}
	}
	return nh;
}

/* ------------------------------------------------------------ the SVG */

static const char *const ss_memplot_colors[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
};
#define SS_MEMPLOT_NCOLORS (sizeof(ss_memplot_colors) / sizeof(ss_memplot_colors[0]))

static void ss_memplot_xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* A "nice" tick step for a range: 1, 2 or 5 times a power of ten. */
static double ss_memplot_tick(double range, int want)
{
	double raw = range / want, p = 1;

	if (raw <= 0)
		return 1;
	while (p * 10 <= raw)
		p *= 10;
	while (p > raw)
		p /= 10;
	if (raw / p >= 5)
		return 5 * p;
	if (raw / p >= 2)
		return 2 * p;
	return p;
}

/* The color of a device: same device, same color, in both panels. */
static const char *ss_memplot_color(const char *name)
{
	char dev[96];
	unsigned h = 5381;
	const char *dot;

	snprintf(dev, sizeof(dev), "%s", name);
	dot = strchr(dev, '.');
	if (dot)
		dev[dot - dev] = 0;
	if (!strcmp(dev, "host"))
		return ss_memplot_colors[0];
	for (const char *p = dev; *p; p++)
		h = h * 33 + (unsigned char)*p;
	return ss_memplot_colors[1 + h % (SS_MEMPLOT_NCOLORS - 1)];
}

static void ss_memplot_panel(FILE *f, const struct ss_memplot_series *v,
			     size_t n, int y0, const char *title,
			     const char *xlabel, int multi_pid)
{
	const int left = 80, right = 190, top = 36, bottom = 44;
	const int pw = SS_MEMPLOT_W - left - right;
	const int ph = SS_MEMPLOT_PANEL_H - top - bottom;
	double xmin = 0, xmax = 0, ymax = 0, unit = 1, tick, t;
	const char *uname = "B";
	int first = 1, row = 0;
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < v[i].n; j++) {
			if (first || v[i].x[j] < xmin)
				xmin = v[i].x[j];
			if (first || v[i].x[j] > xmax)
				xmax = v[i].x[j];
			if (v[i].y[j] > ymax)
				ymax = v[i].y[j];
			first = 0;
		}
	if (xmax <= xmin) {  /* one sample: centre it */
		xmin -= 1;
		xmax += 1;
	}
	if (ymax >= 1024.0 * 1024 * 1024) {
		unit = 1024.0 * 1024 * 1024;
		uname = "GiB";
	} else if (ymax >= 1024.0 * 1024) {
		unit = 1024.0 * 1024;
		uname = "MiB";
	} else if (ymax >= 1024) {
		unit = 1024;
		uname = "KiB";
	}
	tick = ss_memplot_tick(ymax / unit, 5);
	ymax = ymax > 0 ? (double)((long long)(ymax / unit / tick) + 1) * tick * unit : unit;

	fprintf(f, "<g transform=\"translate(0,%d)\">\n", y0);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", left);
	ss_memplot_xml(f, title);
	fprintf(f, "</text>\n");
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n",
		left, top, pw, ph);
	if (!n) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" fill=\"#666\" text-anchor=\"middle\">no data</text>\n</g>\n",
			left + pw / 2, top + ph / 2);
		return;
	}
	/* y grid and labels */
	for (long long k = 0; k * tick <= ymax / unit + tick / 2; k++) {
		double yy;
		t = (double)k * tick;
		yy = top + ph - t * unit / ymax * ph;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			left, yy, left + pw, yy);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g %s</text>\n",
			left - 6, yy + 4, t, uname);
	}
	/* x ticks */
	tick = ss_memplot_tick(xmax - xmin, 8);
	for (long long k = (long long)(xmin / tick) - 1; k * tick <= xmax + tick / 1000; k++) {
		double xx;
		t = (double)k * tick;
		if (t < xmin - tick / 1000)
			continue;
		xx = left + (t - xmin) / (xmax - xmin) * pw;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/>\n",
			xx, top + ph, xx, top + ph + 4);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
			xx, top + ph + 17, t);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">",
		left + pw / 2, top + ph + 36);
	ss_memplot_xml(f, xlabel);
	fprintf(f, "</text>\n");
	/* the lines: a value holds until the next sample (steps) */
	for (i = 0; i < n; i++) {
		const struct ss_memplot_series *s = &v[i];
		const char *col = ss_memplot_color(s->name);
		char label[160];
		if (!s->n)
			continue;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
			col, s->peak ? "1.5" : "2", s->peak ? " stroke-dasharray=\"6,4\"" : "");
		for (j = 0; j < s->n; j++) {
			double xx = left + (s->x[j] - xmin) / (xmax - xmin) * pw;
			double yy = top + ph - s->y[j] / ymax * ph;
			if (j) {
				double px = left + (s->x[j] - xmin) / (xmax - xmin) * pw;
				double py = top + ph - s->y[j - 1] / ymax * ph;
				fprintf(f, " %.1f,%.1f", px, py);
			}
			fprintf(f, "%s%.1f,%.1f", j ? " " : "", xx, yy);
		}
		fprintf(f, "\"/>\n");
		if (s->n == 1)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				left + (s->x[0] - xmin) / (xmax - xmin) * pw,
				top + ph - s->y[0] / ymax * ph, col);
		/* legend */
		if (multi_pid)
			snprintf(label, sizeof(label), "%s%s (pid %llu)", s->name,
				 s->peak && !strstr(s->name, "peak") ? " peak" : "",
				 (unsigned long long)s->pid);
		else
			snprintf(label, sizeof(label), "%s%s", s->name,
				 s->peak && !strstr(s->name, "peak") ? " peak" : "");
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
			left + pw + 12, top + 8 + row * 18, left + pw + 36,
			top + 8 + row * 18, col, s->peak ? " stroke-dasharray=\"6,4\"" : "");
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">", left + pw + 42,
			top + 12 + row * 18);
		ss_memplot_xml(f, label);
		fprintf(f, "</text>\n");
		row++;
	}
	fprintf(f, "</g>\n");
}

static int ss_memplot_write_svg(const struct ss_memplot *mp, const char *path,
				const char *dir, char *err, size_t errlen)
{
	struct ss_out out;
	FILE *f;
	int h = 2 * SS_MEMPLOT_PANEL_H + 40;

	if (ss_out_open(&out, path, err, errlen))
		return -1;
	f = out.f;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		SS_MEMPLOT_W, h, SS_MEMPLOT_W, h);
	fprintf(f, "<title>stepscope memory: ");
	ss_memplot_xml(f, dir);
	fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	ss_memplot_panel(f, mp->steps, mp->nsteps, 10,
			 "Memory over steps (memory_profile.json): solid current, dashed peak",
			 "step", mp->nprofiles > 1);
	ss_memplot_panel(f, mp->time, mp->ntime, 20 + SS_MEMPLOT_PANEL_H,
			 "Memory over time (every sample in the trace)",
			 "seconds since the first sample", mp->ntraces > 1);
	fprintf(f, "</svg>\n");
	if (ss_out_commit(&out, 0, err, errlen)) {
		ss_out_abort(&out);
		return -1;
	}
	ss_out_abort(&out);
	return 0;
}

/* ------------------------------------------------------------ command */

static void ss_memplot_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope memory [-o OUT.svg] DIR\n"
		"       stepscope memory --leaks [--stacks] [-o OUT] [--backend dw|bfd] [-q] DIR\n"
		"\n"
		"Plot current and peak memory per device (host, cuda:N) of a run recorded\n"
		"with memory.enabled: over steps (memory_profile.json) and over time (the\n"
		"samples in the traces), and say when memory grows step after step.\n"
		"\n"
		"   -o, --output OUT   write the SVG here (default DIR/memory.svg; - is stdout)\n"
		"   --leaks            the blocks allocated in recorded steps and never freed\n"
		"                      before exit (memory.allocations), by allocating function,\n"
		"                      largest first, per space (heap, cuda:N); text on stdout\n"
		"   --stacks           with --leaks: each function's recorded call paths too\n");
}

/* --leaks, --stacks: bits 1 and 2 of *ctx */
static enum ss_cli_took ss_memplot_option(struct ss_cli *c, void *ctx, int argc, char **argv,
					  int *i)
{
	(void)c, (void)argc;
	if (!strcmp(argv[*i], "--leaks"))
		*(int *)ctx |= 1;
	else if (!strcmp(argv[*i], "--stacks"))
		*(int *)ctx |= 2;
	else
		return SS_CLI_NOT_MINE;
	return SS_CLI_TAKEN;
}

int cmd_memory(int argc, char **argv)
{
	struct ss_cli c = { "memory", ss_memplot_usage, SS_CLI_EQUALS | SS_CLI_SYMBOLS, NULL, NULL,
			    NULL, 0 };
	const char *dir, *out;
	char err[8300], *defout = NULL;
	struct ss_memplot mp;
	int rc, leaks = 0;

	rc = ss_cli_parse(&c, argc, argv, ss_memplot_option, &leaks);
	if (rc != SS_CLI_GO)
		return rc;
	if (leaks == 2) {
		fprintf(stderr, "stepscope: memory: --stacks goes with --leaks (the leaks' call paths)\n");
		return 2;
	}
	if (leaks) /* memory.allocations (memory-leaks.c) */
		return ss_memory_leaks_to(c.dir, c.backend, c.quiet, leaks & 2, c.out);
	dir = c.dir;
	out = c.out;
	memset(&mp, 0, sizeof(mp));
	rc = ss_memplot_load(&mp, dir, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_memplot_free(&mp);
		return rc;
	}
	if (!out) {
		if (asprintf(&defout, "%s/memory.svg", dir) < 0) {
			ss_memplot_free(&mp);
			return 1;
		}
		out = defout;
	}
	if (ss_memplot_write_svg(&mp, out, dir, err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		rc = 2;
	} else {
		ss_memplot_hints(&mp, stderr);
		fprintf(stderr, "stepscope: wrote %s (%zu line%s over steps, %zu over time)\n",
			strcmp(out, "-") ? out : "standard output", mp.nsteps, mp.nsteps == 1 ? "" : "s", mp.ntime);
	}
	free(defout);
	ss_memplot_free(&mp);
	return rc;
}
