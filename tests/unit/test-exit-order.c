/*
 * test-exit-order.c - a function's fastest call (Min, and `stepscope
 * filter`'s Fastest) in a trace whose EXITs are read in order only one in
 * SS_META_EXIT_ORDER's `every` (runtime/internal.h ss_clock_exit, issue
 * 46): a call whose ENTER and EXIT times are even was read after a fence
 * at both ends, an odd time unfenced (an EXIT possibly before the call's
 * last instructions, an ENTER before the previous call's).  On synthetic
 * traces with exact times (trace-writer.h), written compact (version 2
 * blocks):
 *   - with the record, Min is the fastest call with both times even,
 *     though calls with an odd EXIT or an odd ENTER measured shorter; the
 *     totals count every call;
 *   - a function with no ordered call keeps its fastest call as Min;
 *   - an unordered call shorter than the fastest ordered one by more than
 *     an EXIT can be read early (SS_AGG_EARLY_NS) was truly shorter: it is
 *     Min, so Min never lies above a call's real time (a clone run once
 *     ordered for 3.5 ms and once unordered for 20 us had Avg below Min);
 *   - without the record (an older trace: every EXIT was fenced), Min is
 *     the fastest call whatever its parity;
 *   - a second thread whose fastest call is odd does not take the merged
 *     row's Min from the first thread's ordered one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agg.h"
#include "trace-writer.h"
#include "unit-util.h"

__attribute__((noinline, used)) void ss_t_outer(void) { __asm__ volatile(""); }
__attribute__((noinline, used)) void ss_t_dot(void) { __asm__ volatile("nop"); }
__attribute__((noinline, used)) void ss_t_tiny(void) { __asm__ volatile("nop; nop"); }
__attribute__((noinline, used)) void ss_t_long(void) { __asm__ volatile("nop; nop; nop"); }

static char dir[] = "/tmp/ss-test-exit-order-XXXXXX";

/*
 * tid 100, ns (the clock is CLOCK_MONOTONIC: a tick is a ns):
 *   outer [1000,3000]
 *     dot  [1100,1121)  odd EXIT: 21 ns, unordered
 *     dot  [1200,1240]  even: 40 ns, ordered
 *     dot  [1300,1350]  even: 50 ns
 *     dot  [1400,1419)  odd: 19 ns
 *     tiny [1500,1511)  odd: 11 ns
 *     tiny [1600,1613)  odd: 13 ns
 *     dot  (1701,1730]  odd ENTER, even EXIT: 29 ns, unordered
 *     long [1800,2400]  even: 600 ns, ordered
 *     long (2501,2551)  odd: 50 ns, shorter by more than SS_AGG_EARLY_NS
 * tid 101 (with_second): outer [1000,3000], dot [1100,1115) odd: 15 ns.
 */
static void write_trace(const char *sub, int with_record, int with_second)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 4545);
	char path[400];
	struct ss_event e[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_t_outer),
		ss_ut_ev(1100, SS_EV_ENTER, ss_t_dot), ss_ut_ev(1121, SS_EV_EXIT, ss_t_dot),
		ss_ut_ev(1200, SS_EV_ENTER, ss_t_dot), ss_ut_ev(1240, SS_EV_EXIT, ss_t_dot),
		ss_ut_ev(1300, SS_EV_ENTER, ss_t_dot), ss_ut_ev(1350, SS_EV_EXIT, ss_t_dot),
		ss_ut_ev(1400, SS_EV_ENTER, ss_t_dot), ss_ut_ev(1419, SS_EV_EXIT, ss_t_dot),
		ss_ut_ev(1500, SS_EV_ENTER, ss_t_tiny), ss_ut_ev(1511, SS_EV_EXIT, ss_t_tiny),
		ss_ut_ev(1600, SS_EV_ENTER, ss_t_tiny), ss_ut_ev(1613, SS_EV_EXIT, ss_t_tiny),
		ss_ut_ev(1701, SS_EV_ENTER, ss_t_dot), ss_ut_ev(1730, SS_EV_EXIT, ss_t_dot),
		ss_ut_ev(1800, SS_EV_ENTER, ss_t_long), ss_ut_ev(2400, SS_EV_EXIT, ss_t_long),
		ss_ut_ev(2501, SS_EV_ENTER, ss_t_long), ss_ut_ev(2551, SS_EV_EXIT, ss_t_long),
		ss_ut_ev(3000, SS_EV_EXIT, ss_t_outer),
	};
	struct ss_event e2[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_t_outer),
		ss_ut_ev(1100, SS_EV_ENTER, ss_t_dot), ss_ut_ev(1115, SS_EV_EXIT, ss_t_dot),
		ss_ut_ev(3000, SS_EV_EXIT, ss_t_outer),
	};
	struct ss_meta_exit_order eo = { 64, 0 };

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	assert_int_equal(mkdir(path, 0755), 0);
	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 100, "trainer");
	ss_tw_meta_step(w, 900, 0, 100, 1, SS_STEP_RECORD, 0);
	if (with_record)
		ss_tw_meta(w, SS_META_EXIT_ORDER, 900, &eo, sizeof(eo));
	ss_tw_events(w, 100, 1, 0, e, sizeof(e) / sizeof(e[0]), 64);
	if (with_second) {
		ss_tw_meta_thread(w, 101, "loader");
		ss_tw_events(w, 101, 2, 0, e2, sizeof(e2) / sizeof(e2[0]), 64);
	}
	snprintf(path, sizeof(path), "%s/%s/prog.4545.sstrace", dir, sub);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	write_trace("ordered", 1, 0);
	write_trace("older", 0, 0);
	write_trace("two", 1, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(dir);
}

