/*
 * test-args-asan.c - end to end: record.args in programs built with
 * AddressSanitizer (issue 44).  The capture copies the caller's frame at
 * the hook, red zones and all; through memcpy, which ASan intercepts and
 * checks, the first listed call stopped the program with a
 * stack-buffer-underflow.
 *
 *   test_asan: s-args-asan built with clang -fsanitize=address runs to
 *     its end under record with frame and pick listed, ASan says nothing,
 *     and each of the 10 calls of each carries every parameter by name,
 *     its value (frame n = i, pick n = i and k = 2i + 1, in call order)
 *     or <optimized out>: clang keeps an ASan build's parameters where
 *     the DWARF at the hook does not reach them, and never a wrong one.
 *     (gcc's ASan runtime refuses to run under record's LD_PRELOAD: not
 *     tested here.)
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

enum { CALLS = 10 };

static const struct ss_e2e_variant clang_O0 = { "clang", "-O0" },
				    clang_O2 = { "clang", "-O2" };

static size_t exact, out;

/* The call's value of `name`: `want` exactly, or <optimized out> */
static void arg(struct ss_e2e *t, const cJSON *ev, const char *name, long want)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, name);
	const char *fn = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring;
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "<optimized out>")) {
		out++;
		return;
	}
	SS_E2E_CHECK(t, cJSON_IsNumber(v), "a call of %s has no value for %s", fn, name);
	SS_E2E_CHECK(t, (long)v->valuedouble == want, "a call of %s: %s=%ld, expected %ld", fn,
		     name, (long)v->valuedouble, want);
	exact++;
}

static void test_asan(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	cJSON *fr[CALLS], *pk[CALLS], *ev;
	size_t nf = 0, np = 0;

	ss_e2e_build(t, "args-asan", "-fsanitize=address");
	int st = ss_e2e_sh(t, "ASAN_OPTIONS=detect_stack_use_after_return=0 "
			      "\"$SS_E2E_BUILD/bin/stepscope\" record --set record.args=frame,pick "
			      "-o run -- ./s-args-asan %d", CALLS);
	SS_E2E_CHECK(t, st == 0 && !strstr(t->err, "AddressSanitizer"),
		     "record of the ASan build: status %d: %.600s", st, t->err);
	SS_E2E_CHECK(t, strstr(t->out, "sum "), "the program did not finish: %s", t->out);
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (!cJSON_IsString(name))
			continue;
		if (!strcmp(name->valuestring, "frame") && nf < CALLS)
			fr[nf++] = ev;
		else if (!strcmp(name->valuestring, "pick") && np < CALLS)
			pk[np++] = ev;
	}
	SS_E2E_CHECK(t, nf == CALLS && np == CALLS, "%zu calls of frame, %zu of pick, expected %d",
		     nf, np, CALLS);
	qsort(fr, nf, sizeof(fr[0]), ss_e2e_cmp_ts);
	qsort(pk, np, sizeof(pk[0]), ss_e2e_cmp_ts);
	exact = out = 0;
	for (long i = 0; i < CALLS; i++) {
		arg(t, fr[i], "n", i);
		arg(t, pk[i], "n", i);
		arg(t, pk[i], "k", 2 * i + 1);
	}
	print_message("e2e: %zu values exact, %zu <optimized out>\n", exact, out);
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

#define VARIANT(fn, var, tag) { #fn "/" tag, fn, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(test_asan, clang_O0, "clang-O0"),
		VARIANT(test_asan, clang_O2, "clang-O2"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
