/*
 * test-diff-stats.c - the statistics of `stepscope diff` (analyze/diff.c)
 * on hand-made runs: the median, the Mann-Whitney p (against values
 * computed by hand and by scipy.stats.mannwhitneyu, asymptotic, with
 * continuity correction), and when ss_diff_compare and ss_diff_verdict
 * call a change significant: a clear change of one function is, and the
 * step's change at equal machine speed is what it adds; a 4% growth is
 * not however small its p; a machine 30% slower for the whole run changes
 * no share and is called not conclusive; nothing is with fewer than
 * SS_DIFF_MIN_STEPS steps, or with a function that is 97% of the step
 * (nothing left to measure the machine by); rows are sorted by the added
 * self time and a function of one run only gets a row.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff.h"

static void test_median_and_p(void **state)
{
	double x[] = { 5, 1, 4, 2, 3 }, y[] = { 6, 10, 7, 9, 8 }, e[] = { 3, 1, 2, 4 };
	double same[] = { 7, 7, 7, 7, 7 };

	(void)state;
	assert_true(ss_diff_median(x, 5) == 3);
	assert_true(ss_diff_median(e, 4) == 2.5);
	assert_true(ss_diff_median(x, 0) == 0);
	/* U = 0, mu 12.5, var 25 * 11 / 12: z = 12 / 4.787 = 2.507 */
	assert_true(fabs(ss_diff_mann_whitney(x, 5, y, 5) - 0.01219) < 0.0002);
	assert_true(fabs(ss_diff_mann_whitney(y, 5, x, 5) - 0.01219) < 0.0002);
	assert_true(ss_diff_mann_whitney(x, 5, x, 5) == 1);
	assert_true(ss_diff_mann_whitney(same, 5, same, 5) == 1);
	assert_true(ss_diff_mann_whitney(x, 5, y, 0) == 1);
}

/* A run of n steps: "op" of op + i * jitter ns a step, "fwd" and "bwd" of
 * rest / 2 each, "only" (when only > 0) of only; the step is their sum. */
static void mkrun(struct ss_diff_run *r, size_t n, double op, double rest,
		  double jitter, double only)
{
	static const char *const names[] = { "op", "fwd", "bwd", "only" };

	memset(r, 0, sizeof(*r));
	r->nsteps = n;
	r->step_ns = calloc(n, sizeof(uint64_t));
	r->s = calloc(4, sizeof(*r->s));
	r->ns = only > 0 ? 4 : 3;
	for (size_t k = 0; k < r->ns; k++) {
		r->s[k].name = strdup(names[k]);
		r->s[k].kind = SS_AGG_FUNCTION;
		r->s[k].calls = calloc(n, sizeof(uint64_t));
		r->s[k].self_ns = calloc(n, sizeof(uint64_t));
		r->s[k].total_ns = calloc(n, sizeof(uint64_t));
	}
	for (size_t i = 0; i < n; i++) {
		/* a shuffled order of the jitter, so no two runs pair up */
		double j = (double)((i * 7) % n) * jitter;
		double v[4] = { op + j, rest / 2, rest / 2, only };
		for (size_t k = 0; k < r->ns; k++) {
			r->s[k].calls[i] = k ? 1 : 2;
			r->s[k].self_ns[i] = r->s[k].total_ns[i] = (uint64_t)v[k];
			r->step_ns[i] += (uint64_t)v[k];
		}
	}
}

static long compare(struct ss_diff_run *a, struct ss_diff_run *b, struct ss_diff_opts *o,
		    struct ss_diff_stat *st, struct ss_diff_verdict *v, struct ss_diff_row **rows)
{
	long n = ss_diff_compare(a, b, o, st, rows);

	assert_true(n > 0);
	assert_int_equal(ss_diff_verdict(a, b, *rows, (size_t)n, o, st, v), 0);
	return n;
}

