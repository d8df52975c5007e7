/*
 * cmd-symbolize.c - `stepscope symbolize DIR`: merge every raw trace of a
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
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "export.h"
#include "reader.h"
#include "slices.h"
#include "sym.h"

#define SS_SYMBOLIZE_MAX_CYCLES 256

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

static void ss_symbolize_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope symbolize [-o OUT] [--backend dw|bfd] [--debug-dir DIR]... [--force]\n"
		"                           [--split-cycles] [--format FMT] [-q] DIR\n"
		"\n"
		"   -o, --output OUT   write the trace here (default DIR/trace.json, .perfetto-trace\n"
		"                      or .folded by format)\n"
		"   --format FMT       chrome (JSON, default), perfetto (protobuf) or folded\n"
		"                      (stacks for flamegraph.pl / speedscope)\n"
		"   --backend NAME     symbol reader: dw (libdw, default) or bfd (libbfd)\n"
		"   --debug-dir DIR    also look for separate debug files in DIR (repeatable)\n"
		"   --force            name functions even from binaries changed since the run\n"
		"   --split-cycles     one trace per schedule cycle: DIR/trace-cycle<K>.json\n"
		"   -q, --quiet        no warnings about unresolved symbols\n");
}

static int ss_symbolize_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted paths of DIR/ *.sstrace; -1 if DIR cannot be read. */
static int ss_symbolize_list(const char *dir, char ***out, size_t *n)
{
	size_t cap = 0, sl = strlen(SS_FILE_SUFFIX);
	struct dirent *de;
	DIR *d = opendir(dir);

	*out = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char *p;
		if (l <= sl || strcmp(de->d_name + l - sl, SS_FILE_SUFFIX))
			continue;
		if (*n == cap) {
			char **np;
			cap = cap ? cap * 2 : 16;
			np = realloc(*out, cap * sizeof(*np));
			if (!np)
				break;
			*out = np;
		}
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			break;
		(*out)[(*n)++] = p;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), ss_symbolize_cmp_str);
	return 0;
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

