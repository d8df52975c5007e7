/*
 * test-churn.c - end to end: threads created and joined one at a time cost
 * the trace what they wrote (issue 45, item 4).
 *
 * s-churn starts THREADS threads in sequence, each calling leaf() CALLS
 * times, recorded with max_trace_mb=CAP_MB.  Each thread wrote some 2 KB,
 * but used to take an EVENTS chunk of its own (4 MiB with the default
 * buffer_kb): recording stopped with "trace reached max_trace_mb" after
 * about CAP_MB / 4 threads.  Now:
 *   - the record says nothing of max_trace_mb and the report no stop;
 *   - the report counts THREADS calls of worker and THREADS x CALLS of
 *     leaf: every thread's events are in the trace;
 *   - the trace file is at most FILE_MB long and takes at most DISK_MB of
 *     disk (the threads' events, plus a ring and a chunk for each ring the
 *     busy machine had in use at once: the exiting thread frees its
 *     ring itself when the background thread does not hold it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define THREADS 2000
#define CALLS 50
#define CAP_MB 256
#define FILE_MB 64
#define DISK_MB 16

static void test_churn(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "churn", NULL);
	SS_E2E_SH_OK(t, SS " record -o rec --set max_trace_mb=%d -- ./s-churn %d %d",
		     CAP_MB, THREADS, CALLS);
	SS_E2E_CHECK(t, strstr(t->out, "done") && !strstr(t->err, "reached max_trace_mb"),
		     "recording must not stop: %s", t->err);
	SS_E2E_SH_OK(t, SS " report --format csv rec");
	double workers = ss_e2e_csv_col(t->out, "worker", "calls");
	double leaves = ss_e2e_csv_col(t->out, "leaf", "calls");
	SS_E2E_CHECK(t, workers == THREADS && leaves == (double)THREADS * CALLS,
		     "calls: worker %.0f (expected %d), leaf %.0f (expected %d)", workers,
		     THREADS, leaves, THREADS * CALLS);
	SS_E2E_SH_OK(t, "stat -c '%%s %%b' rec/*.sstrace");
	unsigned long long size = 0, blocks = 0;
	SS_E2E_CHECK(t, sscanf(t->out, "%llu %llu", &size, &blocks) == 2,
		     "stat: %s", t->out);
	print_message("%d threads in sequence: trace %.1f MB long, %.1f MB on disk\n",
		      THREADS, size / 1048576.0, blocks * 512 / 1048576.0);
	SS_E2E_CHECK(t, size <= (unsigned long long)FILE_MB << 20 &&
				blocks * 512 <= (unsigned long long)DISK_MB << 20,
		     "trace %llu bytes long (at most %d MB), %llu on disk (at most %d MB)",
		     size, FILE_MB, blocks * 512, DISK_MB);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_churn),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
