/*
 * alloc-read.c - read a process's recorded allocations (alloc.h): the
 * SS_EV_ALLOC and SS_EV_FREE records of every thread, placed in the call
 * open on their thread, then put in time order to give each FREE its size
 * and each moment its live bytes; the steps' peaks; the leaks named by
 * SS_META_ALLOC_LIVE.
 *
 * How: one walk per thread keeps the stack of open recorded calls (ENTER,
 * EXIT, UNWIND, INHERIT; when a window opens, the frames SS_META_STACK
 * says were open on the thread, as the slicer's clipped frames) and interns each call path as a node; the records are
 * then sorted by time (a thread's own in stream order) and replayed
 * through a hash of the blocks live since the window opened.
 *
 * Never: trust a record (short payloads are skipped), count a free of
 * unknown size as anything but 0 bytes, or let live bytes go below 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-read.h"
#include "compact.h"
#include "run.h"
#include "slicer.h"
#include "sym.h"

struct rec {
	struct ss_alloc_ev ev;
	uint64_t seq;
};

/* (addr, space) -> value, linear probing with backward-shift removal */
struct bmap {
	uint64_t *addr, *space;
	uint32_t *val;              /* 0: empty */
	size_t cap, n;
};

static size_t bmap_slot(const struct bmap *m, uint64_t a, uint64_t s)
{
	uint64_t h = (a ^ (s * 0x9E3779B97F4A7C15ull)) * 0xff51afd7ed558ccdull;
	return (size_t)(h >> 17) & (m->cap - 1);
}

static int bmap_grow(struct bmap *m)
{
	struct bmap o = *m;
	size_t cap = o.cap ? o.cap * 2 : 1024, i;
	m->addr = calloc(cap, sizeof(*m->addr));
	m->space = calloc(cap, sizeof(*m->space));
	m->val = calloc(cap, sizeof(*m->val));
	m->cap = cap;
	m->n = 0;
	if (!m->addr || !m->space || !m->val) {
		free(m->addr), free(m->space), free(m->val);
		*m = o;
		return -1;
	}
	for (i = 0; i < o.cap; i++)
		if (o.val[i]) {
			size_t j = bmap_slot(m, o.addr[i], o.space[i]);
			while (m->val[j])
				j = (j + 1) & (m->cap - 1);
			m->addr[j] = o.addr[i], m->space[j] = o.space[i], m->val[j] = o.val[i];
			m->n++;
		}
	free(o.addr), free(o.space), free(o.val);
	return 0;
}

static size_t bmap_find(const struct bmap *m, uint64_t a, uint64_t s)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t j = bmap_slot(m, a, s);; j = (j + 1) & (m->cap - 1)) {
		if (!m->val[j])
			return SIZE_MAX;
		if (m->addr[j] == a && m->space[j] == s)
			return j;
	}
}

static int bmap_put(struct bmap *m, uint64_t a, uint64_t s, uint32_t v)
{
	size_t j = bmap_find(m, a, s);
	if (j != SIZE_MAX) {
		m->val[j] = v;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap && bmap_grow(m))
		return -1;
	for (j = bmap_slot(m, a, s); m->val[j]; j = (j + 1) & (m->cap - 1))
		;
	m->addr[j] = a, m->space[j] = s, m->val[j] = v;
	m->n++;
	return 0;
}

static void bmap_del(struct bmap *m, size_t j)
{
	size_t i = j;
	m->val[j] = 0;
	m->n--;
	for (;;) {
		i = (i + 1) & (m->cap - 1);
		if (!m->val[i])
			return;
		size_t h = bmap_slot(m, m->addr[i], m->space[i]);
		/* move i back to j unless its home lies in (j, i] */
		if ((j < i) ? (h <= j || h > i) : (h <= j && h > i)) {
			m->addr[j] = m->addr[i], m->space[j] = m->space[i], m->val[j] = m->val[i];
			m->val[i] = 0;
			j = i;
		}
	}
}

static void bmap_clear(struct bmap *m)
{
	if (m->cap)
		memset(m->val, 0, m->cap * sizeof(*m->val));
	m->n = 0;
}

