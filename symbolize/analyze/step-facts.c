/*
 * step-facts.c - the call facts of a run for step functions (step-facts.h): calls,
 * durations, nesting in itself, threads and callers of every function.
 *
 * Design: slices arrive per thread as they close (post-order).  A closed
 * slice waits in its depth's list until the next slice one level below it
 * closes: that one is its caller.  A function's calls nest in themselves
 * when a call closes after one of its own calls that began later.  Then,
 * when the run has whole-run counts (stats: whole_run), each function gets
 * its exact calls and sampled time for the whole run, past the trace's cap.
 * The children of one call, in the order they ran, are the caller's
 * iterations as the trace shows them: for each function called more than
 * once there, which siblings ran between two of its calls, and how often
 * (ss_steps_gaps): the ranking judges loops by those, not by call counts
 * that happen to agree.
 *
 * Must never: keep a slice after its caller closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "stats-read.h"
#include "step-facts.h"

static uint64_t ss_steps_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct ss_steps_fn *ss_steps_get(struct ss_steps *st, const char *name)
{
	size_t i;

	if ((st->n + 1) * 2 > st->cap) {
		size_t ncap = st->cap ? st->cap * 2 : 1024, k;
		struct ss_steps_fn **nt = calloc(ncap, sizeof(*nt));
		if (!nt)
			return NULL;
		for (k = 0; k < st->cap; k++)
			if (st->tab[k]) {
				i = ss_steps_hash(st->tab[k]->name) & (ncap - 1);
				while (nt[i])
					i = (i + 1) & (ncap - 1);
				nt[i] = st->tab[k];
			}
		free(st->tab);
		st->tab = nt;
		st->cap = ncap;
	}
	i = ss_steps_hash(name) & (st->cap - 1);
	while (st->tab[i]) {
		if (!strcmp(st->tab[i]->name, name))
			return st->tab[i];
		i = (i + 1) & (st->cap - 1);
	}
	struct ss_steps_fn *f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name))) {
		free(f);
		return NULL;
	}
	f->min = UINT64_MAX;
	st->tab[i] = f;
	st->n++;
	return f;
}

static struct ss_steps_thread *ss_steps_thread(struct ss_steps *st, uint64_t tid)
{
	size_t i;
	for (i = 0; i < st->nth; i++)
		if (st->th[i].tid == tid)
			return &st->th[i];
	struct ss_steps_thread *nt = realloc(st->th, (st->nth + 1) * sizeof(*nt));
	if (!nt)
		return NULL;
	st->th = nt;
	memset(&nt[st->nth], 0, sizeof(*nt));
	nt[st->nth].tid = tid;
	return &nt[st->nth++];
}

static struct ss_steps_level *ss_steps_level(struct ss_steps_thread *t, size_t d)
{
	if (d >= t->nlv) {
		size_t n = d + 16;
		struct ss_steps_level *lv = realloc(t->lv, n * sizeof(*lv));
		if (!lv)
			return NULL;
		memset(lv + t->nlv, 0, (n - t->nlv) * sizeof(*lv));
		t->lv = lv;
		t->nlv = n;
	}
	return &t->lv[d];
}

/* Child c was called by parent (NULL: at the start of its thread), in
 * activation `serial` of the parent, which lasted dur. */
static void ss_steps_called_by(struct ss_steps_fn *c, struct ss_steps_fn *parent,
			       uint64_t serial, uint64_t dur)
{
	int k;

	for (k = 0; k < c->ncallers && c->caller[k] != parent; k++)
		;
	if (k == c->ncallers) {
		if (k == SS_STEPS_CALLERS) {
			c->more_calls++;
			return;
		}
		c->caller[k] = parent;
		c->caller_calls[k] = 0;
		c->ncallers++;
	}
	c->caller_calls[k]++;
	if (k)
		return;
	c->parent = parent;
	c->parent_calls++;
	if (c->mark != serial) {
		c->mark = serial;
		c->acts++;
		c->acts_total += dur;
	}
}

/* One gap of f closed with c calls of sibling g in it. */
static int ss_steps_gap_add(struct ss_steps_fn *f, struct ss_steps_fn *g, uint32_t c)
{
	int k;

	for (k = 0; k < f->ngap && f->gap[k].g != g; k++)
		;
	if (k == f->ngap) {
		if (k == SS_STEPS_SIBS)
			return 0; /* a sibling past those: not counted */
		if (!f->gap && !(f->gap = calloc(SS_STEPS_SIBS, sizeof(*f->gap))))
			return -1;
		f->gap[k].g = g;
		f->ngap++;
	}
	if (c == 1)
		f->gap[k].one++;
	else
		f->gap[k].more++;
	return 0;
}

