/*
 * test-stack-lib.c - end to end: record.stack through a shared library
 * stepscope has no hooks in.  s-stack-lib (built through stepscope-cc with
 * gcc and clang at -O0 and -O2) hands its instrumented callback on_item to
 * plain_outer() of libstack-plain.so, which the test builds from
 * lib-stack-plain.c with the same compiler but without
 * -finstrument-functions and without debug info, once with
 * -fno-omit-frame-pointer and once with -O2 -fomit-frame-pointer: the walk
 * leaves the frame-pointer chain at the library's first frame and goes on
 * with libunwind either way.
 *
 * Checks: exact call counts (on_item STEPS * N times, no slice for the
 * library's functions); every on_item slice's stack, from trace.json's
 * "stackFrames", is exactly on_item <- plain_inner <- plain_outer <-
 * train_step <- main (library frames named from its symbol table); every
 * train_step slice's is train_step <- main; and in folded stacks every
 * on_item line is main;train_step;plain_outer;plain_inner;on_item.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"
#include "unit-util.h"

enum { STEPS = 3, N = 5, MAXF = 64 };

static const char *const want_item[] = { "on_item", "plain_inner", "plain_outer",
					 "train_step", "main" };
static const char *const want_step[] = { "train_step", "main" };

/* The stack starts with exactly want[0 .. n) (start code may follow). */
static int starts_with(const char **names, int got, const char *const *want, int n)
{
	if (got < n)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], want[i]))
			return 0;
	return 1;
}

static void run_case(void **state, const char *libflags)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	long items = 0;
	char path[4200], shown[2048];
	const char *names[MAXF];

	SS_E2E_SH_OK(t, "%s -shared -fPIC %s -o libstack-plain.so "
			"\"$SS_E2E_SRC/tests/e2e/lib-stack-plain.c\"",
		     t->v->cc, libflags);
	/* the library really has no hooks and no debug info */
	SS_E2E_SH_OK(t, "! nm -D libstack-plain.so | grep -q __cyg_profile && "
			"! readelf -S libstack-plain.so | grep -q debug_info && "
			"nm -D --defined-only libstack-plain.so | grep -q ' T plain_inner$'");
	ss_e2e_build(t, "stack-lib", "-L. -lstack-plain -Wl,-rpath,\"$PWD\"");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set record.stack=true "
			"-o run -- ./s-stack-lib %d %d", STEPS, N);
	SS_E2E_CHECK(t, sscanf(strstr(t->out, "items ") ? strstr(t->out, "items ") : "",
			       "items %ld", &items) == 1 && items == STEPS * N,
		     "s-stack-lib: expected 'items %d', got: %s", STEPS * N, t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "on_item", 0, STEPS * N);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, STEPS);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "plain_outer", 0, 0);
	SS_E2E_EXPECT_CALLS(t, tr, "plain_inner", 0, 0);
	SS_E2E_EXPECT_INSIDE(t, tr, "on_item", "train_step");

	snprintf(path, sizeof(path), "%s/run/trace.json", t->dir);
	char *text = ss_ut_slurp(path);
	cJSON *root = cJSON_Parse(text);
	free(text);
	SS_E2E_CHECK(t, root != NULL, "%s is not JSON", path);
	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "stackFrames");
	SS_E2E_CHECK(t, cJSON_IsObject(frames), "%s has no \"stackFrames\" object", path);
	const cJSON *ev;
	long item_ok = 0, step_ok = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *sf = cJSON_GetObjectItemCaseSensitive(ev, "sf");
		if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") ||
		    !cJSON_IsString(name))
			continue;
		const char *fn = name->valuestring;
		int item = !strcmp(fn, "on_item");
		if (!item && strcmp(fn, "train_step"))
			continue;
		SS_E2E_CHECK(t, cJSON_IsString(sf), "a %s slice has no \"sf\"", fn);
		int n = ss_e2e_stack_chain(frames, sf->valuestring, names, MAXF);
		ss_e2e_show_chain(shown, sizeof(shown), names, n);
		if (item) {
			SS_E2E_CHECK(t, starts_with(names, n, want_item, 5),
				     "the stack of an on_item slice (library built with %s): "
				     "expected on_item <- plain_inner <- plain_outer <- "
				     "train_step <- main ..., got %s",
				     libflags, shown);
			item_ok++;
		} else {
			SS_E2E_CHECK(t, starts_with(names, n, want_step, 2),
				     "the stack of a train_step slice: expected train_step "
				     "<- main ..., got %s", shown);
			step_ok++;
		}
	}
	cJSON_Delete(root);
	SS_E2E_CHECK(t, item_ok == STEPS * N && step_ok == STEPS,
		     "slices with a stack: expected on_item %d, train_step %d; got "
		     "%ld, %ld", STEPS * N, STEPS, item_ok, step_ok);

	/* folded stacks: the library's frames between train_step and on_item */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -q --format folded "
			"-o run/stacks.folded run");
	snprintf(path, sizeof(path), "%s/run/stacks.folded", t->dir);
	text = ss_ut_slurp(path);
	SS_E2E_CHECK(t, text != NULL, "no %s", path);
	long lines = 0;
	static const char want_line[] = "main;train_step;plain_outer;plain_inner;on_item ";
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, "on_item"))
			continue;
		/* after the thread's name, the first frame of every line */
		const char *fr = strchr(line, ';') ? strchr(line, ';') + 1 : line;
		SS_E2E_CHECK(t, !strncmp(fr, want_line, strlen(want_line)),
			     "folded: expected '%s...', got '%s'", want_line, line);
		lines++;
	}
	free(text);
	SS_E2E_CHECK(t, lines == 1, "folded: expected one on_item line, got %ld", lines);
	ss_e2e_pass(t);
}

/* The library keeps frame pointers, yet is not trusted: libunwind. */
static void test_stack_lib_fp(void **state)
{
	run_case(state, "-O0 -fno-omit-frame-pointer");
}

/* No frame pointers in the library: only its unwind tables help. */
static void test_stack_lib_nofp(void **state)
{
	run_case(state, "-O2 -fomit-frame-pointer");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_stack_lib_fp),
		SS_E2E_VARIANTS(test_stack_lib_nofp),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