static void bmap_free(struct bmap *m)
{
	free(m->addr), free(m->space), free(m->val);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ nodes */

struct walk {
	const struct ss_reader *r;
	struct ss_slicer *sl;
	struct ss_alloc_data *d;
	struct bmap paths;          /* (parent, fn) -> node */
	struct rec *recs;
	size_t nrecs, cap;
	char **names;               /* "0x..." names made here */
	size_t nnames;
};

static uint32_t node_of(struct walk *w, uint32_t parent, uint64_t fn, uint64_t ns)
{
	size_t j = bmap_find(&w->paths, fn, parent);
	if (j != SIZE_MAX)
		return w->paths.val[j];
	struct ss_alloc_data *d = w->d;
	if (!(d->nnodes & (d->nnodes + 1)) || !d->nodes) { /* 0, 1, 3, 7...: grow */
		void *p = realloc(d->nodes, (d->nnodes * 2 + 2) * sizeof(*d->nodes));
		if (!p)
			return 0;
		d->nodes = p;
	}
	struct ss_alloc_node *n = &d->nodes[d->nnodes];
	n->parent = parent;
	n->fn = fn;
	n->name = NULL;
	const struct ss_sym_info *info = w->sl->sp ? ss_sym_lookup_at(w->sl->sp, fn, ns) : NULL;
	if (info) {
		n->name = info->name;
	} else {
		char buf[32], **nn = realloc(w->names, (w->nnames + 1) * sizeof(*nn));
		if (nn) {
			w->names = nn;
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)fn);
			n->name = nn[w->nnames] = strdup(buf);
			if (n->name)
				w->nnames++;
		}
		if (!n->name)
			n->name = "?";
	}
	if (bmap_put(&w->paths, fn, parent, (uint32_t)(d->nnodes + 1)))
		return 0;
	return (uint32_t)++d->nnodes;
}

static int add_rec(struct walk *w, const struct ss_alloc_ev *ev)
{
	if (w->nrecs == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		void *p = realloc(w->recs, cap * sizeof(*w->recs));
		if (!p)
			return -1;
		w->recs = p;
		w->cap = cap;
	}
	w->recs[w->nrecs].ev = *ev;
	w->recs[w->nrecs].seq = w->nrecs;
	w->nrecs++;
	return 0;
}

/* A window opened after the thread's previous event and by ns: its open
 * calls are not known past it.  *wi: the first window not passed yet (a
 * thread's times never decrease; windows are in time order). */
static int window_passed(const struct ss_slicer *sl, size_t *wi, uint64_t ns)
{
	int passed = 0;
	while (*wi < sl->nwins && sl->wins[*wi].open_ns <= ns) {
		passed = 1;
		(*wi)++;
	}
	return passed;
}

/* The frames open on thread t when window wi opened (SS_META_STACK, the
 * stepping thread's: main and the loop around the steps), outermost first
 * into fns/nodes as the slicer opens them (clipped frames), so what is
 * allocated in the window counts in their CPU Mem too.  How many. */
static size_t window_frames(struct walk *w, size_t t, size_t wi, uint64_t *fns,
			    uint32_t *nodes, size_t cap)
{
	const struct ss_slicer *sl = w->sl;
	const struct ss_rthread *th = &w->r->threads[t];
	const struct ss_slices_stack *best = NULL;
	uint64_t bestd = UINT64_MAX;
	size_t d = 0;

	if (sl->whole_run || !sl->sp || wi >= sl->nwins)
		return 0;
	for (size_t i = 0; i < sl->nstacks; i++) {
		const struct ss_slices_stack *s = &sl->stacks[i];
		int same = (s->serial && th->serial) ? s->serial == th->serial : s->tid == th->tid;
		uint64_t o = sl->wins[wi].open_ns;
		uint64_t dist = s->ns > o ? s->ns - o : o - s->ns;
		if (same && s->ns < sl->wins[wi].close_ns && dist < bestd)
			best = s, bestd = dist;
	}
	for (size_t i = best ? best->n : 0; i-- > 0 && d < cap;) {
		if (!best->addrs[i])
			continue;
		const struct ss_sym_info *info = ss_sym_lookup_at(sl->sp, best->addrs[i] - 1, best->ns);
		fns[d] = info->start;
		nodes[d] = node_of(w, d ? nodes[d - 1] : 0, info->start, best->ns);
		d++;
	}
	return d;
}

