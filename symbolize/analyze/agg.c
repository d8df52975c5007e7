/*
 * agg.c - aggregate slices into per-function statistics, calling-context
 * trees, steps and counters (see agg.h for the definitions).
 *
 * Design: slices of a thread arrive as they close, callees before callers.
 * Each thread keeps a stack of closed subtrees that have no caller yet;
 * when a slice closes, the entries that began inside it are its callees:
 * they are popped, merged into one child list and hung under a new node.
 * Consecutive siblings (same depth, disjoint) are merged at once, so the
 * stack holds about one entry per open depth.  Self time falls out of a
 * like walk over both kinds together (duration minus the time of the calls
 * and ranges nested in it), so each thread's time is counted once.  Recursion is
 * resolved at the end on the finished tree: an activation counts towards
 * total only when no caller on its path has the same name.
 *
 * This file builds the aggregate; agg-tree.c holds its names and tree
 * nodes, agg-results.c answers from the finished one; agg-state.h is the
 * state they share.
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
#include "agg-state.h"

/* ---------------------------------------------------------------- helpers */

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

struct ss_agg_fstat *ss_agg_fstat(struct ss_agg *a, struct ss_agg_thread *t,
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

static void ss_agg_builder_finish(struct ss_agg *a, struct ss_agg_thread *t, int kind)
{
	struct ss_agg_builder *b = &t->b[kind];

	while (b->n) {
		b->n--;
		ss_agg_merge(a, &b->root, b->st[b->n].forest);
	}
}

static void ss_agg_step_add(struct ss_agg *a, uint64_t pid, uint64_t step,
			    uint32_t name, uint64_t self, uint64_t off_self)
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
			a->sk[i].off_self_ns += off_self;
			return;
		}
		i = (i + 1) & (a->skcap - 1);
	}
	a->sk[i].used = 1;
	a->sk[i].pid = pid;
	a->sk[i].step = step;
	a->sk[i].name = name;
	a->sk[i].self_ns = self;
	a->sk[i].off_self_ns = off_self;
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

	a->off = NULL; /* its intervals come next, if it has any */
	for (i = 0; i < a->npids; i++)
		if (a->pids[i] == pid)
			return;
	if (!ss_grow((void **)&a->pids, &a->cappids, a->npids, sizeof(*a->pids), 16))
		a->pids[a->npids++] = pid;
}

/* record.sched: the process's off-CPU intervals, for the slices to come */
static void ss_agg_offcpu_cb(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_agg *a = ctx;

	a->off = d;
	a->off_pid = pid;
	a->have_off = 1;
	a->off_lost += d->lost;
	a->off_unwatched += d->unwatched;
	a->off_cut += (d->nrecords || d->cut) && !d->ended;
}

/* Thread tid of pid had no switch ring: its time is not known on or off
 * the CPU. */
static int ss_agg_off_unwatched(const struct ss_agg *a, uint64_t pid, uint64_t tid)
{
	const struct ss_offcpu_thread *t =
		a->off && a->off_pid == pid ? ss_offcpu_find(a->off, tid) : NULL;
	return t && t->unwatched;
}

uint64_t ss_agg_offcpu_unwatched(const struct ss_agg *a)
{
	return a->off_unwatched;
}

uint64_t ss_agg_offcpu_cut(const struct ss_agg *a)
{
	return a->off_cut;
}

/* Time thread tid of pid was switched out in [b, e) (0: not known). */
static uint64_t ss_agg_off_in(const struct ss_agg *a, uint64_t pid, uint64_t tid,
			      uint64_t b, uint64_t e, uint64_t *preempted)
{
	if (preempted)
		*preempted = 0;
	if (!a->off || a->off_pid != pid)
		return 0;
	return ss_offcpu_in(ss_offcpu_find(a->off, tid), b, e, preempted);
}

int ss_agg_have_offcpu(const struct ss_agg *a, uint64_t *lost)
{
	if (lost)
		*lost = a->off_lost;
	return a->have_off;
}

