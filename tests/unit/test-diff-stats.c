/*
 * test-diff-stats.c - the statistics of `stepscope diff` (analyze/diff.c)
 * on hand-made runs: the median, the Mann-Whitney p (against values
 * computed by hand and by scipy.stats.mannwhitneyu, asymptotic, with
 * continuity correction), and when ss_diff_compare calls a change
 * significant: a clear change is; a 2% shift is not however small its p;
 * nothing is with fewer than SS_DIFF_MIN_STEPS steps; rows are sorted by
 * the added self time and a function of one run only gets a row.
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

/* A run of n steps: step time `step` plus i * jitter, one function "op"
 * whose self and total are op + i * jitter, and "only" when only > 0. */
static void mkrun(struct ss_diff_run *r, size_t n, double step, double op,
		  double jitter, double only)
{
	memset(r, 0, sizeof(*r));
	r->nsteps = n;
	r->step_ns = calloc(n, sizeof(uint64_t));
	r->s = calloc(2, sizeof(*r->s));
	r->ns = only > 0 ? 2 : 1;
	for (size_t k = 0; k < r->ns; k++) {
		r->s[k].name = strdup(k ? "only" : "op");
		r->s[k].calls = calloc(n, sizeof(uint64_t));
		r->s[k].self_ns = calloc(n, sizeof(uint64_t));
		r->s[k].total_ns = calloc(n, sizeof(uint64_t));
	}
	for (size_t i = 0; i < n; i++) {
		/* a shuffled order of the jitter, so no two runs pair up */
		double j = (double)((i * 7) % n) * jitter;
		r->step_ns[i] = (uint64_t)(step + j);
		r->s[0].calls[i] = 2;
		r->s[0].self_ns[i] = r->s[0].total_ns[i] = (uint64_t)(op + j);
		if (only > 0) {
			r->s[1].calls[i] = 1;
			r->s[1].self_ns[i] = r->s[1].total_ns[i] = (uint64_t)only;
		}
	}
}

static void test_significance(void **state)
{
	struct ss_diff_run a, b;
	struct ss_diff_opts o;
	struct ss_diff_stat st;
	struct ss_diff_row *rows;
	long n;

	(void)state;
	ss_diff_opts_default(&o);
	/* op 1.0ms -> 1.4ms in a 2ms step, +-1% jitter: significant */
	mkrun(&a, 30, 2e6, 1e6, 1e3, 0);
	mkrun(&b, 30, 2.4e6, 1.4e6, 1e3, 5e4);
	n = ss_diff_compare(&a, &b, &o, &st, &rows);
	assert_int_equal(n, 2);
	assert_true(st.significant && st.p < 1e-6);
	assert_true(fabs(st.pct - 20) < 1);
	assert_string_equal(rows[0].name, "op"); /* +400us before only's +50us */
	assert_true(rows[0].self.significant && fabs(rows[0].self.pct - 40) < 1);
	assert_true(rows[0].calls_base == 2 && rows[0].calls_new == 2);
	assert_string_equal(rows[1].name, "only");
	assert_true(rows[1].calls_base == 0 && isnan(rows[1].self.pct));
	free(rows);
	ss_diff_release(&b);
	/* a 2% shift with no jitter: p tiny, but below --min-change */
	mkrun(&b, 30, 2.04e6, 1.02e6, 0, 0);
	ss_diff_release(&a);
	mkrun(&a, 30, 2e6, 1e6, 0, 0);
	n = ss_diff_compare(&a, &b, &o, &st, &rows);
	assert_int_equal(n, 1);
	assert_true(st.p < 1e-6 && !st.significant);
	assert_true(!rows[0].self.significant);
	free(rows);
	o.min_pct = 1;
	n = ss_diff_compare(&a, &b, &o, &st, &rows);
	assert_true(st.significant && rows[0].self.significant);
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
	/* 4 steps: nothing significant */
	ss_diff_opts_default(&o);
	mkrun(&a, 4, 2e6, 1e6, 0, 0);
	mkrun(&b, 4, 4e6, 3e6, 0, 0);
	n = ss_diff_compare(&a, &b, &o, &st, &rows);
	assert_true(st.p == 1 && !st.significant && !rows[0].self.significant);
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_and_p),
		cmocka_unit_test(test_significance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
