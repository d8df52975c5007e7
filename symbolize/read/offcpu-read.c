/*
 * offcpu-read.c - read the SS_META_SWITCH records of a trace (context
 * switches, record.sched: runtime/sched.c) into per-thread intervals.
 *
 * Design: the runtime writes each thread's intervals in time order, a
 * batch per record, but the threads' batches interleave; they are grouped
 * by tid, sorted, and overlaps (which a sane file never has) cut away, so
 * that a prefix sum answers "how long was it off the CPU in [a, b)" in
 * O(log n).  Times are CLOCK_MONOTONIC ns, the reader's own timeline; its
 * shift (MPI hosts on one clock) is added.  Records too short are skipped.
 */
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "offcpu.h"
#include "util.h"

static int by_tid(const void *x, const void *y)
{
	const struct ss_offcpu_thread *a = x, *b = y;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int by_begin(const void *x, const void *y)
{
	const struct ss_offcpu_iv *a = x, *b = y;
	return a->begin_ns < b->begin_ns ? -1 : a->begin_ns > b->begin_ns;
}

static struct ss_offcpu_thread *thread_get(struct ss_offcpu *d, size_t *cap,
					   uint64_t tid)
{
	for (size_t i = d->n; i-- > 0;)
		if (d->th[i].tid == tid)
			return &d->th[i];
	if (ss_grow((void **)&d->th, cap, d->n, sizeof(*d->th), 4))
		return NULL;
	struct ss_offcpu_thread *t = &d->th[d->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* Sort, cut overlaps, and sum. */
static int finish(struct ss_offcpu_thread *t)
{
	size_t k = 0;
	if (t->n > 1)  /* t->iv is NULL when its records held no switch */
		qsort(t->iv, t->n, sizeof(*t->iv), by_begin);
	for (size_t i = 0; i < t->n; i++) {
		struct ss_offcpu_iv v = t->iv[i];
		if (k && v.begin_ns < t->iv[k - 1].end_ns)
			v.begin_ns = t->iv[k - 1].end_ns;
		if (v.end_ns <= v.begin_ns)
			continue;
		t->iv[k++] = v;
	}
	t->n = k;
	t->before = malloc((k + 1) * sizeof(*t->before));
	if (!t->before)
		return -1;
	t->before[0] = 0;
	for (size_t i = 0; i < k; i++)
		t->before[i + 1] = t->before[i] + (t->iv[i].end_ns - t->iv[i].begin_ns);
	return 0;
}

int ss_offcpu_read(const struct ss_reader *r, struct ss_offcpu *d)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	size_t cap = 0;
	size_t *caps = NULL, ncaps = 0;

	memset(d, 0, sizeof(*d));
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_switch h;
		if (m.type == SS_META_SWITCH_END) {
			d->ended = 1;
			continue;
		}
		if ((m.type != SS_META_SWITCH && m.type != SS_META_SWITCH_NONE) ||
		    m.len < sizeof(h))
			continue;
		memcpy(&h, m.data, sizeof(h));
		if (m.type == SS_META_SWITCH_NONE) {
			struct ss_offcpu_thread *u = thread_get(d, &cap, h.tid);
			if (!u)
				goto oom;
			d->unwatched += !u->unwatched;
			u->unwatched = 1;
			d->nrecords++;
			continue;
		}
		size_t n = (m.len - sizeof(h)) / sizeof(struct ss_switch);
		if (h.n < n)
			n = (size_t)h.n;
		struct ss_offcpu_thread *t = thread_get(d, &cap, h.tid);
		if (!t)
			goto oom;
		size_t ti = (size_t)(t - d->th);
		if (ti >= ncaps) {
			size_t *nc = realloc(caps, (ti + 1) * 2 * sizeof(*nc));
			if (!nc)
				goto oom;
			memset(nc + ncaps, 0, ((ti + 1) * 2 - ncaps) * sizeof(*nc));
			caps = nc;
			ncaps = (ti + 1) * 2;
		}
		d->nrecords++;
		t->lost += h.lost;
		d->lost += h.lost;
		for (size_t i = 0; i < n; i++) {
			struct ss_switch s;
			memcpy(&s, m.data + sizeof(h) + i * sizeof(s), sizeof(s));
			if (s.in_ns <= s.out_ns)
				continue;
			if (ss_grow((void **)&t->iv, &caps[ti], t->n, sizeof(*t->iv), 64))
				goto oom;
			t->iv[t->n++] = (struct ss_offcpu_iv){
				(uint64_t)((int64_t)s.out_ns + r->shift_ns),
				(uint64_t)((int64_t)s.in_ns + r->shift_ns), s.flags };
		}
	}
	free(caps);
	caps = NULL;
	if (d->n)	/* d->th is NULL when no thread switched */
		qsort(d->th, d->n, sizeof(*d->th), by_tid);
	for (size_t i = 0; i < d->n; i++)
		if (finish(&d->th[i]))
			goto oom;
	return 0;
oom:
	free(caps);
	ss_offcpu_release(d);
	return -1;
}

void ss_offcpu_release(struct ss_offcpu *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->th[i].iv);
		free(d->th[i].before);
	}
	free(d->th);
	memset(d, 0, sizeof(*d));
}

const struct ss_offcpu_thread *ss_offcpu_find(const struct ss_offcpu *d, uint64_t tid)
{
	size_t lo = 0, hi = d ? d->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (d ? d->n : 0) && d->th[lo].tid == tid ? &d->th[lo] : NULL;
}

/* First interval that ends after a. */
static size_t first_after(const struct ss_offcpu_thread *t, uint64_t a)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->iv[mid].end_ns <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t clip(const struct ss_offcpu_iv *v, uint64_t a, uint64_t b)
{
	uint64_t lo = v->begin_ns > a ? v->begin_ns : a;
	uint64_t hi = v->end_ns < b ? v->end_ns : b;
	return hi > lo ? hi - lo : 0;
}

uint64_t ss_offcpu_in(const struct ss_offcpu_thread *t, uint64_t a, uint64_t b,
		      uint64_t *preempted)
{
	if (preempted)
		*preempted = 0;
	if (!t || !t->n || b <= a)
		return 0;
	size_t i = first_after(t, a);
	if (preempted) { /* walk: the flags are per interval */
		uint64_t sum = 0;
		for (; i < t->n && t->iv[i].begin_ns < b; i++) {
			uint64_t c = clip(&t->iv[i], a, b);
			sum += c;
			if (t->iv[i].flags & SS_SWITCH_PREEMPTED)
				*preempted += c;
		}
		return sum;
	}
	size_t j = first_after(t, b); /* intervals [i, j] may touch [a, b) */
	if (j >= t->n)
		j = t->n - 1;
	if (i > j)
		return 0;
	if (i == j)
		return clip(&t->iv[i], a, b);
	/* whole ones strictly between, the two ends clipped */
	return clip(&t->iv[i], a, b) + (t->before[j] - t->before[i + 1]) +
	       clip(&t->iv[j], a, b);
}
