/*
 * stats-read.c - read the SS_META_STATS records of a run directory into
 * report rows (see stats-read.h).
 *
 * Design: one pass over the meta records of each trace keeps the maps,
 * the thread names and, per thread serial, the last stats record (later
 * ones replace earlier ones: a window opening writes a snapshot, the
 * thread's or the process's end the final one).  Every entry becomes a raw
 * row named through the symbolizer; sorting by (name, pid, tid) then
 * merges equal keys.  Memory grows with functions x threads, never with
 * calls.
 *
 * Never: trust a record's length (entries past its end are not read), or
 * divide by zero.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "run.h"
#include "stats-read.h"
#include "sym.h"
#include "util.h"

struct ss_stats_last {
	uint64_t serial;
	const uint8_t *data;      /* the record's payload (in the reader's map) */
	size_t len;
};

struct ss_stats_tname {
	uint64_t tid;
	char name[17];
};

static int ss_stats_cmp_row(const void *a, const void *b)
{
	const struct ss_agg_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int ss_stats_add_row(struct ss_stats_result *res, size_t *cap,
			    const struct ss_agg_row *row)
{
	if (ss_grow((void **)&res->rows, cap, res->nrows, sizeof(*res->rows), 256))
		return -1;
	res->rows[res->nrows] = *row;
	res->rows[res->nrows].name = strdup(row->name);
	res->rows[res->nrows].thread = row->thread ? strdup(row->thread) : NULL;
	res->rows[res->nrows].caller = row->caller ? strdup(row->caller) : NULL;
	if (!res->rows[res->nrows].name || (row->caller && !res->rows[res->nrows].caller))
		return -1;
	res->nrows++;
	return 0;
}

/* The rows of one trace file: 0; -1 out of memory; 2 with err when a
 * binary changed since the run and no copy of it was kept. */
static int ss_stats_file(struct ss_reader *r, struct ss_sym *sym, int per_thread,
			 struct ss_stats_result *res, size_t *cap, size_t *nrec,
			 char *err, size_t errlen)
{
	struct ss_sym_space *sp = ss_sym_space_new(sym);
	struct ss_stats_last *last = NULL;
	struct ss_stats_tname *tn = NULL;
	size_t nlast = 0, ntn = 0, i, k;
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	int rc = -1;

	if (!sp)
		return -1;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		if (m.type == SS_META_MAPS) {
			ss_sym_space_add_maps(sp, (const char *)m.data, m.len);
		} else if (m.type == SS_META_THREAD && m.len >= sizeof(struct ss_meta_thread)) {
			struct ss_meta_thread t;
			memcpy(&t, m.data, sizeof(t));
			for (i = 0; i < ntn && tn[i].tid != t.tid; i++)
				;
			if (i == ntn) {
				void *p = realloc(tn, (ntn + 1) * sizeof(*tn));
				if (!p)
					goto out;
				tn = p;
				ntn++;
			}
			tn[i].tid = t.tid;
			memcpy(tn[i].name, t.name, sizeof(t.name));
			tn[i].name[sizeof(t.name)] = 0;
		} else if (m.type == SS_META_STATS && m.len >= sizeof(struct ss_meta_stats)) {
			struct ss_meta_stats h;
			memcpy(&h, m.data, sizeof(h));
			for (i = 0; i < nlast && last[i].serial != h.serial; i++)
				;
			if (i == nlast) {
				void *p = realloc(last, (nlast + 1) * sizeof(*last));
				if (!p)
					goto out;
				last = p;
				nlast++;
			}
			last[i].serial = h.serial;
			last[i].data = m.data;
			last[i].len = m.len;
		}
	}
	/* never a name from another build than the run's */
	ss_sym_space_expect_trace(sp, r);
	if (ss_sym_check_files(sym, 0, err, errlen)) {
		rc = 2;
		goto out;
	}
	for (i = 0; i < nlast; i++) {
		struct ss_meta_stats h;
		const char *thread = NULL;
		memcpy(&h, last[i].data, sizeof(h));
		uint64_t room = (last[i].len - sizeof(h)) / sizeof(struct ss_meta_stats_entry);
		if (h.n > room)
			h.n = room; /* a cut record: what is there */
		/* each entry's first caller after the entries (format.h), when
		 * the runtime wrote them */
		const uint8_t *callers = NULL;
		if (last[i].len - sizeof(h) >= h.n * (sizeof(struct ss_meta_stats_entry) + 8))
			callers = last[i].data + sizeof(h) + h.n * sizeof(struct ss_meta_stats_entry);
		if (h.steps > res->steps)
			res->steps = h.steps;
		res->dropped += h.dropped;
		if (h.sample_ticks) { /* a runtime that samples the times */
			uint64_t ns = (uint64_t)((double)h.sample_ticks * r->ns_per_tick + 0.5);
			if (ns >= 10000) /* the tick rate's fit: whole us */
				ns = (ns + 500) / 1000 * 1000;
			if (ns > res->sample_ns)
				res->sample_ns = ns;
		}
		for (k = 0; k < ntn; k++)
			if (tn[k].tid == h.tid)
				thread = tn[k].name;
		for (k = 0; k < h.n; k++) {
			struct ss_meta_stats_entry e;
			struct ss_agg_row row;
			memcpy(&e, last[i].data + sizeof(h) + k * sizeof(e), sizeof(e));
			memset(&row, 0, sizeof(row));
			row.name = e.fn ? ss_sym_lookup(sp, e.fn)->name : "[other]";
			row.kind = SS_AGG_FUNCTION;
			if (per_thread) {
				row.pid = r->hdr.pid;
				row.tid = h.tid;
				row.thread = thread;
			}
			row.calls = e.calls;
			row.total_ns = (uint64_t)((double)e.total_ticks * r->ns_per_tick + 0.5);
			row.self_ns = (uint64_t)((double)e.self_ticks * r->ns_per_tick + 0.5);
			if (callers && per_thread && e.fn) {
				uint64_t c;
				memcpy(&c, callers + k * 8, 8);
				row.caller = c ? ss_sym_lookup(sp, c)->name : "";
			}
			res->self_sum += row.self_ns;
			if (ss_stats_add_row(res, cap, &row))
				goto out;
		}
		res->nthreads++;
	}
	*nrec += nlast;
	rc = 0;
out:
	free(last);
	free(tn);
	ss_sym_space_free(sp);
	return rc;
}

