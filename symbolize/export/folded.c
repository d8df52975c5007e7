/*
 * folded.c - folded stacks ("train;main;train_step;matmul 1234"
 * lines) for flamegraph.pl, speedscope and inferno.  The value is self time
 * in nanoseconds (exact), not a count of samples: the format has no place
 * for a unit, so the command says it (flamegraph.pl --countname=ns) and
 * docs/commands.md does; `--format speedscope` carries real times.
 *
 * Design: an aggregator (agg.c) builds the calling-context tree of every
 * thread as slices arrive, user ranges included where they were pushed
 * (their time is theirs, not their caller's, as in the report), and a
 * "ProfilerStep" frame above the calls inside a recorded step (from
 * ss_slice.in_step, under the frames that span the steps); end walks
 * each thread's tree with the thread's
 * name as the root frame (so workers show as "worker-3;run;..." rather
 * than loose functions), merges equal paths (threads of one name) and
 * writes one line per call path, sorted by path so the output is
 * deterministic.  Memory grows with distinct call paths, not calls.
 *
 * Must never: write a line with a zero value.  (Names may hold spaces:
 * flamegraph.pl and speedscope take the last field as the value.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "export.h"
#include "util.h"
#include "outfile.h"

struct ss_folded {
	struct ss_exporter ex;
	struct ss_agg *agg;
	struct ss_exporter *in;
	char *path;
	struct ss_out out;       /* outfile.h, opened at once, written at end */
};

static int ss_folded_begin(void *ctx, uint64_t t0)
{
	struct ss_folded *f = ctx;

	return f->in->begin(f->in->ctx, t0);
}

static void ss_folded_process(void *ctx, uint64_t pid, const char *name)
{
	struct ss_folded *f = ctx;

	f->in->process(f->in->ctx, pid, name);
}

static void ss_folded_thread(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_folded *f = ctx;

	f->in->thread(f->in->ctx, pid, tid, name);
}

static void ss_folded_slice(void *ctx, uint64_t pid, uint64_t tid,
			    const struct ss_slice *s)
{
	struct ss_folded *f = ctx;

	if (s->cat != SS_SLICE_FUNCTION && s->cat != SS_SLICE_RANGE)
		return;
	f->in->slice(f->in->ctx, pid, tid, s);
	f->ex.events++;
}

/* record.sched: the aggregator splits each self time on and off the CPU */
static void ss_folded_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_folded *f = ctx;

	if (f->in->offcpu)
		f->in->offcpu(f->in->ctx, pid, d);
}

struct ss_folded_line {
	char *path;
	uint64_t ns;
};

struct ss_folded_walk {
	struct ss_agg *agg;
	char *path;
	size_t len, cap;
	struct ss_folded_line *lines;
	size_t n, capl;
	int oom;
};

static void ss_folded_push(struct ss_folded_walk *w, const char *name)
{
	size_t nl = strlen(name);

	if (w->len + nl + 2 > w->cap) {
		size_t nc = (w->len + nl + 2) * 2;
		char *np = realloc(w->path, nc);
		if (!np) {
			w->oom = 1;
			return;
		}
		w->path = np;
		w->cap = nc;
	}
	if (w->len)
		w->path[w->len++] = ';';
	/* ';' separates frames: one inside a name would split it */
	for (size_t i = 0; i < nl; i++)
		w->path[w->len + i] = name[i] == ';' ? ':' : name[i];
	w->len += nl;
	w->path[w->len] = 0;
}

