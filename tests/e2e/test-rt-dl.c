/*
 * test-rt-dl.c - end to end: libraries opened with dlopen, used and
 * closed before the program ends.  s-rt-dl loads librtdla.so, then
 * librtdlb.so (the same code under other names, which the loader puts
 * where the first one was), then librtdla.so again, each time calling
 * into it and closing it.  Every call must be named after the library
 * that was loaded at the time - never module+0x..., never the other
 * library's function at the same address - with RTLD_LAZY and RTLD_NOW,
 * with chunks so small that they are refilled while a library is loaded
 * (buffer_kb=64) and with the default size (no refill at all).
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

#define INNER 3000 /* FN_inner calls per FN_entry call: 6002 events */

static void build(struct ss_e2e *t)
{
	static const char *const which[] = { "a", "b" };
	for (int i = 0; i < 2; i++)
		SS_E2E_SH_OK(t,
			     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
			     "-DLIB_%c -o librtdl%s.so \"$SS_E2E_SRC/tests/e2e/lib-rt-dl.c\"",
			     t->v->cc, t->v->opt, which[i][0] - 'a' + 'A', which[i]);
	ss_e2e_build(t, "rt-dl", "-ldl");
}

/* Every slice named `name` is directly inside `parent`, comes from file
 * `file`, and there are `n`. */
static void expect_fn(struct ss_e2e *t, const struct ss_e2e_trace *tr,
		      const char *name, const char *parent, const char *file,
		      size_t n)
{
	SS_E2E_EXPECT_CALLS(t, tr, name, 0, n);
	SS_E2E_EXPECT_INSIDE(t, tr, name, parent);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, name))
			continue;
		SS_E2E_CHECK(t, s->file && strstr(s->file, file) && s->flags == 0,
			     "'%s': expected args.file \"...%s:LINE\" and no flags, "
			     "got %s and 0x%x", name, file, s->file ? s->file : "none",
			     s->flags);
	}
}

static void run_one(struct ss_e2e *t, const char *mode, int small)
{
	char rundir[32];
	snprintf(rundir, sizeof(rundir), "rec-%s-%s", mode, small ? "64k" : "dflt");
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o %s %s -- "
			   "./s-rt-dl %s %d", rundir, small ? "--set buffer_kb=64" : "",
			   mode, INNER);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	/* where each round's library was: the same place makes the test
	 * sharper, but the loader does not promise it */
	char a1[32] = "", b[32] = "", a2[32] = "";
	const char *p = strstr(t->out, "lib ./librtdla.so ");
	if (p)
		sscanf(p, "lib ./librtdla.so %31s", a1);
	p = strstr(t->out, "lib ./librtdlb.so ");
	if (p)
		sscanf(p, "lib ./librtdlb.so %31s", b);
	p = p ? strstr(p, "lib ./librtdla.so ") : NULL;
	if (p)
		sscanf(p, "lib ./librtdla.so %31s", a2);
	SS_E2E_CHECK(t, a1[0] && b[0] && a2[0],
		     "fixture did not print the three \"lib PATH ADDR\" lines: %s",
		     t->out);
	if (strcmp(a1, b) || strcmp(b, a2))
		printf("note: %s: the libraries were loaded at %s, %s, %s\n",
		       rundir, a1, b, a2);

	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, rundir);
	SS_E2E_EXPECT_NESTED(t, tr);
	expect_fn(t, tr, "main", NULL, "s-rt-dl.c", 1);
	expect_fn(t, tr, "use_lib", "main", "s-rt-dl.c", 3);
	expect_fn(t, tr, "after_libs", "main", "s-rt-dl.c", 1);
	expect_fn(t, tr, "dla_entry", "use_lib", "lib-rt-dl.c", 4);
	expect_fn(t, tr, "dla_inner", "dla_entry", "lib-rt-dl.c", 4 * INNER);
	expect_fn(t, tr, "dlb_entry", "use_lib", "lib-rt-dl.c", 2);
	expect_fn(t, tr, "dlb_inner", "dlb_entry", "lib-rt-dl.c", 2 * INNER);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 3 + 1 + 6 + 6 * INNER);
	/* the b round lies between the two a rounds */
	const struct ss_e2e_slice *bs = ss_e2e_find(tr, "dlb_entry", 0);
	size_t before = 0, after = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (!strcmp(s->name, "dla_entry"))
			*(s->ts_ns < bs->ts_ns ? &before : &after) += 1;
	}
	SS_E2E_CHECK(t, before == 2 && after == 2,
		     "expected 2 dla_entry calls before dlb_entry and 2 after, got %zu "
		     "and %zu", before, after);
	ss_e2e_trace_release(tr);
	free(tr);
	t->ntraces--;
}

static void test_dlopen(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	build(t);
	run_one(t, "lazy", 1);
	run_one(t, "lazy", 0);
	run_one(t, "now", 1);
	run_one(t, "now", 0);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_dlopen, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_dlopen, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_dlopen, ss_e2e_clang_O2, "clang-O2"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
