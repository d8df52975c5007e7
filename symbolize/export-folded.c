/*
 * export-folded.c - folded stacks ("main;train_step;matmul 1234" lines,
 * the value being self time in ns) for flamegraph.pl, speedscope and
 * inferno.
 *
 * Design: an aggregator (agg.c) builds the calling-context tree of every
 * thread as slices arrive; end merges the threads and writes one line per
 * call path with self time, sorted by path so the output is
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

	if (s->cat != SS_SLICE_FUNCTION)
		return;
	f->in->slice(f->in->ctx, pid, tid, s);
	f->ex.events++;
}

static void ss_folded_counter(void *ctx, uint64_t pid, const char *name,
			      uint64_t ns, double value)
{
	(void)ctx; (void)pid; (void)name; (void)ns; (void)value;
}

static int ss_folded_end(void *ctx, char *err, size_t errlen)
{
	struct ss_folded *f = ctx;
	FILE *out;
	int rc;

	if (f->in->end(f->in->ctx, err, errlen))
		return -1;
	out = f->out.f;
	rc = ss_agg_write_folded(f->agg, out);
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
	f->ex.counter = ss_folded_counter;
	f->ex.end = ss_folded_end;
	f->ex.release = ss_folded_release;
	return &f->ex;
}
