/*
 * symbolize.c - `stepscope symbolize DIR`: merge every raw trace of a
 * recorded run into one Chrome trace-event JSON file with function names.
 *
 * Design: all readers are opened first (cheap: mmap + index) to find the
 * earliest time of the run; then each process is streamed thread by
 * thread through the slicer into the exporter(s).  With --split-cycles a
 * slice is routed to the file of the schedule cycle of the step it began
 * in.
 *
 * Must never: write into DIR anything but the output files, or leave a
 * half-written file reported as success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "run-check.h"
#include "export.h"
#include "run.h"

#define SS_SYMBOLIZE_MAX_CYCLES 256
/* A Chrome JSON file this big (MiB) gets a line naming --format perfetto:
 * chrome://tracing gives up near 256 MB, the Perfetto UI's JSON import
 * slows to a crawl past a few hundred (docs/symbolize.md).  Tests lower it
 * with STEPSCOPE__TEST_BIG_JSON_MB. */
#define SS_SYMBOLIZE_BIG_JSON_MB 256.0

struct ss_symbolize_out {
	struct ss_exporter *ex;
	char *path;
	uint32_t cycle;
};

/* A progress bar on stderr, only on a terminal and only after a second. */
struct ss_symbolize_progress {
	int on;
	int shown;
	uint64_t done, total, next;  /* slices; total estimated as events / 2 */
	double start;
};

struct ss_symbolize_route {
	struct ss_symbolize_out *outs;
	size_t nouts;
	int split;
	uint64_t pid;
	struct ss_symbolize_progress *pg;
};

static double ss_symbolize_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ss_symbolize_progress_tick(struct ss_symbolize_progress *pg)
{
	char bar[31];
	double el = ss_symbolize_now() - pg->start, f;
	int i, n;

	pg->next = pg->done + (1u << 16);
	if (el < 1.0)
		return;
	f = pg->total ? (double)pg->done / (double)pg->total : 0;
	if (f > 1)
		f = 1;
	n = (int)(f * 30);
	for (i = 0; i < 30; i++)
		bar[i] = i < n ? '#' : '.';
	bar[30] = 0;
	fprintf(stderr, "\rstepscope: symbolizing [%s] %3d%%  %.1fM slices  %.0fs ",
		bar, (int)(f * 100), (double)pg->done / 1e6, el);
	pg->shown = 1;
}

/* After a Chrome JSON file was written to `path`: one line when it is too
 * big for the JSON viewers (not for standard output or a device). */
static void ss_symbolize_big_json(const char *path)
{
	const char *e = getenv("STEPSCOPE__TEST_BIG_JSON_MB");
	double limit = e && *e ? strtod(e, NULL) : SS_SYMBOLIZE_BIG_JSON_MB, mb;
	struct stat st;

	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	mb = (double)st.st_size / (1024.0 * 1024.0);
	if (mb < limit)
		return;
	fprintf(stderr, "stepscope: %s is %.1f MB, past the %g MB that chrome://tracing and the "
		"Perfetto UI's JSON import load well: --format perfetto writes a trace the Perfetto UI "
		"opens at this size\n", path, mb, limit);
}

static void ss_symbolize_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope symbolize [-o OUT] [--backend dw|bfd] [--debug-dir DIR]... [--force]\n"
		"                           [--split-cycles] [--format FMT] [--details] [-q] DIR\n"
		"\n"
		"   -o, --output OUT   write the trace here (default DIR/trace.json, .perfetto-trace,\n"
		"                      .folded or .speedscope.json by format; - is stdout)\n"
		"   --format FMT       chrome (JSON, default), perfetto (protobuf), folded\n"
		"                      (stacks for flamegraph.pl) or speedscope (its own format:\n"
		"                      a timeline per thread, steps on top)\n"
		"   --backend NAME     symbol reader: dw (libdw, default) or bfd (libbfd)\n"
		"   --debug-dir DIR    also look for separate debug files in DIR (repeatable)\n"
		"   --force            name functions even from binaries changed since the run\n"
		"   --details          chrome: args file (path:line) and addr on every function\n"
		"                      slice (about 80 bytes more per slice)\n"
		"   --split-cycles     one trace per schedule cycle: DIR/trace-cycle<K>.json\n"
		"   -q, --quiet        no warnings about unresolved symbols\n");
}

static void ss_symbolize_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct ss_symbolize_route *rt = ctx;
	size_t i;

	if (rt->pg->on && ++rt->pg->done >= rt->pg->next)
		ss_symbolize_progress_tick(rt->pg);
	if (!rt->split) {
		rt->outs[0].ex->slice(rt->outs[0].ex->ctx, rt->pid, tid, s);
		return;
	}
	if (!s->has_step)
		return;
	for (i = 0; i < rt->nouts; i++)
		if (rt->outs[i].cycle == s->cycle) {
			rt->outs[i].ex->slice(rt->outs[i].ex->ctx, rt->pid, tid, s);
			return;
		}
}