/* The children v[0..n) of one call of p, in the order they ran (those
 * whose first caller is p): for each called twice or more, the calls of
 * each sibling between two of its consecutive calls.  A call with more
 * distinct children than SS_STEPS_DISTINCT is not judged. */
static int ss_steps_gaps(struct ss_steps *st, struct ss_steps_fn *p, struct ss_steps_fn **v,
			 size_t n)
{
	struct ss_steps_fn *d[SS_STEPS_DISTINCT];
	uint32_t cnt[SS_STEPS_DISTINCT], in[SS_STEPS_DISTINCT];
	size_t k = 0;

	if (!p || n < 3)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct ss_steps_fn *f = v[i];
		if (f->caller[0] != p)
			continue;
		if (f->seen != st->serial) {
			if (k == SS_STEPS_DISTINCT)
				return 0;
			f->seen = st->serial;
			f->slot = (unsigned)k;
			d[k] = f;
			cnt[k++] = 0;
		}
		cnt[f->slot]++;
	}
	for (size_t a = 0; a < k; a++) {
		int started = 0;
		if (cnt[a] < 2)
			continue;
		memset(in, 0, k * sizeof(*in));
		for (size_t i = 0; i < n; i++) {
			struct ss_steps_fn *f = v[i];
			if (f->caller[0] != p || f->seen != st->serial)
				continue;
			if (f != d[a]) {
				in[f->slot] += started;
				continue;
			}
			if (started) {
				d[a]->gaps++;
				for (size_t b = 0; b < k; b++)
					if (in[b] && ss_steps_gap_add(d[a], d[b], in[b]))
						return -1;
				memset(in, 0, k * sizeof(*in));
			}
			started = 1;
		}
	}
	return 0;
}

/* The children waiting at depth d get their parent p (NULL: none). */
static void ss_steps_adopt(struct ss_steps *st, struct ss_steps_thread *t, size_t d,
			   struct ss_steps_fn *p, uint64_t dur)
{
	struct ss_steps_level *lv;
	size_t k;

	if (d >= t->nlv)
		return;
	lv = &t->lv[d];
	st->serial++;
	for (k = 0; k < lv->n; k++)
		ss_steps_called_by(lv->v[k], p, st->serial, dur);
	if (ss_steps_gaps(st, p, lv->v, lv->n))
		st->oom = 1;
	lv->n = 0;
}

const struct ss_steps_gap *ss_steps_gap_of(const struct ss_steps_fn *f,
					   const struct ss_steps_fn *g)
{
	for (int k = 0; k < f->ngap; k++)
		if (f->gap[k].g == g)
			return &f->gap[k];
	return NULL;
}

static unsigned ss_steps_bucket(uint64_t ns)
{
	unsigned msb;
	if (ns < 8)
		return (unsigned)ns; /* 0..7: exact */
	msb = 63u - (unsigned)__builtin_clzll(ns);
	return msb * 4 + (unsigned)((ns >> (msb - 2)) & 3); /* >= 12 */
}

uint64_t ss_steps_median(const struct ss_steps_fn *f)
{
	uint64_t seen = 0;
	for (unsigned b = 0; b < SS_STEPS_BUCKETS; b++) {
		seen += f->hist[b];
		if (seen * 2 >= f->calls && f->hist[b])
			return f->hsum[b] / f->hist[b];
	}
	return 0;
}

