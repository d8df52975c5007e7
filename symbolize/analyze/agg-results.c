/*
 * agg-results.c - what a finished aggregate (agg.c) answers: the rows of
 * the report (per function, or per function and thread), totals with
 * recursion counted once, the call trees per thread, steps and cycles,
 * counters, folded stacks, the sort orders and time formatting, and
 * ss_agg_walk, which reads a run directory into an aggregate.
 *
 * Design: the tree is complete when these are asked; totals are resolved
 * once, on the first question that needs them, by one walk that keeps the
 * names on the current path (a name already on it is a recursive
 * activation and adds no total).
 *
 * Must never: change the tree it reads (except that one totals pass), or
 * count a recursive activation twice in total.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "reader.h"
#include "run.h"
#include "slices.h"
#include "sym.h"
#include "util.h"
#include "agg-state.h"

/* ---------------------------------------------------------------- results */

/* total (recursion counted once) of every name of a tree into fs */
static void ss_agg_totals_walk(const struct ss_agg_node *n, uint32_t *onpath,
			       struct ss_agg_fstat *fs, size_t nfs)
{
	for (; n; n = n->next) {
		int counted = !n->native && n->name < nfs;
		if (counted) {
			if (!onpath[n->name]) {
				fs[n->name].total_ns += n->total_ns;
				fs[n->name].off_ns += n->off_ns;
			}
			onpath[n->name]++;
		}
		ss_agg_totals_walk(n->child, onpath, fs, nfs);
		if (counted)
			onpath[n->name]--;
	}
}

static void ss_agg_totals(struct ss_agg *a)
{
	uint32_t *onpath;
	size_t i;
	int k;

	if (a->totals_done)
		return;
	a->totals_done = 1;
	onpath = calloc(a->nnames + 1, sizeof(*onpath));
	if (!onpath) {
		a->oom = 1;
		return;
	}
	for (i = 0; i < a->nthreads; i++)
		for (k = 0; k < 2; k++) {
			struct ss_agg_thread *t = &a->threads[i];
			size_t j;
			for (j = 0; j < t->nfs[k]; j++)
				t->fs[k][j].total_ns = t->fs[k][j].off_ns = 0;
			ss_agg_totals_walk(t->b[k].root, onpath, t->fs[k], t->nfs[k]);
		}
	free(onpath);
}

size_t ss_agg_rows(struct ss_agg *a, int per_thread, struct ss_agg_row **rows)
{
	size_t n = 0, cap = 0, i, j;
	int k;
	struct ss_agg_row *r = NULL;

	ss_agg_totals(a);
	free(a->rows);
	a->rows = NULL;
	for (k = 0; k < 2; k++) {
		size_t first = n;
		for (i = 0; i < a->nthreads; i++) {
			struct ss_agg_thread *t = &a->threads[i];
			for (j = 0; j < t->nfs[k] && j < a->nnames; j++) {
				const struct ss_agg_fstat *f = &t->fs[k][j];
				struct ss_agg_row *row = NULL;
				size_t m;
				if (!f->calls && !f->clipped)
					continue;
				if (!per_thread)
					for (m = first; m < n; m++)
						if (r[m].name == a->names[j]) {
							row = &r[m];
							break;
						}
				if (!row) {
					if (ss_grow((void **)&r, &cap, n, sizeof(*r), 16)) {
						a->oom = 1;
						goto out;
					}
					row = &r[n++];
					memset(row, 0, sizeof(*row));
					row->name = a->names[j];
					row->kind = (enum ss_agg_kind)k;
					if (per_thread) {
						row->pid = t->pid;
						row->tid = t->tid;
						row->thread = t->name;
					}
				}
				row->calls += f->calls;
				row->clipped += f->clipped;
				row->self_ns += f->self_ns;
				row->total_ns += f->total_ns;
				row->off_ns += f->off_ns;
				row->off_self_ns += f->off_self_ns;
				row->off_most += f->off_most;
				/* the fastest call: an ordered one's when there
				 * is one (agg.h) */
				if (f->complete && (f->ordered && !row->ordered ? 1
						    : !f->ordered && row->ordered ? 0
						    : !row->complete || f->min_ns < row->min_ns))
					row->min_ns = f->min_ns, row->min_off_ns = f->min_off_ns;
				if (f->complete && (!row->complete || f->min_any_ns < row->min_any_ns))
					row->min_any_ns = f->min_any_ns,
					row->min_any_off_ns = f->min_any_off_ns;
				if (f->complete && f->max_ns > row->max_ns)
					row->max_ns = f->max_ns, row->max_off_ns = f->max_off_ns;
				row->complete += f->complete;
				row->ordered += f->ordered;
				row->complete_ns += f->complete_ns;
			}
		}
	}
	/* an ordered fastest call far above an unordered one: that one was
	 * truly shorter, not read early (agg.h) */
	for (size_t i = 0; i < n; i++)
		if (r[i].ordered && r[i].min_any_ns + SS_AGG_EARLY_NS < r[i].min_ns)
			r[i].min_ns = r[i].min_any_ns, r[i].min_off_ns = r[i].min_any_off_ns;
out:
	a->rows = r;
	*rows = r;
	return n;
}

