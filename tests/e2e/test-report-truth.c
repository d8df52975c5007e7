/*
 * test-report-truth.c - end to end: the report's accounting on
 * trainer-shaped programs (tracker issue 27, "Right answers on real
 * trainers").
 *
 *   test_self_sums: s-trainer-omp (OpenMP matmuls) run with 8 threads on
 *     a machine of fewer cores; the Self % column adds up to 100 (within
 *     0.2) in report text, csv (merged and --threads), json and html, and
 *     the end barrier's wait is not also matmul_forward's self time.
 *   test_html_clipped: the same program recorded in a window of two steps
 *     (main is cut by the window's edges); html has the Clipped column and
 *     prints "-" where the text table does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define INC "-fopenmp -I\"$SS_E2E_SRC/tests/e2e\""
#define WAIT "omp barrier: wait for the team"

/* Build s-trainer-omp and record it with 8 OpenMP threads (config: none
 * or the YAML text `yaml`) into rec. */
static void record_trainer(struct ss_e2e *t, const char *yaml)
{
	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp "
		    "-o p p.c", "gcc's OpenMP (libgomp)", "gcc");
	ss_e2e_build(t, "trainer-omp", INC);
	if (yaml)
		SS_E2E_SH_OK(t, "printf '%s' > c.yaml", yaml);
	SS_E2E_SH_OK(t, "OMP_NUM_THREADS=8 OMP_WAIT_POLICY=passive " SS
		     " record %s -o rec -- ./s-trainer-omp 6",
		     yaml ? "--config c.yaml" : "");
}

/* The sum of the first "N.NN%" cell of each line of `text` that has one
 * (the Self % column of the text table), up to the footer's "Self time
 * total", and how many such lines. */
static double sum_text_pct(const char *text, int *rows)
{
	double sum = 0;
	*rows = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		size_t len = strcspn(l, "\n");
		char buf[512];
		if (!strncmp(l, "Self time total", 15))
			break;
		if (len >= sizeof(buf))
			continue;
		memcpy(buf, l, len);
		buf[len] = 0;
		for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
			size_t tl = strlen(tok);
			char *end;
			double v;
			if (tl < 2 || tok[tl - 1] != '%')
				continue;
			v = strtod(tok, &end);
			if (end == tok + tl - 1) {
				sum += v;
				++*rows;
				break;
			}
		}
	}
	return sum;
}

