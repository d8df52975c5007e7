/*
 * diff.c - per-step series of a run and the comparison of two runs
 * (diff.h).
 *
 * Design: a run is walked once into an aggregator (agg.c: the steps and
 * the self time of each function in each step) and, beside it, a small
 * collector of our own that adds calls and total time per (process, step,
 * function).  The collector also watches frames open (ss_slicer_on_open)
 * to keep, per thread, the name open at each depth: a slice whose name is
 * open below it is a recursive activation and adds nothing to total, as in
 * agg.h.  Then each function becomes a series, one value per recorded
 * step, and two runs are compared series by series: medians per step and
 * a Mann-Whitney U test over the steps (two samples paired by nothing;
 * the rank test needs no assumption about the shape of step times, which
 * have long right tails on a busy machine).  A change is significant only
 * when p < alpha AND it is large enough to matter (min_pct of the base,
 * min_step_pct of the step), so a shift of 1% that a thousand steps make
 * "certain" is not flagged.
 *
 * Must never: keep one record per call, or call a change significant with
 * fewer than SS_DIFF_MIN_STEPS steps in either run.
 */
#include <math.h>
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

struct ss_diff_key {
	uint64_t pid, step, calls, total;
	uint64_t self;               /* ranges: time outside nested ranges */
	uint32_t id;
	int kind, used;
};

struct ss_diff_thr {
	uint64_t pid, tid;
	uint32_t *open[2];           /* name id open at each depth, by kind */
	size_t nopen[2];
	uint64_t *rsum;              /* time of closed ranges under the open
	                              * range of each depth (index depth + 1) */
	size_t nrsum;
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
			    size_t cap)
{
	return ss_diff_mix(pid * 31 + step * 1000003 + id * 2 + (uint64_t)kind) & (cap - 1);
}

static struct ss_diff_key *ss_diff_key(struct ss_diff_col *c, uint64_t pid,
				       uint64_t step, uint32_t id, int kind)
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
					  c->k[j].kind, nc);
			while (nk[i].used)
				i = (i + 1) & (nc - 1);
			nk[i] = c->k[j];
		}
		free(c->k);
		c->k = nk;
		c->kcap = nc;
	}
	i = ss_diff_kslot(pid, step, id, kind, c->kcap);
	while (c->k[i].used) {
		struct ss_diff_key *e = &c->k[i];
		if (e->pid == pid && e->step == step && e->id == id && e->kind == kind)
			return e;
		i = (i + 1) & (c->kcap - 1);
	}
	c->k[i].used = 1;
	c->k[i].pid = pid;
	c->k[i].step = step;
	c->k[i].id = id;
	c->k[i].kind = kind;
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
			      uint64_t *self)
{
	size_t d = s->depth, n = t->nrsum;
	uint64_t dur = s->end_ns - s->begin_ns, *nr;

	if (d + 2 > n) {
		size_t nc = n ? n : 16;
		while (nc < d + 2)
			nc *= 2;
		nr = realloc(t->rsum, nc * sizeof(*nr));
		if (!nr)
			return -1;
		memset(nr + n, 0, (nc - n) * sizeof(*nr));
		t->rsum = nr;
		t->nrsum = nc;
	}
	*self = dur > t->rsum[d + 1] ? dur - t->rsum[d + 1] : 0;
	t->rsum[d + 1] = 0;
	t->rsum[d] += dur;
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
}

static void ss_diff_slice(void *ctx, uint64_t pid, uint64_t tid,
			  const struct ss_slice *s)
{
	struct ss_diff_col *c = ctx;
	struct ss_diff_thr *t;
	struct ss_diff_key *e;
	int k = ss_diff_kind(s), rec = 0;
	uint64_t self = 0;
	uint32_t id;
	size_t d;

	if (k < 0 || !s->name)
		return;
	t = ss_diff_thread(c, pid, tid);
	id = ss_diff_intern(c, s->name);
	if (!t || id == UINT32_MAX) {
		c->oom = 1;
		return;
	}
	for (d = 0; d < s->depth && d < t->nopen[k]; d++)
		if (t->open[k][d] == id)
			rec = 1;
	/* the frame at this depth is gone (a clipped one had no opening) */
	if (s->depth < t->nopen[k])
		t->open[k][s->depth] = UINT32_MAX;
	if (k == SS_AGG_RANGE && ss_diff_range_self(t, s, &self)) {
		c->oom = 1;
		return;
	}
	if (!s->has_step)
		return;
	e = ss_diff_key(c, pid, s->step, id, k);
	if (!e) {
		c->oom = 1;
		return;
	}
	if (!(s->flags & SS_SLICE_CLIPPED_BEGIN))
		e->calls++;
	if (!rec)
		e->total += s->end_ns - s->begin_ns;
	e->self += self;
}

