/*
 * test-worker-names.c - end to end: threads the program did not name
 * inherit the main thread's comm from the kernel; in the trace they are
 * "MAIN/worker-TID", so workers are told apart from main, while a thread
 * the program named keeps its name and main keeps its own.
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

static void expect_name(struct ss_e2e *t, struct ss_e2e_trace *tr, int64_t pid,
			long tid, const char *want)
{
	const char *got = ss_e2e_thread_name(tr, pid, tid);
	SS_E2E_CHECK(t, got && !strcmp(got, want), "thread %ld: expected name \"%s\", got %s",
		     tid, want, got ? got : "none");
}

static void test_worker_names(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "worker-names", NULL);
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "run", "worker-names", NULL), 0);
	char *out = strdup(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	const struct ss_e2e_slice *m = ss_e2e_find(tr, "main", 0);
	SS_E2E_CHECK(t, m != NULL, "a main slice");
	expect_name(t, tr, m->pid, (long)m->tid, "s-worker-names");
	int workers = 0, loaders = 0;
	char *save = NULL;
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long tid;
		char want[64];
		if (sscanf(l, "worker %ld", &tid) == 1) {
			snprintf(want, sizeof(want), "s-worker-names/worker-%ld", tid);
			expect_name(t, tr, m->pid, tid, want);
			workers++;
		} else if (sscanf(l, "loader %ld", &tid) == 1) {
			expect_name(t, tr, m->pid, tid, "loader");
			loaders++;
		}
	}
	free(out);
	SS_E2E_CHECK(t, workers == 2 && loaders == 1, "2 workers and 1 loader, got %d and %d",
		     workers, loaders);
	SS_E2E_EXPECT_CALLS(t, tr, "job", 0, 3);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_worker_names),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
