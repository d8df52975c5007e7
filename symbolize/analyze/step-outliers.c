/*
 * step-outliers.c - outlier steps and what grew in them (step-outliers.h).
 *
 * Design: a step is an outlier when it lasts more than factor x the median
 * step of the run (every process's steps together).  For each function,
 * its median self time per step is the reference; in an outlier step the
 * functions whose self time is furthest above their reference are named,
 * with how much of the step's excess over the median step they explain.
 * Self time (not total) so that the function that did the extra work is
 * named, not every caller above it.  ss_step_outliers_find does the work;
 * `report --steps` prints it (ss_step_outliers_text) and `advise` judges
 * it (advise-outlier.c).
 *
 * On-CPU (advise, with record.sched): a step's time less the time it was
 * preempted, a function's self time less its time switched out, so that
 * a step the machine's load made slow is no outlier.
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

/* Step s's duration; on-CPU: less its preempted time. */
static uint64_t ss_so_dur(const struct ss_agg_step *s, int oncpu)
{
	uint64_t d = s->end_ns - s->begin_ns;

	return oncpu && s->off_preempted_ns < d ? d - s->off_preempted_ns : d;
}

/* Function name's self time in step s; on-CPU: less its time switched out. */
static uint64_t ss_so_self(struct ss_agg *a, const char *name, const struct ss_agg_step *s,
			   int oncpu)
{
	uint64_t v = ss_agg_step_self(a, name, s), off;

	if (!oncpu)
		return v;
	off = ss_agg_step_off_self(a, name, s);
	return off < v ? v - off : 0;
}

/* The functions that grew in outlier o (its step is steps[o->step]): the
 * top SS_STEP_OUTLIER_TOP by self time above their median, each at least
 * 5% of the step's excess. */
static void ss_so_grew(struct ss_agg *a, const struct ss_agg_step *s, const char **fn,
		       const uint64_t *med, size_t nf, int oncpu, struct ss_step_outlier *o)
{
	size_t j, p;

	o->ngrew = 0;
	for (j = 0; j < nf; j++) {
		uint64_t v = ss_so_self(a, fn[j], s, oncpu);
		if (v <= med[j] || (v - med[j]) * 20 < o->extra_ns)
			continue; /* below 5% of the step's excess: noise */
		/* insert into the top list, largest excess first */
		for (p = o->ngrew; p > 0 && o->grew[p - 1].excess_ns < v - med[j]; p--)
			if (p < SS_STEP_OUTLIER_TOP)
				o->grew[p] = o->grew[p - 1];
		if (p < SS_STEP_OUTLIER_TOP) {
			o->grew[p].name = fn[j];
			o->grew[p].excess_ns = v - med[j];
			if (o->ngrew < SS_STEP_OUTLIER_TOP)
				o->ngrew++;
		}
	}
}

long ss_step_outliers_find(struct ss_agg *a, double factor, int oncpu,
			   struct ss_step_outlier **out, uint64_t *median_ns)
{
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(a, &steps), nrows, i, k, nout = 0, nf = 0;
	struct ss_agg_row *rows;
	const char **fn = NULL;
	uint64_t *v = NULL, *med = NULL, mstep;
	struct ss_step_outlier *o = NULL;
	long ret = -1;

	*out = NULL;
	*median_ns = 0;
	if (!nsteps)
		return 0;
	v = malloc(nsteps * sizeof(*v));
	if (!v)
		return -1;
	oncpu = oncpu && ss_agg_have_offcpu(a, NULL);
	for (i = 0; i < nsteps; i++)
		v[i] = ss_so_dur(&steps[i], oncpu);
	mstep = *median_ns = ss_so_median(v, nsteps);
	for (i = 0; i < nsteps; i++)
		nout += (double)ss_so_dur(&steps[i], oncpu) > factor * (double)mstep;
	if (!nout) {
		free(v);
		return 0;
	}
	nrows = ss_agg_rows(a, 0, &rows);
	fn = malloc((nrows ? nrows : 1) * sizeof(*fn));
	med = malloc((nrows ? nrows : 1) * sizeof(*med));
	o = calloc(nout, sizeof(*o));
	if (!fn || !med || !o)
		goto out;
	for (i = 0; i < nrows; i++) {
		if (rows[i].kind != SS_AGG_FUNCTION || !rows[i].self_ns)
			continue;
		for (k = 0; k < nsteps; k++)
			v[k] = ss_so_self(a, rows[i].name, &steps[k], oncpu);
		fn[nf] = rows[i].name;
		med[nf++] = ss_so_median(v, nsteps);
	}
	for (k = 0, i = 0; k < nsteps; k++) {
		uint64_t d = ss_so_dur(&steps[k], oncpu);
		if (!((double)d > factor * (double)mstep))
			continue;
		o[i].step = k;
		o[i].dur_ns = d;
		o[i].extra_ns = d - mstep;
		ss_so_grew(a, &steps[k], fn, med, nf, oncpu, &o[i]);
		i++;
	}
	*out = o;
	o = NULL;
	ret = (long)nout;
out:
	free(o);
	free(fn);
	free(med);
	free(v);
	return ret;
}

size_t ss_step_outliers_text(FILE *f, struct ss_agg *a, double factor)
{
	const struct ss_agg_step *steps;
	struct ss_step_outlier *o;
	uint64_t mstep;
	long nout = ss_step_outliers_find(a, factor, 0, &o, &mstep);
	size_t nsteps = ss_agg_steps(a, &steps), j;
	char b[4][32];

	if (!nsteps || nout < 0)
		return 0;
	fprintf(f, "\nOutlier steps (longer than %.1fx the median step, %s): ", factor,
		ss_agg_fmt_time(mstep, b[0], 32));
	if (!nout) {
		fprintf(f, "none\n");
		return 0;
	}
	fprintf(f, "%ld of %zu\n", nout, nsteps);
	for (long i = 0; i < nout; i++) {
		const struct ss_agg_step *s = &steps[o[i].step];
		fprintf(f, "  pid %llu step %llu: %s (%.1fx the median, +%s)",
			(unsigned long long)s->pid, (unsigned long long)s->step,
			ss_agg_fmt_time(o[i].dur_ns, b[1], 32),
			mstep ? (double)o[i].dur_ns / (double)mstep : 0,
			ss_agg_fmt_time(o[i].extra_ns, b[3], 32));
		for (j = 0; j < o[i].ngrew; j++)
			fprintf(f, "%s %s +%s (%.0f%%)", j ? "," : "; grew:", o[i].grew[j].name,
				ss_agg_fmt_time(o[i].grew[j].excess_ns, b[2], 32),
				o[i].extra_ns ? 100.0 * (double)o[i].grew[j].excess_ns /
							(double)o[i].extra_ns
					      : 0);
		if (!o[i].ngrew)
			fprintf(f, "; no function grew (time outside instrumented code)");
		fputc('\n', f);
	}
	free(o);
	return (size_t)nout;
}
