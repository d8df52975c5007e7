/*
 * diff.h - compare two recorded runs step by step: for the step time and
 * for every function and user range, its calls, self and total time in
 * each recorded step of each run, the change of the median per step, and
 * whether that change stands out of the step-to-step noise (`stepscope
 * diff`, docs/report.md "Comparing two runs").
 *
 * A run is loaded once into per-step series (one value per recorded step,
 * every thread and process of the step's process together); two loaded
 * runs are compared into rows.  The significance test is a two-sided
 * Mann-Whitney U test over the steps of the two runs (the steps of two
 * runs are paired by nothing) together with a minimum effect size.
 * Functions are judged by their share of the step in their own run, which
 * a machine that is slower or faster for a whole run cannot change, and
 * the step by what the functions whose share changed account for
 * (diff-verdict.c).
 */
#ifndef SS_DIFF_H
#define SS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"

/* One function or range of one run: a value per recorded step.  An edge
 * is the calls of function name made by function caller (calls and
 * total only). */
struct ss_diff_series {
	char *name;
	char *caller;               /* edges only, else NULL */
	enum ss_agg_kind kind;
	uint64_t *calls, *self_ns, *total_ns;   /* nsteps each */
};

struct ss_diff_run {
	char *dir;
	char prog[256];             /* program name of its first trace */
	char stepfn[256];           /* step.function, "" when none */
	size_t nprocs, nthreads;
	size_t nsteps;              /* steps compared: the recorded steps
	                             * whose events the traces hold */
	size_t nsteps_all;          /* recorded steps (the traces' step marks) */
	char cut[512];              /* "" or the first trace cut short (a file
	                             * truncated or damaged): its path */
	unsigned long long cut_off; /* and the offset of the damage */
	uint64_t *step_ns;          /* duration of each step compared; when
	                             * oncpu, the on-CPU self time of every
	                             * call in it, every thread (its work, not
	                             * the waits in OpenMP's ranges) */
	/* record.sched: the runs' threads' switches were recorded
	 * (have_off) and, without --wall, every time of the series is on-CPU
	 * time (oncpu): less what the thread was switched out in it */
	int have_off, oncpu;
	double *step_off;           /* each step's share of its time its
	                             * thread was off the CPU (0..1; 0s
	                             * without record.sched) */
	struct ss_diff_series *s;
	size_t ns;
	struct ss_diff_series *e;   /* edges: a function's calls per caller */
	size_t ne;
	struct ss_agg *agg;         /* the walked run (trees for html --diff) */
};

/* Load run directory dir (backend, quiet as for ss_agg_walk); wall: keep
 * the time switched out in every figure even when switches were recorded
 * (--wall).  In a trace
 * cut short the steps marked after its thread's last event are left out
 * (their events are missing: they are no steps of zero time), so are the
 * steps the cut fell in; nsteps says how many are left.  0, 2 (bad input:
 * message in err) or 1 (internal failure). */
int ss_diff_load(struct ss_diff_run *r, const char *dir, const char *backend,
		 int quiet, int wall, char *err, size_t errlen);
void ss_diff_release(struct ss_diff_run *r);

/* The comparison of one quantity (median per step) in the two runs. */
struct ss_diff_stat {
	double base, new_;          /* median per step, ns (calls: mean) */
	double delta, pct;          /* new - base; percent of base (NaN: base 0) */
	double p;                   /* Mann-Whitney two-sided p (1: too few steps);
	                             * rows: over the shares of the steps */
	int significant;            /* rows: the share's change (below); the
	                             * step: the verdict's (ss_diff_verdict) */
	/* rows only: the median share of each step's work (the self time of
	 * every function in it, every thread; 0..1); adj_pct, the change
	 * measured against the functions that moved with the machine (the
	 * yardstick, struct ss_diff_yard: a machine slower for a whole run
	 * leaves it alone), NaN where not judged (no time in BASE, no
	 * yardstick, or one under SS_DIFF_MIN_REST of the step); adj_delta,
	 * that change in ns at BASE's speed (base * adj_pct / 100), what the
	 * rows are sorted by */
	double share_base, share_new, adj_pct, adj_delta;
};

