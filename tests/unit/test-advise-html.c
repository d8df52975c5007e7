/*
 * test-advise-html.c - the "Overview" section of `stepscope html`
 * (advise-html.c) from hand-filled struct ss_adv_result values, no run:
 * one <rect class="seg"> per non-zero category of every step, in the
 * category's colour, with a <title> naming the step, the category, its
 * time and share; the mean table; findings in rank order, each function
 * a link to its summary-table row exactly when the page has that row
 * (ids escape any name into [A-Za-z0-9_.-] and stay distinct); a long
 * run drawn as every k-th step; and a run with no steps and no findings
 * still a balanced fragment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advise-html.h"

/* How often needle occurs in hay. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, l = strlen(needle);

	for (const char *p = hay; (p = strstr(p, needle)); p += l)
		n++;
	return n;
}

/* The page's rows: has_row for every name but "gone". */
static int has_row(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "gone") != 0;
}

static char *render(const struct ss_adv_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ss_adv_html(f, r, has_row, NULL);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Every element opened is closed, in order (void elements aside): the
 * fragment nests.  Prints where it does not. */
static void assert_balanced(const char *h)
{
	static const char *const voids[] = { "br", "meta", "img", "hr", NULL };
	char stack[256][16];
	int top = 0;

	for (const char *p = h; (p = strchr(p, '<')); p++) {
		int close = p[1] == '/';
		const char *q = p + 1 + close, *e = q;
		char name[16];
		size_t n;
		while ((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9'))
			e++;
		n = (size_t)(e - q);
		assert_true(n > 0 && n < sizeof(name));
		memcpy(name, q, n);
		name[n] = 0;
		int isvoid = 0;
		for (int k = 0; voids[k]; k++)
			isvoid |= !strcmp(voids[k], name);
		const char *gt = strchr(e, '>');
		assert_non_null(gt);
		if (isvoid || gt[-1] == '/')
			continue;
		if (!close) {
			assert_true(top < 256);
			strcpy(stack[top++], name);
		} else {
			if (!top || strcmp(stack[top - 1], name)) {
				fprintf(stderr, "</%s> closes <%s> at: %.60s\n", name,
					top ? stack[top - 1] : "(nothing)", p);
				fail();
			}
			top--;
		}
	}
	if (top)
		fprintf(stderr, "<%s> left open\n", stack[top - 1]);
	assert_int_equal(top, 0);
}

static struct ss_adv_op ops1[] = { { "matmul", 6000 }, { "relu", 1000 } };

static void fill(struct ss_adv_result *r, struct ss_adv_step *st, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->run.steps = st;
	r->run.nsteps = n;
	r->run.have_offcpu = 1;
	r->nchecks = 0;
}

static void test_bars_and_table(void **state)
{
	struct ss_adv_step st[2] = {
		{ .pid = 7, .tid = 8, .step = 1, .begin_ns = 0, .end_ns = 10000,
		  .cat = { [SS_ADV_OPS] = 7000, [SS_ADV_OMP_WAIT] = 2000,
			   [SS_ADV_HOOKS] = 1000 }, .op = ops1, .nop = 2 },
		{ .pid = 7, .tid = 8, .step = 2, .begin_ns = 20000, .end_ns = 40000,
		  .cat = { [SS_ADV_OPS] = 5000, [SS_ADV_BLOCKED] = 15000 } },
	};
	struct ss_adv_result r;
	char want[400], *h;

	(void)state;
	fill(&r, st, 2);
	r.run.median_step_ns = 15000;
	r.run.cat_mean[SS_ADV_OPS] = 6000;
	r.run.cat_mean[SS_ADV_OMP_WAIT] = 1000;
	r.run.cat_mean[SS_ADV_BLOCKED] = 7500;
	r.run.cat_mean[SS_ADV_HOOKS] = 500;
	r.run.ovh.known = 1;  /* hooks calibrated */
	h = render(&r);
	assert_balanced(h);
	assert_int_equal(count(h, "<svg "), 1);
	assert_int_equal(count(h, "id=\"overview-bars\""), 1);
	assert_int_equal(count(h, "<rect class=\"seg\""), 5);  /* 3 + 2 non-zero */
	snprintf(want, sizeof(want), "data-bar=\"0\" data-seg=\"%d\"", SS_ADV_OMP_WAIT);
	assert_int_equal(count(h, want), 1);
	snprintf(want, sizeof(want), "fill=\"%s\"><title>step 1 (pid 7, tid 8): %s 2.000us "
		 "= 20.0%% of 10.000us</title>", ss_adv_html_color(SS_ADV_OMP_WAIT),
		 ss_adv_cat_name(SS_ADV_OMP_WAIT));
	if (!strstr(h, want))
		fail_msg("missing %s in:\n%s", want, h);
	snprintf(want, sizeof(want), "<title>step 1 (pid 7, tid 8): %s 7.000us = 70.0%% of "
		 "10.000us; top: matmul 6.000us, relu 1.000us</title>",
		 ss_adv_cat_name(SS_ADV_OPS));
	if (!strstr(h, want))
		fail_msg("missing %s in:\n%s", want, h);
	snprintf(want, sizeof(want), "<title>step 2 (pid 7, tid 8): %s 15.000us = 75.0%% of "
		 "20.000us</title>", ss_adv_cat_name(SS_ADV_BLOCKED));
	if (!strstr(h, want))
		fail_msg("missing %s in:\n%s", want, h);
	/* the taller bar (20 us) fills the plot: 220 - 24 - 10 = 186 px, of
	 * which blocked is 3/4 */
	assert_non_null(strstr(h, "height=\"139.50\" fill=\"#76b7b2\""));
	/* mean table: the rows of advise's text (no GPU rows without GPU
	 * activity, no allocation row without allocation records), shares
	 * of 15 us */
	assert_int_equal(count(h, "<table id=\"breakdown\">"), 1);
	assert_int_equal(count(h, "<tr id=\"cat-"), 5);
	for (int c = 0; c < SS_ADV_NCAT; c++) {
		snprintf(want, sizeof(want), "<tr id=\"cat-%s\">", ss_adv_cat_key(c));
		if (c == SS_ADV_GPU_WAIT || c == SS_ADV_GPU_API || c == SS_ADV_ALLOC)
			assert_null(strstr(h, want));
		else
			assert_non_null(strstr(h, want));
	}
	snprintf(want, sizeof(want), "%s</td><td>7.500us</td><td>50.0%%</td>",
		 ss_adv_cat_name(SS_ADV_BLOCKED));
	if (!strstr(h, want))
		fail_msg("missing %s in:\n%s", want, h);
	assert_non_null(strstr(h, "<th>15.000us</th><th>100%</th>"));
	assert_non_null(strstr(h, "<p id=\"no-findings\">"));
	free(h);
}

static void test_findings_link_rows(void **state)
{
	struct ss_adv_step st[1] = {
		{ .pid = 1, .tid = 1, .step = 0, .begin_ns = 0, .end_ns = 1000,
		  .cat = { [SS_ADV_OPS] = 1000 } },
	};
	struct ss_adv_finding fv[2];
	struct ss_adv_result r;
	char *h;
	const char *a, *b;

	(void)state;
	fill(&r, st, 1);
	r.run.median_step_ns = 1000;
	memset(fv, 0, sizeof(fv));
	fv[0].check = "omp";
	fv[0].save_ns = fv[0].save_lo = 600;
	fv[0].save_hi = 800;
	snprintf(fv[0].title, sizeof(fv[0].title), "team spins <on> 2 CPUs");
	snprintf(fv[0].evidence, sizeof(fv[0].evidence), "60%% waiting & spinning");
	snprintf(fv[0].advice, sizeof(fv[0].advice), "OMP_WAIT_POLICY=passive");
	snprintf(fv[0].how, sizeof(fv[0].how), "the team wait of the median step");
	snprintf(fv[0].funcs[0], 128, "ns::gemm<float>");
	snprintf(fv[0].funcs[1], 128, "gone");
	fv[0].nfuncs = 2;
	fv[1].check = "hooks";
	fv[1].save_ns = fv[1].save_lo = fv[1].save_hi = 100;
	snprintf(fv[1].title, sizeof(fv[1].title), "tiny calls");
	snprintf(fv[1].funcs[0], 128, "add_1");
	fv[1].nfuncs = 1;
	r.found.v = fv;
	r.found.n = 2;
	h = render(&r);
	assert_balanced(h);
	assert_null(strstr(h, "no-findings"));
	a = strstr(h, "<li id=\"finding-1\" class=\"finding\"><b>team spins &lt;on&gt; 2 CPUs</b>");
	b = strstr(h, "<li id=\"finding-2\" class=\"finding\"><b>tiny calls</b>");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_non_null(strstr(h, "Saves about <b>600ns</b> per step (600ns to 800ns), "
			       "60.0% of the median step."));
	assert_non_null(strstr(h, "60% waiting &amp; spinning"));
	/* a name becomes a link to its escaped id; a name without a row
	 * stays text */
	assert_non_null(strstr(h, "<a href=\"#row-ns.3a.3agemm.3cfloat.3e\"><code>"
			       "ns::gemm&lt;float&gt;</code></a>, <code>gone</code></p>"));
	assert_non_null(strstr(h, "<a href=\"#row-add_1\"><code>add_1</code></a>"));
	assert_int_equal(count(h, "<a href="), 2);
	assert_true(ss_adv_html_named(&r, "add_1"));
	assert_true(ss_adv_html_named(&r, "gone"));
	assert_false(ss_adv_html_named(&r, "relu"));
	free(h);
}

static void test_row_ids_distinct(void **state)
{
	const char *names[] = { "a.b", "a.2eb", "a b", "a_b", "a-b", "a::b", "A.b" };
	char ids[7][64];

	(void)state;
	for (int i = 0; i < 7; i++) {
		FILE *f = fmemopen(ids[i], sizeof(ids[i]), "w");
		assert_non_null(f);
		ss_adv_html_row_id(f, names[i]);
		fputc(0, f);
		fclose(f);
		for (const char *p = ids[i]; *p; p++)
			assert_true(strchr("abcdefghijklmnopqrstuvwxyz"
					   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p));
		for (int k = 0; k < i; k++)
			assert_string_not_equal(ids[i], ids[k]);
	}
	assert_string_equal(ids[0], "row-a.2eb");
	assert_string_equal(ids[1], "row-a.2e2eb");
}

static void test_long_run_every_kth(void **state)
{
	size_t n = 1000, i;
	struct ss_adv_step *st = calloc(n, sizeof(*st));
	struct ss_adv_result r;
	char *h;

	(void)state;
	assert_non_null(st);
	for (i = 0; i < n; i++) {
		st[i].step = i;
		st[i].begin_ns = i * 100;
		st[i].end_ns = i * 100 + 50;
		st[i].cat[SS_ADV_OPS] = 50;
	}
	fill(&r, st, n);
	r.run.median_step_ns = 50;
	h = render(&r);
	assert_balanced(h);
	/* ceil(1000 / 240) = 5: steps 0, 5, ..., 995 */
	assert_int_equal(count(h, "<rect class=\"seg\""), 200);
	assert_non_null(strstr(h, "<title>step 995 "));
	assert_null(strstr(h, "<title>step 996 "));
	assert_non_null(strstr(h, "1000 steps: every 5-th is drawn (200 bars)"));
	free(h);
	free(st);
}

static void test_nothing(void **state)
{
	struct ss_adv_result r;
	char *h;

	(void)state;
	fill(&r, NULL, 0);
	h = render(&r);
	assert_balanced(h);
	assert_non_null(strstr(h, "<h2 id=\"overview\">Overview</h2>"));
	assert_non_null(strstr(h, "<p id=\"no-steps\">"));
	assert_non_null(strstr(h, "<p id=\"no-findings\">"));
	assert_null(strstr(h, "<svg"));
	assert_null(strstr(h, "<table"));
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bars_and_table),
		cmocka_unit_test(test_findings_link_rows),
		cmocka_unit_test(test_row_ids_distinct),
		cmocka_unit_test(test_long_run_every_kth),
		cmocka_unit_test(test_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