uint64_t ss_agg_row_avg(const struct ss_agg_row *r)
{
	if (r->clipped)
		return r->complete ? r->complete_ns / r->complete : 0;
	return r->calls ? r->total_ns / r->calls : 0;
}

const char *ss_agg_stop_why(unsigned r)
{
	switch (r) {
	case SS_STOP_SIZE_CAP: return "max_trace_mb reached";
	case SS_STOP_DISK_FULL: return "disk full";
	case SS_STOP_ERROR: return "write error";
	default: return "unknown reason";
	}
}

int ss_agg_stopped(const struct ss_agg *a, uint64_t *step, uint64_t *at_ns,
		   const char **why)
{
	if (!a->stopped)
		return 0;
	*step = a->stop_has_step ? a->stop_step : UINT64_MAX;
	*at_ns = a->stop_ns > a->t0 ? a->stop_ns - a->t0 : 0;
	*why = ss_agg_stop_why(a->stop_reason);
	return 1;
}

uint64_t ss_agg_self_sum(const struct ss_agg *a)
{
	return a->self_sum;
}

size_t ss_agg_nthreads(const struct ss_agg *a)
{
	size_t i, n = 0;

	for (i = 0; i < a->nthreads; i++)
		n += a->threads[i].used;
	return n;
}

int ss_agg_lost(const struct ss_agg *a, size_t *i, uint64_t *pid, uint64_t *tid,
		const char **name, uint64_t *lost)
{
	for (; *i < a->nthreads; (*i)++) {
		const struct ss_agg_thread *t = &a->threads[*i];
		if (!t->lost)
			continue;
		*pid = t->pid;
		*tid = t->tid;
		*name = t->name;
		*lost = t->lost;
		(*i)++;
		return 1;
	}
	return 0;
}

size_t ss_agg_nprocesses(const struct ss_agg *a)
{
	return a->npids;
}

const char *ss_agg_name(const struct ss_agg *a, uint32_t id)
{
	return id < a->nnames ? a->names[id] : "(all)";
}

const struct ss_agg_node *ss_agg_tree(struct ss_agg *a)
{
	size_t i;

	if (a->tree)
		return a->tree;
	a->tree = ss_agg_node_new(a, SS_AGG_ROOT);
	if (!a->tree)
		return NULL;
	for (i = 0; i < a->nthreads; i++) {
		const struct ss_agg_node *n;
		ss_agg_merge_copy(a, &a->tree->child, a->threads[i].b[0].root);
		for (n = a->threads[i].b[0].root; n; n = n->next)
			a->tree->total_ns += n->total_ns;
	}
	return a->tree;
}

