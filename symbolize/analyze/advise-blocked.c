/*
 * advise-blocked.c - the "blocked" check of `stepscope advise`: steps that
 * spend much of their time blocked off the CPU (reading a file, waiting on
 * a lock, sleeping: a data loader inside the step), and the function that
 * blocked (advise.h).
 *
 * Design: with record.sched every step knows how long its thread was
 * switched out and how much of that it was preempted (runnable); the rest
 * was blocked.  Each function's off-CPU self time per step (time switched
 * out while it was the innermost call) names where the step blocked:
 * functions are ranked by the part of it that was surely blocked (less
 * all the step's preempted time), and the one named is counted up to the
 * step's blocked time, so that preemption is not counted as blocking.
 * OpenMP's team-wait ranges are not functions: a team that sleeps while
 * it waits is the omp check's.  The saving of overlapping the named
 * function with the rest of the step (a loader thread that prefetches the
 * next batch) is, per step, the smaller of its blocked time and the rest
 * of the step (what there is to hide it behind); the median over the
 * steps.
 *
 * Must never: judge a run without switch records (its off-CPU time is not
 * known), or report a finding below 5% of the median step.
 */
#include <stdlib.h>
#include <string.h>

#include "advise.h"

#define SS_ADV_BLK_MIN 0.05  /* of the median step: below it, nothing found */

static int ss_adv_blk_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Median of v[0..n) (sorted in place). */
static uint64_t ss_adv_blk_median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), ss_adv_blk_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The step's blocked time: switched out, not preempted. */
static uint64_t ss_adv_blk_step(const struct ss_agg_step *s)
{
	return s->off_ns > s->off_preempted_ns ? s->off_ns - s->off_preempted_ns : 0;
}

/* Function `name`'s blocked time in step s: its off-CPU self time there,
 * at most the step's blocked time. */
static uint64_t ss_adv_blk_fn(const struct ss_agg *a, const char *name,
			      const struct ss_agg_step *s)
{
	uint64_t off = ss_agg_step_off_self(a, name, s), b = ss_adv_blk_step(s);

	return off < b ? off : b;
}

/* The part of it surely blocked: its off-CPU self time less all the time
 * the step was preempted (what ranks the functions: one that was only
 * preempted gets 0). */
static uint64_t ss_adv_blk_sure(const struct ss_agg *a, const char *name,
				const struct ss_agg_step *s)
{
	uint64_t off = ss_agg_step_off_self(a, name, s);

	return off > s->off_preempted_ns ? off - s->off_preempted_ns : 0;
}

static int ss_adv_blk_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
			    char *why, size_t whylen)
{
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(run->agg, &steps), nrows, i, k, nk = 0;
	struct ss_agg_row *rows;
	const char *best = NULL, *second = NULL;
	uint64_t best_sum = 0, second_sum = 0, *v, *w, mstep, mblk, mfn, mself, save;
	struct ss_adv_finding *f;
	char b[5][32];

	(void)state;
	if (!run->have_offcpu) {
		snprintf(why, whylen, "the run has no record.sched (set record.sched: true to "
			 "see the time steps spend off the CPU)");
		return 1;
	}
	if (!nsteps) {
		snprintf(why, whylen, "the run has no recorded steps");
		return 1;
	}
	nrows = ss_agg_rows(run->agg, 0, &rows);
	for (i = 0; i < nrows; i++) {
		uint64_t sum = 0;
		if (rows[i].kind != SS_AGG_FUNCTION || !rows[i].off_self_ns)
			continue;
		for (k = 0; k < nsteps; k++)
			if (!steps[k].off_unknown)
				sum += ss_adv_blk_sure(run->agg, rows[i].name, &steps[k]);
		if (sum > best_sum) {
			second = best;
			second_sum = best_sum;
			best = rows[i].name;
			best_sum = sum;
		} else if (sum > second_sum) {
			second = rows[i].name;
			second_sum = sum;
		}
	}
	if (!best)
		return 0;
	v = malloc(nsteps * sizeof(*v));
	w = malloc(nsteps * sizeof(*w));
	if (!v || !w) {
		free(v);
		free(w);
		return -1;
	}
	for (k = 0; k < nsteps; k++) {
		uint64_t d = steps[k].end_ns - steps[k].begin_ns, fb;
		if (steps[k].off_unknown)
			continue;
		fb = ss_adv_blk_fn(run->agg, best, &steps[k]);
		v[nk] = fb < d - fb ? fb : d - fb;
		w[nk++] = d;
	}
	save = ss_adv_blk_median(v, nk);
	mstep = ss_adv_blk_median(w, nk);
	if (!nk || (double)save < SS_ADV_BLK_MIN * (double)mstep) {
		free(v);
		free(w);
		return 0;
	}
	for (k = 0, nk = 0; k < nsteps; k++)
		if (!steps[k].off_unknown) {
			v[nk] = ss_adv_blk_step(&steps[k]);
			w[nk++] = ss_adv_blk_fn(run->agg, best, &steps[k]);
		}
	mblk = ss_adv_blk_median(v, nk);
	mfn = ss_adv_blk_median(w, nk);
	for (k = 0, nk = 0; k < nsteps; k++)
		if (!steps[k].off_unknown)
			v[nk++] = ss_agg_step_self(run->agg, best, &steps[k]);
	mself = ss_adv_blk_median(v, nk);
	free(v);
	free(w);
	f = ss_adv_add(out, "blocked");
	if (!f)
		return -1;
	f->save_ns = f->save_lo = f->save_hi = (double)save;
	snprintf(f->title, sizeof(f->title), "steps block off the CPU in %s: %s of a %s step "
		 "(%.0f%%)", best, ss_agg_fmt_time(mfn, b[0], 32), ss_agg_fmt_time(mstep, b[1], 32),
		 mstep ? 100.0 * (double)mfn / (double)mstep : 0);
	snprintf(f->evidence, sizeof(f->evidence), "per step (medians over %zu steps): the "
		 "stepping thread is blocked off the CPU (switched out, not runnable: I/O, a lock, "
		 "a sleep) for %s of %s; %s of it while %s was the innermost call, whose self "
		 "time in the step is %s", nk, ss_agg_fmt_time(mblk, b[0], 32),
		 ss_agg_fmt_time(mstep, b[1], 32), ss_agg_fmt_time(mfn, b[2], 32), best,
		 ss_agg_fmt_time(mself, b[3], 32));
	if (second) {
		size_t len = strlen(f->evidence);
		snprintf(f->evidence + len, sizeof(f->evidence) - len, "; next most blocked: %s, "
			 "%s a step on average at least", second,
			 ss_agg_fmt_time(second_sum / nsteps, b[4], 32));
	}
	snprintf(f->advice, sizeof(f->advice), "overlap %s with the compute: have a loader "
		 "thread (or process) prepare the next batch while this step runs, double-buffered; "
		 "read in larger blocks, or ask for the data ahead (posix_fadvise WILLNEED, "
		 "asynchronous I/O); if it waits on a lock, hold it for less time", best);
	snprintf(f->how, sizeof(f->how), "per step, the smaller of %s's blocked time and the "
		 "rest of the step (what a prefetching thread can hide it behind); the median "
		 "over %zu steps", best, nk);
	snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", best);
	if (second)
		snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", second);
	return 0;
}

const struct ss_adv_check ss_adv_check_blocked = {
	.name = "blocked",
	.looks_at = "the time each step's thread was blocked off the CPU (record.sched) and the "
		    "function it blocked in",
	.judge = ss_adv_blk_judge,
};
