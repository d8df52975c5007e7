/*
 * filter-pick.h - which functions `stepscope filter` proposes to leave
 * out (the rule is in cmd/filter.c's opening comment and docs/filters.md):
 * its rows, the own time of a function without the hooks, and the pick;
 * shared by `filter` and `advise`'s hooks check (advise-hooks.c), so the
 * advice predicts what the list it sends the user to will hold.
 */
#ifndef SS_FILTER_PICK_H
#define SS_FILTER_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "overhead.h"

/* filter's limits; SS_FILTER_OPTS_DEFAULT: its defaults */
struct ss_filter_opts {
	uint64_t min_calls, max_call_ns;
	double max_share;
	int limit;
};

/* the rows judged: merged functions, by calls (ss_filter_by_calls) */
struct ss_filter_rows {
	struct ss_agg_row *rows;
	size_t n;
	uint64_t self_sum, calls;
	uint64_t *below;         /* per row: recorded calls under its calls */
	uint64_t own_sum;        /* self_sum less the hooks' calibrated cost */
	const char *source;      /* "recorded steps" or "whole run" */
};

#define SS_FILTER_OPTS_DEFAULT { SS_OVERHEAD_MIN_CALLS, 1000, 5.0, 30 }

/* a name a compiler list and the runtime can take: a plain identifier */
int ss_filter_plain(const char *s);
double ss_filter_pct(double v, double sum);
/* the part of a recorded call inside its measured time */
uint64_t ss_filter_inside(const struct ss_overhead *ov);
/* row i's time without stepscope (Own), per call (Own/call), as a share
 * of the recorded time without the hooks (Own %) */
uint64_t ss_filter_own(const struct ss_filter_rows *r, size_t i, const struct ss_overhead *ov);
uint64_t ss_filter_own_call(const struct ss_filter_rows *r, size_t i,
			    const struct ss_overhead *ov);
double ss_filter_own_pct(const struct ss_filter_rows *r, size_t i, const struct ss_overhead *ov);
/* recording one call of row i costs more than its own work */
int ss_filter_cheap(const struct ss_filter_rows *r, size_t i, const struct ss_overhead *ov);
/* r->below and r->own_sum (a: the aggregate the rows came from, or NULL
 * for whole-run counts); 0, -1 out of memory */
int ss_filter_below(struct ss_filter_rows *r, struct ss_agg *a, const struct ss_overhead *ov);
/* out[i] = 1 for each row proposed; how many */
size_t ss_filter_pick(const struct ss_filter_rows *r, const struct ss_overhead *ov,
		      const struct ss_filter_opts *o, char *out);
/* qsort comparator: most calls first, then by name */
int ss_filter_by_calls(const void *a, const void *b);
/* gcc matches its list by substring: a kept function whose name holds
 * row i's (i is then "runtime-only"), or NULL */
const char *ss_filter_clash(const struct ss_filter_rows *r, const char *pick, size_t i);
/* The whole pick over aggregate a's recorded rows (merged, sorted by
 * calls; r->rows is a's array, valid until its next ss_agg_rows): *pick
 * malloc'ed (free it and r->below).  0, -1 out of memory. */
int ss_filter_propose(struct ss_agg *a, const struct ss_overhead *ov,
		      const struct ss_filter_opts *o, struct ss_filter_rows *r, char **pick,
		      size_t *npick);

#endif /* SS_FILTER_PICK_H */
