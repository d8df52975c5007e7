/*
 * diff-verdict.c - what `stepscope diff` judges a change by (diff.h):
 * each function's share of the step in its own run, and the step's change
 * at equal machine speed, with one line saying what it rests on.
 *
 * Design: two recordings of one build on a machine that others share
 * differ in every time: a machine busier or slower for one whole run
 * (another tenant's job, a clock that ran lower, caches shared with a
 * busy neighbour) stretches every function alike, and the steps of one
 * run, the samples of the rank test, all carry it.  What such a slowdown
 * cannot change is how the functions' times compare with each other
 * (perf diff compares percentages for the same reason).  So the
 * functions that moved together, by the median factor of the large ones
 * (ss_diff_yard_init), are the yardstick of the machine's speed: a row's
 * NEW steps are scaled by what the yardstick (less the row itself) grew,
 * then tested against BASE's steps and sized; a function whose work grew
 * 30% while the others kept theirs is +30% on any machine.  When the
 * large functions agree on no common factor (no two within twice
 * --min-change of their median) there is no yardstick and nothing is
 * judged.  The step is judged the same way: the functions whose time
 * changed significantly, and those of one run only, are the changed
 * code; the others measure the machine, and NEW's work at BASE's speed
 * against BASE's is the step's change at equal machine speed.
 *
 * Must never: call a change significant that every function shares
 * alike (one run a side cannot tell it from the machine; the line says
 * so), or judge a share against a rest of the step under
 * SS_DIFF_MIN_REST of it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "diff.h"

double *ss_diff_work(const struct ss_diff_run *r)
{
	double *w = calloc(r->nsteps + 1, sizeof(*w));
	size_t i, j;

	if (!w)
		return NULL;
	for (i = 0; i < r->ns; i++)
		for (j = 0; r->s[i].kind == SS_AGG_FUNCTION && j < r->nsteps; j++)
			w[j] += (double)r->s[i].self_ns[j];
	return w;
}

void ss_diff_yard_release(struct ss_diff_yard *y)
{
	free(y->wa);
	free(y->wb);
	free(y->ua);
	free(y->ub);
	free(y->in);
	memset(y, 0, sizeof(*y));
}

/* The median of series v of run r as a double. */
static double ss_diff_smed(const struct ss_diff_run *r, const uint64_t *v, double *tmp)
{
	size_t i;

	for (i = 0; i < r->nsteps; i++)
		tmp[i] = (double)v[i];
	return ss_diff_median(tmp, r->nsteps);
}

int ss_diff_yard_init(struct ss_diff_yard *y, const struct ss_diff_run *a,
		      const struct ss_diff_run *b, const struct ss_diff_opts *o)
{
	size_t steps = a->nsteps > b->nsteps ? a->nsteps : b->nsteps, i, j, nr = 0, nbig = 0;
	double *tmp = malloc((steps + 1) * sizeof(*tmp));
	double *ratio = calloc(a->ns + 1, sizeof(*ratio)), *sorted = NULL, work;
	unsigned char *big = calloc(a->ns + 1, 1);

	memset(y, 0, sizeof(*y));
	y->machine = NAN;
	y->wa = ss_diff_work(a);
	y->wb = ss_diff_work(b);
	y->ua = calloc(a->nsteps + 1, sizeof(double));
	y->ub = calloc(b->nsteps + 1, sizeof(double));
	y->in = calloc(a->ns + 1, 1);
	if (tmp && ratio && big)
		sorted = malloc((a->ns + 1) * sizeof(*sorted));
	if (!tmp || !sorted || !y->wa || !y->wb || !y->ua || !y->ub || !y->in) {
		free(tmp);
		free(ratio);
		free(sorted);
		free(big);
		ss_diff_yard_release(y);
		return -1;
	}
	work = ss_diff_median(y->wa, a->nsteps);
	/* each function of both runs: NEW's median self over BASE's */
	for (i = 0; i < a->ns; i++) {
		const struct ss_diff_series *sa = &a->s[i], *sb;
		double ma, mb;
		if (sa->kind != SS_AGG_FUNCTION ||
		    !(sb = ss_diff_series_find(b, sa->name, SS_AGG_FUNCTION)))
			continue;
		ma = ss_diff_smed(a, sa->self_ns, tmp);
		mb = ss_diff_smed(b, sb->self_ns, tmp);
		if (!(ma > 0) || !(mb > 0))
			continue;
		ratio[i] = mb / ma;
		nr++;
		big[i] = ma >= 0.005 * work;
		nbig += big[i];
	}
	/* the median ratio of the large ones (of all when under 3 are); the
	 * yardstick, those within twice --min-change of it: a function a
	 * busy machine slowed a little more than the others (its calls
	 * are short, the hooks' share of them larger) is still the machine */
	for (i = j = 0; i < a->ns; i++)
		if (ratio[i] > 0 && (nbig < 3 || big[i]))
			sorted[j++] = ratio[i];
	y->ncand = j;
	if (j >= 2) {
		qsort(sorted, j, sizeof(*sorted), ss_diff_cmp_d);
		y->machine = j % 2 ? sorted[j / 2] : (sorted[j / 2 - 1] + sorted[j / 2]) / 2;
	}
	for (i = 0; !isnan(y->machine) && i < a->ns; i++) {
		const struct ss_diff_series *sb;
		if (!(ratio[i] > 0) || (nbig >= 3 && !big[i]) ||
		    fabs(ratio[i] / y->machine - 1) >= 2 * o->min_pct / 100)
			continue;
		sb = ss_diff_series_find(b, a->s[i].name, SS_AGG_FUNCTION);
		y->in[i] = 1;
		y->n++;
		for (j = 0; j < a->nsteps; j++)
			y->ua[j] += (double)a->s[i].self_ns[j];
		for (j = 0; j < b->nsteps; j++)
			y->ub[j] += (double)sb->self_ns[j];
	}
	/* no consensus: when no other moved with the median one (two of
	 * three changed, each by its own factor) the median is a changed one
	 * as likely as not, and every other would be judged by it */
	if (y->n < 2) {
		y->machine = NAN;
		y->n = 0;
		memset(y->in, 0, a->ns);
		memset(y->ua, 0, a->nsteps * sizeof(double));
		memset(y->ub, 0, b->nsteps * sizeof(double));
	}
	(void)nr;
	free(tmp);
	free(ratio);
	free(sorted);
	free(big);
	return 0;
}