static void ss_agg_thread_cb(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_agg *a = ctx;
	struct ss_agg_thread *t = ss_agg_thread_get(a, pid, tid);

	if (t && !t->name)
		t->name = strdup(name);
}

/* Frames of code without hooks above node (slice s's native callers),
 * each with the calls and time of node; the outermost returned. */
static struct ss_agg_node *ss_agg_wrap_native(struct ss_agg *a, struct ss_agg_node *node,
					      const struct ss_agg_pend *s, uint64_t dur)
{
	unsigned i;

	for (i = s->nnative; i-- > 0;) {
		struct ss_agg_node *w = ss_agg_node_new(a, s->native[i]);
		if (!w)
			break;
		w->native = SS_AGG_FRAME_NATIVE;
		w->calls = node->calls;
		w->total_ns = dur;
		w->child = node;
		node = w;
	}
	return node;
}

/* A "ProfilerStep" frame above node (a slice inside a step and the
 * native frames above it), of its total; node itself if out of memory. */
static struct ss_agg_node *ss_agg_wrap_step(struct ss_agg *a, struct ss_agg_node *node,
					    uint64_t dur)
{
	/* interned once: every slice inside a step comes here */
	uint32_t id = a->step_id ? a->step_id - 1 : ss_agg_intern(a, "ProfilerStep", 1);
	struct ss_agg_node *w;

	if (id != UINT32_MAX)
		a->step_id = id + 1;
	if (id == UINT32_MAX || !(w = ss_agg_node_new(a, id)))
		return node;
	w->native = SS_AGG_FRAME_STEP;
	w->total_ns = dur;
	w->child = node;
	return w;
}

/* The flame forest of a slice inside a step, from its children's: they
 * are inside the step as well, so their "ProfilerStep" frames go (their
 * children take their place); the slice's own goes above it. */
static struct ss_agg_node *ss_agg_unstep(struct ss_agg *a, struct ss_agg_node *forest)
{
	struct ss_agg_node *out = NULL, *n, *next;

	for (n = forest; n; n = next) {
		next = n->next;
		n->next = NULL;
		if (n->native == SS_AGG_FRAME_STEP) {
			ss_agg_merge(a, &out, n->child);
			n->child = NULL;
			ss_agg_node_put(a, n);
		} else {
			ss_agg_merge(a, &out, n);
		}
	}
	return out;
}

/* The self time of closed slice s: its time in no call and no range that
 * closed inside it, whatever their kind.  Function rows and range rows
 * then share out each thread's time once: a range pushed in a call (the
 * OpenMP end barrier's wait, a user's "forward") is the range's self time,
 * not the call's as well.  The same walk builds the thread's flame tree,
 * calls and ranges together, a "ProfilerStep" frame above each slice
 * inside a step (the slicer's in_step) that its caller's enclosing slice
 * removes again when it lies inside the step too: the frame stays only
 * under the frames that span steps (main, the loop) or on the root.  Consecutive siblings (same nest, disjoint)
 * merge, as in ss_agg_close. */
