/*
 * memory-leaks.c - `stepscope memory DIR --leaks`: the blocks allocated in
 * recorded steps (memory.allocations) that were never freed before the
 * process exited, grouped by the function that allocated them (and by the
 * recorded call path below it with --stacks or when the run was recorded
 * with record.stack), count and bytes, largest
 * first, per space (the heap, each CUDA device).
 *
 * How: each process's records are read (read/alloc-read.c); the runtime's
 * exit list (SS_META_ALLOC_LIVE) marks the ALLOCs still live; they are
 * summed per (space, function, path).
 *
 * Never: call a block a leak without the exit list (a process that died
 * or was killed has none: it is named, with no verdict), or write files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-read.h"
#include "alloc-report.h"
#include "memory-leaks.h"
#include "outfile.h"
#include "run.h"

struct leak {
	uint64_t space;
	char name[256];             /* allocating function ("" none) */
	char path[512];             /* its recorded call path */
	uint64_t count, bytes;
};

struct leaks {
	struct leak *v;
	size_t n, cap;
};

static int leak_add(struct leaks *l, uint64_t space, const char *name, const char *path,
		    uint64_t bytes)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].space == space && !strcmp(l->v[i].name, name) &&
		    !strcmp(l->v[i].path, path)) {
			l->v[i].count++;
			l->v[i].bytes += bytes;
			return 0;
		}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		void *p = realloc(l->v, cap * sizeof(*l->v));
		if (!p)
			return -1;
		l->v = p;
		l->cap = cap;
	}
	struct leak *k = &l->v[l->n++];
	k->space = space;
	snprintf(k->name, sizeof(k->name), "%s", name);
	snprintf(k->path, sizeof(k->path), "%s", path);
	k->count = 1;
	k->bytes = bytes;
	return 0;
}

/* Sum of the function's rows (over its paths) for sorting. */
static uint64_t fn_bytes(const struct leaks *l, const struct leak *k)
{
	uint64_t b = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].space == k->space && !strcmp(l->v[i].name, k->name))
			b += l->v[i].bytes;
	return b;
}

static const struct leaks *sort_ctx;
static int leak_cmp(const void *x, const void *y)
{
	const struct leak *a = x, *b = y;
	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	uint64_t fa = fn_bytes(sort_ctx, a), fb = fn_bytes(sort_ctx, b);
	if (fa != fb)
		return fa > fb ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->path, b->path);
}

static void path_of(const struct ss_alloc_data *d, uint32_t node, char *buf, size_t len)
{
	const char *names[64];
	size_t n = 0;
	for (; node && n < 64; node = d->nodes[node - 1].parent)
		names[n++] = d->nodes[node - 1].name;
	buf[0] = 0;
	while (n--) {
		strncat(buf, names[n], len - strlen(buf) - 1);
		if (n)
			strncat(buf, " > ", len - strlen(buf) - 1);
	}
}

static void print(FILE *f, struct leaks *l, int stacks)
{
	char sp[48], b[48];
	uint64_t count = 0, bytes = 0;
	sort_ctx = l;
	if (l->n > 1)  /* l->v is NULL with no leak */
		qsort(l->v, l->n, sizeof(*l->v), leak_cmp);
	fprintf(f, "%-14s  %8s  %14s  %12s  %s\n", "Space", "Blocks", "Bytes", "", "Allocated in");
	for (size_t i = 0; i < l->n;) {
		size_t j = i;
		uint64_t c = 0, s = 0;
		for (; j < l->n && l->v[j].space == l->v[i].space && !strcmp(l->v[j].name, l->v[i].name); j++)
			c += l->v[j].count, s += l->v[j].bytes;
		fprintf(f, "%-14s  %8" PRIu64 "  %14" PRIu64 "  %12s  %s\n",
			ss_alloc_space_name(l->v[i].space, sp, sizeof(sp)), c, s,
			ss_alloc_fmt_bytes((int64_t)s, b, sizeof(b)),
			*l->v[i].name ? l->v[i].name : "(no recorded call)");
		for (size_t k = i; stacks && k < j; k++)
			fprintf(f, "%-14s  %8" PRIu64 "  %14" PRIu64 "  %12s    from %s\n", "",
				l->v[k].count, l->v[k].bytes, "", l->v[k].path);
		count += c;
		bytes += s;
		i = j;
	}
	fprintf(f, "Leaked: %" PRIu64 " block%s, %" PRIu64 " bytes (%s), allocated in recorded "
		"steps and never freed before exit\n", count, count == 1 ? "" : "s", bytes,
		ss_alloc_fmt_bytes((int64_t)bytes, b, sizeof(b)));
}