/* The run in dir/sub walked into a new aggregator, ended. */
static struct ss_agg *load(const char *sub)
{
	struct ss_agg *a = ss_agg_new();
	struct ss_exporter *ex = ss_agg_exporter(a);
	char err[512], d[400];

	snprintf(d, sizeof(d), "%s/%s", dir, sub);
	assert_int_equal(ss_agg_walk(d, NULL, 1, &ex, 1, err, sizeof(err)), 0);
	assert_int_equal(ex->end(ex->ctx, err, sizeof(err)), 0);
	return a;
}

static const struct ss_agg_row *row(struct ss_agg_row *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	print_error("no row named %s\n", name);
	fail();
	return NULL;
}

static void test_ordered_min(void **state)
{
	struct ss_agg *a = load("ordered");
	struct ss_agg_row *r;
	size_t n = ss_agg_rows(a, 0, &r);

	(void)state;
	const struct ss_agg_row *dot = row(r, n, "ss_t_dot"), *tiny = row(r, n, "ss_t_tiny");
	assert_int_equal(dot->calls, 5);
	assert_int_equal(dot->total_ns, 21 + 40 + 50 + 19 + 29);
	assert_int_equal(dot->ordered, 2);
	assert_int_equal(dot->min_ns, 40);  /* not 19 (odd EXIT) nor 29 (odd ENTER) */
	assert_int_equal(dot->max_ns, 50);
	assert_int_equal(tiny->calls, 2);
	assert_int_equal(tiny->ordered, 0);
	assert_int_equal(tiny->min_ns, 11); /* no ordered call: the fastest */
	const struct ss_agg_row *lng = row(r, n, "ss_t_long");
	assert_int_equal(lng->ordered, 1);
	assert_int_equal(lng->min_ns, 50);  /* 550 ns shorter: not read early */
	assert_int_equal(lng->max_ns, 600);
	ss_agg_free(a);
}

static void test_older_trace(void **state)
{
	struct ss_agg *a = load("older");
	struct ss_agg_row *r;
	size_t n = ss_agg_rows(a, 0, &r);

	(void)state;
	const struct ss_agg_row *dot = row(r, n, "ss_t_dot");
	assert_int_equal(dot->calls, 5);
	assert_int_equal(dot->ordered, 5);
	assert_int_equal(dot->min_ns, 19);
	ss_agg_free(a);
}

static void test_merged_threads(void **state)
{
	struct ss_agg *a = load("two");
	struct ss_agg_row *r;
	size_t n = ss_agg_rows(a, 0, &r);

	(void)state;
	const struct ss_agg_row *dot = row(r, n, "ss_t_dot");
	assert_int_equal(dot->calls, 6);
	assert_int_equal(dot->ordered, 2);
	assert_int_equal(dot->min_ns, 40);  /* not tid 101's odd 15 */
	ss_agg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ordered_min),
		cmocka_unit_test(test_older_trace),
		cmocka_unit_test(test_merged_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
