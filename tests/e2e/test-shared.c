/*
 * test-shared.c - end to end: s-uselib linked against libssfix.so
 * (lib-shared.c), both built through stepscope-cc.  The library's functions,
 * static ones included, are named and counted exactly, and calls cross the
 * library boundary both ways (lib_apply calls back into the program).
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

static void test_shared(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t,
		     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
		     "-o libssfix.so \"$SS_E2E_SRC/tests/e2e/lib-shared.c\"",
		     t->v->cc, t->v->opt);
	struct ss_e2e_trace *tr = ss_e2e_profile(
		t, "uselib", "-L. -lssfix -Wl,-rpath,\"$PWD\"", NULL);
	SS_E2E_EXPECT_NESTED(t, tr);

	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_outer", 0, 4);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_inner", 0, 4 * 3);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_apply", 0, 5);
	SS_E2E_EXPECT_CALLS(t, tr, "cb_square", 0, 5);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 4 + 12 + 5 + 5);

	SS_E2E_EXPECT_INSIDE(t, tr, "lib_outer", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "lib_inner", "lib_outer");
	SS_E2E_EXPECT_INSIDE(t, tr, "lib_apply", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "cb_square", "lib_apply");

	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		const char *want = !strncmp(s->name, "lib_", 4) ? "lib-shared.c:"
								: "s-uselib.c:";
		SS_E2E_CHECK(t, s->file && strstr(s->file, want),
			     "'%s': expected args.file \"...%sLINE\", got %s",
			     s->name, want, s->file ? s->file : "none");
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_shared),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