static void ss_steps_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct ss_steps *st = ctx;
	struct ss_steps_thread *t;
	struct ss_steps_level *lv;
	struct ss_steps_fn *f;
	uint64_t dur;

	if (s->has_step) {
		if (!st->has_steps || s->step < st->step_lo)
			st->step_lo = s->step;
		if (!st->has_steps || s->step > st->step_hi)
			st->step_hi = s->step;
		st->has_steps = 1;
	}
	/* functions only: steps and user ranges nest in trees of their own
	 * (their depth counts other ranges, not functions) */
	if (st->oom || s->cat != SS_SLICE_FUNCTION || !s->name)
		return;
	f = ss_steps_get(st, s->name);
	t = ss_steps_thread(st, tid);
	if (!f || !t || !(lv = ss_steps_level(t, s->depth)) ||
	    !ss_steps_level(t, s->depth + 1)) {
		st->oom = 1;
		return;
	}
	dur = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
	ss_steps_adopt(st, t, s->depth + 1, f, dur);
	/* still open when the trace stopped (its cap) or its window closed:
	 * no call, and no child of the frame below (the open frames come
	 * outermost first, each after its own children) */
	if (s->flags & SS_SLICE_CLIPPED_END)
		return;
	st->slices++;
	if (!f->calls) {
		f->tid = tid;
	} else if (f->tid != tid) {
		f->multi_thread = 1;
	} else if (f->last_begin >= s->begin_ns) {
		f->nested++; /* closed before us, began after us: inside us */
	}
	f->last_begin = s->begin_ns;
	f->calls++;
	f->total += dur;
	f->hist[ss_steps_bucket(dur)]++;
	f->hsum[ss_steps_bucket(dur)] += dur;
	f->min = dur < f->min ? dur : f->min;
	f->max = dur > f->max ? dur : f->max;
	f->sumsq += ((double)dur / 1e6) * ((double)dur / 1e6);
	if (lv->n == lv->cap) {
		size_t n = lv->cap ? lv->cap * 2 : 16;
		struct ss_steps_fn **v = realloc(lv->v, n * sizeof(*v));
		if (!v) {
			st->oom = 1;
			return;
		}
		lv->v = v;
		lv->cap = n;
	}
	lv->v[lv->n++] = f;
}

/* End of the run: what still waits has no parent that closed. */
static void ss_steps_finish(struct ss_steps *st)
{
	for (size_t i = 0; i < st->nth; i++)
		for (size_t d = 0; d < st->th[i].nlv; d++)
			ss_steps_adopt(st, &st->th[i], d, NULL, 0);
}

void ss_steps_release(struct ss_steps *st)
{
	for (size_t i = 0; i < st->cap; i++)
		if (st->tab[i]) {
			free(st->tab[i]->gap);
			free(st->tab[i]->name);
			free(st->tab[i]);
		}
	free(st->tab);
	for (size_t i = 0; i < st->nth; i++) {
		for (size_t d = 0; d < st->th[i].nlv; d++)
			free(st->th[i].lv[d].v);
		free(st->th[i].lv);
	}
	free(st->th);
}

/* ---------------------------------------------------------------- rank */

const char *ss_steps_pname(const struct ss_steps_fn *p)
{
	return p ? p->name : "(thread start)";
}

/* Why f cannot be the step function; NULL when it can.  Only functions
 * that loop (called more than once per call of their caller) or whose
 * calls are mixed up are judged; the rest are not of interest. */
