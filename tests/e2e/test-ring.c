/*
 * test-ring.c - end to end: each thread records into a ring of blocks that
 * the runtime's background thread copies into the file (runtime/ring-copy.c).
 * s-ring makes far more events per thread than a ring holds:
 * - test_exact: 3 threads x 300000 calls, every call in the trace;
 * - test_kill: the same, then SIGKILL: blocks not yet copied out are read
 *   from the rings in the file, and still every call is there (both: or,
 *   on a machine too busy for the background thread, recorded + counted
 *   drops = every event, see run_whole);
 * - test_starved: the run pinned to one CPU with 64 KiB rings, so the
 *   background thread falls behind: the threads copy their own blocks,
 *   write into pool chunks, or drop; whatever was dropped is counted
 *   exactly (SS_EV_LOST), so recorded + lost events = all events;
 * - test_lost: nothing copies blocks out until exit (a test switch), so
 *   the threads must drop: exact counts per thread again, and `report`
 *   says how many were dropped;
 * - test_kill_lost: main drops, and is killed at exit between storing its
 *   LOST record and clearing the ring header's count: counted once;
 * - test_kill_clearing: killed (a test switch) at exit while a block just
 *   copied out of a ring is being cleared: every call is in the trace, the
 *   block read once, from its copy, with no warning.
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
#include "e2e-raw.h"
#include "reader.h"

#define THREADS 3
#define CALLS 300000

static size_t worker_tids(struct ss_e2e *t, long *tids)
{
	size_t n = 0;
	for (const char *p = t->out; (p = strstr(p, "tid ")) && n < THREADS; p += 4)
		tids[n++] = strtol(p + 4, NULL, 10);
	SS_E2E_CHECK(t, n == THREADS && strstr(t->out, "done"),
		     "fixture output: %s", t->out);
	return n;
}

static void expect_all_calls(struct ss_e2e *t, const char *rundir)
{
	long tids[THREADS];
	worker_tids(t, tids);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, rundir);
	SS_E2E_EXPECT_NESTED(t, tr);
	for (int i = 0; i < THREADS; i++) {
		SS_E2E_EXPECT_CALLS(t, tr, "worker", tids[i], 1);
		SS_E2E_EXPECT_CALLS(t, tr, "leaf", tids[i], CALLS);
		SS_E2E_EXPECT_INSIDE(t, tr, "leaf", "worker");
	}
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_CHECK(t, !strstr(t->err, "lost") && !strstr(t->err, "corrupt") &&
				!strstr(t->err, "truncated"),
		     "no warning expected: %s", t->err);
}

static void count_raw(struct ss_e2e *t, const char *dir, const long *tids, int n,
		      uint64_t *rec, uint64_t *lost);

/* s-ring ends by `how` (exit or kill), with status `status`, the record
 * command run with `env` before it: every call of every thread is in the
 * trace.  On a machine so busy that the background thread, holding the
 * ring or the file, stays preempted while a thread's ring fills, that
 * thread drops rather than waits (ring.c; seen once with two test suites
 * running at once on 2 CPUs): then what it dropped is counted exactly,
 * recorded + lost = every event, and said. */
static void run_whole(void **state, const char *env, const char *how, int status)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "ring", NULL);
	int st = ss_e2e_sh(t, "%s \"$SS_E2E_BUILD/bin/stepscope\" record -o rec -- "
			   "./s-ring %s %d %d", env, how, THREADS, CALLS);
	SS_E2E_EXPECT_STATUS(t, st, status);
	long tids[THREADS];
	worker_tids(t, tids);
	uint64_t rec[THREADS] = { 0 }, lost[THREADS] = { 0 }, dropped = 0;
	count_raw(t, "rec", tids, THREADS, rec, lost);
	for (int i = 0; i < THREADS; i++) {
		SS_E2E_CHECK(t, rec[i] + lost[i] == 2 + 2 * (uint64_t)CALLS,
			     "thread %ld: %llu recorded + %llu lost events, expected %llu",
			     tids[i], (unsigned long long)rec[i],
			     (unsigned long long)lost[i], 2 + 2ull * CALLS);
		dropped += lost[i];
	}
	if (!dropped) {
		expect_all_calls(t, "rec");
	} else {
		print_message("the machine was too busy: %llu events dropped and counted; "
			      "recorded + lost = every event on each thread\n",
			      (unsigned long long)dropped);
		SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report rec");
		SS_E2E_CHECK(t, strstr(t->out, "lost events: ") != NULL,
			     "report must say what was dropped: %s", t->out);
	}
	ss_e2e_pass(t);
}

static void test_exact(void **state)
{
	run_whole(state, "", "exit", 0);
}

static void test_kill(void **state)
{
	run_whole(state, "", "kill", 137);
}

/* Events of each worker thread (tid in tids) in the raw trace: ENTER and
 * EXIT recorded, and lost as counted by SS_EV_LOST records. */
struct raw_count {
	const long *tids;
	int n;
	uint64_t *rec, *lost;
};

