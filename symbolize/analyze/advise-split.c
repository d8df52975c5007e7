/*
 * advise-split.c - split every recorded step into the categories of
 * `stepscope advise` (advise.h, enum ss_adv_cat) so that they add up to
 * the step exactly.
 *
 * Design: an exporter fed beside the aggregator keeps, per thread, the
 * intervals that claim time (OpenMP team-wait ranges, CUDA API calls, the
 * off-CPU intervals of record.sched, copied as they come since the reader
 * frees them with the process), the allocation records' times and sizes,
 * the calls counted per step number, the outermost calls of each step and
 * the step slices themselves.  At the end, per step of a stepping thread:
 *   - the intervals are cut to the step and swept in time order; each
 *     instant goes to the first category that claims it in the order
 *     preempted, GPU wait, OpenMP wait, blocked, GPU API: preempted is
 *     all the time the thread was runnable but had no CPU, wherever it
 *     was; a thread blocked inside cudaStreamSynchronize waits for the
 *     GPU, one blocked in a team wait (libgomp's futex) for the team, so
 *     blocked is what is left (I/O, locks, sleep);
 *   - of what is left, stepscope's hooks claim the step's recorded calls
 *     on that thread x pair_ns (overhead.h), then the allocation calls
 *     their estimated time (ss_adv_alloc_call_ns, advise-alloc-cost.c,
 *     per record: the record has a time, no duration), each at most what
 *     is left;
 *   - the user's operators get the rest, so the sum is the step.
 * The outermost calls of a step are kept two levels deep as they close
 * (post-order: callees first): when the outermost level is the step
 * function alone, its callees are the step's operators.
 *
 * Memory grows with the intervals of the categories (team waits, API
 * calls, switches, allocations) and with steps x their operators, not
 * with every call.  Must never: give a step categories that do not sum
 * to its duration, or a category more than the step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise-split.h"
#include "format.h"
#include "util.h"

/* a time claimed by a category: [b, e) */
struct sp_iv {
	uint64_t b, e;
	unsigned cat;
};

struct sp_alloc {
	uint64_t ns, size;
};

/* recorded calls that began in step `step`, on one thread; in: those
 * inside one of its ProfilerStep slices */
struct sp_count {
	uint64_t step, calls, in;
};

struct sp_op {
	uint32_t name;
	uint64_t ns, calls;
};

struct sp_level {
	struct sp_op *v;
	size_t n, cap;
};

/* the outermost calls of one step: depth d in l[0], d + 1 in l[1] */
struct sp_stepops {
	uint64_t step;
	unsigned d1;                /* d + 1; 0 while it has none */
	struct sp_level l[2];
};

struct sp_step {
	uint64_t b, e, step;
};

struct sp_thread {
	uint64_t pid, tid;
	struct sp_iv *iv;
	size_t niv, capiv;
	uint64_t ivmax;             /* longest interval */
	struct ss_offcpu_iv *off;
	size_t noff, capoff;
	int unwatched;
	struct sp_alloc *al;
	size_t nal, capal;
	struct sp_count *cnt;
	size_t ncnt, capcnt;
	struct sp_stepops *so;
	size_t nso, capso;
	struct sp_step *st;
	size_t nst, capst;
};

struct ss_adv_split {
	struct sp_thread *th;
	size_t nth, capth, last;
	char **names;               /* interned, by id */
	size_t nnames, capnames;
	uint32_t *hash;             /* open addressing: id + 1, 0 empty */
	size_t caphash;
	int oom, have_gpu, have_args;
	struct ss_exporter ex;
};

static struct sp_thread *sp_thread(struct ss_adv_split *sp, uint64_t pid, uint64_t tid)
{
	struct sp_thread *t;