const char *ss_steps_reject(const struct ss_steps_fn *f, char *buf, size_t len)
{
	if (f->nested) {
		snprintf(buf, len, "nested in itself (%llu of its calls)",
			 (unsigned long long)f->nested);
		return buf;
	}
	if (f->multi_thread) {
		snprintf(buf, len, "called on more than one thread");
		return buf;
	}
	if (f->ncallers > 1) {
		/* callers, most calls first */
		int order[SS_STEPS_CALLERS], n = f->ncallers;
		size_t at;
		for (int k = 0; k < n; k++)
			order[k] = k;
		for (int k = 1; k < n; k++)
			for (int j = k; j > 0 && f->caller_calls[order[j]] >
						 f->caller_calls[order[j - 1]]; j--) {
				int t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		at = (size_t)snprintf(buf, len, "called from");
		for (int k = 0; k < n && at < len; k++)
			at += (size_t)snprintf(buf + at, len - at, "%s %s (%llu)",
					       k == 0 ? "" : k == n - 1 && !f->more_calls ? " and" : ",",
					       ss_steps_pname(f->caller[order[k]]),
					       (unsigned long long)f->caller_calls[order[k]]);
		if (f->more_calls && at < len)
			at += (size_t)snprintf(buf + at, len - at, " and others (%llu)",
					       (unsigned long long)f->more_calls);
		/* the trace stopped at its cap: those are its counts, not
		 * the run's */
		if (f->run_calls > f->calls && at < len)
			snprintf(buf + at, len - at, " in the trace's first %llu of %llu calls",
				 (unsigned long long)f->calls, (unsigned long long)f->run_calls);
		return buf;
	}
	return NULL;
}

struct ss_steps_fn *ss_steps_find(const struct ss_steps *st, const char *name)
{
	size_t i;

	if (!st->cap)
		return NULL;
	i = ss_steps_hash(name) & (st->cap - 1);
	while (st->tab[i]) {
		if (!strcmp(st->tab[i]->name, name))
			return st->tab[i];
		i = (i + 1) & (st->cap - 1);
	}
	return NULL;
}

uint64_t ss_steps_calls(const struct ss_steps_fn *f)
{
	return f->run_calls > f->calls ? f->run_calls : f->calls;
}

/* The whole-run counts, when the run kept them (stats: whole_run): a
 * trace that stopped at max_trace_mb saw only the first steps, or none
 * whole, but the counts are exact to the end.  A function that the trace
 * never saw return gets an entry of its own (untraced): its threads are
 * the counts' (one row per thread), and its caller the function below its
 * first call, when the runtime wrote it: then it is ranked like a traced
 * one, as the body of its caller's loop (all its calls counted from that
 * caller: the counts keep one caller a function), so a hot operator inside
 * the step stays below the step, as it does when the trace sees both. */
static void ss_steps_stats(struct ss_steps *st, const char *dir, const char *backend)
{
	struct ss_stats_result res;
	char err[512];

	memset(&res, 0, sizeof(res));
	if (ss_stats_read(dir, backend, 1, 1, &res, err, sizeof(err)))
		return;
	st->has_stats = 1;
	for (size_t i = 0; i < res.nrows && !st->oom; i++) {
		const struct ss_agg_row *w = &res.rows[i];
		struct ss_steps_fn *f;
		if (w->kind != SS_AGG_FUNCTION || !w->name || !w->calls)
			continue;
		if (!(f = ss_steps_find(st, w->name)) && !(f = ss_steps_get(st, w->name))) {
			st->oom = 1;
			break;
		}
		if (!f->calls && !f->run_calls) { /* never returned in the trace */
			f->untraced = 1;
			f->tid = w->tid;
			if (w->caller && w->caller[0] && strcmp(w->caller, w->name) &&
			    !(f->parent = ss_steps_find(st, w->caller)) &&
			    !(f->parent = ss_steps_get(st, w->caller))) {
				st->oom = 1;
				break;
			}
		}
		if (f->run_calls && f->untraced && f->tid != w->tid)
			f->multi_thread = 1;
		f->run_calls += w->calls;
		f->run_total += w->total_ns;
	}
	/* an untraced function's calls, all from its first caller, in as many
	 * of the caller's calls as there are (at least the one it was in) */
	for (size_t i = 0; i < st->cap; i++) {
		struct ss_steps_fn *f = st->tab[i];
		if (!f || !f->untraced || !f->parent)
			continue;
		uint64_t pc = ss_steps_calls(f->parent);
		f->ncallers = 1;
		f->caller[0] = f->parent;
		f->caller_calls[0] = f->parent_calls = f->run_calls;
		f->acts = pc ? pc : 1;
		f->acts_total = f->parent->run_total;
	}
	/* partial: the counts saw clearly more than the trace (a call or two
	 * open at exit is no sign of a cut) */
	uint64_t counted = 0;
	for (size_t i = 0; i < st->cap; i++)
		if (st->tab[i])
			counted += st->tab[i]->run_calls;
	st->partial = counted > st->slices + st->slices / 100 + 16;
	ss_stats_result_release(&res);
}

int ss_steps_walk(struct ss_steps *st, const char *dir, const char *backend, int quiet,
		  char *err, size_t errlen)
{
	struct ss_run run;
	struct ss_sym *sym;
	int rc;

	sym = ss_run_sym(dir, backend, quiet, err, errlen);
	if (!sym)
		return 2;
	rc = ss_run_open(&run, dir, sym, 0, err, errlen);
	for (size_t i = 0; !rc && i < run.n; i++)
		ss_run_feed(&run, i, NULL, 0, ss_steps_slice, st);
	ss_run_release(&run);
	ss_sym_free(sym);
	if (rc)
		return rc;
	ss_steps_finish(st);
	if (!st->oom)
		ss_steps_stats(st, dir, backend);
	if (st->oom) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	return 0;
}