int ss_stats_read(const char *dir, const char *backend, int quiet, int per_thread,
		  struct ss_stats_result *out, char *err, size_t errlen)
{
	size_t nfiles = 0, cap = 0, nrec = 0, i, m;
	char **files = NULL;
	struct ss_sym *sym;
	int rc;

	memset(out, 0, sizeof(*out));
	sym = ss_run_sym(dir, backend, quiet, err, errlen);
	if (!sym)
		return 2;
	rc = ss_run_list_traces(dir, &files, &nfiles, err, errlen);
	for (i = 0; i < nfiles && !rc; i++) {
		struct ss_reader *r = ss_run_reader(files[i], err, errlen);
		size_t before = nrec;
		if (!r) {
			rc = 2;
			break;
		}
		rc = ss_stats_file(r, sym, per_thread, out, &cap, &nrec, err, errlen);
		if (rc < 0) {
			snprintf(err, errlen, "out of memory");
			rc = 1;
		}
		if (nrec > before)
			out->nprocesses++;
		ss_reader_free(r);
	}
	if (!rc && !nrec) {
		snprintf(err, errlen,
			 "%s: no whole-run statistics in this run (record it with 'stats: whole_run')",
			 dir);
		rc = 2;
	}
	if (rc)
		goto done;
	/* merge equal (name[, pid, tid]) rows */
	qsort(out->rows, out->nrows, sizeof(*out->rows), ss_stats_cmp_row);
	for (i = 0, m = 0; i < out->nrows; i++) {
		struct ss_agg_row *a = &out->rows[i];
		if (m && !ss_stats_cmp_row(&out->rows[m - 1], a)) {
			struct ss_agg_row *b = &out->rows[m - 1];
			b->calls += a->calls;
			b->self_ns += a->self_ns;
			b->total_ns += a->total_ns;
			if (!b->caller) {
				b->caller = a->caller;
				a->caller = NULL;
			}
			free((char *)a->name);
			free((char *)a->thread);
			free((char *)a->caller);
		} else {
			out->rows[m++] = *a;
		}
	}
	out->nrows = m;
done:
	ss_run_list_free(files, nfiles);
	ss_sym_free(sym);
	if (rc)
		ss_stats_result_release(out);
	return rc;
}

void ss_stats_result_release(struct ss_stats_result *res)
{
	for (size_t i = 0; i < res->nrows; i++) {
		free((char *)res->rows[i].name);
		free((char *)res->rows[i].thread);
		free((char *)res->rows[i].caller);
	}
	free(res->rows);
	memset(res, 0, sizeof(*res));
}
