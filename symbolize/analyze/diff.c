/*
 * diff.c - per-step series of a run (diff.h); the comparison of two runs
 * is diff-compare.c.
 *
 * Design: a run is walked once into an aggregator (agg.c: the steps and
 * the self time of each function in each step) and, beside it, a small
 * collector of our own that adds calls and total time per (process, step,
 * function).  The collector also watches frames open (ss_slicer_on_open)
 * to keep, per thread, the name open at each depth: a slice whose name is
 * open below it is a recursive activation and adds nothing to total, as in
 * agg.h.  Then each function becomes a series, one value per recorded
 * step.  With record.sched (and no --wall) every time is on-CPU time:
 * a call's or step's time less what its thread was switched out in it
 * (the off-CPU intervals the reader hands over before a process's
 * slices), so a busy machine's waits for a CPU are no change of the code.
 *
 * Must never: keep one record per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "diff.h"
#include "reader.h"
#include "run.h"
#include "slices.h"
#include "sym.h"
#include "util.h"

/* ------------------------------------------------------------ collector */

/* kind: SS_AGG_FUNCTION, SS_AGG_RANGE, or SS_DIFF_EDGE: the calls of
 * function id made by function caller */
#define SS_DIFF_EDGE 2

struct ss_diff_key {
	uint64_t pid, step, calls, total;   /* total: on-CPU when c->oncpu */
	uint64_t self;               /* ranges: time outside nested ranges */
	uint32_t id, caller;         /* caller: SS_DIFF_EDGE only */
	int kind, used;
};

struct ss_diff_thr {
	uint64_t pid, tid;
	uint32_t *open[2];           /* name id open at each depth, by kind */
	size_t nopen[2];
	uint64_t *rsum;              /* time of closed ranges under the open
	                              * range of each depth (index depth + 1) */
	uint64_t *roff;              /* and their off-CPU time (record.sched) */
	size_t nrsum;
	uint64_t seen_ns;            /* its last time known to be recorded */
};

struct ss_diff_col {
	struct ss_exporter ex;
	char **names;
	size_t nnames, capnames;
	uint32_t *nhash;             /* id + 1 */
	size_t nhcap;
	struct ss_diff_key *k;
	size_t kcap, kn;
	struct ss_diff_thr *th;
	size_t nth, capth, last;
	uint64_t pid;                /* the process being fed */
	const struct ss_offcpu *off; /* its off-CPU intervals, or NULL */
	int wall;                    /* --wall: keep off-CPU time in */
	int oncpu;                   /* some process's times are on-CPU */
	uint64_t *cut;               /* pids whose trace is cut short */
	uint64_t *lastst;            /* and the last step of each */
	size_t ncut;
	int oom;
};

static uint64_t ss_diff_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

static uint32_t ss_diff_intern(struct ss_diff_col *c, const char *s)
{
	size_t i;

	if ((c->nnames + 1) * 2 > c->nhcap) {
		size_t nc = c->nhcap ? c->nhcap * 2 : 256, k;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh)
			return UINT32_MAX;
		for (k = 0; k < c->nnames; k++) {
			i = ss_hash_str(c->names[k]) & (nc - 1);
			while (nh[i])
				i = (i + 1) & (nc - 1);
			nh[i] = (uint32_t)k + 1;
		}
		free(c->nhash);
		c->nhash = nh;
		c->nhcap = nc;
	}
	i = ss_hash_str(s) & (c->nhcap - 1);
	while (c->nhash[i]) {
		if (!strcmp(c->names[c->nhash[i] - 1], s))
			return c->nhash[i] - 1;
		i = (i + 1) & (c->nhcap - 1);
	}
	if (c->nnames == c->capnames) {
		size_t nc = c->capnames ? c->capnames * 2 : 256;
		char **nn = realloc(c->names, nc * sizeof(*nn));
		if (!nn)
			return UINT32_MAX;
		c->names = nn;
		c->capnames = nc;
	}
	if (!(c->names[c->nnames] = strdup(s)))
		return UINT32_MAX;
	c->nhash[i] = (uint32_t)++c->nnames;
	return (uint32_t)(c->nnames - 1);
}

static size_t ss_diff_kslot(uint64_t pid, uint64_t step, uint32_t id, int kind,
			    uint32_t caller, size_t cap)
{
	return ss_diff_mix(pid * 31 + step * 1000003 + id * 4 + (uint64_t)kind +
			   ((uint64_t)caller << 36)) & (cap - 1);
}