static int walk_thread(struct walk *w, size_t t)
{
	struct ss_event_iter it;
	struct ss_revent ev;
	uint64_t *fns = NULL;
	uint32_t *nodes = NULL;
	size_t d = 0, cap = 0, wi = 0;
	int rc = 0;

	fns = malloc(64 * sizeof(*fns));
	nodes = malloc(64 * sizeof(*nodes));
	if (!fns || !nodes)
		rc = -1;
	cap = 64;
	ss_reader_events_begin(w->r, t, &it);
	while (!rc && ss_reader_events_next(&it, &ev)) {
		if (window_passed(w->sl, &wi, ev.ns))
			d = window_frames(w, t, wi - 1, fns, nodes, cap);
		switch (ev.kind) {
		case SS_EV_ENTER:
		case SS_EV_INHERIT:
			if (d == cap) {
				size_t nc = cap ? cap * 2 : 64;
				void *a = realloc(fns, nc * sizeof(*fns));
				if (a)
					fns = a;
				void *b = realloc(nodes, nc * sizeof(*nodes));
				if (b)
					nodes = b;
				if (!a || !b) {
					rc = -1;
					break;
				}
				cap = nc;
			}
			fns[d] = ev.arg;
			nodes[d] = node_of(w, d ? nodes[d - 1] : 0, ev.arg, ev.ns);
			d++;
			break;
		case SS_EV_EXIT:
		case SS_EV_UNWIND: {
			uint64_t fn = ev.kind == SS_EV_EXIT ? ev.arg : SS_UNWIND_FN(ev.arg);
			for (size_t j = d; j-- > 0;)
				if (fns[j] == fn) {
					d = j;
					break;
				}
			break;
		}
		case SS_EV_ALLOC:
		case SS_EV_FREE: {
			struct ss_alloc_ev a;
			unsigned want = ev.kind == SS_EV_ALLOC ? 3 : 2;
			if (ev.n < want || !ev.payload)
				break;
			memset(&a, 0, sizeof(a));
			a.ns = ev.ns;
			a.tid = w->r->threads[t].tid;
			a.addr = ss_reader_word(ev.payload);
			if (ev.kind == SS_EV_ALLOC) {
				a.size = ss_reader_word(ev.payload + 8);
				a.space = ss_reader_word(ev.payload + 16);
				if (a.space & SS_SPACE_AGAIN) {
					/* a failed realloc: its FREE, the thread's
					 * last record, did not happen either */
					struct ss_alloc_ev *f = w->nrecs ? &w->recs[w->nrecs - 1].ev : NULL;
					a.space &= ~SS_SPACE_AGAIN;
					if (f && f->is_free && f->tid == a.tid && f->addr == a.addr &&
					    f->space == a.space)
						w->nrecs--;
					break;
				}
			} else {
				a.is_free = 1;
				a.space = ss_reader_word(ev.payload + 8);
			}
			a.node = d ? nodes[d - 1] : 0;
			rc = add_rec(w, &a);
			break;
		}
		default:
			break;
		}
	}
	free(fns);
	free(nodes);
	return rc;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->ev.ns != y->ev.ns)
		return x->ev.ns < y->ev.ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ss_alloc_space_index(const struct ss_alloc_data *d, uint64_t space)
{
	for (size_t i = 0; i < d->nspaces; i++)
		if (d->spaces[i] == space)
			return (int)i;
	return -1;
}

/* The recorded steps, each to the next step's record or its window's close. */
static int make_steps(struct walk *w)
{
	struct ss_slicer *sl = w->sl;
	struct ss_alloc_data *d = w->d;
	d->steps = calloc(sl->nsteps ? sl->nsteps : 1, sizeof(*d->steps));
	if (!d->steps)
		return -1;
	for (size_t i = 0; i < sl->nsteps; i++) {
		if (sl->steps[i].action != SS_STEP_RECORD)
			continue;
		struct ss_alloc_step *s = &d->steps[d->nsteps++];
		s->step = sl->steps[i].step;
		s->begin_ns = sl->steps[i].ns;
		s->end_ns = i + 1 < sl->nsteps ? sl->steps[i + 1].ns : UINT64_MAX;
		for (size_t k = 0; k < sl->nwins; k++)
			if (sl->wins[k].open_ns <= s->begin_ns && sl->wins[k].close_ns > s->begin_ns &&
			    sl->wins[k].close_ns < s->end_ns)
				s->end_ns = sl->wins[k].close_ns;
	}
	return 0;
}