struct ss_diff_row {
	const char *name;
	enum ss_agg_kind kind;
	int only;                   /* 0: called in both runs; -1: in BASE
	                             * only (gone: excluded from a rebuild,
	                             * removed, inlined), 1: in NEW only (new) */
	double calls_base, calls_new; /* mean calls per step */
	struct ss_diff_stat self, total;
};

struct ss_diff_opts {
	double alpha;               /* p below this (default 0.01) */
	double min_pct;             /* and a change of at least this % of the
	                             * base median (default 5) */
	double min_step_pct;        /* and of at least this % of the base
	                             * median step time (default 0.5) */
};
#define SS_DIFF_MIN_STEPS 5     /* fewer steps in a run: nothing significant */
#define SS_DIFF_MIN_REST 0.05   /* the yardstick must be this much of a
                                 * step (median) to measure by */

void ss_diff_opts_default(struct ss_diff_opts *o);

/* The step time's comparison into *step and one row per function and
 * range of either run into *rows (malloc'ed): first those called in both
 * runs, sorted by the change of self time per step, largest growth first;
 * then those of one run only (their change is no change of the same
 * code: not ranked), gone before new, most calls first.  The number of
 * rows, or -1 out of memory.  Row names point into a and b. */
long ss_diff_compare(const struct ss_diff_run *a, const struct ss_diff_run *b,
		     const struct ss_diff_opts *o, struct ss_diff_stat *step,
		     struct ss_diff_row **rows);

/* The series of name (kind) in run r, or NULL. */
const struct ss_diff_series *ss_diff_series_find(const struct ss_diff_run *r,
						 const char *name, enum ss_agg_kind kind);

/* diff-verdict.c: each step's work, the self time of every function in
 * it (every thread), nsteps values (malloc'ed; NULL out of memory). */
double *ss_diff_work(const struct ss_diff_run *r);

/* The yardstick a function's time is measured by in each step: the self
 * time of the functions that moved with the machine.  machine is the
 * median, over the functions called in both runs that are at least 0.5%
 * of BASE's step (all of them when fewer than 3 are), of NEW's median
 * self time over BASE's; the yardstick is those of them within twice
 * min_pct of it, when they are at least 2 (no consensus: none). */
struct ss_diff_yard {
	double machine;             /* NaN: fewer than 2 functions to tell by */
	double *wa, *wb;            /* each step's work, BASE and NEW */
	double *ua, *ub;            /* each step's yardstick */
	unsigned char *in;          /* per series of BASE: in the yardstick */
	size_t n;                   /* functions in it: at least 2, else none
	                             * (machine NaN) */
	size_t ncand;               /* the functions the machine was told by */
};
int ss_diff_yard_init(struct ss_diff_yard *y, const struct ss_diff_run *a,
		      const struct ss_diff_run *b, const struct ss_diff_opts *o);
void ss_diff_yard_release(struct ss_diff_yard *y);

/* The share statistics of one row's series va (BASE, n steps) and vb
 * (NEW, m steps; either may be NULL: zeros) into st's p, share_*, adj_*
 * and significant (st->base must be set).  in: the row is a function of
 * the yardstick (it is measured against the others).  Each step's value
 * is its time over the yardstick's: p of the Mann-Whitney test over
 * them, adj_pct the change of their median; significant when p < alpha,
 * |adj_pct| >= min_pct and |adj_delta| >= min_step_pct of step_base. */
void ss_diff_share(const uint64_t *va, size_t n, const uint64_t *vb, size_t m,
		   const struct ss_diff_yard *y, int in, const struct ss_diff_opts *o,
		   double step_base, struct ss_diff_stat *st);

/* What the step's change rests on.  The functions whose share of the
 * step changed significantly, and those of one run only, are the
 * changed code; every other function kept its share, so its time moved
 * with the machine alone.  Measured by the unchanged functions, the step
 * of NEW at BASE's machine speed is (1 - c_base) / (1 - c_new) times
 * BASE's, c the median share of the changed code in a step: pct.  The
 * rest of the measured change is the machine's (machine_pct). */