/* Each of n steps' value v into x, its yardstick u (less v when in)
 * into yd, and the yardstick's share of the work w into f. */
static void ss_diff_yvals(const uint64_t *v, const double *u, const double *w, int in,
			  size_t n, double *x, double *yd, double *f)
{
	size_t i;

	for (i = 0; i < n; i++) {
		x[i] = v ? (double)v[i] : 0;
		yd[i] = u[i] - (in ? x[i] : 0);
		f[i] = w[i] > 0 ? yd[i] / w[i] : 0;
	}
}

void ss_diff_share(const uint64_t *va, size_t n, const uint64_t *vb, size_t m,
		   const struct ss_diff_yard *y, int in, const struct ss_diff_opts *o,
		   double step_base, struct ss_diff_stat *st)
{
	size_t k = n > m ? n : m, i;
	double *x = malloc((k + 1) * sizeof(*x)), *f = malloc((k + 1) * sizeof(*f));
	double *x2 = malloc((k + 1) * sizeof(*x2)), *yd = malloc((k + 1) * sizeof(*yd));
	double *yd2 = malloc((k + 1) * sizeof(*yd2)), *f2 = malloc((k + 1) * sizeof(*f2));
	double ma, mb, ya, yb, fa, fb, mu;

	st->significant = 0;
	st->p = 1;
	st->share_base = st->share_new = 0;
	st->adj_pct = st->adj_delta = NAN;
	if (!x || !f || !x2 || !yd || !yd2 || !f2) {
		free(x);
		free(f);
		free(x2);
		free(yd);
		free(yd2);
		free(f2);
		return;
	}
	for (i = 0; i < n; i++)
		x[i] = va && y->wa[i] > 0 ? (double)va[i] / y->wa[i] : 0;
	st->share_base = ss_diff_median(x, n);
	for (i = 0; i < m; i++)
		x[i] = vb && y->wb[i] > 0 ? (double)vb[i] / y->wb[i] : 0;
	st->share_new = ss_diff_median(x, m);
	ss_diff_yvals(va, y->ua, y->wa, in, n, x, yd, f);
	ma = ss_diff_median(x, n);
	ya = ss_diff_median(yd, n);
	fa = ss_diff_median(f, n);
	ss_diff_yvals(vb, y->ub, y->wb, in, m, x2, yd, f);
	mb = ss_diff_median(x2, m);
	yb = ss_diff_median(yd, m);
	fb = ss_diff_median(f, m);
	free(f);
	free(yd);
	if (isnan(y->machine) || !(ma > 0) || !(ya > 0) || !(yb > 0) ||
	    fa < SS_DIFF_MIN_REST || fb < SS_DIFF_MIN_REST) {
		free(x);
		free(x2);
		free(yd2);
		free(f2);
		return;
	}
	/* NEW's steps at BASE's machine speed, as the yardstick measures it:
	 * a whole-run factor, not each step's (a step whose yardstick was
	 * preempted would move the ratio of that step, not the function) */
	mu = yb / ya;
	for (i = 0; i < m; i++)
		x2[i] /= mu;
	if (n >= SS_DIFF_MIN_STEPS && m >= SS_DIFF_MIN_STEPS) {
		double p1 = ss_diff_mann_whitney(x, n, x2, m), p2;
		/* and each step against its own yardstick: a load that comes
		 * and goes within a run slows the function and the yardstick
		 * of one step alike (caches, the clock), which the whole-run
		 * factor above cannot take out; but a step whose yardstick was
		 * preempted (wall time) moves this ratio, not the function.
		 * Either test may show the change: significant when one of
		 * them does at alpha / 2 (Bonferroni) */
		ss_diff_yvals(va, y->ua, y->wa, in, n, x, yd2, f2);
		for (i = 0; i < n; i++)
			x[i] = yd2[i] > 0 ? x[i] / yd2[i] : 0;
		ss_diff_yvals(vb, y->ub, y->wb, in, m, x2, yd2, f2);
		for (i = 0; i < m; i++)
			x2[i] = yd2[i] > 0 ? x2[i] / yd2[i] : 0;
		p2 = ss_diff_mann_whitney(x, n, x2, m);
		st->p = fmin(1, 2 * fmin(p1, p2));
	}
	free(x);
	free(x2);
	free(yd2);
	free(f2);
	st->adj_pct = (mb / mu / ma - 1) * 100;
	st->adj_delta = st->base * st->adj_pct / 100;
	st->significant = st->p < o->alpha && st->adj_pct != 0 &&
			  fabs(st->adj_pct) >= o->min_pct &&
			  fabs(st->adj_delta) >= o->min_step_pct / 100 * step_base;
}