static struct ss_diff_key *ss_diff_key(struct ss_diff_col *c, uint64_t pid,
				       uint64_t step, uint32_t id, int kind,
				       uint32_t caller)
{
	size_t i;

	if ((c->kn + 1) * 2 > c->kcap) {
		size_t nc = c->kcap ? c->kcap * 2 : 1024, j;
		struct ss_diff_key *nk = calloc(nc, sizeof(*nk));
		if (!nk)
			return NULL;
		for (j = 0; j < c->kcap; j++) {
			if (!c->k[j].used)
				continue;
			i = ss_diff_kslot(c->k[j].pid, c->k[j].step, c->k[j].id,
					  c->k[j].kind, c->k[j].caller, nc);
			while (nk[i].used)
				i = (i + 1) & (nc - 1);
			nk[i] = c->k[j];
		}
		free(c->k);
		c->k = nk;
		c->kcap = nc;
	}
	i = ss_diff_kslot(pid, step, id, kind, caller, c->kcap);
	while (c->k[i].used) {
		struct ss_diff_key *e = &c->k[i];
		if (e->pid == pid && e->step == step && e->id == id && e->kind == kind &&
		    e->caller == caller)
			return e;
		i = (i + 1) & (c->kcap - 1);
	}
	c->k[i].used = 1;
	c->k[i].pid = pid;
	c->k[i].step = step;
	c->k[i].id = id;
	c->k[i].kind = kind;
	c->k[i].caller = caller;
	c->kn++;
	return &c->k[i];
}

static struct ss_diff_thr *ss_diff_thread(struct ss_diff_col *c, uint64_t pid,
					  uint64_t tid)
{
	size_t i;

	if (c->last < c->nth && c->th[c->last].pid == pid && c->th[c->last].tid == tid)
		return &c->th[c->last];
	for (i = 0; i < c->nth; i++)
		if (c->th[i].pid == pid && c->th[i].tid == tid)
			return &c->th[c->last = i];
	if (c->nth == c->capth) {
		size_t nc = c->capth ? c->capth * 2 : 16;
		struct ss_diff_thr *nt = realloc(c->th, nc * sizeof(*nt));
		if (!nt)
			return NULL;
		c->th = nt;
		c->capth = nc;
	}
	memset(&c->th[c->nth], 0, sizeof(c->th[0]));
	c->th[c->nth].pid = pid;
	c->th[c->nth].tid = tid;
	c->last = c->nth;
	return &c->th[c->nth++];
}

static int ss_diff_kind(const struct ss_slice *s)
{
	if (s->cat == SS_SLICE_FUNCTION)
		return SS_AGG_FUNCTION;
	if (s->cat == SS_SLICE_RANGE)
		return SS_AGG_RANGE;
	return -1;
}

/* Grow t's stack of kind k to hold depth d. */
static int ss_diff_room(struct ss_diff_thr *t, int k, size_t d)
{
	size_t n = t->nopen[k], nc;
	uint32_t *no;

	if (d < n)
		return 0;
	nc = n ? n : 64;
	while (nc <= d)
		nc *= 2;
	no = realloc(t->open[k], nc * sizeof(*no));
	if (!no)
		return -1;
	memset(no + n, 0xff, (nc - n) * sizeof(*no));
	t->open[k] = no;
	t->nopen[k] = nc;
	return 0;
}

/* The self time of range s (its time minus the nested ranges that closed
 * before it, callees first; agg.c keeps the self time per step of
 * functions only). */
static int ss_diff_range_self(struct ss_diff_thr *t, const struct ss_slice *s,
			      uint64_t off, uint64_t *self, uint64_t *off_self)
{
	size_t d = s->depth, n = t->nrsum;
	uint64_t dur = s->end_ns - s->begin_ns, *nr, *no;

	if (d + 2 > n) {
		size_t nc = n ? n : 16;
		while (nc < d + 2)
			nc *= 2;
		nr = realloc(t->rsum, nc * sizeof(*nr));
		if (nr)
			t->rsum = nr;
		no = nr ? realloc(t->roff, nc * sizeof(*no)) : NULL;
		if (!no)
			return -1;
		memset(nr + n, 0, (nc - n) * sizeof(*nr));
		memset(no + n, 0, (nc - n) * sizeof(*no));
		t->roff = no;
		t->nrsum = nc;
	}
	*self = dur > t->rsum[d + 1] ? dur - t->rsum[d + 1] : 0;
	*off_self = off > t->roff[d + 1] ? off - t->roff[d + 1] : 0;
	if (*off_self > *self)
		*off_self = *self;
	t->rsum[d + 1] = t->roff[d + 1] = 0;
	t->rsum[d] += dur;
	t->roff[d] += off;
	return 0;
}

