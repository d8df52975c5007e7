/*
 * diff-compare.c - the comparison of two loaded runs (diff.h): medians
 * per step, the Mann-Whitney U test over the steps, the rows and their
 * text.  Loading a run into per-step series is diff.c.
 *
 * Design: two runs are compared series by series: medians per step and a
 * Mann-Whitney U test over the steps (two samples paired by nothing; the
 * rank test needs no assumption about the shape of step times, which have
 * long right tails on a busy machine).  A change is significant only when
 * p < alpha AND it is large enough to matter (min_pct of the base,
 * min_step_pct of the step), so a shift of 1% that a thousand steps make
 * "certain" is not flagged.  A function's row is judged by its share of
 * the step in its own run (ss_diff_share, diff-verdict.c): two runs of
 * one build on a machine slower for one of them differ in every time,
 * not in shares.
 *
 * Must never: call a change significant with fewer than SS_DIFF_MIN_STEPS
 * steps in either run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "diff.h"

/* ------------------------------------------------------------ statistics */

int ss_diff_cmp_d(const void *x, const void *y)
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

const struct ss_diff_series *ss_diff_series_find(const struct ss_diff_run *r,
						 const char *name, enum ss_agg_kind kind)
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

	if (a->only != b->only) /* both runs, then gone, then new */
		return (a->only ? 2 + a->only : 0) < (b->only ? 2 + b->only : 0) ? -1 : 1;
	if (a->only) {          /* most calls first */
		double ca = a->calls_base + a->calls_new, cb = b->calls_base + b->calls_new;
		if (ca != cb)
			return ca > cb ? -1 : 1;
		return strcmp(a->name, b->name);
	}
	/* a significant growth first (the operator that got slower), then
	 * by the time added at BASE's machine speed; unjudged rows count 0 */
	{
		int ga = a->self.significant && a->self.adj_delta > 0;
		int gb = b->self.significant && b->self.adj_delta > 0;
		if (ga != gb)
			return ga ? -1 : 1;
	}
	{
		double x = isnan(a->self.adj_delta) ? 0 : a->self.adj_delta;
		double y = isnan(b->self.adj_delta) ? 0 : b->self.adj_delta;
		if (x != y)
			return x > y ? -1 : 1;
		x = isnan(a->total.adj_delta) ? 0 : a->total.adj_delta;
		y = isnan(b->total.adj_delta) ? 0 : b->total.adj_delta;
		if (x != y)
			return x > y ? -1 : 1;
	}
	if (a->self.delta != b->self.delta)
		return a->self.delta > b->self.delta ? -1 : 1;
	if (a->total.delta != b->total.delta)
		return a->total.delta > b->total.delta ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void ss_diff_row(const struct ss_diff_run *a, const struct ss_diff_run *b,
			const struct ss_diff_series *sa, const struct ss_diff_series *sb,
			const struct ss_diff_opts *o, double step_base, double *x,
			double *y, const struct ss_diff_yard *yd, struct ss_diff_row *row)
{
	const struct ss_diff_series *s = sa ? sa : sb;
	int in = sa && sa->kind == SS_AGG_FUNCTION && yd->in[sa - a->s];

	row->name = s->name;
	row->kind = s->kind;
	row->calls_base = ss_diff_mean(sa ? sa->calls : NULL, a->nsteps);
	row->calls_new = ss_diff_mean(sb ? sb->calls : NULL, b->nsteps);
	ss_diff_vals(sa ? sa->self_ns : NULL, a->nsteps, x);
	ss_diff_vals(sb ? sb->self_ns : NULL, b->nsteps, y);
	ss_diff_stat(x, a->nsteps, y, b->nsteps, o, step_base, &row->self);
	ss_diff_share(sa ? sa->self_ns : NULL, a->nsteps, sb ? sb->self_ns : NULL, b->nsteps,
		      yd, in, o, step_base, &row->self);
	ss_diff_vals(sa ? sa->total_ns : NULL, a->nsteps, x);
	ss_diff_vals(sb ? sb->total_ns : NULL, b->nsteps, y);
	ss_diff_stat(x, a->nsteps, y, b->nsteps, o, step_base, &row->total);
	ss_diff_share(sa ? sa->total_ns : NULL, a->nsteps, sb ? sb->total_ns : NULL, b->nsteps,
		      yd, in, o, step_base, &row->total);
	row->only = row->calls_base > 0 && row->calls_new == 0   ? -1
		    : row->calls_base == 0 && row->calls_new > 0 ? 1
								 : 0;
	/* not a change of the same code: listed apart, never significant */
	if (row->only)
		row->self.significant = row->total.significant = 0;
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
	struct ss_diff_yard yd;
	size_t i, n = 0;

	*rows = NULL;
	if (!x || !y || !r || ss_diff_yard_init(&yd, a, b, o)) {
		free(x);
		free(y);
		free(r);
		return -1;
	}
	ss_diff_vals(a->step_ns, a->nsteps, x);
	ss_diff_vals(b->step_ns, b->nsteps, y);
	ss_diff_stat(x, a->nsteps, y, b->nsteps, o, 0, step);
	for (i = 0; i < a->ns; i++) {
		ss_diff_row(a, b, &a->s[i], ss_diff_series_find(b, a->s[i].name, a->s[i].kind),
			    o, step->base, x, y, &yd, &r[n]);
		n += !ss_diff_empty(&r[n]);
	}
	for (i = 0; i < b->ns; i++)
		if (!ss_diff_series_find(a, b->s[i].name, b->s[i].kind)) {
			ss_diff_row(a, b, NULL, &b->s[i], o, step->base, x, y, &yd, &r[n]);
			n += !ss_diff_empty(&r[n]);
		}
	free(x);
	free(y);
	ss_diff_yard_release(&yd);
	qsort(r, n, sizeof(*r), ss_diff_cmp_row);
	*rows = r;
	return (long)n;
}

