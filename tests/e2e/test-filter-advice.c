/*
 * test-filter-advice.c - end to end: `stepscope filter` judges functions
 * on their time without stepscope's calibrated cost (tracker issue 27).
 *   - s-filter with 300 000 calls of a 2 ns helper a step: the helper is
 *     proposed, whatever part of the hooks its measured calls hold;
 *   - s-autodiff (an autodiff library, 6 x NODES tiny calls a step, two
 *     thirds of them an inline helper): the documented workflow, followed literally
 *     (record a step, `filter -o FILE`, rebuild with
 *     STEPSCOPE_EXCLUDE_FILE, record again), must leave only the 68 calls
 *     of the step's few big functions, whose calibrated cost is at most 5%
 *     of the step's own time: counted, not timed (tests/bench/run-bench.sh
 *     times it); with a lower --min-calls, sgd (part of sgd_update's name)
 *     is proposed as runtime-only, and filter says why a rebuild cannot
 *     take it;
 *   - the Bytes % column sums to 100;
 *   - s-filter-cost (issue 40 item 3): a dot product of 192 dependent
 *     adds is kept (its Own/call over a recorded call's cost, its Own % at
 *     or over --max-share) and a one-load accessor is proposed; the table
 *     shows the judged Own/call and Own % and the fastest call, the
 *     footer states the rule in them and every row obeys it; the dot product's fastest recorded call is at least half
 *     what the fixture itself timed for the same code without hooks (the
 *     fastest of 20 batches: load only lengthens either).  Before the
 *     EXIT's clock read was fenced it measured 20 ns for 33 ns of work
 *     and was proposed under a footer that said "under 5.0% of the time"
 *     beside its 11.5% of the self time.  Costs by construction, load-
 *     proof: 30 ms of spin, 200 000 dot products (tens of ns each, over
 *     5% of the step by 2x or more), 30 000 loads (under 1% at 10 ns of
 *     error each).
 * What is proposed follows a function's own time per call against a
 * recorded call's cost, or its share of the step's time without the
 * hooks (calls x its fastest call less the hooks inside it).  The tiny calls' estimate moves with the load
 * (a busy machine measured node_backward at 122 ns a call and rightly
 * kept it: issue 37), so the steps hold real work of a fixed time, spun
 * on the clock (s-filter's SPIN_MS, s-autodiff's SPIN_MS), large enough
 * that the tiny functions stay under 5% even at tens of ns of error a
 * call: the tiny ones are 2..20 ns of work, a step 200 ms of spin.
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
#define CFG "printf 'step: {function: train_step}\\nwindow: {start_step: 1, end_step: 2}\\n' > c.yaml"
#define NODES 125000
/* the step's spin: with 300 000 (s-filter) or 750 000 (s-autodiff) tiny
 * calls a step, an error of 30 ns a call in a tiny function's time
 * without the hooks stays under 5% of the step */
#define SPIN_MS 200

/* The run's calibrated cost of a recorded call, from report's JSON. */
static unsigned long long pair_ns(struct ss_e2e *t, const char *dir)
{
	SS_E2E_SH_OK(t, SS " report --format json %s", dir);
	const char *p = strstr(t->out, "\"overhead\":{\"pair_ns\":");
	SS_E2E_CHECK(t, p, "report JSON of %s: no overhead.pair_ns", dir);
	return strtoull(p + strlen("\"overhead\":{\"pair_ns\":"), NULL, 10);
}

/* Recorded calls of run dir's one step, and train_step's total (ns). */
static void step_calls(struct ss_e2e *t, const char *dir, unsigned long long *calls,
		       unsigned long long *step_ns)
{
	struct ss_e2e_row rows[64];
	SS_E2E_SH_OK(t, SS " report --limit 0 --format csv %s", dir);
	size_t n = ss_e2e_report_rows(t->out, rows, 64);
	const struct ss_e2e_row *st = ss_e2e_row_find(rows, n, "train_step");
	SS_E2E_CHECK(t, st && st->calls == 1, "%s: expected one recorded train_step", dir);
	*calls = 0;
	for (size_t i = 0; i < n; i++)
		*calls += rows[i].calls;
	*step_ns = st->total;
}

static void test_helper_2ns(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, CFG);
	/* op_long and helper_caller spin 100 ms each: 300 000 x 30 ns of
	 * error in tiny's estimate would still be under 5% of the step */
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-filter 2 100 300000");
	SS_E2E_SH_OK(t, SS " filter run");
	SS_E2E_CHECK(t, strstr(t->out, "\nexclude: 1 function, ") && strstr(t->out, "\n  tiny\n"),
		     "filter: expected tiny proposed, got:\n%s", t->out);
	SS_E2E_CHECK(t, strstr(t->out, "\nwithout them: 3 calls, "),
		     "filter: expected 3 calls left, got:\n%s", t->out);
	ss_e2e_pass(t);
}