static void ss_diff_on_open(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct ss_diff_col *c = ctx;
	struct ss_diff_thr *t;
	int k = ss_diff_kind(s);
	uint32_t id;

	if (k < 0 || !s->name)
		return;
	t = ss_diff_thread(c, c->pid, tid);
	id = ss_diff_intern(c, s->name);
	if (!t || id == UINT32_MAX || ss_diff_room(t, k, s->depth)) {
		c->oom = 1;
		return;
	}
	t->open[k][s->depth] = id;
	if (s->begin_ns > t->seen_ns)
		t->seen_ns = s->begin_ns;
}

/* Slice s into entry e: a call unless its beginning was cut (a
 * fragment), its time unless it runs inside a call of itself (rec:
 * recursion counts once). */
static void ss_diff_count(struct ss_diff_key *e, const struct ss_slice *s, int rec,
			  uint64_t off)
{
	uint64_t dur = s->end_ns - s->begin_ns;
	if (!(s->flags & SS_SLICE_CLIPPED_BEGIN))
		e->calls++;
	if (!rec)
		e->total += dur > off ? dur - off : 0;
}

static void ss_diff_slice(void *ctx, uint64_t pid, uint64_t tid,
			  const struct ss_slice *s)
{
	struct ss_diff_col *c = ctx;
	struct ss_diff_thr *t;
	struct ss_diff_key *e;
	int k = ss_diff_kind(s), rec = 0;
	uint64_t self = 0, off = 0, off_self = 0;
	uint32_t id, caller = UINT32_MAX;
	size_t d;

	if (k < 0 || !s->name)
		return;
	t = ss_diff_thread(c, pid, tid);
	id = ss_diff_intern(c, s->name);
	if (!t || id == UINT32_MAX) {
		c->oom = 1;
		return;
	}
	if (s->begin_ns > t->seen_ns)
		t->seen_ns = s->begin_ns;
	if (!(s->flags & SS_SLICE_CLIPPED_END) && s->end_ns > t->seen_ns)
		t->seen_ns = s->end_ns;
	for (d = 0; d < s->depth && d < t->nopen[k]; d++)
		if (t->open[k][d] == id)
			rec = 1;
	if (k == SS_AGG_FUNCTION && s->depth && s->depth - 1 < t->nopen[k])
		caller = t->open[k][s->depth - 1];
	/* the frame at this depth is gone (a clipped one had no opening) */
	if (s->depth < t->nopen[k])
		t->open[k][s->depth] = UINT32_MAX;
	if (c->off && !c->wall) /* on-CPU time: less the thread's switched-out time */
		off = ss_offcpu_in(ss_offcpu_find(c->off, tid), s->begin_ns, s->end_ns, NULL);
	if (k == SS_AGG_RANGE && ss_diff_range_self(t, s, off, &self, &off_self)) {
		c->oom = 1;
		return;
	}
	self -= off_self;
	if (!s->has_step)
		return;
	e = ss_diff_key(c, pid, s->step, id, k, UINT32_MAX);
	if (!e) {
		c->oom = 1;
		return;
	}
	ss_diff_count(e, s, rec, off);
	e->self += self;
	if (caller == UINT32_MAX)
		return;
	/* the same under its caller: which caller's calls grew */
	if (!(e = ss_diff_key(c, pid, s->step, id, SS_DIFF_EDGE, caller))) {
		c->oom = 1;
		return;
	}
	ss_diff_count(e, s, rec, off);
}

/* record.sched: process pid's off-CPU intervals, before its slices */
static void ss_diff_offcpu_cb(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_diff_col *c = ctx;
	(void)pid;
	c->off = d;
	c->oncpu |= !c->wall;
}

static int ss_diff_end_cb(void *ctx, char *err, size_t errlen)
{
	return ss_export_oom_end(((struct ss_diff_col *)ctx)->oom, err, errlen);
}

