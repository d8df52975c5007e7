/*
 * step-outliers.c - outlier steps and what grew in them (step-outliers.h).
 *
 * Design: a step is an outlier when it lasts more than factor x the median
 * step of the run (every process's steps together).  For each function,
 * its median self time per step is the reference; in an outlier step the
 * functions whose self time is furthest above their reference are named,
 * with how much of the step's excess over the median step they explain.
 * Self time (not total) so that the function that did the extra work is
 * named, not every caller above it.
 *
 * Functions that explain less than 5% of the excess are left out.
 *
 * Must never: name a function whose self time in the step is at or below
 * its median.
 */
#include <stdlib.h>
#include <string.h>

#include "step-outliers.h"

static int ss_so_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Median of n values (v is sorted in place). */
static uint64_t ss_so_median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), ss_so_cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ss_so_grew {
	const char *name;
	uint64_t excess;
};

size_t ss_step_outliers_text(FILE *f, struct ss_agg *a, double factor)
{
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(a, &steps), nrows, i, j, k, nout = 0, nf = 0;
	struct ss_agg_row *rows;
	const char **fn = NULL;
	uint64_t *v = NULL, *med = NULL, mstep;
	char b[4][32];

	if (!nsteps)
		return 0;
	v = malloc(nsteps * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < nsteps; i++)
		v[i] = steps[i].end_ns - steps[i].begin_ns;
	mstep = ss_so_median(v, nsteps);
	for (i = 0; i < nsteps; i++)
		nout += (double)(steps[i].end_ns - steps[i].begin_ns) > factor * (double)mstep;
	fprintf(f, "\nOutlier steps (longer than %.1fx the median step, %s): ", factor,
		ss_agg_fmt_time(mstep, b[0], 32));
	if (!nout) {
		fprintf(f, "none\n");
		free(v);
		return 0;
	}
	fprintf(f, "%zu of %zu\n", nout, nsteps);
	nrows = ss_agg_rows(a, 0, &rows);
	fn = malloc((nrows ? nrows : 1) * sizeof(*fn));
	med = malloc((nrows ? nrows : 1) * sizeof(*med));
	if (!fn || !med)
		goto out;
	for (i = 0; i < nrows; i++) {
		if (rows[i].kind != SS_AGG_FUNCTION || !rows[i].self_ns)
			continue;
		for (k = 0; k < nsteps; k++)
			v[k] = ss_agg_step_self(a, rows[i].name, &steps[k]);
		fn[nf] = rows[i].name;
		med[nf++] = ss_so_median(v, nsteps);
	}
	for (k = 0; k < nsteps; k++) {
		uint64_t d = steps[k].end_ns - steps[k].begin_ns, extra = d - mstep;
		struct ss_so_grew top[SS_STEP_OUTLIER_TOP];
		size_t nt = 0;
		if (!((double)d > factor * (double)mstep))
			continue;
		for (j = 0; j < nf; j++) {
			uint64_t s = ss_agg_step_self(a, fn[j], &steps[k]);
			size_t p;
			if (s <= med[j] || (s - med[j]) * 20 < extra)
				continue; /* below 5% of the step's excess: noise */
			/* insert into the top list, largest excess first */
			for (p = nt; p > 0 && top[p - 1].excess < s - med[j]; p--)
				if (p < SS_STEP_OUTLIER_TOP)
					top[p] = top[p - 1];
			if (p < SS_STEP_OUTLIER_TOP) {
				top[p] = (struct ss_so_grew){ fn[j], s - med[j] };
				if (nt < SS_STEP_OUTLIER_TOP)
					nt++;
			}
		}
		fprintf(f, "  pid %llu step %llu: %s (%.1fx the median, +%s)",
			(unsigned long long)steps[k].pid, (unsigned long long)steps[k].step,
			ss_agg_fmt_time(d, b[1], 32), mstep ? (double)d / (double)mstep : 0,
			ss_agg_fmt_time(extra, b[3], 32));
		for (j = 0; j < nt; j++)
			fprintf(f, "%s %s +%s (%.0f%%)", j ? "," : "; grew:", top[j].name,
				ss_agg_fmt_time(top[j].excess, b[2], 32),
				extra ? 100.0 * (double)top[j].excess / (double)extra : 0);
		if (!nt)
			fprintf(f, "; no function grew (time outside instrumented code)");
		fputc('\n', f);
	}
out:
	free(fn);
	free(med);
	free(v);
	return nout;
}
