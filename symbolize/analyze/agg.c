/*
 * agg.c - aggregate slices into per-function statistics, calling-context
 * trees, steps and counters (see agg.h for the definitions).
 *
 * Design: slices of a thread arrive as they close, callees before callers.
 * Each thread keeps a stack of closed subtrees that have no caller yet;
 * when a slice closes, the entries that began inside it are its callees:
 * they are popped, merged into one child list and hung under a new node.
 * Consecutive siblings (same depth, disjoint) are merged at once, so the
 * stack holds about one entry per open depth.  Self time falls out of the
 * same walk (duration minus the time of the popped callees).  Recursion is
 * resolved at the end on the finished tree: an activation counts towards
 * total only when no caller on its path has the same name.
 *
 * Must never: keep one record per call, trust that names given with a
 * range or step slice outlive the callback (they are copied), or count a
 * recursive activation twice in total.
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

#define SS_AGG_ROOT UINT32_MAX

struct ss_agg_fstat {
	uint64_t calls, self_ns, total_ns, min_ns, max_ns;
	uint64_t clipped;            /* fragments cut by a window's edge */
	uint64_t complete;           /* slices with no edge cut: min/max */
};

struct ss_agg_entry {
	uint64_t begin, end, busy;
	unsigned depth;
	struct ss_agg_node *forest;
};

/* Most frames of code without hooks put above one slice: stack_depth's
 * limit, and one for "[...]" (docs/stacks.md). */
#define SS_AGG_NATIVE_MAX 129

struct ss_agg_pend {
	uint64_t begin, end, step;
	unsigned depth, flags;
	uint32_t id;
	int has_step;
	unsigned nnative;
	uint32_t native[SS_AGG_NATIVE_MAX]; /* outermost first */
};

struct ss_agg_builder {
	struct ss_agg_entry *st;
	size_t n, cap;
	struct ss_agg_pend *pend;    /* closed at the same time, not yet hung */
	size_t npend, cappend;
	struct ss_agg_node *root;    /* finished subtrees (a sibling list) */
};

struct ss_agg_thread {
	uint64_t pid, tid;
	char *name;
	struct ss_agg_fstat *fs[2];  /* by kind, indexed by name id */
	size_t nfs[2];
	struct ss_agg_builder b[2];
	struct ss_agg_node *tree;    /* its function tree, built on demand */
	int used;
	uint64_t lost;               /* events dropped (SS_EV_LOST markers) */
};

struct ss_agg_aslot {
	uint64_t pid, addr;
	uint32_t id;
	int used;
};

struct ss_agg_stepkey {
	uint64_t pid, step;
	uint32_t name;
	int used;
	uint64_t self_ns;
};

struct ss_agg {
	struct ss_exporter ex;
	uint64_t t0;
	/* names */
	char **names;
	size_t nnames, capnames;
	uint32_t *nhash;             /* id + 1, 0 = empty */
	size_t nhcap;
	struct ss_agg_aslot *acache; /* (pid, addr) -> name id of functions */
	size_t accap, acn;
	/* threads */
	struct ss_agg_thread *threads;
	size_t nthreads, capthreads;
	struct ss_agg_thread *cur;
	/* process names */
	uint64_t *pids;
	size_t npids, cappids;
	/* steps */
	struct ss_agg_step *steps;
	size_t nsteps, capsteps;
	struct ss_agg_stepkey *sk;
	size_t skcap, skn;
	/* counters */
	struct ss_agg_counter *ctrs;
	size_t nctrs, capctrs;
	uint64_t self_sum;
	int finished, totals_done;
	struct ss_agg_node *free_nodes;
	struct ss_agg_node *tree;    /* merged, built on demand */
	struct ss_agg_row *rows;
	int oom;
};

/* ---------------------------------------------------------------- helpers */