/* The changed code: a function row whose share changed significantly or
 * that one run only has. */
static int ss_diff_changed(const struct ss_diff_row *r)
{
	return r->kind == SS_AGG_FUNCTION && (r->only || r->self.significant);
}

/* The changed code's share of each step of run r into c (w: its work). */
static void ss_diff_changed_share(const struct ss_diff_run *r, const double *w,
				  const struct ss_diff_row *rows, size_t n, double *c)
{
	size_t i, j;

	memset(c, 0, (r->nsteps + 1) * sizeof(*c));
	for (i = 0; i < n; i++) {
		const struct ss_diff_series *s;
		if (!ss_diff_changed(&rows[i]) ||
		    !(s = ss_diff_series_find(r, rows[i].name, SS_AGG_FUNCTION)))
			continue;
		for (j = 0; j < r->nsteps; j++)
			c[j] += (double)s->self_ns[j];
	}
	for (j = 0; j < r->nsteps; j++)
		c[j] = w[j] > 0 ? c[j] / w[j] : 0;
}

int ss_diff_verdict(const struct ss_diff_run *a, const struct ss_diff_run *b,
		    const struct ss_diff_row *rows, size_t n, const struct ss_diff_opts *o,
		    struct ss_diff_stat *step, struct ss_diff_verdict *v)
{
	double *wa = ss_diff_work(a), *wb = ss_diff_work(b);
	double *ca = malloc((a->nsteps + 1) * sizeof(*ca));
	double *cb = malloc((b->nsteps + 1) * sizeof(*cb));
	double best = 0, mu;
	struct ss_diff_yard y;
	size_t i;
	int rc = -1;

	memset(v, 0, sizeof(*v));
	v->pct = v->machine_pct = v->yard_base = v->yard_new = NAN;
	v->p = 1;
	step->significant = 0;
	if (!wa || !wb || !ca || !cb || ss_diff_yard_init(&y, a, b, o))
		goto out;
	rc = 0;
	v->ncand = y.ncand;
	if (!isnan(y.machine)) { /* the yardstick's share of a step */
		for (i = 0; i < a->nsteps; i++)
			ca[i] = wa[i] > 0 ? y.ua[i] / wa[i] : 0;
		for (i = 0; i < b->nsteps; i++)
			cb[i] = wb[i] > 0 ? y.ub[i] / wb[i] : 0;
		v->yard_base = ss_diff_median(ca, a->nsteps);
		v->yard_new = ss_diff_median(cb, b->nsteps);
	}
	ss_diff_yard_release(&y);
	for (i = 0; i < n; i++) {
		double add;
		if (!ss_diff_changed(&rows[i]))
			continue;
		v->nchanged++;
		/* a function of NEW only adds all its time */
		add = rows[i].only > 0 ? rows[i].self.new_
		      : rows[i].only < 0 ? -rows[i].self.base : rows[i].self.adj_delta;
		if (!v->first || add > best) {
			v->first = rows[i].name;
			best = add;
		}
	}
	v->few = a->nsteps < SS_DIFF_MIN_STEPS || b->nsteps < SS_DIFF_MIN_STEPS;
	if (v->few)
		goto out;
	ss_diff_changed_share(a, wa, rows, n, ca);
	ss_diff_changed_share(b, wb, rows, n, cb);
	v->c_base = ss_diff_median(ca, a->nsteps);
	v->c_new = ss_diff_median(cb, b->nsteps);
	if (!(v->yard_base >= SS_DIFF_MIN_REST) || !(v->yard_new >= SS_DIFF_MIN_REST) ||
	    1 - v->c_base < SS_DIFF_MIN_REST || 1 - v->c_new < SS_DIFF_MIN_REST)
		goto out; /* nothing left to measure the machine by */
	v->judged = 1;
	/* the unchanged code's time, each step: NEW's machine over BASE's */
	for (i = 0; i < a->nsteps; i++)
		ca[i] = (1 - ca[i]) * wa[i];
	for (i = 0; i < b->nsteps; i++)
		cb[i] = (1 - cb[i]) * wb[i];
	mu = ss_diff_median(cb, b->nsteps) / ss_diff_median(ca, a->nsteps);
	if (!(mu > 0)) {
		v->judged = 0;
		goto out;
	}
	/* NEW's work at BASE's machine speed against BASE's */
	for (i = 0; i < b->nsteps; i++)
		cb[i] = wb[i] / mu;
	v->pct = (ss_diff_median(cb, b->nsteps) / ss_diff_median(wa, a->nsteps) - 1) * 100;
	v->machine_pct = (mu - 1) * 100;
	if (v->nchanged)
		v->p = ss_diff_mann_whitney(wa, a->nsteps, cb, b->nsteps);
	v->significant = v->nchanged && v->p < o->alpha && fabs(v->pct) >= o->min_pct;
out:
	step->significant = v->significant;
	free(wa);
	free(wb);
	free(ca);
	free(cb);
	return rc;
}

