/*
 * filter-pick.c - the functions `stepscope filter` proposes to leave out
 * (filter-pick.h): the rule of cmd/filter.c's opening comment, on the
 * rows of a run and its calibration (overhead.h).  Used by `filter` and by
 * `advise`'s hooks check.
 *
 * Must never: propose a function that is not a plain name, or one with a
 * real share of the time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter-pick.h"

/* a name a compiler list and the runtime can take: a plain identifier */
int ss_filter_plain(const char *s)
{
	if (!*s || !strncmp(s, "0x", 2))
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || *s == ':' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return 0;
	return 1;
}

double ss_filter_pct(double v, double sum)
{
	return sum > 0 ? 100.0 * v / sum : 0.0;
}


/* The part of a function's own recorded call inside its measured time:
 * the calibration's (an empty call's ENTER to EXIT), or for a trace that
 * predates it half a recorded call. */
uint64_t ss_filter_inside(const struct ss_overhead *ov)
{
	return ov->inside_known ? ov->inside_ns : ov->pair_ns / 2;
}

/* The function's time without stepscope, the table's Own %: calls times
 * its fastest call (the least disturbed one) less the hooks inside it: the
 * part of its own recorded call inside its times, and the whole cost of
 * each recorded call below it (spent inside it); or, without single calls
 * (whole-run counts, no calls recorded below), its mean call less that
 * part of its own.  Never below zero. */
uint64_t ss_filter_own(const struct ss_filter_rows *r, size_t i,
			      const struct ss_overhead *ov)
{
	const struct ss_agg_row *w = &r->rows[i];
	uint64_t per = w->max_ns ? w->min_ns : w->total_ns / w->calls;
	double hooks = (double)ss_filter_inside(ov) +
		       (r->below ? (double)ov->pair_ns * (double)r->below[i] / (double)w->calls
				 : 0.0);
	return (double)per > hooks ? w->calls * (uint64_t)((double)per - hooks) : 0;
}

/* Own/call: the function's time without stepscope per call. */
uint64_t ss_filter_own_call(const struct ss_filter_rows *r, size_t i,
				   const struct ss_overhead *ov)
{
	return r->rows[i].calls ? ss_filter_own(r, i, ov) / r->rows[i].calls : 0;
}

/* Recording one call of it costs more than its own work. */
int ss_filter_cheap(const struct ss_filter_rows *r, size_t i, const struct ss_overhead *ov)
{
	return ov->known && ov->pair_ns && ss_filter_own_call(r, i, ov) < ov->pair_ns;
}

double ss_filter_own_pct(const struct ss_filter_rows *r, size_t i,
				const struct ss_overhead *ov)
{
	return ss_filter_pct((double)ss_filter_own(r, i, ov), (double)r->own_sum);
}

/* Recorded calls below each row (r->below), from the compensation of a
 * copy of the rows, and the recorded time without the hooks. */
int ss_filter_below(struct ss_filter_rows *r, struct ss_agg *a,
			   const struct ss_overhead *ov)
{
	uint64_t hooks = r->calls * ov->pair_ns;
	r->own_sum = r->self_sum > hooks ? r->self_sum - hooks : 1;
	if (!a || !ov->pair_ns || !r->n)
		return 0;
	struct ss_agg_row *c = malloc(r->n * sizeof(*c));
	r->below = calloc(r->n, sizeof(*r->below));
	if (!c || !r->below) {
		free(c);
		return -1;
	}
	memcpy(c, r->rows, r->n * sizeof(*c));
	ss_overhead_compensate(a, c, r->n, 0, ov->pair_ns);
	for (size_t i = 0; i < r->n; i++)
		r->below[i] = (r->rows[i].total_ns - c[i].total_ns) / ov->pair_ns;
	free(c);
	return 0;
}

/* which rows get proposed: out[i] = 1 */
size_t ss_filter_pick(const struct ss_filter_rows *r, const struct ss_overhead *ov,
			     const struct ss_filter_opts *o, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct ss_agg_row *w = &r->rows[i];
		if (!w->calls) {
			out[i] = 0;
			continue;
		}
		out[i] = w->kind == SS_AGG_FUNCTION && ss_filter_plain(w->name) &&
			 w->calls >= o->min_calls && w->total_ns / w->calls <= o->max_call_ns &&
			 (ss_filter_cheap(r, i, ov) || ss_filter_own_pct(r, i, ov) < o->max_share);
		k += out[i];
	}
	return k;
}

int ss_filter_by_calls(const void *a, const void *b)
{
	const struct ss_agg_row *x = a, *y = b;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* gcc's list matches substrings: is `name` inside another kept name? */
const char *ss_filter_clash(const struct ss_filter_rows *r, const char *pick, size_t i)
{
	for (size_t k = 0; k < r->n; k++)
		if (k != i && !pick[k] && r->rows[k].kind == SS_AGG_FUNCTION &&
		    strstr(r->rows[k].name, r->rows[i].name))
			return r->rows[k].name;
	return NULL;
}

int ss_filter_propose(struct ss_agg *a, const struct ss_overhead *ov,
		      const struct ss_filter_opts *o, struct ss_filter_rows *r, char **pick,
		      size_t *npick)
{
	memset(r, 0, sizeof(*r));
	*pick = NULL;
	*npick = 0;
	r->calls = ss_overhead_calls(a);
	r->n = ss_agg_rows(a, 0, &r->rows);
	r->self_sum = ss_agg_self_sum(a);
	r->source = "recorded steps";
	qsort(r->rows, r->n, sizeof(*r->rows), ss_filter_by_calls);
	*pick = calloc(r->n ? r->n : 1, 1);
	if (!*pick || ss_filter_below(r, a, ov)) {
		free(*pick);
		*pick = NULL;
		return -1;
	}
	*npick = ss_filter_pick(r, ov, o, *pick);
	return 0;
}
