/*
 * test-overhead.c - the overhead line's warning (analyze/overhead.c) on
 * hand-made accounts: no warning at or under a 10% slowdown; above it,
 * the filter advice when the hooks are most of the cost, and the advice
 * about longer windows when the fixed cost (opening windows, the
 * background thread) is, as in make demo's three short steps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "overhead.h"

static char *print(const struct ss_overhead *o, uint64_t calls)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	ss_overhead_print(f, o, calls, 1000000, "RUN", 0);
	fclose(f);
	return buf;
}

static struct ss_overhead account(uint64_t cpu_ns, uint64_t bg_ns, uint64_t open_ns)
{
	struct ss_overhead o;
	memset(&o, 0, sizeof(o));
	o.known = 1;
	o.pair_ns = 30;
	o.procs = 1;
	o.cost_known = 1;
	o.cpu_ns = cpu_ns;
	o.bg_ns = bg_ns;
	o.open_ns = open_ns;
	return o;
}

static void test_under_ten_percent(void **state)
{
	(void)state;
	/* 10000 calls x 30 ns + 0.1 ms = 0.4 ms of 10 ms: 4%, 1.04x */
	struct ss_overhead o = account(10000000, 50000, 50000);
	char *t = print(&o, 10000);
	assert_non_null(strstr(t, "stepscope overhead: 4.0% of recorded time (10000 calls x 30 ns"));
	assert_null(strstr(t, "warning"));
	free(t);
}

static void test_hooks_most_of_it(void **state)
{
	(void)state;
	/* 100000 calls x 30 ns = 3 ms + 0.5 ms fixed, of 10 ms: 35% */
	struct ss_overhead o = account(10000000, 300000, 200000);
	char *t = print(&o, 100000);
	assert_non_null(strstr(t, "stepscope overhead: 35.0% of recorded time"));
	assert_non_null(strstr(t, "warning: above 10%, the times mostly measure stepscope's "
				  "hooks; run 'stepscope filter RUN' to find the calls to leave out\n"));
	free(t);
}

static void test_fixed_cost_most_of_it(void **state)
{
	(void)state;
	/* make demo's shape: 174 calls x 30 ns = 5.2 us, 6.8 ms opening and
	 * 11.3 ms in the background thread, of 29.3 ms */
	struct ss_overhead o = account(29300000, 11300000, 6800000);
	char *t = print(&o, 174);
	assert_non_null(strstr(t, "6.800ms opening windows"));
	assert_non_null(strstr(t, "warning: above 10%, mostly stepscope's fixed cost (opening "
				  "windows and its background thread), not its hooks"));
	assert_null(strstr(t, "stepscope filter"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_under_ten_percent),
		cmocka_unit_test(test_hooks_most_of_it),
		cmocka_unit_test(test_fixed_cost_most_of_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