static void test_workflow(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	unsigned long long calls0, step0, calls1, step1, pair;
	ss_e2e_build(t, "autodiff", NULL);
	SS_E2E_SH_OK(t, CFG);
	/* 1. first run (whether report warns depends on the machine's load:
	 * the count is checked) */
	SS_E2E_SH_OK(t, SS " record -o run1 -c c.yaml -- ./s-autodiff 2 %d 2000 %d", NODES, SPIN_MS);
	step_calls(t, "run1", &calls0, &step0);
	SS_E2E_CHECK(t, calls0 == 6ull * NODES + 68, "first run: %llu calls in the step, expected %llu",
		     calls0, 6ull * NODES + 68);
	/* 2. stepscope filter -o exclude.txt */
	SS_E2E_SH_OK(t, SS " filter run1 -o exclude.txt");
	SS_E2E_CHECK(t, strstr(t->out, "\n  vdata\n") && strstr(t->out, "\n  value_new\n") &&
				strstr(t->out, "\n  node_backward\n"),
		     "filter: expected vdata, value_new and node_backward proposed:\n%s", t->out);
	/* the same without the spin: the tiny calls are then most of the
	 * step's own time (22-25% Own % each), yet each does a few ns
	 * against a recorded call's 30: proposed by Own/call (the share
	 * alone kept them, and the rebuilt trainer ran 2.1x plain) */
	SS_E2E_SH_OK(t, SS " record -o run0 -c c.yaml -- ./s-autodiff 2 %d 2000", NODES);
	SS_E2E_SH_OK(t, SS " filter run0");
	SS_E2E_CHECK(t, strstr(t->out, "\n  vdata\n") && strstr(t->out, "\n  value_new\n") &&
				strstr(t->out, "\n  node_backward\n"),
		     "filter, steps without the spin: expected vdata, value_new and node_backward "
		     "proposed:\n%s", t->out);
	/* sgd (64 calls a step) with a lower --min-calls: gcc would also
	 * leave out sgd_update; said, with the way out, and runtime-only */
	SS_E2E_SH_OK(t, SS " filter --min-calls 60 run1 -o low.txt");
	SS_E2E_CHECK(t, strstr(t->out, "\nruntime only: sgd (64 calls): gcc matches parts of names "
				       "and would also leave out sgd_update, "),
		     "filter --min-calls 60: expected the runtime-only line for sgd:\n%s", t->out);
	SS_E2E_SH_OK(t, "grep -c '^runtime-only sgd  # part of sgd_update$' low.txt");
	/* 3. rebuild with the list, 4. record again */
	SS_E2E_SH_OK(t, "STEPSCOPE_EXCLUDE_FILE=exclude.txt \"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s "
			"-pthread -I\"$SS_E2E_SRC/tests/e2e\" -o s-autodiff-ex "
			"\"$SS_E2E_SRC/tests/e2e/s-autodiff.c\"", t->v->cc, t->v->opt);
	if (strcmp(t->v->cc, "gcc")) {
		/* clang cannot leave functions out at build time: the runtime
		 * does, and says so; the count below is gcc's */
		SS_E2E_CHECK(t, strstr(t->err, "record with --set filter.exclude_file=exclude.txt"),
			     "clang build: expected the advice to apply the file at run time:\n%s",
			     t->err);
		ss_e2e_pass(t);
		return;
	}
	SS_E2E_SH_OK(t, SS " record -o run2 -c c.yaml -- ./s-autodiff-ex 2 %d 2000 %d", NODES,
		     SPIN_MS);
	step_calls(t, "run2", &calls1, &step1);
	/* left: train_step, forward, backward, sgd_update, 64 x sgd */
	SS_E2E_CHECK(t, calls1 == 68, "rebuilt: %llu calls in the step, expected 68", calls1);
	pair = pair_ns(t, "run2");
	/* the hooks of a step's calls, at most 5% of the step's own time */
	unsigned long long hooks = calls1 * pair, own = step1 > hooks ? step1 - hooks : 0;
	SS_E2E_CHECK(t, hooks * 20 <= own,
		     "rebuilt: %llu calls in the step x %llu ns = %llu ns of hooks, over 5%% of the "
		     "step's own %llu ns", calls1, pair, hooks, own);
	ss_e2e_pass(t);
}

/* "51ns", "1.024ms"... as ss_agg_fmt_time writes it, in ns; -1 for "-" */
static double fmt_ns(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return -1;
	return !strcmp(end, "ns") ? v : !strcmp(end, "us") ? v * 1e3 : !strcmp(end, "ms") ? v * 1e6
	       : !strcmp(end, "s") ? v * 1e9 : -1;
}

struct filter_row {
	char name[64], per[32], fastest[32], own_call[32], yes[8];
	unsigned long long calls;
	double time, own, ev, bytes;
};

/* The rows of filter's table in t->out (at most max), its header's
 * columns checked. */