/* An opening (ss_slicer_on_open), routed like the slice that closes it. */
static void ss_symbolize_open(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct ss_symbolize_route *rt = ctx;
	size_t i;

	for (i = 0; i < rt->nouts; i++) {
		struct ss_exporter *ex = rt->outs[i].ex;
		if (rt->split && (!s->has_step || rt->outs[i].cycle != s->cycle))
			continue;
		ex->open(ex->ctx, rt->pid, tid, s);
		if (!rt->split)
			return;
	}
}

static const struct {
	const char *name, *ext;
	struct ss_exporter *(*open)(const char *, char *, size_t);
} ss_symbolize_fmts[] = {
	{ "chrome", ".json", ss_export_chrome_open },
	{ "perfetto", ".perfetto-trace", ss_export_perfetto_open },
	{ "folded", ".folded", ss_export_folded_open },
	{ "speedscope", ".speedscope.json", ss_export_speedscope_open },
};

struct ss_symbolize_opts {
	size_t fmt;
	const char *ddirs[16];
	size_t nddirs;
	int split, force, details;
};

static enum ss_cli_took ss_symbolize_option(struct ss_cli *c, void *ctx, int argc,
					    char **argv, int *i)
{
	struct ss_symbolize_opts *o = ctx;
	const char *s = argv[*i], *v;
	int r;

	if (!strcmp(s, "--force")) {
		o->force = 1;
	} else if (!strcmp(s, "--details")) {
		o->details = 1;
	} else if (!strcmp(s, "--split-cycles")) {
		o->split = 1;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--debug-dir", &v))) {
		if (r < 0)
			return SS_CLI_BAD;
		if (o->nddirs == sizeof(o->ddirs) / sizeof(o->ddirs[0])) {
			fprintf(stderr, "stepscope: symbolize: at most 16 --debug-dir\n");
			return SS_CLI_BAD;
		}
		o->ddirs[o->nddirs++] = v;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--format", &v))) {
		if (r < 0)
			return SS_CLI_BAD;
		for (o->fmt = 0; o->fmt < 4 && strcmp(v, ss_symbolize_fmts[o->fmt].name); o->fmt++)
			;
		if (o->fmt == 4) {
			fprintf(stderr, "stepscope: symbolize: unknown format '%s' (use chrome, perfetto, folded or speedscope)\n",
				v);
			return SS_CLI_BAD;
		}
	} else {
		return SS_CLI_NOT_MINE;
	}
	return SS_CLI_TAKEN;
}

