/*
 * test-rt-threads.c - end to end: many short-lived named threads (exact
 * counts per thread, names set after the first call), a thread that
 * returns and one that calls pthread_exit two frames deep, thread-specific
 * data destructors that run after the thread function is gone, and OpenMP
 * parallel regions.
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

static void test_many(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = ss_e2e_profile(t, "rt-threads", NULL, "many");
	SS_E2E_EXPECT_NESTED(t, tr);
	int seen = 0;
	size_t total = 0;
	char *save = NULL, *text = strdup(t->out);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long i, tid, n;
		if (sscanf(l, "w-%ld %ld %ld", &i, &tid, &n) != 3)
			continue;
		seen++;
		total += (size_t)n;
		SS_E2E_EXPECT_CALLS(t, tr, "work", tid, (size_t)n);
		SS_E2E_EXPECT_CALLS(t, tr, "wave_body", tid, 1);
		char want[16];
		snprintf(want, sizeof(want), "w-%ld", i);
		const char *got = ss_e2e_thread_name(tr, 0, tid);
		if (!got) {
			const struct ss_e2e_slice *s = ss_e2e_find(tr, "work", tid);
			got = s ? ss_e2e_thread_name(tr, s->pid, tid) : NULL;
		}
		SS_E2E_CHECK(t, got && !strcmp(got, want),
			     "thread %ld: expected name \"%s\", got %s", tid, want,
			     got ? got : "none");
	}
	free(text);
	SS_E2E_CHECK(t, seen == 48, "expected 48 \"w-i TID N\" lines, got %d", seen);
	SS_E2E_EXPECT_CALLS(t, tr, "work", 0, total);
	SS_E2E_EXPECT_CALLS(t, tr, "wave_body", 0, 48);
	SS_E2E_EXPECT_INSIDE(t, tr, "work", "wave_body");
	SS_E2E_EXPECT_INSIDE(t, tr, "wave_body", NULL);
	ss_e2e_pass(t);
}

static long tid_of(struct ss_e2e *t, const char *what)
{
	const char *p = strstr(t->out, what);
	long v = 0;
	if (!p || sscanf(p + strlen(what), " %ld", &v) != 1)
		SS_E2E_FAIL(t, "fixture did not print \"%s TID\": %s", what, t->out);
	return v;
}

static void test_exit_paths(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = ss_e2e_profile(t, "rt-threads", NULL, "exit");
	SS_E2E_EXPECT_NESTED(t, tr);
	long ret = tid_of(t, "t-return"), pex = tid_of(t, "t-pexit");
	/* returned: the destructor runs after ret_body, outside it */
	SS_E2E_EXPECT_CALLS(t, tr, "ret_body", ret, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "tsd_dtor", ret, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", ret, 2);
	/* pthread_exit: pexit_body and go_down never return */
	SS_E2E_EXPECT_CALLS(t, tr, "pexit_body", pex, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "go_down", pex, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "tsd_dtor", pex, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", pex, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "go_down", "pexit_body");
	SS_E2E_EXPECT_INSIDE(t, tr, "tsd_dtor", NULL);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (!strcmp(s->name, "leaf")) {
			const char *p = ss_e2e_parent_name(tr, s);
			const char *want = s->tid == ret && s->ts_ns <
				ss_e2e_find(tr, "tsd_dtor", ret)->ts_ns ? "ret_body" : "tsd_dtor";
			SS_E2E_CHECK(t, p && !strcmp(p, want),
				     "leaf on %lld: expected parent %s, got %s",
				     (long long)s->tid, want, p ? p : "(none)");
		}
		int gone = !strcmp(s->name, "pexit_body") || !strcmp(s->name, "go_down");
		SS_E2E_CHECK(t, gone ? (s->flags & SS_E2E_UNWOUND) != 0 : s->flags == 0,
			     "'%s': expected %s, got flags 0x%x", s->name,
			     gone ? "unwound (pthread_exit)" : "no flags", s->flags);
	}
	SS_E2E_CHECK(t, ss_e2e_thread_name(tr, tr->slices[0].pid, pex) &&
			     !strcmp(ss_e2e_thread_name(tr, tr->slices[0].pid, pex), "t-pexit"),
		     "thread %ld: expected name t-pexit", pex);
	ss_e2e_pass(t);
}

static void test_openmp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = ss_e2e_profile(t, "rt-omp", "-fopenmp", NULL);
	SS_E2E_EXPECT_NESTED(t, tr);
	int seen = 0;
	char *save = NULL, *text = strdup(t->out);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int k;
		long tid;
		if (sscanf(l, "omp %d %ld", &k, &tid) != 2)
			continue;
		seen++;
		SS_E2E_EXPECT_CALLS(t, tr, "omp_work", tid, (size_t)(2 * (k + 1)));
	}
	free(text);
	SS_E2E_CHECK(t, seen == 4, "expected 4 \"omp K TID\" lines, got %d", seen);
	SS_E2E_EXPECT_CALLS(t, tr, "omp_work", 0, 2 * (1 + 2 + 3 + 4));
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_many),
		SS_E2E_VARIANTS(test_exit_paths),
		SS_E2E_VARIANTS(test_openmp),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