static void ss_diff_col_free(struct ss_diff_col *c)
{
	size_t i;

	for (i = 0; i < c->nnames; i++)
		free(c->names[i]);
	for (i = 0; i < c->nth; i++) {
		free(c->th[i].open[0]);
		free(c->th[i].open[1]);
		free(c->th[i].rsum);
		free(c->th[i].roff);
	}
	free(c->names);
	free(c->cut);
	free(c->lastst);
	free(c->nhash);
	free(c->k);
	free(c->th);
}

/* ------------------------------------------------------------ one run */

/* The value of `key=` in the config text of r's SS_META_CONFIG into out. */
static void ss_diff_config(const struct ss_reader *r, const char *key, char *out,
			   size_t len)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	size_t kl = strlen(key);

	out[0] = 0;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		const char *p, *end;
		if (m.type != SS_META_CONFIG)
			continue;
		p = (const char *)m.data;
		end = p + m.len;
		while (p < end && *p) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t ll = nl ? (size_t)(nl - p) : strnlen(p, (size_t)(end - p));
			if (ll > kl && !strncmp(p, key, kl) && p[kl] == '=') {
				size_t vl = ll - kl - 1;
				if (vl >= len)
					vl = len - 1;
				memcpy(out, p + kl + 1, vl);
				out[vl] = 0;
			}
			if (!nl)
				break;
			p = nl + 1;
		}
		return;
	}
}

/* The steps r marks as recorded; *ended: r holds its end-of-run record
 * (a trace cut short, or a process killed, has none). */
static size_t ss_diff_marks(const struct ss_reader *r, int *ended)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	struct ss_meta_step st;
	size_t n = 0;

	*ended = 0;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		if (m.type == SS_META_END)
			*ended = 1;
		if (m.type != SS_META_STEP || m.len < sizeof(st))
			continue;
		memcpy(&st, m.data, sizeof(st));
		n += st.action == SS_STEP_RECORD;
	}
	return n;
}

static int ss_diff_cmp_step(const void *x, const void *y)
{
	const struct ss_agg_step *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->step < b->step ? -1 : a->step > b->step;
}

/* 1 when the events of step s are all in its trace: its process's trace
 * is whole, or the step's thread was recorded up to the step's end (a
 * trace cut short may hold the step marks of the steps after the cut
 * without their events, or events after its last step mark, which the
 * last step, ending at the last event, takes in: so the last step of a
 * trace cut short is never whole). */
static int ss_diff_whole(struct ss_diff_col *c, const struct ss_agg_step *s)
{
	size_t i;

	for (i = 0; i < c->ncut && c->cut[i] != s->pid; i++)
		;
	if (i == c->ncut)
		return 1;
	if (s->step >= c->lastst[i])
		return 0; /* no mark after it: it ends at the last event */
	for (i = 0; i < c->nth; i++)
		if (c->th[i].pid == s->pid && c->th[i].tid == s->tid)
			return c->th[i].seen_ns >= s->end_ns;
	return 0;
}

/* A new series of n steps for name (caller: an edge's) at *s. */
static int ss_diff_series_new(struct ss_diff_series *s, const char *name,
			      const char *caller, int kind, size_t n)
{
	s->name = strdup(name);
	s->caller = caller ? strdup(caller) : NULL;
	s->kind = (enum ss_agg_kind)kind;
	s->calls = calloc(n ? n : 1, sizeof(uint64_t));
	s->self_ns = calloc(n ? n : 1, sizeof(uint64_t));
	s->total_ns = calloc(n ? n : 1, sizeof(uint64_t));
	return !s->name || (caller && !s->caller) || !s->calls || !s->self_ns ||
	       !s->total_ns;
}

/* The edge series of (callee id, caller id), made on first use; NULL out
 * of memory.  map: ecap slots of (key + 1, index + 1). */
static struct ss_diff_series *ss_diff_edge(struct ss_diff_run *r,
					   const struct ss_diff_col *c,
					   uint64_t (*map)[2], size_t ecap,
					   const struct ss_diff_key *k, size_t n)
{
	uint64_t key = ((uint64_t)k->id << 32 | k->caller) + 1;
	size_t i = ss_diff_mix(key) & (ecap - 1);

	while (map[i][0] && map[i][0] != key)
		i = (i + 1) & (ecap - 1);
	if (!map[i][0]) {
		if (ss_diff_series_new(&r->e[r->ne], c->names[k->id], c->names[k->caller],
				       SS_AGG_FUNCTION, n)) {
			r->ne++;
			return NULL;
		}
		map[i][0] = key;
		map[i][1] = ++r->ne;
	}
	return &r->e[map[i][1] - 1];
}