static uint64_t ss_agg_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* Id of a name; insert it when `add`.  UINT32_MAX if absent / no memory. */
static uint32_t ss_agg_intern(struct ss_agg *a, const char *s, int add)
{
	size_t i;

	if (a->nhcap) {
		i = ss_hash_str(s) & (a->nhcap - 1);
		while (a->nhash[i]) {
			uint32_t id = a->nhash[i] - 1;
			if (!strcmp(a->names[id], s))
				return id;
			i = (i + 1) & (a->nhcap - 1);
		}
	}
	if (!add)
		return UINT32_MAX;
	if ((a->nnames + 1) * 2 > a->nhcap) {
		size_t nc = a->nhcap ? a->nhcap * 2 : 256, k;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh)
			goto oom;
		for (k = 0; k < a->nnames; k++) {
			size_t j = ss_hash_str(a->names[k]) & (nc - 1);
			while (nh[j])
				j = (j + 1) & (nc - 1);
			nh[j] = (uint32_t)k + 1;
		}
		free(a->nhash);
		a->nhash = nh;
		a->nhcap = nc;
	}
	if (ss_grow((void **)&a->names, &a->capnames, a->nnames, sizeof(char *), 16))
		goto oom;
	a->names[a->nnames] = strdup(s);
	if (!a->names[a->nnames])
		goto oom;
	i = ss_hash_str(s) & (a->nhcap - 1);
	while (a->nhash[i])
		i = (i + 1) & (a->nhcap - 1);
	a->nhash[i] = (uint32_t)a->nnames + 1;
	return (uint32_t)a->nnames++;
oom:
	a->oom = 1;
	return UINT32_MAX;
}

static uint32_t ss_agg_func_id(struct ss_agg *a, uint64_t pid, const struct ss_slice *s)
{
	size_t i;
	uint32_t id;

	if (a->accap) {
		i = ss_agg_mix(s->addr ^ (pid << 40)) & (a->accap - 1);
		while (a->acache[i].used) {
			if (a->acache[i].addr == s->addr && a->acache[i].pid == pid)
				return a->acache[i].id;
			i = (i + 1) & (a->accap - 1);
		}
	}
	id = ss_agg_intern(a, s->name ? s->name : "?", 1);
	if (id == UINT32_MAX)
		return id;
	if ((a->acn + 1) * 2 > a->accap) {
		size_t nc = a->accap ? a->accap * 2 : 1024, k;
		struct ss_agg_aslot *nt = calloc(nc, sizeof(*nt));
		if (!nt)
			return id;  /* works without the cache */
		for (k = 0; k < a->accap; k++) {
			size_t j;
			if (!a->acache[k].used)
				continue;
			j = ss_agg_mix(a->acache[k].addr ^ (a->acache[k].pid << 40)) & (nc - 1);
			while (nt[j].used)
				j = (j + 1) & (nc - 1);
			nt[j] = a->acache[k];
		}
		free(a->acache);
		a->acache = nt;
		a->accap = nc;
	}
	i = ss_agg_mix(s->addr ^ (pid << 40)) & (a->accap - 1);
	while (a->acache[i].used)
		i = (i + 1) & (a->accap - 1);
	a->acache[i].used = 1;
	a->acache[i].pid = pid;
	a->acache[i].addr = s->addr;
	a->acache[i].id = id;
	a->acn++;
	return id;
}

static struct ss_agg_node *ss_agg_node_new(struct ss_agg *a, uint32_t name)
{
	struct ss_agg_node *n = a->free_nodes;