	if (sp->last < sp->nth && sp->th[sp->last].pid == pid && sp->th[sp->last].tid == tid)
		return &sp->th[sp->last];
	for (size_t i = 0; i < sp->nth; i++)
		if (sp->th[i].pid == pid && sp->th[i].tid == tid) {
			sp->last = i;
			return &sp->th[i];
		}
	if (ss_grow((void **)&sp->th, &sp->capth, sp->nth, sizeof(*t), 8)) {
		sp->oom = 1;
		return NULL;
	}
	t = &sp->th[sp->nth];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	sp->last = sp->nth++;
	return t;
}

static uint32_t sp_intern(struct ss_adv_split *sp, const char *s)
{
	size_t i;

	if (sp->nnames * 2 >= sp->caphash) {
		size_t cap = sp->caphash ? sp->caphash * 2 : 256;
		uint32_t *h = calloc(cap, sizeof(*h));
		if (!h) {
			sp->oom = 1;
			return UINT32_MAX;
		}
		for (size_t k = 0; k < sp->nnames; k++) {
			i = ss_hash_str(sp->names[k]) & (cap - 1);
			while (h[i])
				i = (i + 1) & (cap - 1);
			h[i] = (uint32_t)k + 1;
		}
		free(sp->hash);
		sp->hash = h;
		sp->caphash = cap;
	}
	i = ss_hash_str(s) & (sp->caphash - 1);
	while (sp->hash[i]) {
		if (!strcmp(sp->names[sp->hash[i] - 1], s))
			return sp->hash[i] - 1;
		i = (i + 1) & (sp->caphash - 1);
	}
	if (ss_grow((void **)&sp->names, &sp->capnames, sp->nnames, sizeof(char *), 64) ||
	    !(sp->names[sp->nnames] = strdup(s))) {
		sp->oom = 1;
		return UINT32_MAX;
	}
	sp->hash[i] = (uint32_t)sp->nnames + 1;
	return (uint32_t)sp->nnames++;
}

static void sp_add_iv(struct ss_adv_split *sp, struct sp_thread *t, uint64_t b, uint64_t e,
		      unsigned cat)
{
	if (e <= b)
		return;
	if (ss_grow((void **)&t->iv, &t->capiv, t->niv, sizeof(*t->iv), 64)) {
		sp->oom = 1;
		return;
	}
	t->iv[t->niv++] = (struct sp_iv){ b, e, cat };
	if (e - b > t->ivmax)
		t->ivmax = e - b;
}

/* "omp start: wait for the team", "omp barrier: wait for the team"
 * (runtime/omp.c) */
static int sp_is_omp_wait(const char *name)
{
	static const char tail[] = ": wait for the team";
	size_t n = name ? strlen(name) : 0;

	return n > sizeof(tail) + 3 && !strncmp(name, "omp ", 4) &&
	       !strcmp(name + n - (sizeof(tail) - 1), tail);
}

/* A CUDA API call in which the host waits for the device: the
 * synchronizes, and the copies that are not Async (they return when the
 * copy is done). */
static int sp_is_gpu_wait(const char *name)
{
	if (!name)
		return 0;
	if (strstr(name, "Synchronize"))
		return 1;
	return (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8) ||
		!strncmp(name, "cudaMemset", 10) || !strncmp(name, "cuMemset", 8)) &&
	       !strstr(name, "Async");
}

static void sp_level_add(struct ss_adv_split *sp, struct sp_level *l, uint32_t name,
			 uint64_t ns)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].name == name) {
			l->v[i].ns += ns;
			l->v[i].calls++;
			return;
		}
	if (ss_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v), 8)) {
		sp->oom = 1;
		return;
	}
	l->v[l->n++] = (struct sp_op){ name, ns, 1 };
}

/* Arrays kept by step number (sp_count, sp_stepops: the step first):
 * where step is or goes.  Steps come mostly in order: the last one first. */
static size_t sp_lower(const void *v, size_t n, size_t size, uint64_t step)
{
	size_t a = 0, z = n;

#define SP_STEP_AT(i) (*(const uint64_t *)((const char *)v + (i) * size))
	if (n && SP_STEP_AT(n - 1) < step)
		return n;
	if (n && SP_STEP_AT(n - 1) == step)
		return n - 1;
	while (a < z) {
		size_t m = a + (z - a) / 2;
		if (SP_STEP_AT(m) < step)
			a = m + 1;
		else
			z = m;
	}
	return a;
#undef SP_STEP_AT
}

