/*
 * test-harness.c - the e2e harness checked against hand-written traces, so
 * that a passing end-to-end test means something: the loader refuses a
 * wrong shape, the nesting check catches an overlap, parents, chains and
 * counts are what the file says, and commands report their real status.
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

#define HEAD "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["
#define TAIL "],\"otherData\":{}}"
#define X(name, tid, ts, dur)                                                  \
	"{\"ph\":\"X\",\"cat\":\"function\",\"name\":\"" name "\","            \
	"\"pid\":7,\"tid\":" #tid ",\"ts\":" ts ",\"dur\":" dur ","            \
	"\"args\":{\"file\":\"a.c:1\",\"addr\":\"0x10\"}}"

/* Write `json` to DIR/trace.json and load it; returns the load status. */
static int load(struct ss_e2e *t, struct ss_e2e_trace *tr, const char *json,
		char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.json", t->dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	return ss_e2e_trace_load(tr, path, err, errlen);
}

static void test_model(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace tr;
	char err[512] = "";
	/* tid 1: main [0,100] > work [10,50] > helper [10,20], helper [30,50]
	 *        (helper ends exactly with work), work [60,61]
	 * tid 2: worker [0.5,10.25] > work [1,2], thread name "w" */
	const char *json =
		HEAD X("main", 1, "0.000", "0.100") ","
		X("helper", 1, "0.010", "0.010") ","
		X("work", 1, "0.010", "0.040") ","
		X("helper", 1, "0.030", "0.020") ","
		X("work", 1, "0.060", "0.001") ","
		X("worker", 2, "0.500", "9.750") ","
		X("work", 2, "1.000", "1.000") ","
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":2,"
		"\"args\":{\"name\":\"w\"}},"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,"
		"\"args\":{\"name\":\"prog\"}},"
		"{\"ph\":\"X\",\"cat\":\"step\",\"name\":\"ProfilerStep#0\","
		"\"pid\":7,\"tid\":1,\"ts\":0.005,\"dur\":1.000,\"args\":{}}" TAIL;
	int rc = load(t, &tr, json, err, sizeof(err));
	if (rc != 0)
		fail_msg("load: %s", err);
	assert_int_equal(tr.nslices, 8);
	assert_string_equal(tr.nest_err, "");
	assert_int_equal(ss_e2e_count(&tr, "work", NULL, 0), 3);
	assert_int_equal(ss_e2e_count(&tr, "work", NULL, 1), 2);
	assert_int_equal(ss_e2e_count(&tr, "work", "function", 2), 1);
	assert_int_equal(ss_e2e_count(&tr, NULL, "step", 0), 1);
	assert_int_equal(ss_e2e_count(&tr, NULL, "function", 0), 7);
	assert_int_equal(tr.slices[5].ts_ns, 500);
	assert_int_equal(tr.slices[5].dur_ns, 9750);

	int64_t tids[4];
	assert_int_equal(ss_e2e_tids(&tr, tids, 4), 2);
	assert_int_equal(tids[0], 1);
	assert_int_equal(tids[1], 2);
	assert_string_equal(ss_e2e_thread_name(&tr, 7, 2), "w");
	assert_null(ss_e2e_thread_name(&tr, 7, 1));
	assert_string_equal(ss_e2e_process_name(&tr, 7), "prog");

	/* parents (the step is not part of the call tree) */
	assert_null(ss_e2e_parent_name(&tr, &tr.slices[0]));
	assert_string_equal(ss_e2e_parent_name(&tr, &tr.slices[1]), "work");
	assert_string_equal(ss_e2e_parent_name(&tr, &tr.slices[2]), "main");
	assert_string_equal(ss_e2e_parent_name(&tr, &tr.slices[3]), "work");
	assert_string_equal(ss_e2e_parent_name(&tr, &tr.slices[4]), "main");
	assert_null(ss_e2e_parent_name(&tr, &tr.slices[5]));
	assert_string_equal(ss_e2e_parent_name(&tr, &tr.slices[6]), "worker");
	assert_int_equal(ss_e2e_chain(&tr, &tr.slices[3], "work"), 1);
	assert_int_equal(ss_e2e_max_chain(&tr, "helper"), 1);

	/* The step overlaps calls: a violation only when steps are included. */
	rc = ss_e2e_check_nesting(&tr, SS_E2E_CAT_FUNCTION | SS_E2E_CAT_STEP,
				  err, sizeof(err));
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err, "ProfilerStep#0"));
	ss_e2e_trace_release(&tr);
	ss_e2e_pass(t);
}

