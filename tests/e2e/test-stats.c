/*
 * test-stats.c - end to end: `stats: whole_run` and `log.every_n_steps`.
 * s-stats (50 steps of a loop with known calls, recursion, a worker thread
 * that exits before the loop) is recorded with a 3-step window, whole-run
 * stats and a console log every 10 steps, then checked:
 *   - `report --whole-run` has exactly the fixture's call count for every
 *     function (all 50 steps, both threads), and says "whole run: 50 steps";
 *   - train_step's whole-run total (measured at each call, not sampled)
 *     is at least its total in the window report, whose counts are those
 *     of the 3 recorded steps; the table says the other times are sampled;
 *   - a table cut by --limit ends with "N more rows (--limit 0 shows all)";
 *   - the log appears exactly at steps 10, 20, 30, 40, each block with the
 *     exact counts of the steps before it;
 *   - sampled times: s-filter's 100 ms spins get their time, and the step
 *     function its measured total;
 *   - a run without stats: --whole-run refuses it (exit 2, one line).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""

enum { STEPS = 50, EVERY = 10, WIN_FIRST = 10, WIN_END = 13, NFN = 10 };

static const char *const fns[NFN] = { "main", "worker_main", "kernel", "train_loop",
				      "train_step", "load_batch", "forward", "matmul",
				      "rec", "checkpoint" };

/* Calls of fns[f] made by steps 0..k-1 (and outside the loop: main,
 * worker_main, kernel, train_loop; `whole` counts the ones still open at a
 * step boundary, i.e. main and train_loop, as returned). */
static unsigned long calls(int f, unsigned long k, int whole)
{
	switch (f) {
	case 0: return whole;
	case 1: return 1;
	case 2: return 100;
	case 3: return whole;
	case 4: return k;
	case 5: return k;
	case 6: return 2 * k;
	case 7: return 4 * k;
	case 8: return 4 * k;
	default: return k / 5;
	}
}

/* The log blocks in the program's stderr: headers at exactly the expected
 * steps, each with the exact counts. */
static void check_log(struct ss_e2e *t, const char *err)
{
	unsigned long want_step = EVERY;
	int nblocks = 0;
	const char *p = err;
	while ((p = strstr(p, "stepscope: --- step "))) {
		unsigned long step = strtoul(p + 20, NULL, 10);
		if (step != want_step || step >= STEPS) {
			ss_e2e_show_last(t, -1);
			fail_msg("log block for step %lu, expected step %lu (every %d of %d steps)",
				 step, want_step, EVERY, STEPS);
		}
		int seen[NFN] = { 0 };
		const char *l = strchr(p, '\n');
		while (l && !strncmp(l + 1, "stepscope: ", 11) &&
		       strncmp(l + 1, "stepscope: ---", 14)) {
			const char *name = l + 12, *colon = strstr(name, ": avg=");
			const char *cnt = colon ? strstr(colon, "count=") : NULL;
			const char *eol = strchr(name, '\n');
			if (!colon || !cnt || (eol && cnt > eol))
				break; /* another stepscope message */
			for (int f = 0; f < NFN; f++) {
				if (strlen(fns[f]) != (size_t)(colon - name) ||
				    strncmp(name, fns[f], (size_t)(colon - name)))
					continue;
				unsigned long got = strtoul(cnt + 6, NULL, 10);
				unsigned long want = calls(f, step, 0);
				if (got != want) {
					ss_e2e_show_last(t, -1);
					fail_msg("log at step %lu: %s count=%lu, expected %lu", step,
						 fns[f], got, want);
				}
				seen[f] = 1;
			}
			l = eol;
		}
		for (int f = 0; f < NFN; f++) {
			if (!seen[f] && calls(f, step, 0)) {
				ss_e2e_show_last(t, -1);
				fail_msg("log at step %lu: no line for %s", step, fns[f]);
			}
		}
		nblocks++;
		want_step += EVERY;
		p += 20;
	}
	if (nblocks != (STEPS - 1) / EVERY) {
		ss_e2e_show_last(t, -1);
		fail_msg("%d log blocks, expected %d", nblocks, (STEPS - 1) / EVERY);
	}
}