/* Time order, sizes of frees, live bytes, the steps' peaks. */
struct replay {
	struct bmap live;
	uint64_t bytes[SS_ALLOC_SPACES];
	uint64_t own[SS_ALLOC_SPACES]; /* live bytes of blocks the current step allocated */
	size_t win;                 /* windows opened so far */
};

/* Every window opened at or before ns: nothing allocated before is known. */
static void replay_windows(struct replay *p, const struct ss_slicer *sl, uint64_t ns)
{
	while (p->win < sl->nwins && sl->wins[p->win].open_ns <= ns) {
		bmap_clear(&p->live);
		memset(p->bytes, 0, sizeof(p->bytes));
		p->win++;
	}
}

/* Steps that began by ns start with none of their own blocks: a step's
 * peak counts only what it allocated (not what earlier steps left). */
static size_t replay_steps(struct replay *p, struct ss_alloc_data *d,
			   const struct ss_slicer *sl, size_t k, uint64_t ns)
{
	for (; k < d->nsteps && d->steps[k].begin_ns <= ns; k++) {
		replay_windows(p, sl, d->steps[k].begin_ns);
		memset(d->steps[k].peak, 0, sizeof(d->steps[k].peak));
		memset(p->own, 0, sizeof(p->own));
	}
	return k;
}

/* A block of ev[a] leaves: the current step's own bytes lose it when the
 * step allocated it (k: steps begun so far). */
static void replay_own_free(struct replay *p, const struct ss_alloc_data *d, size_t k,
			    const struct ss_alloc_ev *a, int si)
{
	if (k && a->ns >= d->steps[k - 1].begin_ns)
		p->own[si] -= a->size < p->own[si] ? a->size : p->own[si];
}

static int replay(struct walk *w)
{
	struct ss_alloc_data *d = w->d;
	struct ss_slicer *sl = w->sl;
	struct replay p;
	size_t k = 0, i;

	memset(&p, 0, sizeof(p));
	qsort(w->recs, w->nrecs, sizeof(*w->recs), rec_cmp);
	d->ev = malloc((w->nrecs ? w->nrecs : 1) * sizeof(*d->ev));
	if (!d->ev)
		return -1;
	for (i = 0; i < w->nrecs; i++) {
		struct ss_alloc_ev *e = &d->ev[i];
		*e = w->recs[i].ev;
		k = replay_steps(&p, d, sl, k, e->ns);
		replay_windows(&p, sl, e->ns);
		int si = ss_alloc_space_index(d, e->space);
		if (si < 0 && d->nspaces < SS_ALLOC_SPACES) {
			si = (int)d->nspaces;
			d->spaces[d->nspaces++] = e->space;
		}
		if (si < 0)
			si = SS_ALLOC_SPACES - 1; /* more spaces than kept: shared */
		uint64_t *b = &p.bytes[si];
		size_t j = bmap_find(&p.live, e->addr, e->space);
		if (!e->is_free) {
			d->allocs++;
			if (j != SIZE_MAX) { /* its FREE was never seen */
				const struct ss_alloc_ev *a = &d->ev[p.live.val[j] - 1];
				*b -= a->size < *b ? a->size : *b;
				replay_own_free(&p, d, k, a, si);
			}
			if (bmap_put(&p.live, e->addr, e->space, (uint32_t)(i + 1))) {
				bmap_free(&p.live);
				return -1;
			}
			e->delta = (int64_t)e->size;
			*b += e->size;
			p.own[si] += e->size;
		} else {
			d->frees++;
			if (j != SIZE_MAX) {
				const struct ss_alloc_ev *a = &d->ev[p.live.val[j] - 1];
				e->size = a->size;
				e->known = 1;
				e->delta = -(int64_t)e->size;
				*b -= e->size < *b ? e->size : *b;
				replay_own_free(&p, d, k, a, si);
				bmap_del(&p.live, j);
			} else {
				d->unknown_frees++;
			}
		}
		if (!e->node)
			d->outside++;
		e->live = *b;
		if (k && e->ns < d->steps[k - 1].end_ns && p.own[si] > d->steps[k - 1].peak[si])
			d->steps[k - 1].peak[si] = p.own[si];
	}
	replay_steps(&p, d, sl, k, UINT64_MAX);
	d->nev = w->nrecs;
	bmap_free(&p.live);
	return 0;
}