static uint64_t ss_agg_own_self(struct ss_agg *a, struct ss_agg_thread *t,
				const struct ss_agg_pend *s, uint64_t *off_self)
{
	uint64_t dur = s->end > s->begin ? s->end - s->begin : 0, busy = 0, self;
	uint64_t off_busy = 0;
	struct ss_agg_node *forest = NULL, *node;
	struct ss_agg_own *o;

	while (t->nown && t->own[t->nown - 1].begin >= s->begin) {
		o = &t->own[--t->nown];
		busy += o->busy;
		off_busy += o->off;
		if (!forest)
			forest = o->forest;
		else
			ss_agg_merge(a, &forest, o->forest);
	}
	self = dur > busy ? dur - busy : 0;
	/* switched out while no call or range nested in it was open */
	*off_self = s->off > off_busy ? s->off - off_busy : 0;
	if (*off_self > self)
		*off_self = self;
	if (s->in_step)
		forest = ss_agg_unstep(a, forest);
	node = ss_agg_node_new(a, s->id);
	if (!node) {
		ss_agg_tree_free(forest);
		return self;
	}
	node->native = s->kind == SS_AGG_RANGE ? SS_AGG_FRAME_RANGE : SS_AGG_FRAME_CALL;
	node->calls = (s->flags & SS_SLICE_CLIPPED_BEGIN) ? 0 : 1;
	node->self_ns = self;
	node->total_ns = dur;
	node->off_ns = s->off;
	node->off_self_ns = *off_self;
	node->child = forest;
	node = ss_agg_wrap_native(a, node, s, dur);
	if (s->in_step)
		node = ss_agg_wrap_step(a, node, dur);
	o = t->nown ? &t->own[t->nown - 1] : NULL;
	if (o && o->nest == s->nest && o->end <= s->begin &&
	    !(s->flags & SS_SLICE_CLIPPED_BEGIN)) {
		o->busy += dur;
		o->off += s->off;
		o->end = s->end;
		ss_agg_merge(a, &o->forest, node);
	} else if (!ss_grow((void **)&t->own, &t->capown, t->nown,
			    sizeof(*t->own), 16)) {
		o = &t->own[t->nown++];
		o->begin = s->begin;
		o->end = s->end;
		o->busy = dur;
		o->off = s->off;
		o->nest = s->nest;
		o->forest = node;
	} else {
		a->oom = 1;
		ss_agg_merge(a, &t->own_root, node);
	}
	return self;
}

/* Hang one closed slice, whose self time is `self`, into the tree of its
 * thread. */
