/*
 * test-shared.c - end to end: s-uselib linked against libssfix.so
 * (lib-shared.c), both built through stepscope-cc.  The library's functions,
 * static ones included, are named and counted exactly, and calls cross the
 * library boundary both ways (lib_apply calls back into the program).
 * With the library stripped (only .dynsym left), the warning that some of
 * its addresses have no symbol is given once per run directory, by the
 * first command that reads it, not again by every later command.
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

static void test_stripped_warned_once(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t,
		     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
		     "-o libssfix.so \"$SS_E2E_SRC/tests/e2e/lib-shared.c\" && "
		     "strip --strip-unneeded libssfix.so",
		     t->v->cc, t->v->opt);
	ss_e2e_build(t, "uselib", "-L. -lssfix -Wl,-rpath,\"$PWD\"");
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "run", "uselib", NULL), 0);
	static const char *const cmds[] = { "symbolize", "report", "flame", "html",
					    "symbolize" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" %s run >/dev/null 2>err && "
				"grep -c 'libssfix.so: no symbol for some addresses' err || true",
			     cmds[i]);
		SS_E2E_CHECK(t, !strcmp(t->out, i ? "0\n" : "1\n"),
			     "stepscope %s: expected the stripped-library warning %s, got %s",
			     cmds[i], i ? "not again" : "once", t->out);
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_shared),
		SS_E2E_TEST(test_stripped_warned_once),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
