/*
 * test-filter.c - end to end: the run-time filters (filter.exclude,
 * filter.include, filter.max_depth, filter.min_duration_us,
 * filter.exclude_file), the overhead line of `report`, `stepscope filter`
 * and the rebuild with its list (STEPSCOPE_EXCLUDE_FILE).
 *
 * s-filter runs 2 steps of train_step -> op_long, helper_caller -> tiny x N;
 * step 1 is recorded.  Every check is on exact call counts of the report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define CFG "printf 'step: {function: train_step}\\nwindow: {start_step: 1, end_step: 2}\\n' > c.yaml"
#define NTINY 100000

static unsigned long long calls_of(const struct ss_e2e_row *rows, size_t n, const char *name)
{
	const struct ss_e2e_row *r = ss_e2e_row_find(rows, n, name);
	return r ? r->calls : 0;
}

/* KB of the trace files of run `dir` that hold data: 4 KB pages with a
 * byte that is not zero.  Not `du`: the disk a trace takes also counts the
 * chunks the runtime reserved ahead (a 4 MB EVENTS chunk is fallocated
 * whole, the ring and pool chunks are paged in) and gives back at exit only
 * when it can without waiting (a ring whose background copier holds its
 * lock at that moment keeps them), so under load a trace of a few events
 * can take megabytes.  Pages never written, or given back, read as zeros;
 * events recorded and kept are not zero (their kind is in every word). */
static unsigned long long data_kb(struct ss_e2e *t, const char *dir)
{
	char path[8192];
	static unsigned char page[4096];
	unsigned long long pages = 0;
	snprintf(path, sizeof(path), "%s/%s", t->dir, dir);
	DIR *d = opendir(path);
	SS_E2E_CHECK(t, d, "%s: cannot open the run directory", path);
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < 8 || strcmp(e->d_name + len - 8, ".sstrace"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", t->dir, dir, e->d_name);
		int fd = open(path, O_RDONLY);
		SS_E2E_CHECK(t, fd >= 0, "%s: cannot open", path);
		ssize_t n;
		while ((n = read(fd, page, sizeof(page))) > 0) {
			for (ssize_t i = 0; i < n; i++) {
				if (page[i]) {
					pages++;
					break;
				}
			}
		}
		close(fd);
	}
	closedir(d);
	return pages * 4;
}

/* The report of run `dir` has exactly these counts for the fixture's
 * step functions (train_step, op_long, helper_caller, tiny). */
static void expect_counts(struct ss_e2e *t, const char *dir, unsigned long long step,
			  unsigned long long op, unsigned long long caller,
			  unsigned long long tiny)
{
	struct ss_e2e_row rows[32];
	const char *names[4] = { "train_step", "op_long", "helper_caller", "tiny" };
	unsigned long long want[4] = { step, op, caller, tiny };
	SS_E2E_SH_OK(t, SS " report --limit 0 --format csv %s", dir);
	size_t n = ss_e2e_report_rows(t->out, rows, 32);
	for (int i = 0; i < 4; i++) {
		unsigned long long got = calls_of(rows, n, names[i]);
		if (got != want[i]) {
			ss_e2e_show_last(t, 0);
			SS_E2E_FAIL(t, "%s: %s called %llu times, expected %llu", dir, names[i],
				    got, want[i]);
		}
	}
}

/* The overhead line, the JSON figure and --compensate on run `dir` of
 * NTINY tiny calls: every total loses pair_ns per recorded call below it,
 * every self pair_ns per direct callee. */
static void check_overhead(struct ss_e2e *t, const char *dir)
{
	struct ss_e2e_row m[32], c[32];
	size_t nm, nc;
	unsigned long long pair;
	const char *p;

	SS_E2E_SH_OK(t, SS " report --format json %s", dir);
	p = strstr(t->out, "\"overhead\":{\"pair_ns\":");
	SS_E2E_CHECK(t, p, "report JSON: no overhead.pair_ns");
	pair = strtoull(p + strlen("\"overhead\":{\"pair_ns\":"), NULL, 10);
	SS_E2E_CHECK(t, pair > 0 && pair < 100000, "pair_ns %llu out of range", pair);
	SS_E2E_SH_OK(t, SS " report %s", dir);
	SS_E2E_CHECK(t, strstr(t->out, "stepscope overhead: ") &&
				strstr(t->out, "% of recorded time (100003 calls x "),
		     "report: no 'stepscope overhead: N%% of recorded time (100003 calls x P ns)' line");
	SS_E2E_SH_OK(t, SS " report --limit 0 --format csv %s", dir);
	nm = ss_e2e_report_rows(t->out, m, 32);
	SS_E2E_SH_OK(t, SS " report --limit 0 --format csv --compensate %s", dir);
	nc = ss_e2e_report_rows(t->out, c, 32);
	const char *names[3] = { "train_step", "helper_caller", "tiny" };
	unsigned long long below[3] = { NTINY + 2, NTINY, 0 };
	for (int i = 0; i < 3; i++) {
		const struct ss_e2e_row *a = ss_e2e_row_find(m, nm, names[i]);
		const struct ss_e2e_row *b = ss_e2e_row_find(c, nc, names[i]);
		SS_E2E_CHECK(t, a && b, "no row %s", names[i]);
		unsigned long long want = a->total > below[i] * pair ? a->total - below[i] * pair : 0;
		SS_E2E_CHECK(t, b->total == want, "--compensate: %s total %llu, expected %llu - %llu * %llu",
			     names[i], b->total, a->total, below[i], pair);
	}
}