static void ss_agg_close(struct ss_agg *a, struct ss_agg_thread *t, int kind,
			 const struct ss_agg_pend *s, uint64_t self, uint64_t off_self)
{
	struct ss_agg_builder *b = &t->b[kind];
	struct ss_agg_fstat *fs;
	struct ss_agg_node *forest = NULL, *node;
	uint64_t dur;

	dur = s->end > s->begin ? s->end - s->begin : 0;
	while (b->n && b->st[b->n - 1].begin >= s->begin) {
		struct ss_agg_entry *e = &b->st[--b->n];
		if (!forest)
			forest = e->forest;
		else
			ss_agg_merge(a, &forest, e->forest);
	}
	node = ss_agg_node_new(a, s->id);
	if (!node)
		return;
	/* a call cut at a window's start began before it: the same call
	 * shows in every window it spans, so it is not counted again */
	node->calls = (s->flags & SS_SLICE_CLIPPED_BEGIN) ? 0 : 1;
	node->self_ns = self;
	node->total_ns = dur;
	node->off_ns = s->off;
	node->off_self_ns = off_self;
	node->child = forest;
	node = ss_agg_wrap_native(a, node, s, dur);  /* its callers without hooks */

	fs = ss_agg_fstat(a, t, kind, s->id);
	if (fs) {
		if (s->flags & (SS_SLICE_CLIPPED_BEGIN | SS_SLICE_CLIPPED_END)) {
			fs->clipped++; /* min/max would be window lengths */
		} else {
			/* the fastest call: of those whose EXIT was read in
			 * order when there is one (an unordered EXIT may come
			 * before the call's last instructions completed) */
			int ord = !(s->flags & SS_SLICE_UNORDERED);
			if (ord ? !fs->ordered || dur < fs->min_ns
				: !fs->ordered && (!fs->complete || dur < fs->min_ns))
				fs->min_ns = dur, fs->min_off_ns = s->off;
			fs->ordered += ord;
			if (!fs->complete || dur < fs->min_any_ns)
				fs->min_any_ns = dur, fs->min_any_off_ns = s->off;
			if (dur > fs->max_ns)
				fs->max_ns = dur, fs->max_off_ns = s->off;
			fs->complete++;
			fs->complete_ns += dur;
		}
		if (!(s->flags & SS_SLICE_CLIPPED_BEGIN))
			fs->calls++;
		fs->self_ns += self;
		fs->off_self_ns += off_self;
		if (s->off > dur - s->off && !(s->flags & SS_SLICE_CLIPPED_BEGIN))
			fs->off_most++; /* switched out longer than it ran */
	}
	a->self_sum += self;
	if (kind == SS_AGG_FUNCTION) {
		if (s->has_step && self)
			ss_agg_step_add(a, t->pid, s->step, s->id, self, off_self);
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
 * together at a window's end, ranges before calls): hold them until the
 * time moves on, then close them innermost first. */
static void ss_agg_flush(struct ss_agg *a, struct ss_agg_thread *t)
{
	size_t i, j;

	for (i = 1; i < t->npend; i++)  /* stable, by nest descending */
		for (j = i; j > 0 && t->pend[j - 1].nest < t->pend[j].nest; j--) {
			struct ss_agg_pend x = t->pend[j];
			t->pend[j] = t->pend[j - 1];
			t->pend[j - 1] = x;
		}
	for (i = 0; i < t->npend; i++) {
		uint64_t off_self = 0;
		uint64_t self = ss_agg_own_self(a, t, &t->pend[i], &off_self);
		ss_agg_close(a, t, t->pend[i].kind, &t->pend[i], self, off_self);
	}
	t->npend = 0;
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
	struct ss_agg_pend *p;
	uint32_t id;
	int kind;

	if (s->cat == SS_SLICE_MARKER) {
		/* no time of its own; the report says what was lost */
		if (s->marker == SS_EV_LOST && (t = ss_agg_thread_get(a, pid, tid)))
			t->lost += s->marker_arg;
		if (s->marker == SS_EV_STOP && (!a->stopped || s->begin_ns < a->stop_ns)) {
			a->stopped = 1;
			a->stop_ns = s->begin_ns;
			a->stop_pid = pid;
			a->stop_reason = (unsigned)s->marker_arg;
			a->stop_has_step = s->has_step;
			a->stop_step = s->step;
		}
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
		st->off_ns = ss_agg_off_in(a, pid, tid, st->begin_ns, st->end_ns,
					   &st->off_preempted_ns);
		st->off_unknown = ss_agg_off_unwatched(a, pid, tid);
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
	if (t->npend && t->pend[0].end != s->end_ns)
		ss_agg_flush(a, t);
	if (ss_grow((void **)&t->pend, &t->cappend, t->npend, sizeof(*p), 16)) {
		a->oom = 1;
		return;
	}
	p = &t->pend[t->npend++];
	p->kind = kind;
	p->begin = s->begin_ns;
	p->end = s->end_ns;
	p->depth = s->depth;
	p->nest = s->nest;
	p->flags = s->flags;
	p->id = id;
	p->has_step = s->has_step;
	p->step = s->step;
	p->in_step = s->in_step;
	p->off = ss_agg_off_in(a, pid, tid, s->begin_ns, s->end_ns, NULL);
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
		struct ss_agg_thread *t = &a->threads[i];
		ss_agg_flush(a, t);
		while (t->nown) {
			t->nown--;
			ss_agg_merge(a, &t->own_root, t->own[t->nown].forest);
		}
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
	a->ex.offcpu = ss_agg_offcpu_cb;
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
		size_t j;
		int k;
		for (k = 0; k < 2; k++) {
			for (j = 0; j < t->b[k].n; j++)
				ss_agg_tree_free(t->b[k].st[j].forest);
			free(t->b[k].st);
			ss_agg_tree_free(t->b[k].root);
			free(t->fs[k]);
		}
		free(t->pend);
		for (j = 0; j < t->nown; j++)
			ss_agg_tree_free(t->own[j].forest);
		free(t->own);
		ss_agg_tree_free(t->own_root);
		ss_agg_tree_free(t->flame);
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
	ss_agg_tree_free(a->flame);
	while (a->free_nodes) {
		struct ss_agg_node *n = a->free_nodes;
		a->free_nodes = n->next;
		free(n);
	}
	free(a->rows);
	free(a);
}