/* SS_META_ALLOC_LIVE: mark the last ALLOC of each block still live. */
static int mark_leaks(struct walk *w)
{
	struct ss_alloc_data *d = w->d;
	struct bmap last = { 0 };
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	int rc = 0;

	for (size_t i = 0; i < d->nev && !rc; i++)
		if (!d->ev[i].is_free)
			rc = bmap_put(&last, d->ev[i].addr, d->ev[i].space, (uint32_t)(i + 1));
	ss_reader_meta_begin(w->r, &it);
	while (!rc && ss_reader_meta_next(&it, &m)) {
		struct ss_meta_alloc_live h;
		if (m.type != SS_META_ALLOC_LIVE || m.len < sizeof(h))
			continue;
		memcpy(&h, m.data, sizeof(h));
		d->have_live = 1;
		if (h.untracked > d->untracked)
			d->untracked = h.untracked;
		size_t n = (m.len - sizeof(h)) / sizeof(struct ss_alloc_block);
		if (h.n < n)
			n = (size_t)h.n;
		for (size_t k = 0; k < n; k++) {
			struct ss_alloc_block b;
			memcpy(&b, m.data + sizeof(h) + k * sizeof(b), sizeof(b));
			size_t j = bmap_find(&last, b.addr, b.space);
			if (j != SIZE_MAX && !d->ev[last.val[j] - 1].leaked) {
				d->ev[last.val[j] - 1].leaked = 1;
				d->nleaked++;
			}
		}
	}
	bmap_free(&last);
	return rc;
}


int ss_alloc_read(const struct ss_reader *r, struct ss_slicer *sl, struct ss_alloc_data *d)
{
	struct walk w = { .r = r, .sl = sl, .d = d };
	int rc = 0;

	memset(d, 0, sizeof(*d));
	/* without memory.allocations there is nothing to read, and no second
	 * walk of the process's events */
	if (!ss_run_config_has(r, "memory.allocations=true"))
		return 0;
	for (size_t t = 0; !rc && t < r->nthreads; t++)
		rc = walk_thread(&w, t);
	if (!rc)
		rc = make_steps(&w);
	if (!rc)
		rc = replay(&w);
	if (!rc)
		rc = mark_leaks(&w);
	free(w.recs);
	bmap_free(&w.paths);
	d->names_made = w.names;
	d->nnames_made = w.nnames;
	if (rc)
		ss_alloc_release(d);
	return rc;
}

void ss_alloc_release(struct ss_alloc_data *d)
{
	for (size_t i = 0; i < d->nnames_made; i++)
		free(d->names_made[i]);
	free(d->names_made);
	free(d->ev);
	free(d->nodes);
	free(d->steps);
	memset(d, 0, sizeof(*d));
}

const char *ss_alloc_space_name(uint64_t space, char *buf, size_t len)
{
	unsigned k = SS_SPACE_KIND(space), dev = SS_SPACE_DEVICE(space);
	if (k == SS_SPACE_HEAP)
		snprintf(buf, len, "heap");
	else if (k == SS_SPACE_CUDA_DEVICE)
		snprintf(buf, len, "cuda:%u", dev);
	else if (k == SS_SPACE_CUDA_PINNED)
		snprintf(buf, len, "cuda:%u pinned", dev);
	else if (k == SS_SPACE_CUDA_MANAGED)
		snprintf(buf, len, "cuda:%u managed", dev);
	else
		snprintf(buf, len, "space %u", k);
	return buf;
}

int ss_alloc_space_cuda(uint64_t space)
{
	unsigned k = SS_SPACE_KIND(space);
	return k == SS_SPACE_CUDA_DEVICE || k == SS_SPACE_CUDA_MANAGED;
}