/* element of step `step` in *v (n of them), made (zeroed) if missing */
static void *sp_at_step(struct ss_adv_split *sp, void **v, size_t *n, size_t *cap, size_t size,
			uint64_t step)
{
	size_t i = sp_lower(*v, *n, size, step);
	char *p;

	if (i < *n && *(const uint64_t *)((char *)*v + i * size) == step)
		return (char *)*v + i * size;
	if (ss_grow(v, cap, *n, size, 16)) {
		sp->oom = 1;
		return NULL;
	}
	p = (char *)*v + i * size;
	memmove(p + size, p, (*n - i) * size);
	memset(p, 0, size);
	*(uint64_t *)p = step;
	(*n)++;
	return p;
}

static struct sp_stepops *sp_stepops(struct ss_adv_split *sp, struct sp_thread *t,
				     uint64_t step)
{
	return sp_at_step(sp, (void **)&t->so, &t->nso, &t->capso, sizeof(*t->so), step);
}

/* an outermost-so-far call of a step (see the opening comment) */
static void sp_outer(struct ss_adv_split *sp, struct sp_thread *t, const struct ss_slice *s)
{
	struct sp_stepops *o = sp_stepops(sp, t, s->step);
	uint32_t name;

	if (!o)
		return;
	if (o->d1 && s->depth > o->d1) /* deeper than d + 1 */
		return;
	name = sp_intern(sp, s->name ? s->name : "?");
	if (name == UINT32_MAX)
		return;
	if (!o->d1 || s->depth + 1 < o->d1) { /* a new outermost level */
		free(o->l[1].v);
		if (o->d1 && s->depth + 2 == o->d1) { /* one up: l[0] are its callees */
			o->l[1] = o->l[0];
		} else {
			free(o->l[0].v);
			memset(&o->l[1], 0, sizeof(o->l[1]));
		}
		memset(&o->l[0], 0, sizeof(o->l[0]));
		o->d1 = s->depth + 1;
	}
	sp_level_add(sp, &o->l[s->depth + 1 == o->d1 ? 0 : 1], name, s->end_ns - s->begin_ns);
}

static void sp_count(struct ss_adv_split *sp, struct sp_thread *t, const struct ss_slice *s)
{
	struct sp_count *c = sp_at_step(sp, (void **)&t->cnt, &t->ncnt, &t->capcnt, sizeof(*c),
					s->step);

	if (!c)
		return;
	c->calls++;
	c->in += s->in_step != 0;
}

static void sp_slice(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	struct ss_adv_split *sp = ctx;
	struct sp_thread *t;

	if (s->cat == SS_SLICE_MARKER)
		return;
	t = sp_thread(sp, pid, tid);
	if (!t)
		return;
	if (s->cat == SS_SLICE_STEP) {
		if (ss_grow((void **)&t->st, &t->capst, t->nst, sizeof(*t->st), 16)) {
			sp->oom = 1;
			return;
		}
		t->st[t->nst++] = (struct sp_step){ s->begin_ns,
						    s->end_ns > s->begin_ns ? s->end_ns : s->begin_ns,
						    s->has_step ? s->step : 0 };
		return;
	}
	if (s->cat == SS_SLICE_RANGE) {
		if (sp_is_omp_wait(s->name))
			sp_add_iv(sp, t, s->begin_ns, s->end_ns, SS_ADV_OMP_WAIT);
		return;
	}
	if (s->argv)
		sp->have_args = 1;
	if (s->has_step)
		sp_count(sp, t, s);
	if (s->in_step && s->has_step)
		sp_outer(sp, t, s);
}