/* The sum of column `col` (from 0) of the csv rows in `csv`. */
static double sum_csv(const char *csv, int col, int *rows)
{
	double sum = 0;
	const char *l = strchr(csv, '\n');
	*rows = 0;
	while (l && *++l) {
		const char *p = l;
		/* a quoted name holds no comma in these fixtures' rows */
		for (int c = 0; c < col && p; c++) {
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (p) {
			sum += strtod(p, NULL);
			++*rows;
		}
		l = strchr(l, '\n');
	}
	return sum;
}

#define EXPECT_100(t, what, sum, rows)                                         \
	SS_E2E_CHECK(t, (sum) > 99.8 && (sum) < 100.2 && (rows) > 5,          \
		     "%s: Self %% sums to %.4f over %d rows, expected 100 "    \
		     "(within 0.2)", what, (sum), (rows))

static void test_self_sums(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int n;
	double sum;

	record_trainer(t, NULL);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 rec");
	sum = sum_text_pct(t->out, &n);
	EXPECT_100(t, "report (text)", sum, n);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, WAIT) == 1,
		     "report: expected one row for the barrier's wait:\n%s", t->out);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --threads rec");
	sum = sum_text_pct(t->out, &n);
	EXPECT_100(t, "report --threads (text)", sum, n);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv rec");
	sum = sum_csv(t->out, 2, &n);
	EXPECT_100(t, "report --format csv", sum, n);
	{
		struct ss_e2e_row rows[64];
		size_t nr = ss_e2e_report_rows(t->out, rows, 64);
		const struct ss_e2e_row *mm = ss_e2e_row_find(rows, nr, "matmul_forward");
		const struct ss_e2e_row *wait = ss_e2e_row_find(rows, nr, WAIT);
		SS_E2E_CHECK(t, mm && wait, "csv: rows matmul_forward and '%s' "
			     "expected:\n%s", WAIT, t->out);
		/* matmul_forward's 24 calls each start one team (8 threads):
		 * the wait for it is the range's time, not the call's too */
		SS_E2E_CHECK(t, mm->calls == 24 && wait->calls == 24,
			     "calls: matmul_forward %llu, wait %llu, expected 24 "
			     "each", mm->calls, wait->calls);
		SS_E2E_CHECK(t, mm->self + wait->total <= mm->total,
			     "matmul_forward self %llu ns + barrier wait %llu ns > "
			     "its total %llu ns: the wait is counted twice",
			     mm->self, wait->total, mm->total);
	}

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --threads --format csv rec");
	sum = sum_csv(t->out, 5, &n);
	EXPECT_100(t, "report --threads --format csv", sum, n);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format json -o r.json rec");
	{
		cJSON *j = ss_e2e_load_json(t, "r.json"), *r;
		cJSON *rowsj = cJSON_GetObjectItem(j, "rows");
		double total = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "self_total_ns"));
		double ns = 0;
		sum = 0;
		n = 0;
		cJSON_ArrayForEach(r, rowsj) {
			sum += cJSON_GetNumberValue(cJSON_GetObjectItem(r, "self_pct"));
			ns += cJSON_GetNumberValue(cJSON_GetObjectItem(r, "self_ns"));
			n++;
		}
		EXPECT_100(t, "report --format json", sum, n);
		/* exactly: the rows share out the self time total */
		SS_E2E_CHECK(t, ns == total, "json: rows' self_ns add up to %.0f, "
			     "self_total_ns is %.0f", ns, total);
		cJSON_Delete(j);
	}

	SS_E2E_SH_OK(t, SS " html -q -o r.html rec && sed -n "
		     "'/<table id=\"summary\">/,/<\\/table>/p' r.html | "
		     "grep '^<tr><td' | sed 's/<[^>]*>/ /g'");
	sum = sum_text_pct(t->out, &n);
	EXPECT_100(t, "html", sum, n);
	ss_e2e_pass(t);
}

static void test_html_clipped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *text;

	record_trainer(t, "step:\\n  function: train_step\\nschedule:\\n  "
		       "wait: 1\\n  warmup: 1\\n  active: 2\\n  repeat: 1\\n");
	/* main: the window cuts it at both ends, so no call, and no
	 * Avg/Min/Max in either table */
	SS_E2E_SH_OK(t, SS " report -q --limit 0 rec | grep '^main '");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, " -          -          -          0          1") == 1,
		     "report: main expected with Avg, Min, Max '-', 0 calls, 1 "
		     "clipped:\n%s", t->out);
	text = strdup(t->out);
	SS_E2E_SH_OK(t, SS " html -q -o r.html rec && grep -c '<th>Clipped</th>' r.html");
	SS_E2E_CHECK(t, atoi(t->out) == 1, "html: expected one Clipped column "
		     "header, got %s", t->out);
	SS_E2E_SH_OK(t, "grep '^<tr><td class=\"n\">main</td>' r.html");
	SS_E2E_CHECK(t, strstr(t->out, "<td>-</td><td>-</td><td>-</td><td>0</td><td>1</td></tr>"),
		     "html: main expected with Avg, Min, Max '-', 0 calls, 1 "
		     "clipped (text table: %s), got:\n%s", text, t->out);
	SS_E2E_CHECK(t, !strstr(t->out, "0ns"), "html: 0ns in main's row:\n%s", t->out);
	free(text);
	ss_e2e_pass(t);
}

/* gcc at -O0 and -O2: the end barrier's range is gcc's (libgomp) */
#define GCC(fn) SS_E2E__ONE(fn, ss_e2e_gcc_O0, "gcc-O0"), \
		SS_E2E__ONE(fn, ss_e2e_gcc_O2, "gcc-O2")

int main(void)
{
	const struct CMUnitTest tests[] = {
		GCC(test_self_sums),
		GCC(test_html_clipped),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