static int ss_diff_build(struct ss_diff_run *r, struct ss_agg *a,
			 struct ss_diff_col *c)
{
	const struct ss_agg_step *st;
	struct ss_agg_step *steps;
	size_t n = ss_agg_steps(a, &st), i, j, nedge = 0, ecap = 16;
	uint64_t (*map)[2];
	long *sid;

	for (i = 0; i < c->kcap; i++)
		nedge += c->k[i].used && c->k[i].kind == SS_DIFF_EDGE;
	while (ecap < nedge * 2)
		ecap *= 2;
	map = calloc(ecap, sizeof(*map));
	r->e = calloc(nedge + 1, sizeof(*r->e));
	if (!map || !r->e) {
		free(map);
		return 1;
	}

	r->nprocs = ss_agg_nprocesses(a);
	r->nthreads = ss_agg_nthreads(a);
	r->nsteps = n;
	steps = malloc((n ? n : 1) * sizeof(*steps));
	r->step_ns = calloc(n ? n : 1, sizeof(*r->step_ns));
	r->step_off = calloc(n ? n : 1, sizeof(*r->step_off));
	r->oncpu = c->oncpu;
	r->have_off = ss_agg_have_offcpu(a, NULL);
	/* series per (name, kind): index + 1 by id * 2 + kind */
	sid = calloc(c->nnames * 2 + 1, sizeof(*sid));
	r->s = calloc(c->nnames * 2 + 1, sizeof(*r->s));
	if (!steps || !r->step_ns || !r->step_off || !sid || !r->s) {
		free(steps);
		free(sid);
		free(map);
		return 1;
	}
	for (i = 0; i < n; i++)     /* the last step of each trace cut short */
		for (j = 0; j < c->ncut; j++)
			if (c->cut[j] == st[i].pid && st[i].step > c->lastst[j])
				c->lastst[j] = st[i].step;
	for (i = j = 0; i < n; i++)
		if (ss_diff_whole(c, &st[i]))
			steps[j++] = st[i];
	r->nsteps = n = j;
	qsort(steps, n, sizeof(*steps), ss_diff_cmp_step);
	for (i = 0; i < n; i++) {
		uint64_t d = steps[i].end_ns - steps[i].begin_ns;
		uint64_t off = steps[i].off_ns < d ? steps[i].off_ns : d;
		r->step_ns[i] = c->oncpu ? d - off : d;
		r->step_off[i] = d ? (double)off / (double)d : 0;
	}
	for (i = 0; i < c->kcap; i++) {
		struct ss_diff_key *e = &c->k[i], key;
		struct ss_agg_step probe;
		struct ss_agg_step *hit;
		struct ss_diff_series *s;
		size_t x;
		if (!e->used)
			continue;
		key = *e;
		memset(&probe, 0, sizeof(probe));
		probe.pid = key.pid;
		probe.step = key.step;
		hit = n ? bsearch(&probe, steps, n, sizeof(*steps), ss_diff_cmp_step) : NULL;
		if (!hit)
			continue; /* a step no step slice closed */
		j = (size_t)(hit - steps);
		if (key.kind == SS_DIFF_EDGE) {
			if (!(s = ss_diff_edge(r, c, map, ecap, &key, n))) {
				free(steps);
				free(sid);
				free(map);
				return 1;
			}
			s->calls[j] += key.calls;
			s->total_ns[j] += key.total;
			continue;
		}
		x = key.id * 2 + (size_t)key.kind;
		if (!sid[x]) {
			if (ss_diff_series_new(&r->s[r->ns++], c->names[key.id], NULL,
					       key.kind, n)) {
				free(steps);
				free(sid);
				free(map);
				return 1;
			}
			sid[x] = (long)r->ns;
		}
		s = &r->s[sid[x] - 1];
		s->calls[j] += key.calls;
		s->total_ns[j] += key.total;
		if (s->kind == SS_AGG_RANGE)
			s->self_ns[j] += key.self;
	}
	for (i = 0; i < r->ns; i++)
		for (j = 0; r->s[i].kind == SS_AGG_FUNCTION && j < n; j++)
			r->s[i].self_ns[j] = ss_agg_step_self(a, r->s[i].name, &steps[j]) -
					     (c->oncpu ? ss_agg_step_off_self(a, r->s[i].name,
									      &steps[j]) : 0);
	/* on-CPU: a step is the work of every thread in it, its calls' time
	 * on a CPU (their on-CPU self); the stepping thread's on-CPU time
	 * would hold its spinning at the team's barriers, which grows and
	 * shrinks with how the threads were scheduled */
	for (j = 0; c->oncpu && j < n; j++) {
		r->step_ns[j] = 0;
		for (i = 0; i < r->ns; i++)
			if (r->s[i].kind == SS_AGG_FUNCTION)
				r->step_ns[j] += r->s[i].self_ns[j];
	}
	free(steps);
	free(sid);
	free(map);
	return 0;
}