static void test_overlap_and_recursion(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace tr;
	char err[512] = "";
	/* tid 4: a [0,10] > b [10,10] (empty, at a's end: a frame cut off at
	 * the end of the run); tid 5: c [10,12] right after a [0,10] */
	const char *edge = HEAD X("a", 4, "0.000", "0.010") ","
		X("b", 4, "0.010", "0.000") "," X("a", 5, "0.000", "0.010") ","
		X("c", 5, "0.010", "0.002") TAIL;
	assert_int_equal(load(t, &tr, edge, err, sizeof(err)), 0);
	assert_string_equal(tr.nest_err, "");
	assert_string_equal(ss_e2e_parent_name(&tr, &tr.slices[1]), "a");
	assert_null(ss_e2e_parent_name(&tr, &tr.slices[3]));
	ss_e2e_trace_release(&tr);

	/* f > f > f on tid 3, then g [5,15] overlaps the outer f [0,10] */
	const char *json = HEAD X("f", 3, "0.000", "0.010") ","
		X("f", 3, "0.001", "0.008") "," X("f", 3, "0.002", "0.001") ","
		X("g", 3, "0.005", "0.010") TAIL;
	assert_int_equal(load(t, &tr, json, err, sizeof(err)), 0);
	assert_int_equal(ss_e2e_max_chain(&tr, "f"), 3);
	print_message("nest_err: %s\n", tr.nest_err);
	assert_non_null(strstr(tr.nest_err, "'g' [0.005 us, 0.015 us] starts "
					    "inside 'f' [0.001 us, 0.009 us]"));
	ss_e2e_trace_release(&tr);
	ss_e2e_pass(t);
}

static void test_refuses_bad_shape(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace tr;
	static const struct {
		const char *json, *why;
	} bad[] = {
		{"[]", "top level is not an object"},
		{"{\"traceEvents\":[],\"otherData\":{}}", "\"displayTimeUnit\""},
		{"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[],\"otherData\":{}}",
		 "expected \"ns\""},
		{"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}",
		 "\"otherData\" is not an object"},
		{HEAD TAIL ",", "not valid JSON"},
		{"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[],\"otherData\":{},"
		 "\"extra\":1}",
		 "unexpected top-level key \"extra\""},
		{HEAD X("f", 1, "1.5", "0.001") TAIL, "\"ts\":1.5 is not"},
		{HEAD X("f", 1, "1500", "0.001") TAIL, "\"ts\":1500 is not"},
		{HEAD "{\"ph\":\"X\",\"cat\":\"function\",\"pid\":1,\"tid\":1,"
		      "\"ts\":1.000,\"dur\":1}" TAIL,
		 "needs string name"},
		{HEAD X("f", 1, "1.000", "-0.001") TAIL, "negative dur"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512] = "";
		int rc = load(t, &tr, bad[i].json, err, sizeof(err));
		if (rc == 0 || !strstr(err, bad[i].why))
			fail_msg("case %zu: expected failure mentioning '%s', "
				 "got rc %d '%s'",
				 i, bad[i].why, rc, err);
		ss_e2e_trace_release(&tr);
	}
	ss_e2e_pass(t);
}

static void test_sh_status(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	assert_int_equal(ss_e2e_sh(t, "echo out; echo err >&2; exit 5"), 5);
	assert_string_equal(t->out, "out\n");
	assert_string_equal(t->err, "err\n");
	assert_int_equal(ss_e2e_sh(t, "kill -TERM $$"), 128 + 15);
	assert_int_equal(ss_e2e_sh(t, "pwd"), 0);
	assert_int_equal(strncmp(t->out, t->dir, strlen(t->dir)), 0);
	assert_int_equal(ss_e2e_sh(t, "test -n \"$SS_E2E_BUILD\" && "
				   "test -d \"$SS_E2E_SRC/tests/e2e\""),
			 0);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_model),
		SS_E2E_TEST(test_overlap_and_recursion),
		SS_E2E_TEST(test_refuses_bad_shape),
		SS_E2E_TEST(test_sh_status),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