static int ss_diff_begin_cb(void *ctx, uint64_t t0)
{
	(void)ctx;
	(void)t0;
	return 0;
}

static void ss_diff_process_cb(void *ctx, uint64_t pid, const char *name)
{
	(void)ctx;
	(void)pid;
	(void)name;
}

static void ss_diff_thread_cb(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	(void)name;
}

static void ss_diff_counter_cb(void *ctx, uint64_t pid, const char *name,
			       uint64_t ns, double v)
{
	(void)ctx;
	(void)pid;
	(void)name;
	(void)ns;
	(void)v;
}

static int ss_diff_end_cb(void *ctx, char *err, size_t errlen)
{
	struct ss_diff_col *c = ctx;

	if (c->oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static void ss_diff_release_cb(void *ctx)
{
	(void)ctx;
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
	}
	free(c->names);
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

static int ss_diff_cmp_step(const void *x, const void *y)
{
	const struct ss_agg_step *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->step < b->step ? -1 : a->step > b->step;
}

static int ss_diff_build(struct ss_diff_run *r, struct ss_agg *a,
			 struct ss_diff_col *c)
{
	const struct ss_agg_step *st;
	struct ss_agg_step *steps;
	size_t n = ss_agg_steps(a, &st), i, j;
	long *sid;

	r->nprocs = ss_agg_nprocesses(a);
	r->nthreads = ss_agg_nthreads(a);
	r->nsteps = n;
	steps = malloc((n ? n : 1) * sizeof(*steps));
	r->step_ns = calloc(n ? n : 1, sizeof(*r->step_ns));
	/* series per (name, kind): index + 1 by id * 2 + kind */
	sid = calloc(c->nnames * 2 + 1, sizeof(*sid));
	r->s = calloc(c->nnames * 2 + 1, sizeof(*r->s));
	if (!steps || !r->step_ns || !sid || !r->s) {
		free(steps);
		free(sid);
		return 1;
	}
	memcpy(steps, st, n * sizeof(*steps));
	qsort(steps, n, sizeof(*steps), ss_diff_cmp_step);
	for (i = 0; i < n; i++)
		r->step_ns[i] = steps[i].end_ns - steps[i].begin_ns;
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
		x = key.id * 2 + (size_t)key.kind;
		if (!sid[x]) {
			s = &r->s[r->ns];
			s->name = strdup(c->names[key.id]);
			s->kind = (enum ss_agg_kind)key.kind;
			s->calls = calloc(n, sizeof(uint64_t));
			s->self_ns = calloc(n, sizeof(uint64_t));
			s->total_ns = calloc(n, sizeof(uint64_t));
			r->ns++;
			if (!s->name || !s->calls || !s->self_ns || !s->total_ns) {
				free(steps);
				free(sid);
				return 1;
			}
			sid[x] = (long)r->ns;
		}
		s = &r->s[sid[x] - 1];
		j = (size_t)(hit - steps);
		s->calls[j] += key.calls;
		s->total_ns[j] += key.total;
		if (s->kind == SS_AGG_RANGE)
			s->self_ns[j] += key.self;
	}
	for (i = 0; i < r->ns; i++)
		for (j = 0; r->s[i].kind == SS_AGG_FUNCTION && j < n; j++)
			r->s[i].self_ns[j] = ss_agg_step_self(a, r->s[i].name, &steps[j]);
	free(steps);
	free(sid);
	return 0;
}

int ss_diff_load(struct ss_diff_run *r, const char *dir, const char *backend,
		 int quiet, char *err, size_t errlen)
{
	struct ss_diff_col c;
	struct ss_exporter *ex[2];
	struct ss_agg *a;
	struct ss_run run;
	struct ss_sym *sym;
	size_t i, e;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.ex = (struct ss_exporter){ &c, ss_diff_begin_cb, ss_diff_process_cb,
				     ss_diff_thread_cb, ss_diff_slice, NULL,
				     ss_diff_counter_cb, NULL, NULL, ss_diff_end_cb,
				     ss_diff_release_cb, 0 };
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
	rc = ss_run_open(&run, dir, sym, SS_RUN_MARKERS, err, errlen);
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
		c.pid = run.rs[i]->hdr.pid;
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

	for (i = 0; i < r->ns; i++) {
		free(r->s[i].name);
		free(r->s[i].calls);
		free(r->s[i].self_ns);
		free(r->s[i].total_ns);
	}
	free(r->s);
	free(r->step_ns);
	free(r->dir);
	if (r->agg)
		ss_agg_free(r->agg);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------ statistics */

static int ss_diff_cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double ss_diff_median(const double *v, size_t n)
{
	double *c, m;

	if (!n)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return 0;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), ss_diff_cmp_d);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

struct ss_diff_rv {
	double v;
	int g;
};

static int ss_diff_cmp_rv(const void *x, const void *y)
{
	return ss_diff_cmp_d(&((const struct ss_diff_rv *)x)->v,
			     &((const struct ss_diff_rv *)y)->v);
}

double ss_diff_mann_whitney(const double *x, size_t n, const double *y, size_t m)
{
	size_t N = n + m, i, j;
	struct ss_diff_rv *a;
	double r1 = 0, ties = 0, u, mu, var, z;

	if (!n || !m)
		return 1;
	a = malloc(N * sizeof(*a));
	if (!a)
		return 1;
	for (i = 0; i < n; i++)
		a[i] = (struct ss_diff_rv){ x[i], 0 };
	for (i = 0; i < m; i++)
		a[n + i] = (struct ss_diff_rv){ y[i], 1 };
	qsort(a, N, sizeof(*a), ss_diff_cmp_rv);
	for (i = 0; i < N; i = j) {
		double rank, t;
		for (j = i + 1; j < N && a[j].v == a[i].v; j++)
			;
		rank = (double)(i + 1 + j) / 2; /* average of ranks i+1 .. j */
		t = (double)(j - i);
		ties += t * t * t - t;
		for (size_t k = i; k < j; k++)
			if (!a[k].g)
				r1 += rank;
	}
	free(a);
	u = r1 - (double)n * (double)(n + 1) / 2;
	mu = (double)n * (double)m / 2;
	var = (double)n * (double)m / 12 *
	      ((double)(N + 1) - ties / ((double)N * (double)(N - 1)));
	if (var <= 0)
		return 1;
	z = fabs(u - mu) - 0.5; /* continuity correction */
	if (z < 0)
		z = 0;
	z /= sqrt(var);
	return erfc(z / sqrt(2.0));
}

void ss_diff_opts_default(struct ss_diff_opts *o)
{
	o->alpha = 0.01;
	o->min_pct = 5;
	o->min_step_pct = 0.5;
}

static void ss_diff_stat(const double *x, size_t n, const double *y, size_t m,
			 const struct ss_diff_opts *o, double step_base,
			 struct ss_diff_stat *st)
{
	st->base = ss_diff_median(x, n);
	st->new_ = ss_diff_median(y, m);
	st->delta = st->new_ - st->base;
	st->pct = st->base > 0 ? st->delta / st->base * 100 : NAN;
	st->p = n >= SS_DIFF_MIN_STEPS && m >= SS_DIFF_MIN_STEPS ?
		ss_diff_mann_whitney(x, n, y, m) : 1;
	st->significant = st->p < o->alpha && st->delta != 0 &&
			  fabs(st->delta) >= o->min_pct / 100 * st->base &&
			  fabs(st->delta) >= o->min_step_pct / 100 * step_base;
}

static const struct ss_diff_series *ss_diff_find(const struct ss_diff_run *r,
						 const char *name,
						 enum ss_agg_kind kind)
{
	size_t i;

	for (i = 0; i < r->ns; i++)
		if (r->s[i].kind == kind && !strcmp(r->s[i].name, name))
			return &r->s[i];
	return NULL;
}

/* Series s (may be NULL: zeros) of n steps as doubles into v. */
static void ss_diff_vals(const uint64_t *s, size_t n, double *v)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = s ? (double)s[i] : 0;
}