char *ss_diff_verdict_line(char *buf, size_t len, const struct ss_diff_verdict *v,
			   const struct ss_diff_stat *step, const struct ss_diff_opts *o)
{
	/* the step as measured moved beyond what a rank test calls noise */
	int moved = step->p < o->alpha && fabs(step->pct) >= o->min_pct;
	char who[160];

	if (v->first && v->nchanged > 1)
		snprintf(who, sizeof(who), "%s and %zu more function%s", v->first,
			 v->nchanged - 1, v->nchanged == 2 ? "" : "s");
	else
		snprintf(who, sizeof(who), "%s", v->first ? v->first : "-");
	if (v->few)
		snprintf(buf, len, "not conclusive: fewer than %d steps in a run (record more: "
			 "schedule.active)", SS_DIFF_MIN_STEPS);
	else if (!v->judged && isnan(v->yard_base) && v->ncand < 3)
		snprintf(buf, len, "not conclusive: fewer than 3 functions run in both runs, "
			 "too few to tell the code from the machine's speed by (measured %+.1f%%)",
			 step->pct);
	else if (!v->judged && isnan(v->yard_base))
		snprintf(buf, len, "not conclusive: the functions' times changed by different "
			 "factors, no two of the %zu largest within %g%% of their median: nothing "
			 "to tell the code from the machine's speed by (measured %+.1f%%)",
			 v->ncand, 2 * o->min_pct, step->pct);
	else if (!v->judged)
		snprintf(buf, len, "not conclusive: the functions that moved alike, the yardstick "
			 "of the machine's speed, are %.1f%% and %.1f%% of a step (%.0f%% needed): "
			 "too little to tell the code from the machine (measured %+.1f%%)",
			 100 * fmin(v->yard_base, 1 - v->c_base), 100 * fmin(v->yard_new, 1 - v->c_new),
			 100 * SS_DIFF_MIN_REST, step->pct);
	else if (v->significant)
		snprintf(buf, len, "%+.1f%% at equal machine speed, significant (p=%.2g): the "
			 "share of %s changed (%.1f%% -> %.1f%% of a step); the functions that "
			 "kept theirs ran %+.1f%%, the machine", v->pct, v->p, who,
			 100 * v->c_base, 100 * v->c_new, v->machine_pct);
	else if (v->nchanged)
		snprintf(buf, len, "no change of the step: the functions whose share changed "
			 "(%s) add %+.1f%% at equal machine speed (p=%.2g), under --min-change "
			 "%g%%; measured %+.1f%%", who, v->pct, v->p, o->min_pct, step->pct);
	else if (moved)
		snprintf(buf, len, "not conclusive: the step changed %+.1f%% but every function "
			 "kept its share of it: a machine slower or faster for a whole run moves "
			 "every function alike, and so would a change that slows all code alike; "
			 "one run a side cannot tell them apart (record 3 or more runs of each "
			 "build, and of one build against itself, to see the machine's spread)",
			 step->pct);
	else
		snprintf(buf, len, "no change: no function's share of the step changed, and the "
			 "step time moved %+.1f%% as measured (not significant, or under "
			 "--min-change %g%%)", isnan(step->pct) ? 0 : step->pct, o->min_pct);
	return buf;
}