static void test_exclude(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, CFG);
	SS_E2E_SH_OK(t, SS " record -o all -c c.yaml -- ./s-filter 2 2 %d", NTINY);
	expect_counts(t, "all", 1, 1, 1, NTINY);
	check_overhead(t, "all");
	SS_E2E_SH_OK(t, SS " record -o ex -c c.yaml --set filter.exclude=tiny -- ./s-filter 2 2 %d",
		     NTINY);
	expect_counts(t, "ex", 1, 1, 1, 0);
	/* a glob, in a YAML list; op_long stays */
	SS_E2E_SH_OK(t, "cp c.yaml g.yaml && printf 'filter:\\n  exclude: [\"ti*\", nothing_here]\\n' >> g.yaml");
	SS_E2E_SH_OK(t, SS " record -o glob -c g.yaml -- ./s-filter 2 2 %d", NTINY);
	expect_counts(t, "glob", 1, 1, 1, 0);
	/* two names through --set, separated by a space */
	SS_E2E_SH_OK(t, SS " record -o two -c c.yaml --set 'filter.exclude=tiny op_long' -- ./s-filter 2 2 %d",
		     NTINY);
	expect_counts(t, "two", 1, 0, 1, 0);
	/* whole-run counts: an excluded function is counted, not timed */
	SS_E2E_SH_OK(t, "cp c.yaml w.yaml && printf 'stats: whole_run\\n' >> w.yaml");
	SS_E2E_SH_OK(t, SS " record -o whole -c w.yaml --set filter.exclude=tiny -- ./s-filter 2 2 %d",
		     NTINY);
	SS_E2E_SH_OK(t, SS " report --whole-run --limit 0 --format csv whole");
	{
		struct ss_e2e_row rows[32];
		size_t n = ss_e2e_report_rows(t->out, rows, 32);
		const struct ss_e2e_row *tiny = ss_e2e_row_find(rows, n, "tiny");
		SS_E2E_CHECK(t, tiny && tiny->calls == 2 * NTINY && tiny->total == 0,
			     "whole run: tiny %llu calls, %llu ns; expected %d calls, 0 ns",
			     tiny ? tiny->calls : 0, tiny ? tiny->total : 0, 2 * NTINY);
		SS_E2E_CHECK(t, calls_of(rows, n, "helper_caller") == 2 &&
					calls_of(rows, n, "train_step") == 2,
			     "whole run: helper_caller and train_step should have 2 calls");
	}
	/* the filter keeps the raw trace small: 2 * 10^5 events fewer */
	unsigned long long all_kb = data_kb(t, "all"), ex_kb = data_kb(t, "ex");
	SS_E2E_CHECK(t, all_kb > 1000 && ex_kb < 1000,
		     "trace data: %llu KB with tiny, %llu KB with tiny excluded; expected > 1000 and < 1000",
		     all_kb, ex_kb);
	ss_e2e_pass(t);
}

static void test_min_duration(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, CFG);
	/* op_long and helper_caller spin 150 ms: far above 100 ms, and tiny
	 * far below, even on a loaded machine */
	SS_E2E_SH_OK(t, SS " record -o dur -c c.yaml --set filter.min_duration_us=100000 -- ./s-filter 2 150 %d",
		     NTINY);
	expect_counts(t, "dur", 1, 1, 1, 0);
	/* the calls taken back never reach the file */
	unsigned long long kb = data_kb(t, "dur");
	SS_E2E_CHECK(t, kb < 1000, "trace data: %llu KB with tiny taken back; expected < 1000", kb);
	ss_e2e_pass(t);
}

static void test_include_depth(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, CFG);
	SS_E2E_SH_OK(t, SS " record -o inc -c c.yaml --set filter.include=helper_caller -- ./s-filter 2 2 1000");
	expect_counts(t, "inc", 0, 0, 1, 1000);
	/* depth 0 is train_step: 2 keeps train_step and its callees */
	SS_E2E_SH_OK(t, SS " record -o depth -c c.yaml --set filter.max_depth=2 -- ./s-filter 2 2 1000");
	expect_counts(t, "depth", 1, 1, 1, 0);
	SS_E2E_SH_OK(t, SS " record -o depth1 -c c.yaml --set filter.max_depth=1 -- ./s-filter 2 2 1000");
	expect_counts(t, "depth1", 1, 0, 0, 0);
	ss_e2e_pass(t);
}