int ss_diff_load(struct ss_diff_run *r, const char *dir, const char *backend,
		 int quiet, int wall, char *err, size_t errlen)
{
	struct ss_diff_col c;
	struct ss_exporter *ex[2];
	struct ss_agg *a;
	struct ss_run run;
	struct ss_sym *sym;
	size_t i, e;
	int rc, ended;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.ex = (struct ss_exporter){ .ctx = &c, .slice = ss_diff_slice, .end = ss_diff_end_cb,
				     .offcpu = ss_diff_offcpu_cb };
	ss_exporter_nops(&c.ex); /* its release: ss_diff_col_free */
	c.wall = wall;
	if (!(r->dir = strdup(dir)) || !(a = ss_agg_new())) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	ex[0] = ss_agg_exporter(a);
	ex[1] = &c.ex;
	sym = ss_run_sym(dir, backend, quiet, err, errlen);
	if (!sym) {
		ss_agg_free(a);
		return 2;
	}
	/* a damaged or cut trace is said once, by diff: the steps it compared,
	 * or its refusal with the offset (cmd/diff.c) */
	rc = ss_run_open(&run, dir, sym, SS_RUN_MARKERS | SS_RUN_OWN_DAMAGE, err, errlen);
	if (!rc) {
		ss_diff_config(run.rs[0], "step.function", r->stepfn, sizeof(r->stepfn));
		snprintf(r->prog, sizeof(r->prog), "%s", ss_reader_prog(run.rs[0]));
	}
	for (e = 0; !rc && e < 2; e++)
		if (ex[e]->begin(ex[e]->ctx, run.t0)) {
			snprintf(err, errlen, "out of memory");
			rc = 1;
		}
	for (i = 0; !rc && i < run.n; i++) {
		const struct ss_reader *rd = run.rs[i];
		c.pid = rd->hdr.pid;
		c.off = NULL; /* until the reader hands over its switches */
		r->nsteps_all += ss_diff_marks(rd, &ended);
		if (rd->damaged || rd->warning[0] || !ended) {
			uint64_t *nc = realloc(c.cut, (c.ncut + 1) * sizeof(*nc));
			uint64_t *nl = nc ? realloc(c.lastst, (c.ncut + 1) * sizeof(*nl)) : NULL;
			if (nc)
				c.cut = nc;
			if (!nl) {
				snprintf(err, errlen, "out of memory");
				rc = 1;
				break;
			}
			c.lastst = nl;
			c.lastst[c.ncut] = 0;
			c.cut[c.ncut++] = c.pid;
			if (!r->cut[0]) {
				snprintf(r->cut, sizeof(r->cut), "%s", rd->path);
				r->cut_off = rd->damaged ? rd->damage_offset : rd->size;
			}
		}
		ss_slicer_on_open(run.sls[i], ss_diff_on_open, &c);
		ss_run_feed(&run, i, ex, 2, NULL, NULL);
	}
	ss_run_release(&run);
	ss_sym_free(sym);
	for (e = 0; !rc && e < 2; e++)
		if (ex[e]->end(ex[e]->ctx, err, errlen))
			rc = 1;
	if (!rc && ss_diff_build(r, a, &c)) {
		snprintf(err, errlen, "out of memory");
		rc = 1;
	}
	ss_diff_col_free(&c);
	r->agg = a;
	return rc;
}

void ss_diff_release(struct ss_diff_run *r)
{
	size_t i;

	for (i = 0; i < r->ns + r->ne; i++) {
		struct ss_diff_series *s = i < r->ns ? &r->s[i] : &r->e[i - r->ns];
		free(s->name);
		free(s->caller);
		free(s->calls);
		free(s->self_ns);
		free(s->total_ns);
	}
	free(r->s);
	free(r->e);
	free(r->step_ns);
	free(r->step_off);
	free(r->dir);
	if (r->agg)
		ss_agg_free(r->agg);
	memset(r, 0, sizeof(*r));
}