int cmd_symbolize(int argc, char **argv)
{
	const char *out = NULL, *backend = NULL, *dir = NULL;
	int split = 0, quiet = 0, rc = 0, force = 0;
	static const struct {
		const char *name, *ext;
		struct ss_exporter *(*open)(const char *, char *, size_t);
	} fmts[] = {
		{ "chrome", ".json", ss_export_chrome_open },
		{ "perfetto", ".perfetto-trace", ss_export_perfetto_open },
		{ "folded", ".folded", ss_export_folded_open },
	};
	size_t fmt = 0;
	const char *ddirs[16];
	size_t nddirs = 0;
	char **files = NULL, err[1024];
	size_t nfiles = 0, i, j, nouts = 0;
	struct ss_reader **rs = NULL;
	struct ss_sym_space **sps = NULL;
	struct ss_slicer **sls = NULL;
	struct ss_symbolize_out *outs = NULL;
	struct ss_sym *sym = NULL;
	uint64_t t0 = 0;
	char *defout = NULL;
	struct stat st;
	struct ss_symbolize_progress pg;

	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			ss_symbolize_usage(stdout);
			return 0;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= (size_t)argc)
				goto missing;
			out = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (!strcmp(a, "--backend")) {
			if (++i >= (size_t)argc)
				goto missing;
			backend = argv[i];
		} else if (!strncmp(a, "--backend=", 10)) {
			backend = a + 10;
		} else if (!strcmp(a, "--debug-dir") || !strncmp(a, "--debug-dir=", 12)) {
			if (!a[11] && ++i >= (size_t)argc)
				goto missing;
			if (nddirs == sizeof(ddirs) / sizeof(ddirs[0])) {
				fprintf(stderr, "stepscope: symbolize: at most 16 --debug-dir\n");
				return 2;
			}
			ddirs[nddirs++] = a[11] ? a + 12 : argv[i];
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			if (!a[8] && ++i >= (size_t)argc)
				goto missing;
			for (fmt = 0; fmt < 3 && strcmp(a[8] ? a + 9 : argv[i], fmts[fmt].name); fmt++)
				;
			if (fmt == 3) {
				fprintf(stderr, "stepscope: symbolize: unknown format '%s' (use chrome, perfetto or folded)\n",
					a[8] ? a + 9 : argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "--split-cycles")) {
			split = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "stepscope: symbolize: unknown option '%s'; see 'stepscope symbolize --help'\n", a);
			return 2;
		} else if (!dir) {
			dir = a;
		} else {
			fprintf(stderr, "stepscope: symbolize: one run directory expected, got '%s' too\n", a);
			return 2;
		}
	}
	if (!dir) {
		ss_symbolize_usage(stderr);
		return 2;
	}
	if (split && out) {
		fprintf(stderr, "stepscope: symbolize: --split-cycles writes DIR/trace-cycle<K>.json; drop -o\n");
		return 2;
	}
	sym = ss_sym_new(backend, err, sizeof(err));
	if (!sym) {
		fprintf(stderr, "stepscope: symbolize: %s\n", err);
		return 2;
	}
	ss_sym_set_quiet(sym, quiet);
	for (i = 0; i < nddirs; i++)
		if (ss_sym_add_debug_dir(sym, ddirs[i]))
			goto oom;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "stepscope: %s: %s\n", dir,
			errno == ENOENT || !errno ? "no such directory" : strerror(errno));
		ss_sym_free(sym);
		return 2;
	}
	if (ss_symbolize_list(dir, &files, &nfiles) || !nfiles) {
		fprintf(stderr, "stepscope: %s: no stepscope traces here (*%s)\n", dir,
			SS_FILE_SUFFIX);
		rc = 2;
		goto done;
	}
	rs = calloc(nfiles, sizeof(*rs));
	sps = calloc(nfiles, sizeof(*sps));
	sls = calloc(nfiles, sizeof(*sls));
	if (!rs || !sps || !sls)
		goto oom;
	for (i = 0; i < nfiles; i++) {
		uint64_t f;
		rs[i] = ss_reader_open(files[i], err, sizeof(err));
		if (!rs[i]) {
			fprintf(stderr, "stepscope: %s\n", err);
			rc = 2;
			goto done;
		}
		if (rs[i]->warning[0])
			fprintf(stderr, "stepscope: warning: %s\n", rs[i]->warning);
		sps[i] = ss_sym_space_new(sym);
		if (!sps[i] || !(sls[i] = ss_slicer_new(rs[i], sps[i])))
			goto oom;
		ss_slicer_markers(sls[i], 1);  /* stops and losses as instants */
		ss_sym_space_expect_trace(sps[i], rs[i]);
		f = ss_slicer_first_ns(sls[i]);
		if (f && (!t0 || f < t0))
			t0 = f;
	}
	if (ss_sym_check_build_ids(sym, force) && !force) {
		rc = 2;
		goto done;
	}

	/* outputs */
	if (split) {
		uint32_t cyc[SS_SYMBOLIZE_MAX_CYCLES];
		outs = calloc(SS_SYMBOLIZE_MAX_CYCLES, sizeof(*outs));
		if (!outs)
			goto oom;
		for (i = 0; i < nfiles; i++) {
			size_t n = ss_slicer_cycles(sls[i], cyc, SS_SYMBOLIZE_MAX_CYCLES);
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
				     outs[i].cycle, fmts[fmt].ext) < 0)
				goto oom;
	} else {
		outs = calloc(1, sizeof(*outs));
		if (!outs)
			goto oom;
		if (!out) {
			if (asprintf(&defout, "%s/trace%s", dir, fmts[fmt].ext) < 0)
				goto oom;
			out = defout;
		}
		outs[0].path = strdup(out);
		if (!outs[0].path)
			goto oom;
		nouts = 1;
	}
	for (i = 0; i < nouts; i++) {
		outs[i].ex = fmts[fmt].open(outs[i].path, err, sizeof(err));
		if (!outs[i].ex) {
			fprintf(stderr, "stepscope: %s\n", err);
			rc = 2;
			goto done;
		}
		outs[i].ex->begin(outs[i].ex->ctx, t0);
	}

	memset(&pg, 0, sizeof(pg));
	pg.on = isatty(2);
	pg.start = ss_symbolize_now();
	for (i = 0; i < nfiles; i++)
		pg.total += rs[i]->nevents / 2;
	for (i = 0; i < nfiles; i++) {
		struct ss_reader *r = rs[i];
		struct ss_symbolize_route rt = { outs, nouts, split, r->hdr.pid, &pg };
		char pname[1200], tname[64];
		size_t o, t;

		snprintf(pname, sizeof(pname), "%s (pid %llu)", ss_reader_prog(r),
			 (unsigned long long)r->hdr.pid);
		for (o = 0; o < nouts; o++)
			outs[o].ex->process(outs[o].ex->ctx, r->hdr.pid, pname);
		for (t = 0; t < r->nthreads; t++) {
			const char *tn = ss_slicer_thread_name(sls[i], r->threads[t].tid);
			size_t u;
			for (u = 0; u < t && r->threads[u].tid != r->threads[t].tid; u++)
				;
			if (u < t)
				continue;  /* tid reused: one name is enough */
			if (!tn) {
				snprintf(tname, sizeof(tname), "thread %llu",
					 (unsigned long long)r->threads[t].tid);
				tn = tname;
			}
			for (o = 0; o < nouts; o++)
				outs[o].ex->thread(outs[o].ex->ctx, r->hdr.pid,
						   r->threads[t].tid, tn);
		}
		for (t = 0; t < r->nthreads; t++)
			ss_slicer_thread(sls[i], t, ss_symbolize_slice, &rt);
		{	/* record.stack: the frames the slices' stacks name */
			const struct ss_stack_node *nodes;
			size_t nn = ss_slicer_stack_nodes(sls[i], &nodes);
			for (o = 0; nn && o < nouts; o++)
				if (outs[o].ex->stack_nodes)
					outs[o].ex->stack_nodes(outs[o].ex->ctx, r->hdr.pid,
								nodes, nn);
		}
		{	/* memory samples: counter tracks of the process */
			struct ss_meta_iter mi;
			struct ss_meta_rec m;
			ss_reader_meta_begin(r, &mi);
			while (ss_reader_meta_next(&mi, &m)) {
				struct ss_meta_counter c;
				if (m.type != SS_META_COUNTER || m.len < sizeof(c))
					continue;
				memcpy(&c, m.data, sizeof(c));
				c.track[sizeof(c.track) - 1] = 0;
				for (o = 0; o < nouts; o++)
					outs[o].ex->counter(outs[o].ex->ctx, r->hdr.pid, c.track,
							    ss_reader_ns(r, m.ts),
							    (double)c.value);
			}
		}
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
			outs[i].path, (unsigned long long)n, nfiles,
			nfiles == 1 ? "" : "es");
	}
	goto done;

missing:
	fprintf(stderr, "stepscope: symbolize: option '%s' needs a value\n", argv[i - 1]);
	return 2;
oom:
	fprintf(stderr, "stepscope: symbolize: out of memory\n");
	rc = 1;
done:
	for (i = 0; outs && i < nouts; i++) {
		ss_exporter_free(outs[i].ex);
		free(outs[i].path);
	}
	free(outs);
	for (i = 0; i < nfiles; i++) {
		if (sls)
			ss_slicer_free(sls[i]);
		if (sps)
			ss_sym_space_free(sps[i]);
		if (rs)
			ss_reader_free(rs[i]);
		free(files[i]);
	}
	free(files);
	free(sls);
	free(sps);
	free(rs);
	free(defout);
	ss_sym_free(sym);
	return rc;
}