static void sp_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g)
{
	struct ss_adv_split *sp = ctx;

	sp->have_gpu = 1;
	for (size_t i = 0; i < g->n; i++) {
		const struct ss_gpu_op *o = &g->ops[i];
		struct sp_thread *t;
		if (o->type != SS_GPU_API)
			continue;
		t = sp_thread(sp, pid, o->tid);
		if (t)
			sp_add_iv(sp, t, o->start_ns, o->end_ns,
				  sp_is_gpu_wait(o->name) ? SS_ADV_GPU_WAIT : SS_ADV_GPU_API);
	}
}

static void sp_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_adv_split *sp = ctx;

	for (size_t i = 0; i < d->n; i++) {
		const struct ss_offcpu_thread *o = &d->th[i];
		struct sp_thread *t = sp_thread(sp, pid, o->tid);
		if (!t)
			return;
		t->unwatched |= o->unwatched;
		for (size_t k = 0; k < o->n; k++) {
			if (ss_grow((void **)&t->off, &t->capoff, t->noff, sizeof(*t->off), 64)) {
				sp->oom = 1;
				return;
			}
			t->off[t->noff++] = o->iv[k];
		}
	}
}

static void sp_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct ss_adv_split *sp = ctx;
	struct sp_thread *t = NULL;

	for (size_t i = 0; i < d->nev; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		if (!t || t->tid != e->tid)
			t = sp_thread(sp, pid, e->tid);
		if (!t)
			return;
		if (ss_grow((void **)&t->al, &t->capal, t->nal, sizeof(*t->al), 64)) {
			sp->oom = 1;
			return;
		}
		t->al[t->nal++] = (struct sp_alloc){ e->ns, e->size };
	}
}

static int sp_end(void *ctx, char *err, size_t errlen)
{
	struct ss_adv_split *sp = ctx;

	return ss_export_oom_end(sp->oom, err, errlen);
}

struct ss_exporter *ss_adv_split_new(struct ss_adv_split **out)
{
	struct ss_adv_split *sp = calloc(1, sizeof(*sp));

	*out = sp;
	if (!sp)
		return NULL;
	sp->ex.ctx = sp;
	sp->ex.slice = sp_slice;
	sp->ex.gpu = sp_gpu;
	sp->ex.offcpu = sp_offcpu;
	sp->ex.alloc = sp_alloc;
	sp->ex.end = sp_end;
	ss_exporter_nops(&sp->ex);
	return &sp->ex;
}

void ss_adv_split_free(struct ss_adv_split *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->nth; i++) {
		struct sp_thread *t = &sp->th[i];
		for (size_t k = 0; k < t->nso; k++)
			free(t->so[k].l[0].v), free(t->so[k].l[1].v);
		free(t->iv), free(t->off), free(t->al), free(t->cnt), free(t->so), free(t->st);
	}
	for (size_t i = 0; i < sp->nnames; i++)
		free(sp->names[i]);
	free(sp->names), free(sp->hash), free(sp->th);
	free(sp);
}

int ss_adv_split_have_gpu(const struct ss_adv_split *sp)
{
	return sp->have_gpu;
}

int ss_adv_split_have_args(const struct ss_adv_split *sp)
{
	return sp->have_args;
}

/* ------------------------------------------------------------ the split */

static int sp_cmp_iv(const void *a, const void *b)
{
	const struct sp_iv *x = a, *y = b;

	return x->b < y->b ? -1 : x->b > y->b;
}