struct ss_diff_verdict {
	double pct;                 /* the step's change at equal machine
	                             * speed, %; NaN when not judged */
	double machine_pct;         /* what every unchanged function shared */
	double p;                   /* Mann-Whitney over the changed code's
	                             * share of each step */
	int significant;            /* p < alpha and |pct| >= min_pct */
	int few;                    /* fewer than SS_DIFF_MIN_STEPS in a run */
	int judged;                 /* 0: too few steps, or the yardstick or
	                             * what the changed code leaves is under
	                             * SS_DIFF_MIN_REST of a step */
	size_t nchanged;            /* functions in the changed code */
	size_t ncand;               /* functions the machine was told by */
	const char *first;          /* the one that added most (NULL: none) */
	double c_base, c_new;       /* the changed code's median share */
	double yard_base, yard_new; /* the yardstick's median share (struct
	                             * ss_diff_yard; NaN: none) */
};

/* The verdict of rows[0..n) (ss_diff_compare's, sorted) into *v; sets
 * step->significant to v->significant.  0, -1 out of memory. */
int ss_diff_verdict(const struct ss_diff_run *a, const struct ss_diff_run *b,
		    const struct ss_diff_row *rows, size_t n, const struct ss_diff_opts *o,
		    struct ss_diff_stat *step, struct ss_diff_verdict *v);

/* One line saying what the step's verdict rests on and whether it is
 * conclusive, into buf (returned). */
char *ss_diff_verdict_line(char *buf, size_t len, const struct ss_diff_verdict *v,
			   const struct ss_diff_stat *step, const struct ss_diff_opts *o);

/* Rows of rows[0..n) called in both runs (they come first). */
size_t ss_diff_ranked(const struct ss_diff_row *rows, size_t n);

/* A caller of one function: the time of the function's calls it made,
 * median per step in each run (0 where it made none). */
struct ss_diff_caller {
	const char *name;
	double base, new_, delta;
};

/* The callers of function callee in either run into out (at most max),
 * largest growth first; returns how many there are (may exceed max), 0
 * out of memory.  Names point into a and b. */
size_t ss_diff_callers(const struct ss_diff_run *a, const struct ss_diff_run *b,
		       const char *callee, struct ss_diff_caller *out, size_t max);

/* The functions gone from NEW (rows with only -1) that function caller
 * called in BASE, into out (at most max); returns how many there are. */
size_t ss_diff_gone_callees(const struct ss_diff_run *a, const struct ss_diff_row *rows,
			    size_t n, const char *caller, const char **out, size_t max);

/* Two-sided p of the Mann-Whitney U test of x (n) against y (m), normal
 * approximation with tie correction; 1 when all values are equal. */
double ss_diff_mann_whitney(const double *x, size_t n, const double *y, size_t m);
/* qsort comparator of doubles, ascending. */
int ss_diff_cmp_d(const void *x, const void *y);
/* Median of n values (sorts a copy); 0 for n 0. */
double ss_diff_median(const double *v, size_t n);

/* diff-busy.c (record.sched): the median share of a step its thread was
 * switched out (0 without switch records); one line saying what is
 * compared and how busy each run's machine was (without switch records:
 * that wall time is compared, and what record.sched adds), and one saying
 * when that limits what the comparison can conclude (a share of 10% or
 * more), into buf; each returns 0 (buf "") when it has nothing to say.
 * wall: --wall was given. */
double ss_diff_busy(const struct ss_diff_run *r);
int ss_diff_busy_line(char *buf, size_t len, const struct ss_diff_run *a,
		      const struct ss_diff_run *b, int wall);
int ss_diff_busy_note(char *buf, size_t len, const struct ss_diff_run *a,
		      const struct ss_diff_run *b);

/* The text of diff's tables and page, into buf (returned): a time per
 * step ("1.234ms"; negative shows as 0), a signed one ("+1.234ms",
 * "-850ns"), and a change in % ("+12.3%", "new" when only NEW has it, "-"
 * when neither). */
char *ss_diff_fmt_time(double ns, char *buf, size_t len);
char *ss_diff_fmt_dt(double ns, char *buf, size_t len);
char *ss_diff_fmt_pct(const struct ss_diff_stat *s, char *buf, size_t len);
/* Calls per step: a plain number below 1000 ("3", "2.27"), else with a k,
 * M or G suffix ("560.3k", "1.25M"); never an exponent. */
char *ss_diff_fmt_calls(double v, char *buf, size_t len);
/* A number for CSV and JSON: up to 3 decimals, trailing zeros dropped,
 * never an exponent ("1", "2.267", "560300"). */
char *ss_diff_fmt_num(double v, char *buf, size_t len);

#endif /* SS_DIFF_H */