int ss_memory_leaks(const char *dir, const char *backend, int quiet, int stacks, FILE *out)
{
	struct ss_sym *sym;
	struct ss_run run;
	struct leaks l = { 0 };
	char err[8300];
	size_t with = 0, without = 0, on_but_none = 0, i;
	uint64_t untracked = 0;
	int rc;

	sym = ss_run_sym(dir, backend, quiet, err, sizeof(err));
	if (!sym) {
		fprintf(stderr, "stepscope: memory: %s\n", err);
		return 2;
	}
	rc = ss_run_open(&run, dir, sym, 0, err, sizeof(err));
	for (i = 0; !rc && i < run.n; i++) {
		struct ss_alloc_data d;
		if (ss_alloc_read(run.rs[i], run.sls[i], &d)) {
			snprintf(err, sizeof(err), "out of memory");
			rc = 1;
			break;
		}
		if (!d.nev && !d.have_live) { /* not recorded with memory.allocations, */
			/* or with it on and nothing seen (its own malloc) */
			on_but_none += ss_run_config_has(run.rs[i], "memory.allocations=true");
			ss_alloc_release(&d);
			continue;
		}
		if (!d.have_live) {
			fprintf(stderr, "stepscope: memory: %s: no leak verdict: the process did "
				"not exit through exit() (no list of the blocks still live)\n",
				run.paths[i]);
			without++;
			ss_alloc_release(&d);
			continue;
		}
		with++;
		untracked += d.untracked;
		stacks |= ss_run_config_has(run.rs[i], "record.stack=true");
		for (size_t k = 0; !rc && k < d.nev; k++) {
			const struct ss_alloc_ev *e = &d.ev[k];
			char path[512];
			if (!e->leaked)
				continue;
			path_of(&d, e->node, path, sizeof(path));
			const char *name = e->node ? d.nodes[e->node - 1].name : "";
			if (leak_add(&l, e->space, name, path, e->size))
				rc = 1, snprintf(err, sizeof(err), "out of memory");
		}
		ss_alloc_release(&d);
	}
	if (!rc && !with && !without && on_but_none) {
		snprintf(err, sizeof(err), "%s: no recorded allocations although memory.allocations "
			 "was on: the program's malloc is not one stepscope follows (its own, or a "
			 "static link without stepscope-cc; the run's stderr said which at exit)", dir);
		rc = 2;
	} else if (!rc && !with && !without) {
		snprintf(err, sizeof(err), "%s: no recorded allocations; record with --set "
			 "memory.allocations=true", dir);
		rc = 2;
	}
	if (rc) {
		fprintf(stderr, "stepscope: memory: %s\n", err);
	} else if (with) {
		print(out, &l, stacks);
		if (untracked)
			fprintf(out, "Not followed: %" PRIu64 " blocks (the runtime's table was full): "
				"there may be more leaks\n", untracked);
	}
	free(l.v);
	ss_run_release(&run);
	ss_sym_free(sym);
	return rc ? rc : with ? 0 : 2;
}

int ss_memory_leaks_to(const char *dir, const char *backend, int quiet, int stacks,
		       const char *out)
{
	struct ss_out o;
	char err[8300];
	int rc;

	memset(&o, 0, sizeof(o));
	if (ss_out_open(&o, out ? out : "-", err, sizeof(err))) {
		fprintf(stderr, "stepscope: memory: %s\n", err);
		return 2;
	}
	rc = ss_memory_leaks(dir, backend, quiet, stacks, o.f);
	if (rc) {
		ss_out_abort(&o);
		return rc;
	}
	if (ss_out_commit(&o, 0, err, sizeof(err))) {
		fprintf(stderr, "stepscope: memory: %s\n", err);
		rc = 2;
	}
	ss_out_abort(&o);
	return rc;
}