static double ss_diff_mean(const uint64_t *s, size_t n)
{
	double sum = 0;
	size_t i;

	if (!s || !n)
		return 0;
	for (i = 0; i < n; i++)
		sum += (double)s[i];
	return sum / (double)n;
}

static int ss_diff_cmp_row(const void *x, const void *y)
{
	const struct ss_diff_row *a = x, *b = y;

	if (a->self.delta != b->self.delta)
		return a->self.delta > b->self.delta ? -1 : 1;
	if (a->total.delta != b->total.delta)
		return a->total.delta > b->total.delta ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void ss_diff_row(const struct ss_diff_run *a, const struct ss_diff_run *b,
			const struct ss_diff_series *sa, const struct ss_diff_series *sb,
			const struct ss_diff_opts *o, double step_base, double *x,
			double *y, struct ss_diff_row *row)
{
	const struct ss_diff_series *s = sa ? sa : sb;

	row->name = s->name;
	row->kind = s->kind;
	row->calls_base = ss_diff_mean(sa ? sa->calls : NULL, a->nsteps);
	row->calls_new = ss_diff_mean(sb ? sb->calls : NULL, b->nsteps);
	ss_diff_vals(sa ? sa->self_ns : NULL, a->nsteps, x);
	ss_diff_vals(sb ? sb->self_ns : NULL, b->nsteps, y);
	ss_diff_stat(x, a->nsteps, y, b->nsteps, o, step_base, &row->self);
	ss_diff_vals(sa ? sa->total_ns : NULL, a->nsteps, x);
	ss_diff_vals(sb ? sb->total_ns : NULL, b->nsteps, y);
	ss_diff_stat(x, a->nsteps, y, b->nsteps, o, step_base, &row->total);
}

/* A frame open in every step (main, the loop): no call and no time that
 * began in a step, nothing to compare. */
static int ss_diff_empty(const struct ss_diff_row *r)
{
	return !r->calls_base && !r->calls_new && !r->total.base && !r->total.new_ &&
	       !r->self.base && !r->self.new_;
}

long ss_diff_compare(const struct ss_diff_run *a, const struct ss_diff_run *b,
		     const struct ss_diff_opts *o, struct ss_diff_stat *step,
		     struct ss_diff_row **rows)
{
	double *x = malloc((a->nsteps + 1) * sizeof(*x));
	double *y = malloc((b->nsteps + 1) * sizeof(*y));
	struct ss_diff_row *r = calloc(a->ns + b->ns + 1, sizeof(*r));
	size_t i, n = 0;

	*rows = NULL;
	if (!x || !y || !r) {
		free(x);
		free(y);
		free(r);
		return -1;
	}
	ss_diff_vals(a->step_ns, a->nsteps, x);
	ss_diff_vals(b->step_ns, b->nsteps, y);
	ss_diff_stat(x, a->nsteps, y, b->nsteps, o, 0, step);
	for (i = 0; i < a->ns; i++) {
		ss_diff_row(a, b, &a->s[i], ss_diff_find(b, a->s[i].name, a->s[i].kind),
			    o, step->base, x, y, &r[n]);
		n += !ss_diff_empty(&r[n]);
	}
	for (i = 0; i < b->ns; i++)
		if (!ss_diff_find(a, b->s[i].name, b->s[i].kind)) {
			ss_diff_row(a, b, NULL, &b->s[i], o, step->base, x, y, &r[n]);
			n += !ss_diff_empty(&r[n]);
		}
	free(x);
	free(y);
	qsort(r, n, sizeof(*r), ss_diff_cmp_row);
	*rows = r;
	return (long)n;
}

char *ss_diff_fmt_time(double ns, char *buf, size_t len)
{
	return ss_agg_fmt_time(ns > 0 ? (uint64_t)llround(ns) : 0, buf, len);
}

char *ss_diff_fmt_dt(double ns, char *buf, size_t len)
{
	char t[32];

	ss_agg_fmt_time((uint64_t)llround(fabs(ns)), t, sizeof(t));
	snprintf(buf, len, "%s%s", ns < 0 ? "-" : "+", t);
	return buf;
}

char *ss_diff_fmt_pct(const struct ss_diff_stat *s, char *buf, size_t len)
{
	if (isnan(s->pct))
		snprintf(buf, len, s->new_ > 0 ? "new" : "-");
	else
		snprintf(buf, len, "%+.1f%%", s->pct);
	return buf;
}