int cmd_symbolize(int argc, char **argv)
{
	struct ss_cli c = { "symbolize", ss_symbolize_usage, SS_CLI_SYMBOLS | SS_CLI_EQUALS,
			    NULL, NULL, NULL, 0 };
	struct ss_symbolize_opts o;
	const char *out, *dir;
	int split, rc;
	char err[1024];
	size_t i, j, nouts = 0;
	struct ss_run run = { 0 };
	struct ss_symbolize_out *outs = NULL;
	struct ss_exporter **exs = NULL;
	struct ss_sym *sym = NULL;
	char *defout = NULL;
	struct ss_symbolize_progress pg;

	memset(&o, 0, sizeof(o));
	rc = ss_cli_parse(&c, argc, argv, ss_symbolize_option, &o);
	if (rc != SS_CLI_GO)
		return rc;
	rc = 0;
	dir = c.dir;
	out = c.out;
	split = o.split;
	if (split && out) {
		fprintf(stderr, "stepscope: symbolize: --split-cycles writes DIR/trace-cycle<K>.json; drop -o\n");
		return 2;
	}
	sym = ss_sym_new(c.backend, err, sizeof(err));
	if (!sym) {
		fprintf(stderr, "stepscope: symbolize: %s\n", err);
		return 2;
	}
	ss_sym_set_quiet(sym, c.quiet);
	/* the exporters are light next to the walk and a writer thread
	 * takes the second CPU: a walk on a worker cost more than it gave
	 * (4x10^7 events: 1.56 -> 1.80 s JSON, 1.47 -> 1.91 s Perfetto) */
	ss_slicer_pipe_default(0);
	ss_run_sym_once(sym, dir);
	for (i = 0; i < o.nddirs; i++)
		if (ss_sym_add_debug_dir(sym, o.ddirs[i]))
			goto oom;
	if (ss_run_check_dir(dir, err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_sym_free(sym);
		return 2;
	}
	if (ss_run_check_empty(dir, err, sizeof(err))) {  /* not an empty trace */
		fprintf(stderr, "stepscope: symbolize: %s: nothing was recorded: %s\n", dir, err);
		ss_sym_free(sym);
		return 2;
	}
	rc = ss_run_open(&run, dir, sym, SS_RUN_MARKERS | (o.force ? SS_RUN_FORCE : 0),
			 err, sizeof(err));
	if (rc == 1)
		goto oom;
	if (rc) {
		fprintf(stderr, "stepscope: %s%s\n", err,
			strstr(err, "since the run (build-id") ? ", or pass --force to use it anyway" : "");
		goto done;
	}

	/* outputs */
	if (split) {
		uint32_t cyc[SS_SYMBOLIZE_MAX_CYCLES];
		outs = calloc(SS_SYMBOLIZE_MAX_CYCLES, sizeof(*outs));
		if (!outs)
			goto oom;
		for (i = 0; i < run.n; i++) {
			size_t n = ss_slicer_cycles(run.sls[i], cyc, SS_SYMBOLIZE_MAX_CYCLES);
			if (n > SS_SYMBOLIZE_MAX_CYCLES)
				n = SS_SYMBOLIZE_MAX_CYCLES;
			for (j = 0; j < n; j++) {
				size_t k;
				for (k = 0; k < nouts && outs[k].cycle != cyc[j]; k++)
					;
				if (k == nouts && nouts < SS_SYMBOLIZE_MAX_CYCLES)
					outs[nouts++].cycle = cyc[j];
			}
		}
		if (!nouts) {
			fprintf(stderr, "stepscope: %s: no recorded steps, so no cycles to split (run without --split-cycles)\n",
				dir);
			rc = 2;
			goto done;
		}
		for (i = 0; i < nouts; i++)
			if (asprintf(&outs[i].path, "%s/trace-cycle%u%s", dir,
				     outs[i].cycle, ss_symbolize_fmts[o.fmt].ext) < 0)
				goto oom;
	} else {
		outs = calloc(1, sizeof(*outs));
		if (!outs)
			goto oom;
		if (!out) {
			if (asprintf(&defout, "%s/trace%s", dir, ss_symbolize_fmts[o.fmt].ext) < 0)
				goto oom;
			out = defout;
		}
		outs[0].path = strdup(out);
		if (!outs[0].path)
			goto oom;
		nouts = 1;
	}
	exs = calloc(nouts, sizeof(*exs));
	if (!exs)
		goto oom;
	for (i = 0; i < nouts; i++) {
		outs[i].ex = ss_symbolize_fmts[o.fmt].open(outs[i].path, err, sizeof(err));
		if (!outs[i].ex) {
			fprintf(stderr, "stepscope: %s\n", err);
			rc = 2;
			goto done;
		}
		if (o.details && ss_symbolize_fmts[o.fmt].open == ss_export_chrome_open)
			ss_export_chrome_details(outs[i].ex, 1);
		outs[i].ex->begin(outs[i].ex->ctx, run.t0);
		exs[i] = outs[i].ex;
	}

	memset(&pg, 0, sizeof(pg));
	pg.on = isatty(2);
	pg.start = ss_symbolize_now();
	for (i = 0; i < run.n; i++)
		pg.total += run.rs[i]->nevents / 2;
	for (i = 0; i < run.n; i++) {
		struct ss_symbolize_route rt = { outs, nouts, split, run.rs[i]->hdr.pid, &pg };
		if (outs[0].ex->open)
			ss_slicer_on_open(run.sls[i], ss_symbolize_open, &rt);
		/* Perfetto writes a leaf call's BEGIN with its END
		 * (SS_SLICE_UNANNOUNCED): no opening for most calls */
		ss_slicer_open_leaves(run.sls[i], ss_symbolize_fmts[o.fmt].open !=
							  ss_export_perfetto_open);
		ss_run_feed(&run, i, exs, nouts, ss_symbolize_slice, &rt);
		ss_slicer_on_open(run.sls[i], NULL, NULL);
	}
	if (pg.shown)
		fprintf(stderr, "\r\033[K");
	for (i = 0; i < nouts; i++) {
		uint64_t n = outs[i].ex->events;
		if (outs[i].ex->end(outs[i].ex->ctx, err, sizeof(err))) {
			fprintf(stderr, "stepscope: %s\n", err);
			rc = 1;
			continue;
		}
		fprintf(stderr, "stepscope: wrote %s (%llu events, %zu process%s)\n",
			strcmp(outs[i].path, "-") ? outs[i].path : "standard output",
			(unsigned long long)n, run.n,
			run.n == 1 ? "" : "es");
		if (ss_symbolize_fmts[o.fmt].open == ss_export_chrome_open)
			ss_symbolize_big_json(outs[i].path);
		if (ss_symbolize_fmts[o.fmt].open == ss_export_folded_open && !i)
			fprintf(stderr, "stepscope: folded values are self time in nanoseconds, "
					"not samples (flamegraph.pl --countname=ns)\n");
	}
	goto done;

oom:
	fprintf(stderr, "stepscope: symbolize: out of memory\n");
	rc = 1;
done:
	for (i = 0; outs && i < nouts; i++) {
		ss_exporter_free(outs[i].ex);
		free(outs[i].path);
	}
	free(outs);
	free(exs);
	ss_run_release(&run);
	free(defout);
	ss_sym_free(sym);
	return rc;
}
