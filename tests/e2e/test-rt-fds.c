/*
 * test-rt-fds.c - end to end: the runtime owns its descriptors safely.
 * s-rt-fds closes every descriptor above 2 in the middle of its run (a
 * loop up to 1023, or closefrom) and then writes a 1 MiB file of its own
 * through the lowest free one.  The file must come out byte for byte, and
 * the trace must still hold every call, with the default chunk size and
 * with buffer_kb=64 (a chunk refill after every few steps).
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

static void run(void **state, const char *mode, const char *set)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-fds", NULL);
	int limit = !strcmp(set, "limit");
	int st = ss_e2e_sh(t, "%s\"$SS_E2E_BUILD/bin/stepscope\" record -o rec %s -- ./s-rt-fds %s",
			   limit ? "ulimit -n 1024; " : "",
			   limit ? "--set buffer_kb=64" : set, mode);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "steps 128") != NULL,
		     "s-rt-fds %s: expected \"steps 128\", got: %s", mode, t->out);
	SS_E2E_CHECK(t, !strstr(t->err, "stepscope:") || !strstr(t->err, "stopped"),
		     "s-rt-fds %s: recording stopped: %s", mode, t->err);
	st = ss_e2e_sh(t, "./s-rt-fds verify");
	if (st != 0)
		ss_e2e_show_last(t, st);
	SS_E2E_CHECK(t, st == 0, "s-rt-fds %s: the program's own file was damaged: %s",
		     mode, t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 128);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, 128 * 50);
	SS_E2E_EXPECT_INSIDE(t, tr, "leaf", "step_fn");
	ss_e2e_pass(t);
}

static void test_loop(void **state)
{
	run(state, "loop", "");
}

static void test_loop_small(void **state)
{
	run(state, "loop", "--set buffer_kb=64");
}

static void test_closefrom(void **state)
{
	run(state, "closefrom", "");
}

static void test_closefrom_small(void **state)
{
	run(state, "closefrom", "--set buffer_kb=64");
}

/* The same with a descriptor limit of 1024: the runtime's own descriptor
 * is among those the loop closes. */
static void test_loop_small_limit(void **state)
{
	run(state, "loop", "limit");
}

/* The descriptor is lost and the file cannot be reopened (the run
 * directory was moved away): recording stops with one warning and a STOP
 * marker; the program and its file are untouched. */
static void test_lost(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-fds", NULL);
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec "
			      "--set buffer_kb=64 -- ./s-rt-fds lost");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "steps 128") != NULL, "expected \"steps 128\", got: %s",
		     t->out);
	const char *w = strstr(t->err, "cannot be reopened; recording stopped, the program continues");
	const char *once = w ? strstr(w, "recording stopped") : NULL;
	SS_E2E_CHECK(t, once && !strstr(once + 1, "recording stopped"),
		     "expected one warning that recording stopped, got: %s", t->err);
	st = ss_e2e_sh(t, "./s-rt-fds verify");
	SS_E2E_CHECK(t, st == 0, "the program's own file was damaged: %s", t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec.moved");
	size_t n = ss_e2e_count(tr, "step_fn", "function", 0);
	SS_E2E_CHECK(t, n >= 16 && n < 128, "expected 16..127 step_fn calls before the stop, got %zu", n);
	SS_E2E_CHECK(t, strstr(tr->path, "rec.moved") != NULL, "trace %s", tr->path);
	st = ss_e2e_sh(t, "grep -c 'stepscope: recording stopped' rec.moved/trace.json");
	SS_E2E_CHECK(t, st == 0, "expected a STOP marker in rec.moved/trace.json");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_loop),
		SS_E2E_TEST(test_loop_small),
		SS_E2E__ONE(test_closefrom, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E__ONE(test_closefrom_small, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E_TEST(test_loop_small_limit),
		SS_E2E_TEST(test_lost),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