static int sp_cmp_al(const void *a, const void *b)
{
	const struct sp_alloc *x = a, *y = b;

	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int sp_cmp_st(const void *a, const void *b)
{
	const struct sp_step *x = a, *y = b;

	return x->b < y->b ? -1 : x->b > y->b;
}

static int sp_cmp_op(const void *a, const void *b)
{
	const struct ss_adv_op *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int sp_cmp_step(const void *a, const void *b)
{
	const struct ss_adv_step *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->begin_ns != y->begin_ns)
		return x->begin_ns < y->begin_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* an edge of a claimed interval, for the sweep */
struct sp_edge {
	uint64_t t;
	unsigned cat;
	int d;
};

static int sp_cmp_edge(const void *a, const void *b)
{
	const struct sp_edge *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* the order in which categories claim an instant */
static const unsigned sp_prio[] = { SS_ADV_PREEMPTED, SS_ADV_GPU_WAIT, SS_ADV_OMP_WAIT,
				    SS_ADV_BLOCKED, SS_ADV_GPU_API };
#define SP_NPRIO (sizeof(sp_prio) / sizeof(sp_prio[0]))

static int sp_edge_add(struct sp_edge **e, size_t *n, size_t *cap, uint64_t b, uint64_t x,
		       uint64_t lo, uint64_t hi, unsigned cat)
{
	if (b < lo)
		b = lo;
	if (x > hi)
		x = hi;
	if (x <= b)
		return 0;
	if (ss_grow((void **)e, cap, *n + 1, sizeof(**e), 64))
		return -1;
	(*e)[(*n)++] = (struct sp_edge){ b, cat, 1 };
	(*e)[(*n)++] = (struct sp_edge){ x, cat, -1 };
	return 0;
}

/* the claimed categories of [lo, hi) on thread t into cat[] */
static int sp_sweep(const struct sp_thread *t, uint64_t lo, uint64_t hi, uint64_t *cat,
		    struct sp_edge **e, size_t *cap)
{
	size_t n = 0, a, z, k;
	int cnt[SS_ADV_NCAT] = { 0 };

	/* intervals: sorted by begin, none longer than ivmax */
	a = 0, z = t->niv;
	while (a < z) {
		size_t m = a + (z - a) / 2;
		if (t->iv[m].b + t->ivmax < lo)
			a = m + 1;
		else
			z = m;
	}
	for (k = a; k < t->niv && t->iv[k].b < hi; k++)
		if (sp_edge_add(e, &n, cap, t->iv[k].b, t->iv[k].e, lo, hi, t->iv[k].cat))
			return -1;
	/* off-CPU: disjoint, by begin (so by end too) */
	a = 0, z = t->noff;
	while (a < z) {
		size_t m = a + (z - a) / 2;
		if (t->off[m].end_ns <= lo)
			a = m + 1;
		else
			z = m;
	}
	for (k = a; k < t->noff && t->off[k].begin_ns < hi; k++)
		if (sp_edge_add(e, &n, cap, t->off[k].begin_ns, t->off[k].end_ns, lo, hi,
				(t->off[k].flags & SS_SWITCH_PREEMPTED) ? SS_ADV_PREEMPTED :
									  SS_ADV_BLOCKED))
			return -1;
	if (!n)
		return 0;
	qsort(*e, n, sizeof(**e), sp_cmp_edge);
	for (k = 0; k < n; k++) {
		cnt[(*e)[k].cat] += (*e)[k].d;
		if (k + 1 < n && (*e)[k + 1].t > (*e)[k].t)
			for (size_t p = 0; p < SP_NPRIO; p++)
				if (cnt[sp_prio[p]] > 0) {
					cat[sp_prio[p]] += (*e)[k + 1].t - (*e)[k].t;
					break;
				}
	}
	return 0;
}

static const struct sp_count *sp_count_of(const struct sp_thread *t, uint64_t step)
{
	size_t i = sp_lower(t->cnt, t->ncnt, sizeof(*t->cnt), step);

	return i < t->ncnt && t->cnt[i].step == step ? &t->cnt[i] : NULL;
}

uint64_t ss_adv_split_calls(const struct ss_adv_split *sp, const struct ss_adv_step *s,
			    uint64_t *all_threads)
{
	uint64_t in = 0, all = 0;

	for (size_t i = 0; i < sp->nth; i++) {
		const struct sp_thread *t = &sp->th[i];
		const struct sp_count *c;
		if (t->pid != s->pid || !(c = sp_count_of(t, s->step)))
			continue;
		all += c->calls;
		if (t->tid == s->tid)
			in = c->in;
	}
	if (all_threads)
		*all_threads = all;
	return in;
}

/* the estimated time of the allocation records of [lo, hi) */
static double sp_alloc_ns(const struct sp_thread *t, uint64_t lo, uint64_t hi)
{
	size_t a = 0, z = t->nal;
	double ns = 0;

	while (a < z) {
		size_t m = a + (z - a) / 2;
		if (t->al[m].ns < lo)
			a = m + 1;
		else
			z = m;
	}
	for (; a < t->nal && t->al[a].ns < hi; a++)
		ns += ss_adv_alloc_call_ns(t->al[a].size);
	return ns;
}

/* the step's operators from its outermost calls */
static int sp_ops(const struct ss_adv_split *sp, const struct sp_thread *t, struct ss_adv_step *s)
{
	size_t i = sp_lower(t->so, t->nso, sizeof(*t->so), s->step);
	const struct sp_stepops *o = i < t->nso && t->so[i].step == s->step ? &t->so[i] : NULL;
	const struct sp_level *l;

	if (!o)
		return 0;
	l = &o->l[0];
	if (l->n == 1 && l->v[0].calls == 1 && o->l[1].n) /* the step function */
		l = &o->l[1];
	s->op = calloc(l->n, sizeof(*s->op));
	if (!s->op)
		return -1;
	for (size_t k = 0; k < l->n; k++) {
		s->op[k].name = sp->names[l->v[k].name];
		s->op[k].ns = l->v[k].ns;
	}
	s->nop = l->n;
	qsort(s->op, s->nop, sizeof(*s->op), sp_cmp_op);
	return 0;
}

int ss_adv_split_steps(struct ss_adv_split *sp, uint64_t pair_ns, struct ss_adv_step **steps,
		       size_t *nout)
{
	struct ss_adv_step *v = NULL;
	size_t n = 0, cap = 0, ecap = 0;
	struct sp_edge *e = NULL;

	for (size_t i = 0; i < sp->nth; i++) {
		struct sp_thread *t = &sp->th[i];
		if (!t->nst)
			continue;
		qsort(t->st, t->nst, sizeof(*t->st), sp_cmp_st);
		qsort(t->iv, t->niv, sizeof(*t->iv), sp_cmp_iv);
		qsort(t->al, t->nal, sizeof(*t->al), sp_cmp_al);
		for (size_t k = 0; k < t->nst; k++) {
			struct ss_adv_step *s;
			uint64_t dur = t->st[k].e - t->st[k].b, left = dur, c;
			const struct sp_count *cn;
			if (ss_grow((void **)&v, &cap, n, sizeof(*v), 64))
				goto oom;
			s = &v[n++];
			memset(s, 0, sizeof(*s));
			s->pid = t->pid;
			s->tid = t->tid;
			s->step = t->st[k].step;
			s->begin_ns = t->st[k].b;
			s->end_ns = t->st[k].e;
			s->off_unknown = t->unwatched;
			if (sp_sweep(t, s->begin_ns, s->end_ns, s->cat, &e, &ecap))
				goto oom;
			for (c = 0; c < SS_ADV_NCAT; c++)
				left -= s->cat[c];
			cn = sp_count_of(t, s->step);
			c = cn ? cn->in * pair_ns : 0;
			s->cat[SS_ADV_HOOKS] = c < left ? c : left;
			left -= s->cat[SS_ADV_HOOKS];
			double al = sp_alloc_ns(t, s->begin_ns, s->end_ns);
			c = al >= (double)left ? left : (uint64_t)llround(al);
			s->cat[SS_ADV_ALLOC] = c;
			left -= c;
			s->cat[SS_ADV_OPS] = left;
			if (sp_ops(sp, t, s))
				goto oom;
		}
	}
	free(e);
	if (n)
		qsort(v, n, sizeof(*v), sp_cmp_step);
	*steps = v;
	*nout = n;
	return 0;
oom:
	free(e);
	for (size_t k = 0; k < n; k++)
		free(v[k].op);
	free(v);
	return -1;
}