	if (n)
		a->free_nodes = n->next;
	else if (!(n = malloc(sizeof(*n)))) {
		a->oom = 1;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->name = name;
	return n;
}

static void ss_agg_node_put(struct ss_agg *a, struct ss_agg_node *n)
{
	n->next = a->free_nodes;
	a->free_nodes = n;
}

static void ss_agg_tree_free(struct ss_agg_node *n)
{
	while (n) {
		struct ss_agg_node *next = n->next;
		ss_agg_tree_free(n->child);
		free(n);
		n = next;
	}
}

/* Move the sibling list `src` into the sibling list *dst, merging nodes
 * of the same name (and their children, recursively). */
static void ss_agg_merge(struct ss_agg *a, struct ss_agg_node **dst,
			 struct ss_agg_node *src)
{
	while (src) {
		struct ss_agg_node *s = src, *d;
		src = src->next;
		for (d = *dst; d && (d->name != s->name || d->native != s->native);
		     d = d->next)
			;
		if (!d) {
			s->next = *dst;
			*dst = s;
			continue;
		}
		d->calls += s->calls;
		d->self_ns += s->self_ns;
		d->total_ns += s->total_ns;
		ss_agg_merge(a, &d->child, s->child);
		ss_agg_node_put(a, s);
	}
}

/* A copy of the sibling list src merged into *dst (src is left alone). */
static void ss_agg_merge_copy(struct ss_agg *a, struct ss_agg_node **dst,
			      const struct ss_agg_node *src)
{
	for (; src; src = src->next) {
		struct ss_agg_node *d;
		for (d = *dst; d && (d->name != src->name || d->native != src->native);
		     d = d->next)
			;
		if (!d) {
			d = ss_agg_node_new(a, src->name);
			if (!d)
				return;
			d->native = src->native;
			d->next = *dst;
			*dst = d;
		}
		d->calls += src->calls;
		d->self_ns += src->self_ns;
		d->total_ns += src->total_ns;
		ss_agg_merge_copy(a, &d->child, src->child);
	}
}

/* ---------------------------------------------------------------- threads */

static struct ss_agg_thread *ss_agg_thread_get(struct ss_agg *a, uint64_t pid,
					       uint64_t tid)
{
	size_t i;

	if (a->cur && a->cur->pid == pid && a->cur->tid == tid)
		return a->cur;
	for (i = 0; i < a->nthreads; i++)
		if (a->threads[i].pid == pid && a->threads[i].tid == tid)
			return a->cur = &a->threads[i];
	if (ss_grow((void **)&a->threads, &a->capthreads, a->nthreads,
			sizeof(*a->threads), 16)) {
		a->oom = 1;
		return NULL;
	}
	memset(&a->threads[a->nthreads], 0, sizeof(*a->threads));
	a->threads[a->nthreads].pid = pid;
	a->threads[a->nthreads].tid = tid;
	return a->cur = &a->threads[a->nthreads++];
}

static struct ss_agg_fstat *ss_agg_fstat(struct ss_agg *a, struct ss_agg_thread *t,
					 int kind, uint32_t id)
{
	if (id >= t->nfs[kind]) {
		size_t nc = t->nfs[kind] ? t->nfs[kind] : 64;
		struct ss_agg_fstat *nf;
		while (nc <= id)
			nc *= 2;
		nf = realloc(t->fs[kind], nc * sizeof(*nf));
		if (!nf) {
			a->oom = 1;
			return NULL;
		}
		memset(nf + t->nfs[kind], 0, (nc - t->nfs[kind]) * sizeof(*nf));
		t->fs[kind] = nf;
		t->nfs[kind] = nc;
	}
	return &t->fs[kind][id];
}

static void ss_agg_flush(struct ss_agg *a, struct ss_agg_thread *t, int kind);

static void ss_agg_builder_finish(struct ss_agg *a, struct ss_agg_thread *t, int kind)
{
	struct ss_agg_builder *b = &t->b[kind];

	ss_agg_flush(a, t, kind);
	while (b->n) {
		b->n--;
		ss_agg_merge(a, &b->root, b->st[b->n].forest);
	}
}

static void ss_agg_step_add(struct ss_agg *a, uint64_t pid, uint64_t step,
			    uint32_t name, uint64_t self)
{
	size_t i;

	if ((a->skn + 1) * 2 > a->skcap) {
		size_t nc = a->skcap ? a->skcap * 2 : 1024, k;
		struct ss_agg_stepkey *nt = calloc(nc, sizeof(*nt));
		if (!nt) {
			a->oom = 1;
			return;
		}
		for (k = 0; k < a->skcap; k++) {
			size_t j;
			if (!a->sk[k].used)
				continue;
			j = ss_agg_mix(a->sk[k].pid * 31 + a->sk[k].step * 1000003 +
				       a->sk[k].name) & (nc - 1);
			while (nt[j].used)
				j = (j + 1) & (nc - 1);
			nt[j] = a->sk[k];
		}
		free(a->sk);
		a->sk = nt;
		a->skcap = nc;
	}
	i = ss_agg_mix(pid * 31 + step * 1000003 + name) & (a->skcap - 1);
	while (a->sk[i].used) {
		if (a->sk[i].pid == pid && a->sk[i].step == step && a->sk[i].name == name) {
			a->sk[i].self_ns += self;
			return;
		}
		i = (i + 1) & (a->skcap - 1);
	}
	a->sk[i].used = 1;
	a->sk[i].pid = pid;
	a->sk[i].step = step;
	a->sk[i].name = name;
	a->sk[i].self_ns = self;
	a->skn++;
}

/* ---------------------------------------------------------------- exporter */

static int ss_agg_begin(void *ctx, uint64_t t0_ns)
{
	struct ss_agg *a = ctx;

	a->t0 = t0_ns;
	return 0;
}

static void ss_agg_process(void *ctx, uint64_t pid, const char *name)
{
	struct ss_agg *a = ctx;
	size_t i;

	for (i = 0; i < a->npids; i++)
		if (a->pids[i] == pid)
			return;
	if (!ss_grow((void **)&a->pids, &a->cappids, a->npids, sizeof(*a->pids), 16))
		a->pids[a->npids++] = pid;
}

static void ss_agg_thread_cb(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_agg *a = ctx;
	struct ss_agg_thread *t = ss_agg_thread_get(a, pid, tid);

	if (t && !t->name)
		t->name = strdup(name);
}

/* Hang one closed slice into the tree of its thread. */
static void ss_agg_close(struct ss_agg *a, struct ss_agg_thread *t, int kind,
			 const struct ss_agg_pend *s)
{
	struct ss_agg_builder *b = &t->b[kind];
	struct ss_agg_fstat *fs;
	struct ss_agg_node *forest = NULL, *node;
	uint64_t dur, childsum = 0, self;
	unsigned i;

	dur = s->end > s->begin ? s->end - s->begin : 0;
	while (b->n && b->st[b->n - 1].begin >= s->begin) {
		struct ss_agg_entry *e = &b->st[--b->n];
		childsum += e->busy;
		if (!forest)
			forest = e->forest;
		else
			ss_agg_merge(a, &forest, e->forest);
	}
	self = dur > childsum ? dur - childsum : 0;
	node = ss_agg_node_new(a, s->id);
	if (!node)
		return;
	/* a call cut at a window's start began before it: the same call
	 * shows in every window it spans, so it is not counted again */
	node->calls = (s->flags & SS_SLICE_CLIPPED_BEGIN) ? 0 : 1;
	node->self_ns = self;
	node->total_ns = dur;
	node->child = forest;
	for (i = s->nnative; i-- > 0;) {  /* its callers without hooks */
		struct ss_agg_node *w = ss_agg_node_new(a, s->native[i]);
		if (!w)
			break;
		w->native = 1;
		w->calls = node->calls;
		w->total_ns = dur;
		w->child = node;
		node = w;
	}

	fs = ss_agg_fstat(a, t, kind, s->id);
	if (fs) {
		if (s->flags & (SS_SLICE_CLIPPED_BEGIN | SS_SLICE_CLIPPED_END)) {
			fs->clipped++; /* min/max would be window lengths */
		} else {
			if (!fs->complete || dur < fs->min_ns)
				fs->min_ns = dur;
			if (dur > fs->max_ns)
				fs->max_ns = dur;
			fs->complete++;
		}
		if (!(s->flags & SS_SLICE_CLIPPED_BEGIN))
			fs->calls++;
		fs->self_ns += self;
	}
	if (kind == SS_AGG_FUNCTION) {
		a->self_sum += self;
		if (s->has_step && self)
			ss_agg_step_add(a, t->pid, s->step, s->id, self);
	}

	if (b->n && b->st[b->n - 1].depth == s->depth &&
	    b->st[b->n - 1].end <= s->begin &&
	    !(s->flags & SS_SLICE_CLIPPED_BEGIN)) {
		struct ss_agg_entry *e = &b->st[b->n - 1];
		ss_agg_merge(a, &e->forest, node);
		e->busy += dur;
		e->end = s->end;
		return;
	}
	if (ss_grow((void **)&b->st, &b->cap, b->n, sizeof(*b->st), 16)) {
		a->oom = 1;
		ss_agg_merge(a, &b->root, node);
		return;
	}
	b->st[b->n].begin = s->begin;
	b->st[b->n].end = s->end;
	b->st[b->n].busy = dur;
	b->st[b->n].depth = s->depth;
	b->st[b->n].forest = node;
	b->n++;
}

/* Slices that end at the same time may come outermost first (frames closed
 * together at a window's end): hold them until the time moves on, then
 * close them innermost first. */
static void ss_agg_flush(struct ss_agg *a, struct ss_agg_thread *t, int kind)
{
	struct ss_agg_builder *b = &t->b[kind];
	size_t i, j;

	for (i = 1; i < b->npend; i++)  /* stable, by depth descending */
		for (j = i; j > 0 && b->pend[j - 1].depth < b->pend[j].depth; j--) {
			struct ss_agg_pend x = b->pend[j];
			b->pend[j] = b->pend[j - 1];
			b->pend[j - 1] = x;
		}
	for (i = 0; i < b->npend; i++)
		ss_agg_close(a, t, kind, &b->pend[i]);
	b->npend = 0;
}

/* The frames of code without hooks between a slice and its instrumented
 * caller, from its native stack (docs/stacks.md, "Stacks in flame graphs"):
 * frames 1 .. stack_caller-1; a stack cut short of every open caller gives
 * all its frames under "[...]"; a slice with no open caller gets none
 * (the start code above main stays out). */
static void ss_agg_native(struct ss_agg *a, struct ss_agg_pend *p,
			  const struct ss_slice *s)
{
	const struct ss_stack *st = s->stack;
	size_t k, top;

	if (st->n < 2 || !st->names)
		return;
	if (s->stack_caller) {
		top = s->stack_caller;
	} else {
		if (!s->depth)
			return;
		top = st->n;
		p->native[p->nnative++] = ss_agg_intern(a, "[...]", 1);
	}
	if (top > SS_AGG_NATIVE_MAX - 1)
		top = SS_AGG_NATIVE_MAX - 1;
	for (k = top; k-- > 1;)
		p->native[p->nnative++] =
			ss_agg_intern(a, st->names[k] ? st->names[k] : "?", 1);
	for (k = 0; k < p->nnative; k++)
		if (p->native[k] == UINT32_MAX) {  /* out of memory */
			p->nnative = 0;
			return;
		}
}

static void ss_agg_slice(void *ctx, uint64_t pid, uint64_t tid,
			 const struct ss_slice *s)
{
	struct ss_agg *a = ctx;
	struct ss_agg_thread *t;
	struct ss_agg_builder *b;
	struct ss_agg_pend *p;
	uint32_t id;
	int kind;

	if (s->cat == SS_SLICE_MARKER) {
		/* no time of its own; the report says what was lost */
		if (s->marker == SS_EV_LOST && (t = ss_agg_thread_get(a, pid, tid)))
			t->lost += s->marker_arg;
		return;
	}
	if (s->cat == SS_SLICE_STEP) {
		struct ss_agg_step *st;
		if (ss_grow((void **)&a->steps, &a->capsteps, a->nsteps,
				sizeof(*st), 16)) {
			a->oom = 1;
			return;
		}
		st = &a->steps[a->nsteps++];
		st->pid = pid;
		st->tid = tid;
		st->step = s->has_step ? s->step : 0;
		st->cycle = s->has_step ? s->cycle : 0;
		st->begin_ns = s->begin_ns;
		st->end_ns = s->end_ns > s->begin_ns ? s->end_ns : s->begin_ns;
		return;
	}
	t = ss_agg_thread_get(a, pid, tid);
	if (!t)
		return;
	t->used = 1;
	kind = s->cat == SS_SLICE_RANGE ? SS_AGG_RANGE : SS_AGG_FUNCTION;
	id = kind == SS_AGG_FUNCTION ? ss_agg_func_id(a, pid, s) :
				       ss_agg_intern(a, s->name ? s->name : "?", 1);
	if (id == UINT32_MAX)
		return;
	b = &t->b[kind];
	if (b->npend && b->pend[0].end != s->end_ns)
		ss_agg_flush(a, t, kind);
	if (ss_grow((void **)&b->pend, &b->cappend, b->npend, sizeof(*p), 16)) {
		a->oom = 1;
		return;
	}
	p = &b->pend[b->npend++];
	p->begin = s->begin_ns;
	p->end = s->end_ns;
	p->depth = s->depth;
	p->flags = s->flags;
	p->id = id;
	p->has_step = s->has_step;
	p->step = s->step;
	p->nnative = 0;
	if (kind == SS_AGG_FUNCTION && s->stack)
		ss_agg_native(a, p, s);
}

static void ss_agg_counter_cb(void *ctx, uint64_t pid, const char *name,
			      uint64_t ns, double value)
{
	struct ss_agg *a = ctx;
	struct ss_agg_counter *c = NULL;
	size_t i;

	for (i = 0; i < a->nctrs; i++)
		if (a->ctrs[i].pid == pid && !strcmp(a->ctrs[i].name, name))
			c = &a->ctrs[i];
	if (!c) {
		if (ss_grow((void **)&a->ctrs, &a->capctrs, a->nctrs, sizeof(*c), 16))
			goto oom;
		c = &a->ctrs[a->nctrs];
		memset(c, 0, sizeof(*c));
		c->pid = pid;
		if (!(c->name = strdup(name)))
			goto oom;
		a->nctrs++;
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		uint64_t *nn = realloc(c->ns, nc * sizeof(*nn));
		double *nv;
		if (!nn)
			goto oom;
		c->ns = nn;
		nv = realloc(c->value, nc * sizeof(*nv));
		if (!nv)
			goto oom;
		c->value = nv;
		c->cap = nc;
	}
	c->ns[c->n] = ns;
	c->value[c->n] = value;
	c->n++;
	return;
oom:
	a->oom = 1;
}

static int ss_agg_cmp_step(const void *x, const void *y)
{
	const struct ss_agg_step *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->begin_ns != b->begin_ns)
		return a->begin_ns < b->begin_ns ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int ss_agg_end(void *ctx, char *err, size_t errlen)
{
	struct ss_agg *a = ctx;
	size_t i;

	for (i = 0; i < a->nthreads; i++) {
		ss_agg_builder_finish(a, &a->threads[i], 0);
		ss_agg_builder_finish(a, &a->threads[i], 1);
	}
	if (a->nsteps)
		qsort(a->steps, a->nsteps, sizeof(*a->steps), ss_agg_cmp_step);
	a->finished = 1;
	if (a->oom) {
		snprintf(err, errlen, "out of memory while aggregating");
		return -1;
	}
	return 0;
}

static void ss_agg_release_cb(void *ctx)
{
	(void)ctx;  /* owned by the aggregator */
}

struct ss_agg *ss_agg_new(void)
{
	struct ss_agg *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->ex.ctx = a;
	a->ex.begin = ss_agg_begin;
	a->ex.process = ss_agg_process;
	a->ex.thread = ss_agg_thread_cb;
	a->ex.slice = ss_agg_slice;
	a->ex.counter = ss_agg_counter_cb;
	a->ex.end = ss_agg_end;
	a->ex.release = ss_agg_release_cb;
	return a;
}

struct ss_exporter *ss_agg_exporter(struct ss_agg *a)
{
	return &a->ex;
}

void ss_agg_free(struct ss_agg *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nnames; i++)
		free(a->names[i]);
	free(a->names);
	free(a->nhash);
	free(a->acache);
	for (i = 0; i < a->nthreads; i++) {
		struct ss_agg_thread *t = &a->threads[i];
		int k;
		for (k = 0; k < 2; k++) {
			size_t j;
			for (j = 0; j < t->b[k].n; j++)
				ss_agg_tree_free(t->b[k].st[j].forest);
			free(t->b[k].st);
			free(t->b[k].pend);
			ss_agg_tree_free(t->b[k].root);
			free(t->fs[k]);
		}
		free(t->name);
		ss_agg_tree_free(t->tree);
	}
	free(a->threads);
	free(a->pids);
	free(a->steps);
	free(a->sk);
	for (i = 0; i < a->nctrs; i++) {
		free(a->ctrs[i].name);
		free(a->ctrs[i].ns);
		free(a->ctrs[i].value);
	}
	free(a->ctrs);
	ss_agg_tree_free(a->tree);
	while (a->free_nodes) {
		struct ss_agg_node *n = a->free_nodes;
		a->free_nodes = n->next;
		free(n);
	}
	free(a->rows);
	free(a);
}

