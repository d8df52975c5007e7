/*
 * test-sched-unwatched.c - end to end: threads that record.sched cannot
 * watch are marked, not counted on the CPU (issue 45, item 3).
 *
 * s-sched-many runs THREADS threads at once, each sleeping 3 ms in
 * sleeper(); the runtime watches at most WATCHED threads at once
 * (runtime/sched.c), so main and the first WATCHED - 1 workers get a
 * switch ring and the other THREADS + 1 - WATCHED none.  Those used to
 * leave no trace: their sleeps counted as time on the CPU, unsaid.  Now
 * the trace marks each (SS_META_SWITCH_NONE) and:
 *   - report json says "threads_without_ring": THREADS + 1 - WATCHED;
 *   - the text report's footer says how many, and that their Off-CPU is
 *     not known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define THREADS 600
#define WATCHED 512

static void test_unwatched(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "sched-many", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set record.sched=true -- ./s-sched-many %d",
		     THREADS);
	SS_E2E_CHECK(t, strstr(t->out, "done") && strstr(t->err, "more than 512 threads"),
		     "the runtime must say it watches no more: %s", t->err);
	SS_E2E_SH_OK(t, SS " report --format json run > report.json");
	cJSON *j = ss_e2e_load_json(t, "report.json");
	cJSON *off = cJSON_GetObjectItem(j, "off_cpu");
	cJSON *n = off ? cJSON_GetObjectItem(off, "threads_without_ring") : NULL;
	SS_E2E_CHECK(t, cJSON_IsNumber(n) && n->valuedouble == THREADS + 1 - WATCHED,
		     "threads_without_ring: %g, expected %d", cJSON_IsNumber(n) ? n->valuedouble : -1.0,
		     THREADS + 1 - WATCHED);
	cJSON_Delete(j);
	SS_E2E_SH_OK(t, SS " report run");
	char want[64];
	snprintf(want, sizeof(want), "threads without a switch ring: %d ", THREADS + 1 - WATCHED);
	SS_E2E_CHECK(t, strstr(t->out, want), "the footer must say '%s': %s", want, t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_unwatched),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
