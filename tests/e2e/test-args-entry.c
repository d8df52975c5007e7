/*
 * test-args-entry.c - end to end: record.args where the value at the hook
 * was wrong (issue 44), on s-args-entry.cc against its ledger.
 *
 *   test_entry: shift(long n, long k) { n += k; ... } and
 *     pick(int, int b), 3 calls each, g++ -O0/-O2/-O3/-Os and clang++
 *     -O0/-O2: every parameter of every call is the ledger's value or
 *     <optimized out>, never another (gcc -O2 gave n = n + k: the
 *     location at the hook's return address without its view; clang++
 *     -O0 gave b the unnamed first argument, 1001), and at -O0 every value
 *     is the ledger's.
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

enum { CALLS = 6 };

static const struct ss_e2e_variant gcc_O0 = { "g++", "-O0" }, gcc_O2 = { "g++", "-O2" },
	gcc_O3 = { "g++", "-O3" }, gcc_Os = { "g++", "-Os" }, clang_O0 = { "clang++", "-O0" },
	clang_O2 = { "clang++", "-O2" };

static void test_entry(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	cJSON *evs[CALLS], *ev;
	size_t n = 0, exact = 0, out = 0;
	char path[4200], line[128];
	int o0 = !strcmp(t->v->opt, "-O0");

	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -o s-args-entry "
			"\"$SS_E2E_SRC/tests/e2e/s-args-entry.cc\"", t->v->cc, t->v->opt);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set record.args=shift,pick "
			"-o run -- ./s-args-entry ledger");
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (cJSON_IsString(name) && n < CALLS &&
		    (!strcmp(name->valuestring, "shift") || !strcmp(name->valuestring, "pick")))
			evs[n++] = ev;
	}
	SS_E2E_CHECK(t, n == CALLS, "expected %d calls of shift and pick, got %zu", CALLS, n);
	qsort(evs, n, sizeof(evs[0]), ss_e2e_cmp_ts);
	snprintf(path, sizeof(path), "%s/ledger", t->dir);
	FILE *f = fopen(path, "r");
	SS_E2E_CHECK(t, f != NULL, "no ledger");
	for (size_t i = 0; i < n && fgets(line, sizeof(line), f); i++) {
		static const char *const sh[] = { "n", "k" }, *const pk[] = { "b" };
		char fn[16];
		long want[2];
		int k = sscanf(line, "%15s %ld %ld", fn, &want[0], &want[1]) - 1;
		const char *got_fn = cJSON_GetObjectItemCaseSensitive(evs[i], "name")->valuestring;
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(evs[i], "args");
		SS_E2E_CHECK(t, !strcmp(fn, got_fn), "call %zu: trace has %s, ledger %s", i, got_fn,
			     fn);
		for (int j = 0; j < k; j++) {
			const char *pn = !strcmp(fn, "shift") ? sh[j] : pk[j];
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, pn);
			if (cJSON_IsString(v) && !strcmp(v->valuestring, "<optimized out>") && !o0) {
				out++;
				continue;
			}
			SS_E2E_CHECK(t, cJSON_IsNumber(v) && (long)v->valuedouble == want[j],
				     "call %zu %s: %s is %s, the program passed %ld", i, fn, pn,
				     cJSON_IsNumber(v) ? cJSON_PrintUnformatted(v)
				     : cJSON_IsString(v) ? v->valuestring : "missing",
				     want[j]);
			exact++;
		}
		SS_E2E_CHECK(t, cJSON_GetArraySize(a) >= k, "call %zu %s: %d values expected", i,
			     fn, k);
	}
	fclose(f);
	print_message("e2e: %zu values exact, %zu <optimized out>\n", exact, out);
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

#define VARIANT(fn, var, tag) { #fn "/" tag, fn, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(test_entry, gcc_O0, "g++-O0"),
		VARIANT(test_entry, gcc_O2, "g++-O2"),
		VARIANT(test_entry, gcc_O3, "g++-O3"),
		VARIANT(test_entry, gcc_Os, "g++-Os"),
		VARIANT(test_entry, clang_O0, "clang++-O0"),
		VARIANT(test_entry, clang_O2, "clang++-O2"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