size_t ss_diff_ranked(const struct ss_diff_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n && !rows[i].only; i++)
		;
	return i;
}

static int ss_diff_cmp_caller(const void *x, const void *y)
{
	const struct ss_diff_caller *a = x, *b = y;

	if (a->delta != b->delta)
		return a->delta > b->delta ? -1 : 1;
	return strcmp(a->name, b->name);
}

size_t ss_diff_callers(const struct ss_diff_run *a, const struct ss_diff_run *b,
		       const char *callee, struct ss_diff_caller *out, size_t max)
{
	const struct ss_diff_run *r[2] = { a, b };
	struct ss_diff_caller *c = calloc(a->ne + b->ne + 1, sizeof(*c));
	size_t steps = a->nsteps > b->nsteps ? a->nsteps : b->nsteps, n = 0, i, k, w;
	double *v = malloc((steps + 1) * sizeof(*v));

	if (!c || !v) {
		free(c);
		free(v);
		return 0;
	}
	for (w = 0; w < 2; w++)
		for (i = 0; i < r[w]->ne; i++) {
			const struct ss_diff_series *e = &r[w]->e[i];
			if (strcmp(e->name, callee))
				continue;
			for (k = 0; k < n && strcmp(c[k].name, e->caller); k++)
				;
			if (k == n)
				c[n++].name = e->caller;
			ss_diff_vals(e->total_ns, r[w]->nsteps, v);
			*(w ? &c[k].new_ : &c[k].base) = ss_diff_median(v, r[w]->nsteps);
		}
	for (k = 0; k < n; k++)
		c[k].delta = c[k].new_ - c[k].base;
	qsort(c, n, sizeof(*c), ss_diff_cmp_caller);
	memcpy(out, c, (n < max ? n : max) * sizeof(*c));
	free(c);
	free(v);
	return n;
}

size_t ss_diff_gone_callees(const struct ss_diff_run *a, const struct ss_diff_row *rows,
			    size_t n, const char *caller, const char **out, size_t max)
{
	size_t i, k, m = 0;

	for (i = 0; i < a->ne; i++) {
		if (strcmp(a->e[i].caller, caller))
			continue;
		for (k = 0; k < n; k++)
			if (rows[k].only < 0 && rows[k].kind == SS_AGG_FUNCTION &&
			    !strcmp(rows[k].name, a->e[i].name))
				break;
		if (k == n)
			continue;
		if (m < max)
			out[m] = rows[k].name;
		m++;
	}
	return m;
}

char *ss_diff_fmt_calls(double v, char *buf, size_t len)
{
	static const char sfx[] = "kMG";
	int i = -1;

	if (!(v > 0)) {
		snprintf(buf, len, "0");
		return buf;
	}
	if (v < 999.995) {
		if (fabs(v - round(v)) < 0.005)
			snprintf(buf, len, "%.0f", v);
		else
			snprintf(buf, len, "%.2f", v);
		return buf;
	}
	while (v >= 999.95 && i < 2) {
		v /= 1000;
		i++;
	}
	ss_diff_fmt_num(v < 10 ? round(v * 100) / 100 : round(v * 10) / 10, buf,
			len > 1 ? len - 1 : len);
	snprintf(buf + strlen(buf), len - strlen(buf), "%c", sfx[i]);
	return buf;
}

char *ss_diff_fmt_num(double v, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%.3f", v);
	if (strchr(buf, '.')) {
		n = strlen(buf);
		while (n && buf[n - 1] == '0')
			buf[--n] = 0;
		if (n && buf[n - 1] == '.')
			buf[--n] = 0;
	}
	if (!strcmp(buf, "-0"))
		snprintf(buf, len, "0");
	return buf;
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