static void test_significance(void **state)
{
	struct ss_diff_run a, b;
	struct ss_diff_opts o;
	struct ss_diff_stat st;
	struct ss_diff_verdict v;
	struct ss_diff_row *rows;
	char line[768];
	long n;

	(void)state;
	ss_diff_opts_default(&o);
	/* op 1.0ms -> 1.4ms in a 2ms step, +-1% jitter: significant */
	mkrun(&a, 30, 1e6, 1e6, 1e3, 0);
	mkrun(&b, 30, 1.4e6, 1e6, 1e3, 5e4);
	n = compare(&a, &b, &o, &st, &v, &rows);
	assert_int_equal(n, 4);
	assert_true(st.significant && st.p < 1e-6);
	assert_true(fabs(st.pct - 22.5) < 1);
	assert_string_equal(rows[0].name, "op"); /* +400us; fwd, bwd 0 */
	assert_true(rows[0].self.significant && fabs(rows[0].self.pct - 40) < 1);
	assert_true(fabs(rows[0].self.adj_pct - 40) < 1);
	assert_true(fabs(rows[0].self.share_base - 0.5) < 0.01);
	assert_true(rows[0].calls_base == 2 && rows[0].calls_new == 2);
	assert_true(!rows[1].self.significant && !rows[2].self.significant);
	assert_string_equal(rows[3].name, "only");
	assert_true(rows[3].calls_base == 0 && isnan(rows[3].self.pct));
	/* op and only are the changed code: 50% of BASE's step, 1.45 of
	 * 2.45 ms of NEW's; the rest kept its time: +22.4% at equal speed */
	assert_int_equal(v.nchanged, 2);
	assert_string_equal(v.first, "op");
	assert_true(v.significant && fabs(v.pct - 22.4) < 0.1 && fabs(v.machine_pct) < 0.1);
	free(rows);
	ss_diff_release(&b);
	/* a 4% growth of op with no jitter: p tiny, but below --min-change */
	mkrun(&b, 30, 1.04e6, 1e6, 0, 0);
	ss_diff_release(&a);
	mkrun(&a, 30, 1e6, 1e6, 0, 0);
	n = compare(&a, &b, &o, &st, &v, &rows);
	assert_int_equal(n, 3);
	assert_true(st.p < 1e-6 && !st.significant);
	assert_true(!rows[0].self.significant);
	free(rows);
	o.min_pct = 1;
	n = compare(&a, &b, &o, &st, &v, &rows);
	assert_true(st.significant && rows[0].self.significant && fabs(v.pct - 2) < 0.1);
	free(rows);
	ss_diff_release(&b);
	/* the whole machine 30% slower: every time +30%, no share changed;
	 * the step's rank test is certain, the verdict is not conclusive */
	ss_diff_opts_default(&o);
	mkrun(&b, 30, 1.3e6, 1.3e6, 0, 0);
	n = compare(&a, &b, &o, &st, &v, &rows);
	assert_true(st.p < 1e-6 && fabs(st.pct - 30) < 0.1 && !st.significant);
	for (long i = 0; i < n; i++)
		assert_true(!rows[i].self.significant && fabs(rows[i].self.adj_pct) < 0.1);
	assert_true(v.judged && v.nchanged == 0 && fabs(v.pct) < 0.1 &&
		    fabs(v.machine_pct - 30) < 0.1);
	ss_diff_verdict_line(line, sizeof(line), &v, &st, &o);
	assert_true(strstr(line, "not conclusive: the step changed +30.0% but every function "
			       "kept its share of it:") == line);
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
	/* 4 steps: nothing significant */
	mkrun(&a, 4, 1e6, 1e6, 0, 0);
	mkrun(&b, 4, 3e6, 1e6, 0, 0);
	n = compare(&a, &b, &o, &st, &v, &rows);
	assert_true(st.p == 1 && !st.significant && !rows[0].self.significant && v.few);
	ss_diff_verdict_line(line, sizeof(line), &v, &st, &o);
	assert_true(!strncmp(line, "not conclusive: fewer than 5 steps", 34));
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
}

/* One function that is nearly the whole step, or functions that each
 * changed by their own factor: nothing to measure the machine by, so
 * nothing is judged, and the line says so. */
static void test_no_yardstick(void **state)
{
	struct ss_diff_run a, b;
	struct ss_diff_opts o;
	struct ss_diff_stat st;
	struct ss_diff_verdict v;
	struct ss_diff_row *rows;
	char line[768];
	long n;

	(void)state;
	ss_diff_opts_default(&o);
	/* op 97% of the step, doubled: the rest is 3% of it (< 5%) */
	mkrun(&a, 30, 9.7e6, 0.3e6, 1e3, 0);
	mkrun(&b, 30, 19.4e6, 0.3e6, 1e3, 0);
	n = compare(&a, &b, &o, &st, &v, &rows);
	assert_true(n == 3 && isnan(rows[0].self.adj_pct) && !rows[0].self.significant);
	assert_true(!v.judged && !v.significant && !st.significant);
	ss_diff_verdict_line(line, sizeof(line), &v, &st, &o);
	print_message("%s\n", line);
	assert_true(strstr(line, "not conclusive: the functions that moved alike, the yardstick "
			       "of the machine's speed, are 3.0% and 1.5% of a step (5% needed)") == line);
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
	/* three functions, each changed by its own factor (op x1.4, fwd x1,
	 * bwd x2): no two agree within 10% on the machine's speed, so no one of them
	 * is the yardstick of the others (their median would be op's) */
	mkrun(&a, 30, 1e6, 1e6, 1e3, 0);
	mkrun(&b, 30, 1.4e6, 1e6, 1e3, 0);
	for (size_t i = 0; i < 30; i++)
		b.s[2].self_ns[i] = b.s[2].total_ns[i] = b.s[2].self_ns[i] * 2;
	n = compare(&a, &b, &o, &st, &v, &rows);
	for (long i = 0; i < n; i++)
		assert_true(isnan(rows[i].self.adj_pct) && !rows[i].self.significant);
	assert_true(!v.judged && !v.significant && v.ncand == 3);
	ss_diff_verdict_line(line, sizeof(line), &v, &st, &o);
	print_message("%s\n", line);
	assert_true(strstr(line, "not conclusive: the functions' times changed by different "
			       "factors, no two of the 3 largest within 10% of their median") == line);
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_and_p),
		cmocka_unit_test(test_significance),
		cmocka_unit_test(test_no_yardstick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