static void test_whole_run(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_row whole[64], win[64];
	size_t nw, nr;

	ss_e2e_build(t, "stats", NULL);
	SS_E2E_SH_OK(t, "printf 'step: {function: train_step}\\nwindow: {start_step: %d, end_step: %d}\\n"
			"stats: whole_run\\nlog: {every_n_steps: %d}\\n' > c.yaml",
		     WIN_FIRST, WIN_END, EVERY);
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-stats %d", STEPS);
	check_log(t, t->err);

	SS_E2E_SH_OK(t, SS " report --whole-run --limit 0 --format csv run");
	nw = ss_e2e_report_rows(t->out, whole, 64);
	for (int f = 0; f < NFN; f++) {
		const struct ss_e2e_row *r = ss_e2e_row_find(whole, nw, fns[f]);
		if (!r || r->calls != calls(f, STEPS, 1)) {
			ss_e2e_show_last(t, 0);
			fail_msg("whole run: %s called %llu times, expected %lu", fns[f],
				 r ? r->calls : 0, calls(f, STEPS, 1));
		}
	}
	if (nw != NFN) {
		ss_e2e_show_last(t, 0);
		fail_msg("whole run: %zu rows, expected %d", nw, NFN);
	}

	SS_E2E_SH_OK(t, SS " report --limit 0 --format csv run");
	nr = ss_e2e_report_rows(t->out, win, 64);
	const struct ss_e2e_row *ts = ss_e2e_row_find(win, nr, "train_step");
	if (!ts || ts->calls != WIN_END - WIN_FIRST) {
		ss_e2e_show_last(t, 0);
		fail_msg("window: train_step called %llu times, expected %d", ts ? ts->calls : 0,
			 WIN_END - WIN_FIRST);
	}
	/* the step function's whole-run total is measured, not sampled: it
	 * holds the window's 3 steps */
	const struct ss_e2e_row *wts = ss_e2e_row_find(whole, nw, "train_step");
	if (!wts || wts->total < ts->total) {
		ss_e2e_show_last(t, 0);
		fail_msg("train_step: window total %llu ns above the whole-run total %llu ns",
			 ts->total, wts ? wts->total : 0);
	}

	SS_E2E_SH_OK(t, SS " report --whole-run run");
	if (!strstr(t->out, "whole run: 50 steps (1 process, 2 threads)\n") ||
	    !strstr(t->out, "\ntimes: sampled estimates, one look at the stacks every 1.000ms "
			    "(calls are exact; the step function's total is measured)\n")) {
		ss_e2e_show_last(t, 0);
		fail_msg("table footer: expected 'whole run: 50 steps (1 process, 2 threads)' "
			 "and the line on sampled times");
	}
	/* a table cut by --limit says how many rows it left out (issue 40) */
	SS_E2E_SH_OK(t, SS " report --whole-run --limit 4 run");
	if (!strstr(t->out, "\n6 more rows (--limit 0 shows all)\nSelf time total: ")) {
		ss_e2e_show_last(t, 0);
		fail_msg("--whole-run --limit 4: expected '6 more rows (--limit 0 shows all)' "
			 "under the table of %d rows", NFN);
	}
	SS_E2E_SH_OK(t, SS " report --limit %zu run", nr - 1);
	if (!strstr(t->out, "\n1 more row (--limit 0 shows all)\nSelf time total: ")) {
		ss_e2e_show_last(t, 0);
		fail_msg("--limit %zu: expected '1 more row (--limit 0 shows all)' under the "
			 "table of %zu rows", nr - 1, nr);
	}
	SS_E2E_SH_OK(t, SS " report --limit %zu run && " SS " report --whole-run --limit 0 run",
		     nr);
	if (strstr(t->out, "more row")) {
		ss_e2e_show_last(t, 0);
		fail_msg("a table with all its rows says nothing of more rows");
	}
	SS_E2E_SH_OK(t, SS " report --whole-run --threads --format json run");
	if (!strstr(t->out, "\"thread\":\"stats-worker\"") || !strstr(t->out, "\"min_ns\":null")) {
		ss_e2e_show_last(t, 0);
		fail_msg("JSON: expected a row of thread stats-worker and min_ns null");
	}
	ss_e2e_pass(t);
}

/* Sampled times land on the right functions: s-filter, 4 steps of op_long
 * and helper_caller spinning 100 ms each (wall clock), 1000 tiny calls;
 * stats only (the window never opens).  A sample is 1 ms: each spinning
 * function holds ~400 samples, so +-35% leaves room for a loaded machine
 * (a late sampler charges its whole interval to the stack it finds). */
static void test_sampled_times(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_row rows[32];
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, "printf 'step: {function: train_step}\\nwindow: {start_step: 1000, "
			"end_step: 1001}\\nstats: whole_run\\n' > c.yaml");
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-filter 4 100 1000");
	SS_E2E_SH_OK(t, SS " report --whole-run --limit 0 --format csv run");
	size_t n = ss_e2e_report_rows(t->out, rows, 32);
	const struct ss_e2e_row *op = ss_e2e_row_find(rows, n, "op_long");
	const struct ss_e2e_row *hc = ss_e2e_row_find(rows, n, "helper_caller");
	const struct ss_e2e_row *ts = ss_e2e_row_find(rows, n, "train_step");
	const struct ss_e2e_row *ti = ss_e2e_row_find(rows, n, "tiny");
	SS_E2E_CHECK(t, op && hc && ts && ti && op->calls == 4 && hc->calls == 4 && ts->calls == 4 &&
				ti->calls == 4000,
		     "calls: expected op_long, helper_caller, train_step 4 and tiny 4000");
	const unsigned long long ms = 1000000;
	SS_E2E_CHECK(t, op->total >= 260 * ms && op->total <= 540 * ms && op->self * 10 >= op->total * 9,
		     "op_long: total %llu ns, self %llu ns; expected ~400 ms, nearly all self",
		     op->total, op->self);
	SS_E2E_CHECK(t, hc->total >= 260 * ms && hc->total <= 540 * ms,
		     "helper_caller: total %llu ns, expected ~400 ms", hc->total);
	/* measured: at least the 8 spins; its self time (sampled) is tiny */
	SS_E2E_CHECK(t, ts->total >= 800 * ms && ts->self * 5 < ts->total,
		     "train_step: total %llu ns (expected >= 800 ms), self %llu ns", ts->total, ts->self);
	ss_e2e_pass(t);
}

static void test_no_stats(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "stats", NULL);
	SS_E2E_SH_OK(t, "printf 'step: {function: train_step}\\nwindow: {start_step: 2, end_step: 3}\\n' > c.yaml");
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-stats 5");
	if (strstr(t->err, "stepscope: ---")) {
		ss_e2e_show_last(t, 0);
		fail_msg("a log block without log.every_n_steps");
	}
	int st = ss_e2e_sh(t, SS " report --whole-run run");
	if (st != 2 || !strstr(t->err, "run: no whole-run statistics in this run "
					"(record it with 'stats: whole_run')")) {
		ss_e2e_show_last(t, st);
		fail_msg("report --whole-run of a run without stats: expected exit 2 and the message");
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_whole_run),
		SS_E2E_TEST(test_sampled_times),
		SS_E2E_TEST(test_no_stats),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
