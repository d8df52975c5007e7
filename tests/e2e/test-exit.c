/*
 * test-exit.c - end to end: `stepscope record` exits with the program's
 * status, and the trace of a program that ends with status 3 (returning it
 * from main, or calling exit() two frames deep) still holds its calls.
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

static void test_exit_status_return(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "exit", NULL);
	int st = ss_e2e_record(t, "rec", "exit", "return");
	SS_E2E_EXPECT_STATUS(t, st, 3);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "run", 0, 7);
	SS_E2E_EXPECT_CALLS(t, tr, "finish", 0, 0);
	SS_E2E_EXPECT_INSIDE(t, tr, "run", "main");
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 8);
	ss_e2e_pass(t);
}

static void test_exit_status_exit(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "exit", NULL);
	int st = ss_e2e_record(t, "rec", "exit", "exit");
	SS_E2E_EXPECT_STATUS(t, st, 3);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "run", 0, 7);
	/* main and finish never return: each shows once, cut off at the end
	 * of the process, with everything else inside main. */
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "finish", 0, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "run", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "finish", "main");
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		int open_at_exit = !strcmp(s->name, "main") ||
				   !strcmp(s->name, "finish");
		unsigned cut = s->flags & (SS_E2E_CLIPPED_END | SS_E2E_UNWOUND);
		SS_E2E_CHECK(t, open_at_exit ? cut != 0 : s->flags == 0,
			     "'%s': expected %s, got args flags 0x%x", s->name,
			     open_at_exit ? "clipped end or unwound (it never "
					    "returned)"
					  : "no clipped/unwound flag",
			     s->flags);
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_exit_status_return),
		SS_E2E_VARIANTS(test_exit_status_exit),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
