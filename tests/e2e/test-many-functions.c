/*
 * test-many-functions.c - end to end: one source file of 10,000 functions
 * (issue 45: record and symbolize took about 20 s on it, a walk of every
 * symbol and every DIE of the file per function named).
 *
 * Checks: the program, generated here, calls f0 ... f9999 once each from
 * main; `stepscope record` and `symbolize` complete, and trace.json holds
 * exactly one slice named fN for every N, and main.  No time is asserted
 * (make bench is where speed goes); the names are the verdict.
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

enum { NFN = 10000 };

static void test_many_functions(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static unsigned char seen[NFN];
	char path[4200];
	size_t nmain = 0, other = 0;
	const cJSON *ev;
	FILE *f;

	snprintf(path, sizeof(path), "%s/many.c", t->dir);
	f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fputs("#include <stdio.h>\nvolatile int sink;\n", f);
	for (int i = 0; i < NFN; i++)
		fprintf(f, "__attribute__((noinline)) void f%d(int x) { sink += x + %d; }\n", i, i);
	fputs("int main(void)\n{\n", f);
	for (int i = 0; i < NFN; i++)
		fprintf(f, "\tf%d(%d);\n", i, i);
	fputs("\tprintf(\"sink %d\\n\", sink);\n\treturn 0;\n}\n", f);
	fclose(f);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" -O0 -o many many.c");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o run -- ./many");
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	memset(seen, 0, sizeof(seen));
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		char *end;
		long k;

		if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") || !cJSON_IsString(name))
			continue;
		if (!strcmp(name->valuestring, "main")) {
			nmain++;
			continue;
		}
		k = name->valuestring[0] == 'f' ? strtol(name->valuestring + 1, &end, 10) : -1;
		if (k < 0 || k >= NFN || *end || end == name->valuestring + 1) {
			other++;
			SS_E2E_CHECK(t, other < 5, "a slice named '%s'", name->valuestring);
			continue;
		}
		SS_E2E_CHECK(t, seen[k] == 0, "f%ld has two slices", k);
		seen[k] = 1;
	}
	for (int i = 0; i < NFN; i++)
		SS_E2E_CHECK(t, seen[i], "no slice named f%d", i);
	SS_E2E_CHECK(t, nmain == 1 && other == 0, "main: %zu slices, %zu others", nmain, other);
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_many_functions),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
