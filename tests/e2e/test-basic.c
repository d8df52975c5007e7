/*
 * test-basic.c - end to end: s-threads (main + three named pthreads) built
 * through stepscope-cc with gcc and clang at -O0 and -O2, recorded and
 * symbolized.  Checks exact call counts per thread, the call tree, thread
 * names, real OS pid/tid and the args of every function slice.
 *
 * Also runs the same fixture built with plain `CC -finstrument-functions -g`
 * (no stepscope runtime linked): `stepscope record` must preload the runtime.
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

static const int calls_per_thread[3] = {10, 20, 30};
enum { MAIN_CALLS = 5 };

/* The ids s-threads printed: "pid P", "tid main T", "tid worker-i T". */
struct ids {
	long pid, main_tid, worker_tid[3];
};

static void parse_ids(struct ss_e2e *t, struct ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	char *save = NULL, *text = strdup(t->out);
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		long v;
		int i;
		if (sscanf(l, "pid %ld", &v) == 1)
			ids->pid = v;
		else if (sscanf(l, "tid main %ld", &v) == 1)
			ids->main_tid = v;
		else if (sscanf(l, "tid worker-%d %ld", &i, &v) == 2 && i >= 0 &&
			 i < 3)
			ids->worker_tid[i] = v;
	}
	free(text);
	int ok = ids->pid && ids->main_tid;
	for (int i = 0; i < 3; i++)
		ok = ok && ids->worker_tid[i];
	if (!ok) {
		ss_e2e_show_last(t, -1);
		SS_E2E_FAIL(t, "s-threads did not print its pid and four tids");
	}
}

static void check_threads_trace(struct ss_e2e *t, struct ss_e2e_trace *tr)
{
	struct ids ids;
	parse_ids(t, &ids);
	SS_E2E_CHECK(t, ids.main_tid == ids.pid,
		     "fixture: main tid %ld != pid %ld", ids.main_tid, ids.pid);

	SS_E2E_EXPECT_NESTED(t, tr);

	/* main thread */
	SS_E2E_EXPECT_CALLS(t, tr, "main", ids.main_tid, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "work", ids.main_tid, MAIN_CALLS);
	SS_E2E_EXPECT_CALLS(t, tr, "helper", ids.main_tid, 2 * MAIN_CALLS);
	SS_E2E_EXPECT_CALLS(t, tr, "worker", ids.main_tid, 0);

	/* workers */
	size_t total = 1 + 3 * MAIN_CALLS;
	for (int i = 0; i < 3; i++) {
		long tid = ids.worker_tid[i];
		int n = calls_per_thread[i];
		SS_E2E_EXPECT_CALLS(t, tr, "worker", tid, 1);
		SS_E2E_EXPECT_CALLS(t, tr, "work", tid, n);
		SS_E2E_EXPECT_CALLS(t, tr, "helper", tid, 2 * n);
		SS_E2E_EXPECT_CALLS(t, tr, "main", tid, 0);
		total += 1 + 3 * n;
	}
	/* Nothing else: the fixture defines no other function. */
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, total);

	/* The call tree. */
	SS_E2E_EXPECT_INSIDE(t, tr, "helper", "work");
	SS_E2E_EXPECT_INSIDE(t, tr, "worker", NULL);
	SS_E2E_EXPECT_INSIDE(t, tr, "main", NULL);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "work") != 0)
			continue;
		const char *want = s->tid == ids.main_tid ? "main" : "worker";
		const char *got = ss_e2e_parent_name(tr, s);
		SS_E2E_CHECK(t, got && !strcmp(got, want),
			     "work on tid %lld: expected parent '%s', got '%s'",
			     (long long)s->tid, want, got ? got : "(none)");
	}

	/* Exactly the four real threads, in the real process. */
	int64_t tids[8];
	size_t nt = ss_e2e_tids(tr, tids, 8);
	SS_E2E_CHECK(t, nt == 4, "threads with slices: expected 4, got %zu",
		     nt);
	for (size_t i = 0; i < tr->nslices; i++)
		SS_E2E_CHECK(t, tr->slices[i].pid == ids.pid,
			     "slice '%s': expected pid %ld, got %lld",
			     tr->slices[i].name, ids.pid,
			     (long long)tr->slices[i].pid);

	/* Thread names: the workers' own, and some name for main. */
	for (int i = 0; i < 3; i++) {
		char want[16];
		snprintf(want, sizeof(want), "worker-%d", i);
		const char *got = ss_e2e_thread_name(tr, ids.pid,
						     ids.worker_tid[i]);
		SS_E2E_CHECK(t, got && !strcmp(got, want),
			     "thread_name of tid %ld: expected \"%s\", got %s%s%s",
			     ids.worker_tid[i], want, got ? "\"" : "",
			     got ? got : "none", got ? "\"" : "");
	}
	const char *mn = ss_e2e_thread_name(tr, ids.pid, ids.main_tid);
	SS_E2E_CHECK(t, mn && *mn,
		     "thread_name of main tid %ld: expected one, got none",
		     ids.main_tid);
	SS_E2E_CHECK(t, ss_e2e_process_name(tr, ids.pid) != NULL,
		     "process_name of pid %ld: expected one, got none", ids.pid);

	/* Every function slice says where it comes from. */
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->cat, "function") != 0)
			continue;
		SS_E2E_CHECK(t, s->file && strstr(s->file, "s-threads.c:"),
			     "'%s': expected args.file \"...s-threads.c:LINE\", "
			     "got %s",
			     s->name, s->file ? s->file : "none");
		SS_E2E_CHECK(t, s->addr && !strncmp(s->addr, "0x", 2),
			     "'%s': expected args.addr \"0x...\", got %s",
			     s->name, s->addr ? s->addr : "none");
		SS_E2E_CHECK(t, s->flags == 0,
			     "'%s' at %lld ns: unexpected clipped/unwound "
			     "flags 0x%x in a run that ends normally",
			     s->name, (long long)s->ts_ns, s->flags);
	}
}

static void test_threads(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = ss_e2e_profile(t, "threads", NULL, NULL);
	check_threads_trace(t, tr);
	ss_e2e_pass(t);
}

/* Built without stepscope-cc: only -finstrument-functions -g, the hooks
 * resolve to glibc's empty ones unless `stepscope record` preloads the
 * runtime. */
static void test_threads_uninstrumented_link(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t,
		     "%s %s -g -finstrument-functions -pthread -o s-threads "
		     "\"$SS_E2E_SRC/tests/e2e/s-threads.c\"",
		     t->v->cc, t->v->opt);
	SS_E2E_SH_OK(t, "! ldd ./s-threads | grep -q libstepscope");
	int st = ss_e2e_record(t, "rec", "threads", NULL);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	char *out = strdup(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	free(t->out);
	t->out = out;
	check_threads_trace(t, tr);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_threads),
		SS_E2E_VARIANTS(test_threads_uninstrumented_link),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