/* ---------------------------------------------------------------- results */

/* total (recursion counted once) of every name of a tree into fs */
static void ss_agg_totals_walk(const struct ss_agg_node *n, uint32_t *onpath,
			       struct ss_agg_fstat *fs, size_t nfs)
{
	for (; n; n = n->next) {
		int counted = !n->native && n->name < nfs;
		if (counted) {
			if (!onpath[n->name])
				fs[n->name].total_ns += n->total_ns;
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
				t->fs[k][j].total_ns = 0;
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
				if (f->complete && (!row->complete || f->min_ns < row->min_ns))
					row->min_ns = f->min_ns;
				if (f->complete && f->max_ns > row->max_ns)
					row->max_ns = f->max_ns;
				row->complete += f->complete;
			}
		}
	}
out:
	a->rows = r;
	*rows = r;
	return n;
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

size_t ss_agg_thread_trees(struct ss_agg *a, struct ss_agg_thread_tree **out)
{
	struct ss_agg_thread_tree *tt;
	size_t i, n = 0;

	*out = NULL;
	tt = calloc(a->nthreads ? a->nthreads : 1, sizeof(*tt));
	if (!tt)
		return 0;
	for (i = 0; i < a->nthreads; i++) {
		struct ss_agg_thread *t = &a->threads[i];
		const struct ss_agg_node *c;
		if (!t->b[0].root)
			continue;
		if (!t->tree) {
			t->tree = ss_agg_node_new(a, SS_AGG_ROOT);
			if (!t->tree)
				break;
			ss_agg_merge_copy(a, &t->tree->child, t->b[0].root);
			for (c = t->b[0].root; c; c = c->next)
				t->tree->total_ns += c->total_ns;
		}
		tt[n].pid = t->pid;
		tt[n].tid = t->tid;
		tt[n].thread = t->name;
		tt[n].root = t->tree;
		n++;
	}
	qsort(tt, n, sizeof(*tt), ss_agg_cmp_tt);
	*out = tt;
	return n;
}

size_t ss_agg_steps(const struct ss_agg *a, const struct ss_agg_step **steps)
{
	*steps = a->steps;
	return a->nsteps;
}

uint64_t ss_agg_step_self(const struct ss_agg *a, const char *name,
			  const struct ss_agg_step *s)
{
	uint32_t id = ss_agg_intern((struct ss_agg *)a, name, 0);
	size_t i;

	if (id == UINT32_MAX || !a->skcap)
		return 0;
	i = ss_agg_mix(s->pid * 31 + s->step * 1000003 + id) & (a->skcap - 1);
	while (a->sk[i].used) {
		if (a->sk[i].pid == s->pid && a->sk[i].step == s->step &&
		    a->sk[i].name == id)
			return a->sk[i].self_ns;
		i = (i + 1) & (a->skcap - 1);
	}
	return 0;
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
	case SS_AGG_SORT_AVG: return r->calls ? r->total_ns / r->calls : 0;
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