static int filter_rows(struct ss_e2e *t, struct filter_row *rows, int max)
{
	SS_E2E_CHECK(t, strstr(t->out, "\nName ") && strstr(t->out, " Per call    Fastest   Own/call"
								     "   Time %    Own % Events %  Bytes %"),
		     "filter: expected the columns Per call, Fastest, Own/call, Time %%, Own %%, "
		     "got:\n%s", t->out);
	int n = 0;
	char *text = strdup(t->out), *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save)) {
		struct filter_row *r = &rows[n];
		char ov[32];
		r->yes[0] = 0;
		if (sscanf(l, "%63s %llu %31s %31s %31s %lf%% %lf%% %lf%% %lf%% %31s %7s", r->name,
			   &r->calls, r->per, r->fastest, r->own_call, &r->time, &r->own, &r->ev,
			   &r->bytes, ov, r->yes) >= 10)
			n++;
	}
	free(text);
	return n;
}

static void test_judged(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct filter_row rows[16];
	ss_e2e_build(t, "filter-cost", NULL);
	SS_E2E_SH_OK(t, CFG);
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-filter-cost 2 200000 30000 30");
	const char *p = strstr(t->out, "plain dot64 ");
	SS_E2E_CHECK(t, p, "s-filter-cost: expected 'plain dot64 N ns', got:\n%s", t->out);
	double plain = strtod(p + strlen("plain dot64 "), NULL);
	SS_E2E_SH_OK(t, SS " filter run");
	int n = filter_rows(t, rows, 16);
	/* the footer: the rule, in the table's columns, with the run's cost
	 * of one recorded call */
	const char *h = strstr(t->out, " calls (recorded steps), ");
	unsigned long long pair = h ? strtoull(h + strlen(" calls (recorded steps), "), NULL, 10) : 0;
	char rule[160];
	snprintf(rule, sizeof(rule), "(Calls >= 1000, Per call <= 1000 ns, and Own/call < %llu ns "
		 "(one recorded call) or Own %% < 5.0)\n", pair);
	SS_E2E_CHECK(t, pair > 0 && strstr(t->out, rule) &&
				strstr(t->out, "\nOwn/call: Fastest - ") &&
				strstr(t->out, "; Own %: calls x Own/call, of the "),
		     "filter: expected the footer to state the rule in Calls, Per call, Own/call and "
		     "Own %% (\"%s\"), and what they are:\n%s", rule, t->out);
	const struct filter_row *dot = NULL, *get = NULL;
	for (int i = 0; i < n; i++) {
		const struct filter_row *r = &rows[i];
		double per = fmt_ns(r->per), own_call = fmt_ns(r->own_call);
		int eligible = r->calls >= 1000 && per >= 0 && per <= 1000 &&
			       ((own_call >= 0 && own_call < (double)pair) || r->own < 5.0);
		/* every row obeys the stated rule, both ways (all names here
		 * are plain: none is kept for its name) */
		SS_E2E_CHECK(t, (strcmp(r->yes, "yes") == 0) == eligible,
			     "filter: %s (calls %llu, Per call %s, Own/call %s, Own %% %.2f) %s, against "
			     "the footer's rule:\n%s", r->name, r->calls, r->per, r->own_call, r->own,
			     eligible ? "not proposed" : "proposed", t->out);
		if (!strcmp(r->name, "dot64"))
			dot = r;
		if (!strcmp(r->name, "get"))
			get = r;
	}
	SS_E2E_CHECK(t, dot && get && dot->calls == 200000 && get->calls == 30000,
		     "filter: expected rows dot64 (200000 calls) and get (30000):\n%s", t->out);
	SS_E2E_CHECK(t, !strcmp(get->yes, "yes") && strcmp(dot->yes, "yes") && dot->own >= 5.0 &&
				fmt_ns(dot->own_call) >= (double)pair,
		     "filter: expected get proposed, dot64 (192 dependent adds) kept with Own/call "
		     "over one recorded call and Own %% >= 5:\n%s", t->out);
	/* the fastest call holds the call's work: at least half the time the
	 * fixture measured for the same code without hooks */
	double fast = fmt_ns(dot->fastest);
	SS_E2E_CHECK(t, fast >= 0.5 * plain,
		     "dot64's fastest recorded call %s, under half its work without hooks (%.0f ns "
		     "a call, timed by the fixture):\n%s", dot->fastest, plain, t->out);
	ss_e2e_pass(t);
}

static void test_bytes_sum(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "autodiff", NULL);
	SS_E2E_SH_OK(t, CFG);
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-autodiff 3 20000 2000");
	SS_E2E_SH_OK(t, SS " filter --limit 0 run");
	double sum = 0;
	int rows = 0;
	char *text = strdup(t->out), *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[64], per[32], fast[32], ownc[32];
		unsigned long long calls;
		double tp, own, ev, by;
		if (sscanf(l, "%63s %llu %31s %31s %31s %lf%% %lf%% %lf%% %lf%%", name, &calls, per,
			   fast, ownc, &tp, &own, &ev, &by) == 9) {
			sum += by;
			rows++;
		}
	}
	free(text);
	SS_E2E_CHECK(t, rows >= 8 && sum > 99.9 && sum < 100.1,
		     "Bytes %% of %d rows sums to %.2f, expected 100 (+-0.1):\n%s", rows, sum, t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_helper_2ns),
		SS_E2E_VARIANTS(test_workflow),
		SS_E2E_VARIANTS(test_bytes_sum),
		SS_E2E_VARIANTS(test_judged),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