static void count_event(void *arg, uint64_t tid, const struct ss_revent *ev)
{
	struct raw_count *c = arg;
	for (int k = 0; k < c->n; k++) {
		if ((uint64_t)c->tids[k] != tid)
			continue;
		if (ev->kind == SS_EV_ENTER || ev->kind == SS_EV_EXIT)
			c->rec[k]++;
		else if (ev->kind == SS_EV_LOST)
			c->lost[k] += ev->arg;
	}
}

static void count_raw(struct ss_e2e *t, const char *dir, const long *tids, int n,
		      uint64_t *rec, uint64_t *lost)
{
	struct raw_count c = { tids, n, rec, lost };
	ss_e2e_raw_events(t, dir, 1, count_event, &c);
}

static void test_starved(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_need(t, "command -v taskset", "taskset", "util-linux");
	ss_e2e_build(t, "ring", NULL);
	int st = ss_e2e_sh(t, "taskset -c 0 \"$SS_E2E_BUILD/bin/stepscope\" record -o rec "
			   "--set buffer_kb=64 -- ./s-ring exit %d %d", THREADS, CALLS);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	long tids[THREADS];
	worker_tids(t, tids);
	uint64_t rec[THREADS] = { 0 }, lost[THREADS] = { 0 };
	count_raw(t, "rec", tids, THREADS, rec, lost);
	for (int i = 0; i < THREADS; i++) {
		/* worker's ENTER and EXIT, and each leaf call's */
		SS_E2E_CHECK(t, rec[i] + lost[i] == 2 + 2 * (uint64_t)CALLS,
			     "thread %ld: %llu recorded + %llu lost events, expected %llu",
			     tids[i], (unsigned long long)rec[i],
			     (unsigned long long)lost[i], 2 + 2ull * CALLS);
		print_message("thread %ld: %llu events recorded, %llu lost\n", tids[i],
			      (unsigned long long)rec[i], (unsigned long long)lost[i]);
	}
	ss_e2e_pass(t);
}

static void test_lost(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "ring", NULL);
	int st = ss_e2e_sh(t, "STEPSCOPE__TEST_STALL_COPY=1 \"$SS_E2E_BUILD/bin/stepscope\" "
			   "record -o rec --set buffer_kb=64 -- ./s-ring exit %d %d",
			   THREADS, CALLS);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	long tids[THREADS];
	worker_tids(t, tids);
	uint64_t rec[THREADS] = { 0 }, lost[THREADS] = { 0 }, all = 0;
	count_raw(t, "rec", tids, THREADS, rec, lost);
	for (int i = 0; i < THREADS; i++) {
		SS_E2E_CHECK(t, lost[i] > 0 && rec[i] + lost[i] == 2 + 2 * (uint64_t)CALLS,
			     "thread %ld: %llu recorded + %llu lost events, expected %llu with "
			     "some lost", tids[i], (unsigned long long)rec[i],
			     (unsigned long long)lost[i], 2 + 2ull * CALLS);
		all += lost[i];
	}
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report rec");
	for (int i = 0; i < THREADS; i++) {
		char want[96];
		snprintf(want, sizeof(want), "lost events: %llu on thread ",
			 (unsigned long long)lost[i]);
		char tid[32];
		int found = 0;
		snprintf(tid, sizeof(tid), "(tid %ld)\n", tids[i]);
		for (const char *p = t->out; (p = strstr(p, want)); p++) {
			const char *nl = strchr(p, '\n'), *at = strstr(p, tid);
			found |= at && nl && at + strlen(tid) - 1 == nl;
		}
		SS_E2E_CHECK(t, found, "report must say \"%s... %s\": %s", want, tid, t->out);
	}
	(void)all;
	ss_e2e_pass(t);
}

static void test_kill_clearing(void **state)
{
	run_whole(state, "STEPSCOPE__TEST_KILL_AT=clear", "exit", 137);
}

/* main itself calls leaf() and drops (nothing copies until exit), then
 * is killed at exit between storing its LOST record and clearing its
 * ring header's count: the drops are counted once. */
static void test_kill_lost(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "ring", NULL);
	int st = ss_e2e_sh(t, "STEPSCOPE__TEST_STALL_COPY=1 STEPSCOPE__TEST_KILL_AT=lost "
			   "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec --set buffer_kb=64 -- "
			   "./s-ring exit 0 %d", CALLS);
	SS_E2E_EXPECT_STATUS(t, st, 137);
	const char *p = strstr(t->out, "tid ");
	SS_E2E_CHECK(t, p && strstr(t->out, "done"), "fixture output: %s", t->out);
	long tid = strtol(p + 4, NULL, 10);
	uint64_t rec = 0, lost = 0;
	count_raw(t, "rec", &tid, 1, &rec, &lost);
	/* the ENTER and EXIT of main, of worker and of each leaf call */
	SS_E2E_CHECK(t, lost > 0 && rec + lost == 4 + 2 * (uint64_t)CALLS,
		     "main: %llu recorded + %llu lost events, expected %llu with some lost",
		     (unsigned long long)rec, (unsigned long long)lost, 4 + 2ull * CALLS);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_exact),
		SS_E2E_TEST(test_kill),
		SS_E2E_TEST(test_kill_clearing),
		SS_E2E_TEST(test_starved),
		SS_E2E_TEST(test_lost),
		SS_E2E_TEST(test_kill_lost),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