static int ss_agg_cmp_tt(const void *x, const void *y)
{
	const struct ss_agg_thread_tree *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The forest under one root named SS_AGG_ROOT, built once into *cache
 * (NULL: no forest, or no memory). */
static struct ss_agg_node *ss_agg_rooted(struct ss_agg *a, struct ss_agg_node **cache,
					 const struct ss_agg_node *forest)
{
	const struct ss_agg_node *c;

	if (*cache || !forest)
		return *cache;
	*cache = ss_agg_node_new(a, SS_AGG_ROOT);
	if (!*cache)
		return NULL;
	ss_agg_merge_copy(a, &(*cache)->child, forest);
	for (c = forest; c; c = c->next)
		(*cache)->total_ns += c->total_ns;
	return *cache;
}

/* Each thread's call tree (flame 0) or flame tree (flame 1), by pid and
 * tid. */
static size_t ss_agg_threads_rooted(struct ss_agg *a, struct ss_agg_thread_tree **out,
				    int flame)
{
	struct ss_agg_thread_tree *tt;
	size_t i, n = 0;

	*out = NULL;
	tt = calloc(a->nthreads ? a->nthreads : 1, sizeof(*tt));
	if (!tt)
		return 0;
	for (i = 0; i < a->nthreads; i++) {
		struct ss_agg_thread *t = &a->threads[i];
		struct ss_agg_node *root = flame ? ss_agg_rooted(a, &t->flame, t->own_root)
						 : ss_agg_rooted(a, &t->tree, t->b[0].root);
		if (!root)
			continue;
		tt[n].pid = t->pid;
		tt[n].tid = t->tid;
		tt[n].thread = t->name;
		tt[n].root = root;
		n++;
	}
	qsort(tt, n, sizeof(*tt), ss_agg_cmp_tt);
	*out = tt;
	return n;
}

size_t ss_agg_thread_trees(struct ss_agg *a, struct ss_agg_thread_tree **out)
{
	return ss_agg_threads_rooted(a, out, 0);
}

size_t ss_agg_flame_threads(struct ss_agg *a, struct ss_agg_thread_tree **out)
{
	return ss_agg_threads_rooted(a, out, 1);
}

/* Each thread's calls under a frame of its name: a worker's functions are
 * not roots beside main. */
const struct ss_agg_node *ss_agg_flame_tree(struct ss_agg *a)
{
	struct ss_agg_thread_tree *tt;
	size_t n, i;

	if (a->flame)
		return a->flame;
	a->flame = ss_agg_node_new(a, SS_AGG_ROOT);
	if (!a->flame)
		return NULL;
	n = ss_agg_flame_threads(a, &tt);
	for (i = 0; i < n; i++) {
		struct ss_agg_node *th, *d;
		char tn[64];
		uint32_t id;
		if (!tt[i].thread)
			snprintf(tn, sizeof(tn), "thread %llu", (unsigned long long)tt[i].tid);
		id = ss_agg_intern(a, tt[i].thread ? tt[i].thread : tn, 1);
		if (id == UINT32_MAX)
			break;
		for (d = a->flame->child; d && (d->name != id || d->native != SS_AGG_FRAME_THREAD);
		     d = d->next)
			;
		if (!(th = d)) {
			if (!(th = ss_agg_node_new(a, id)))
				break;
			th->native = SS_AGG_FRAME_THREAD;
			th->next = a->flame->child;
			a->flame->child = th;
		}
		ss_agg_merge_copy(a, &th->child, tt[i].root->child);
		th->total_ns += tt[i].root->total_ns;
		a->flame->total_ns += tt[i].root->total_ns;
	}
	free(tt);
	return a->flame;
}

size_t ss_agg_steps(const struct ss_agg *a, const struct ss_agg_step **steps)
{
	*steps = a->steps;
	return a->nsteps;
}

static const struct ss_agg_stepkey *ss_agg_step_key(const struct ss_agg *a, const char *name,
						    const struct ss_agg_step *s)
{
	uint32_t id = ss_agg_intern((struct ss_agg *)a, name, 0);
	size_t i;

	if (id == UINT32_MAX || !a->skcap)
		return NULL;
	i = ss_agg_mix(s->pid * 31 + s->step * 1000003 + id) & (a->skcap - 1);
	while (a->sk[i].used) {
		if (a->sk[i].pid == s->pid && a->sk[i].step == s->step &&
		    a->sk[i].name == id)
			return &a->sk[i];
		i = (i + 1) & (a->skcap - 1);
	}
	return NULL;
}

uint64_t ss_agg_step_self(const struct ss_agg *a, const char *name,
			  const struct ss_agg_step *s)
{
	const struct ss_agg_stepkey *k = ss_agg_step_key(a, name, s);
	return k ? k->self_ns : 0;
}

uint64_t ss_agg_step_off_self(const struct ss_agg *a, const char *name,
			      const struct ss_agg_step *s)
{
	const struct ss_agg_stepkey *k = ss_agg_step_key(a, name, s);
	return k ? k->off_self_ns : 0;
}

static int ss_agg_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

size_t ss_agg_cycles(const struct ss_agg *a, struct ss_agg_cycle **out)
{
	struct ss_agg_cycle *c = NULL;
	uint64_t *v;
	size_t n = 0, i, j;

	*out = NULL;
	if (!a->nsteps)
		return 0;
	v = malloc(a->nsteps * sizeof(*v));
	c = calloc(a->nsteps, sizeof(*c));
	if (!v || !c) {
		free(v);
		free(c);
		return 0;
	}
	for (i = 0; i < a->nsteps; i++) {
		for (j = 0; j < n && c[j].cycle != a->steps[i].cycle; j++)
			;
		if (j == n)
			c[n++].cycle = a->steps[i].cycle;
	}
	for (i = 1; i < n; i++)  /* few cycles: insertion sort */
		for (j = i; j > 0 && c[j - 1].cycle > c[j].cycle; j--) {
			struct ss_agg_cycle t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	for (j = 0; j < n; j++) {
		size_t m = 0;
		for (i = 0; i < a->nsteps; i++)
			if (a->steps[i].cycle == c[j].cycle)
				v[m++] = a->steps[i].end_ns - a->steps[i].begin_ns;
		qsort(v, m, sizeof(*v), ss_agg_cmp_u64);
		c[j].count = m;
		for (i = 0; i < m; i++)
			c[j].sum_ns += v[i];
		c[j].mean_ns = m ? c[j].sum_ns / m : 0;
		c[j].p50_ns = ss_agg_percentile(v, m, 0.50);
		c[j].p95_ns = ss_agg_percentile(v, m, 0.95);
		c[j].min_ns = m ? v[0] : 0;
		c[j].max_ns = m ? v[m - 1] : 0;
	}
	free(v);
	*out = c;
	return n;
}

size_t ss_agg_counters(const struct ss_agg *a, const struct ss_agg_counter **c)
{
	*c = a->ctrs;
	return a->nctrs;
}

uint64_t ss_agg_t0(const struct ss_agg *a)
{
	return a->t0;
}

/* ---------------------------------------------------------------- folded */

static int ss_agg_cmp_line(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

struct ss_agg_fold {
	char *path;
	size_t len, cap;
	char **lines;
	size_t n, capl;
	int oom;
};

static void ss_agg_fold_walk(struct ss_agg *a, struct ss_agg_fold *f,
			     const struct ss_agg_node *n)
{
	for (; n; n = n->next) {
		const char *name = ss_agg_name(a, n->name);
		size_t nl = strlen(name), old = f->len;
		char *line;
		if (f->len + nl + 2 > f->cap) {
			size_t nc = (f->len + nl + 2) * 2;
			char *np = realloc(f->path, nc);
			if (!np) {
				f->oom = 1;
				return;
			}
			f->path = np;
			f->cap = nc;
		}
		if (f->len)
			f->path[f->len++] = ';';
		memcpy(f->path + f->len, name, nl);
		f->len += nl;
		f->path[f->len] = 0;
		if (n->self_ns) {
			if (asprintf(&line, "%s %llu", f->path,
				     (unsigned long long)n->self_ns) < 0 ||
			    ss_grow((void **)&f->lines, &f->capl, f->n,
					sizeof(char *), 16))
				f->oom = 1;
			else
				f->lines[f->n++] = line;
		}
		ss_agg_fold_walk(a, f, n->child);
		f->len = old;
		if (f->path)
			f->path[old] = 0;
	}
}

int ss_agg_write_folded(struct ss_agg *a, FILE *out)
{
	const struct ss_agg_node *root = ss_agg_tree(a);
	struct ss_agg_fold f;
	size_t i;
	int rc = 0;

	memset(&f, 0, sizeof(f));
	if (root)
		ss_agg_fold_walk(a, &f, root->child);
	if (f.n)
		qsort(f.lines, f.n, sizeof(char *), ss_agg_cmp_line);
	for (i = 0; i < f.n; i++) {
		if (fprintf(out, "%s\n", f.lines[i]) < 0)
			rc = -1;
		free(f.lines[i]);
	}
	free(f.lines);
	free(f.path);
	return f.oom ? -1 : rc;
}

/* ---------------------------------------------------------------- sorting */

int ss_agg_sort_parse(const char *s)
{
	static const char *const names[] = { "total", "self", "avg", "calls",
					     "max", "min", "name" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

static enum ss_agg_sort ss_agg_sort_by;

static uint64_t ss_agg_key(const struct ss_agg_row *r)
{
	switch (ss_agg_sort_by) {
	case SS_AGG_SORT_SELF: return r->self_ns;
	case SS_AGG_SORT_AVG: return ss_agg_row_avg(r);
	case SS_AGG_SORT_CALLS: return r->calls;
	case SS_AGG_SORT_MAX: return r->max_ns;
	case SS_AGG_SORT_MIN: return r->min_ns;
	case SS_AGG_SORT_NAME: return 0;
	default: return r->total_ns;
	}
}

static int ss_agg_cmp_row(const void *x, const void *y)
{
	const struct ss_agg_row *a = x, *b = y;
	uint64_t ka = ss_agg_key(a), kb = ss_agg_key(b);
	int c;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

void ss_agg_sort_rows(struct ss_agg_row *rows, size_t n, enum ss_agg_sort by)
{
	ss_agg_sort_by = by;
	if (n)
		qsort(rows, n, sizeof(*rows), ss_agg_cmp_row);
}

uint64_t ss_agg_percentile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

char *ss_agg_fmt_time(uint64_t ns, char *buf, size_t len)
{
	if (ns >= UINT64_C(1000000000))
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.3fms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.3fus", (double)ns / 1e3);
	else
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

/* ---------------------------------------------------------------- walk */

int ss_agg_walk(const char *dir, const char *backend, int quiet,
		struct ss_exporter **ex, size_t nex, char *err, size_t errlen)
{
	struct ss_run run;
	struct ss_sym *sym;
	size_t i, e;
	int rc;

	sym = ss_run_sym(dir, backend, quiet, err, errlen);
	if (!sym)
		return 2;
	/* markers: the LOST counts (ss_agg_lost) */
	rc = ss_run_open(&run, dir, sym, SS_RUN_MARKERS, err, errlen);
	for (e = 0; !rc && e < nex; e++)
		if (ex[e]->begin(ex[e]->ctx, run.t0)) {
			snprintf(err, errlen, "out of memory");
			rc = 1;
		}
	for (i = 0; !rc && i < run.n; i++)
		ss_run_feed(&run, i, ex, nex, NULL, NULL);
	ss_run_release(&run);
	ss_sym_free(sym);
	return rc;
}