/* `stepscope filter` proposes tiny and nothing else; its list, taken back
 * by stepscope-cc (gcc) or by the runtime (clang), leaves tiny out. */
static void test_filter_cmd(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, CFG);
	/* op_long spins 50 ms: tiny's own time (10^5 calls of a few ns, each
	 * measured with part of the hooks' cost) stays a small share of the
	 * step even on a loaded machine */
	SS_E2E_SH_OK(t, SS " record -o all -c c.yaml -- ./s-filter 2 50 %d", NTINY);
	SS_E2E_SH_OK(t, SS " filter -o ex.txt all");
	SS_E2E_CHECK(t, strstr(t->out, "\nexclude: 1 function, ") && strstr(t->out, "\n  tiny\n"),
		     "filter: expected exactly tiny proposed, got:\n%s", t->out);
	SS_E2E_SH_OK(t, "grep -v '^#' ex.txt");
	SS_E2E_CHECK(t, !strcmp(t->out, "tiny\n"), "ex.txt: expected the one line 'tiny', got '%s'",
		     t->out);
	/* the rebuild */
	SS_E2E_SH_OK(t, "STEPSCOPE_EXCLUDE_FILE=ex.txt \"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s "
			"-pthread -o s-filter-ex \"$SS_E2E_SRC/tests/e2e/s-filter.c\"",
		     t->v->cc, t->v->opt);
	if (!strcmp(t->v->cc, "gcc")) {
		SS_E2E_SH_OK(t, SS " record -o re -c c.yaml -- ./s-filter-ex 2 2 %d", NTINY);
	} else {
		SS_E2E_CHECK(t, strstr(t->err, "record with --set filter.exclude_file=ex.txt"),
			     "clang build: expected the advice to apply the file at run time");
		SS_E2E_SH_OK(t, SS " record -o re -c c.yaml --set filter.exclude_file=ex.txt "
				"-- ./s-filter-ex 2 2 %d", NTINY);
	}
	expect_counts(t, "re", 1, 1, 1, 0);
	/* nothing to exclude (tiny called 10 times, under --min-calls): no
	 * advice to rebuild, and an empty list written */
	SS_E2E_SH_OK(t, SS " record -o few -c c.yaml -- ./s-filter 2 2 10");
	SS_E2E_SH_OK(t, SS " filter -o none.txt few");
	SS_E2E_CHECK(t, strstr(t->out, "\nexclude: 0 functions, ") &&
				strstr(t->out, "\nnothing to exclude: ") && !strstr(t->out, "without them") &&
				!strstr(t->err, "rebuild") &&
				strstr(t->err, "wrote none.txt, an empty list (nothing to exclude)"),
		     "filter with nothing to exclude: expected 'nothing to exclude' and no rebuild "
		     "advice, got:\n%s%s", t->out, t->err);
	SS_E2E_SH_OK(t, "cat none.txt");
	SS_E2E_CHECK(t, !strstr(t->out, "rebuild") && strstr(t->out, ": nothing to exclude") &&
				!ss_e2e_lines_with(t->out, "tiny"),
		     "none.txt: expected one comment saying nothing to exclude, got '%s'", t->out);
	/* a run with only whole-run counts (nothing recorded) */
	SS_E2E_SH_OK(t, "printf 'step: {function: train_step}\\nwindow: {start_step: 5, end_step: 6}\\n"
			"stats: whole_run\\n' > s.yaml");
	SS_E2E_SH_OK(t, SS " record -o stats -c s.yaml -- ./s-filter 2 50 %d", NTINY);
	SS_E2E_SH_OK(t, SS " filter stats");
	SS_E2E_CHECK(t, strstr(t->out, "200008 calls (whole run)") &&
				strstr(t->out, "\nexclude: 1 function, ") && strstr(t->out, "\n  tiny\n"),
		     "filter of a stats run: expected tiny of 200008 calls, got:\n%s", t->out);
	/* a missing file is refused before main, naming the key */
	int st = ss_e2e_sh(t, SS " record -o bad -c c.yaml --set filter.exclude_file=nope.txt -- ./s-filter 2 2 1");
	SS_E2E_CHECK(t, st == 2 && ss_e2e_lines_with(t->err, "") == 1 &&
			     strstr(t->err, "filter.exclude_file=nope.txt: cannot read nope.txt: "),
		     "a missing exclude file: expected a one-line refusal, status 2; got %d:\n%s", st,
		     t->err);
	SS_E2E_CHECK(t, ss_e2e_sh(t, "test -e bad") != 0, "a refused run left a directory");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_exclude),
		SS_E2E_VARIANTS(test_min_duration),
		SS_E2E_VARIANTS(test_include_depth),
		SS_E2E_VARIANTS(test_filter_cmd),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