static void ss_folded_walk(struct ss_folded_walk *w, const struct ss_agg_node *n)
{
	for (; n && !w->oom; n = n->next) {
		size_t old = w->len;
		ss_folded_push(w, ss_agg_name(w->agg, n->name));
		/* record.sched: the part of self switched out is a frame
		 * "off-CPU" above it, so the two still add up to self */
		uint64_t off = n->off_self_ns < n->self_ns ? n->off_self_ns : n->self_ns;
		size_t mid = w->len;
		for (int part = 0; part < 2 && !w->oom; part++) {
			uint64_t ns = part ? off : n->self_ns - off;
			if (!ns)
				continue;
			if (part)
				ss_folded_push(w, "off-CPU");
			if (w->oom || ss_grow((void **)&w->lines, &w->capl, w->n,
					      sizeof(*w->lines), 64) ||
			    !(w->lines[w->n].path = strdup(w->path))) {
				w->oom = 1;
				return;
			}
			w->lines[w->n++].ns = ns;
		}
		w->len = mid; /* the off-CPU frame is no caller of the children */
		if (w->path)
			w->path[mid] = 0;
		ss_folded_walk(w, n->child);
		w->len = old;
		if (w->path)
			w->path[old] = 0;
	}
}

static int ss_folded_cmp(const void *x, const void *y)
{
	return strcmp(((const struct ss_folded_line *)x)->path,
		      ((const struct ss_folded_line *)y)->path);
}

/* Every thread's paths under its name, equal paths summed, in ns. */
static int ss_folded_write(struct ss_agg *agg, FILE *out)
{
	struct ss_agg_thread_tree *tt = NULL;
	struct ss_folded_walk w;
	size_t nt = ss_agg_flame_threads(agg, &tt), i, j;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	w.agg = agg;
	for (i = 0; i < nt && !w.oom; i++) {
		char tn[64];
		w.len = 0;
		if (!tt[i].thread)
			snprintf(tn, sizeof(tn), "thread %llu", (unsigned long long)tt[i].tid);
		ss_folded_push(&w, tt[i].thread ? tt[i].thread : tn);
		if (tt[i].root)
			ss_folded_walk(&w, tt[i].root->child);
	}
	free(tt);
	if (w.n)
		qsort(w.lines, w.n, sizeof(*w.lines), ss_folded_cmp);
	for (i = 0; i < w.n; i = j) {
		uint64_t ns = 0;
		for (j = i; j < w.n && !strcmp(w.lines[j].path, w.lines[i].path); j++)
			ns += w.lines[j].ns;
		if (ns && fprintf(out, "%s %llu\n", w.lines[i].path, (unsigned long long)ns) < 0)
			rc = -1;
	}
	for (i = 0; i < w.n; i++)
		free(w.lines[i].path);
	free(w.lines);
	free(w.path);
	return w.oom ? -1 : rc;
}

static int ss_folded_end(void *ctx, char *err, size_t errlen)
{
	struct ss_folded *f = ctx;
	FILE *out;
	int rc;

	if (f->in->end(f->in->ctx, err, errlen))
		return -1;
	out = f->out.f;
	rc = ss_folded_write(f->agg, out);
	return ss_out_commit(&f->out, rc ? (errno ? errno : EIO) : 0, err, errlen);
}

static void ss_folded_release(void *ctx)
{
	struct ss_folded *f = ctx;

	ss_out_abort(&f->out);
	ss_agg_free(f->agg);
	free(f->path);
	free(f);
}

struct ss_exporter *ss_export_folded_open(const char *path, char *err,
					  size_t errlen)
{
	struct ss_folded *f = calloc(1, sizeof(*f));

	if (!f || !(f->agg = ss_agg_new()) || !(f->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		if (f)
			ss_agg_free(f->agg);
		free(f);
		return NULL;
	}
	/* opened now, to fail before the whole walk; written at the end */
	if (ss_out_open(&f->out, path, err, errlen)) {
		ss_folded_release(f);
		return NULL;
	}
	f->in = ss_agg_exporter(f->agg);
	f->ex.ctx = f;
	f->ex.begin = ss_folded_begin;
	f->ex.process = ss_folded_process;
	f->ex.thread = ss_folded_thread;
	f->ex.slice = ss_folded_slice;
	f->ex.end = ss_folded_end;
	f->ex.release = ss_folded_release;
	f->ex.offcpu = ss_folded_offcpu;
	ss_exporter_nops(&f->ex); /* counters: none in the format */
	return &f->ex;
}
