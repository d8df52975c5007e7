/*
 * test-stack-qsort.c - end to end: record.stack on s-stack (an instrumented
 * function sorts with libc's qsort and an instrumented comparator), built
 * with gcc and clang at -O0 and -O2.
 *
 * Checks, from trace.json's "stackFrames" and each slice's "sf": every
 * comparator slice (exactly as many as the fixture counted compares) carries
 * a stack that starts at the comparator, runs through qsort's frames (named
 * from libc's symbols: "qsort" or "qsort_r") and then continues
 * sort_them <- train_step <- main; every sort_them and train_step slice
 * carries its own stack; in folded stacks (flame graphs) every comparator
 * line runs main;train_step;sort_them, then qsort's frames, then by_value;
 * and the same recording without record.stack has neither stacks nor
 * "stackFrames".
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

enum { STEPS = 3, N = 8, MAXF = 64 };

static int is_qsort(const char *name)
{
	return !strcmp(name, "qsort") || !strcmp(name, "qsort_r") ||
	       !strcmp(name, "__qsort_r");
}

static void test_stack_qsort(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	long compares = 0;
	char path[4200], shown[2048];
	const char *names[MAXF];

	ss_e2e_build(t, "stack", NULL);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set record.stack=true "
			"-o run -- ./s-stack %d %d", STEPS, N);
	SS_E2E_CHECK(t, sscanf(strstr(t->out, "compares ") ? strstr(t->out, "compares ") : "",
			       "compares %ld", &compares) == 1 && compares > 0,
		     "s-stack did not print its compares: %s", t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "by_value", 0, (size_t)compares);
	SS_E2E_EXPECT_CALLS(t, tr, "sort_them", 0, STEPS);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, STEPS);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);

	snprintf(path, sizeof(path), "%s/run/trace.json", t->dir);
	char *text = ss_ut_slurp(path);
	cJSON *root = cJSON_Parse(text);
	free(text);
	SS_E2E_CHECK(t, root != NULL, "%s is not JSON", path);
	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "stackFrames");
	SS_E2E_CHECK(t, cJSON_IsObject(frames), "%s has no \"stackFrames\" object", path);
	const cJSON *ev;
	long cmp_ok = 0, sort_ok = 0, step_ok = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *sf = cJSON_GetObjectItemCaseSensitive(ev, "sf");
		if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") ||
		    !cJSON_IsString(name))
			continue;
		const char *fn = name->valuestring;
		if (strcmp(fn, "by_value") && strcmp(fn, "sort_them") &&
		    strcmp(fn, "train_step"))
			continue;
		SS_E2E_CHECK(t, cJSON_IsString(sf), "a %s slice has no \"sf\"", fn);
		int n = ss_e2e_stack_chain(frames, sf->valuestring, names, MAXF);
		ss_e2e_show_chain(shown, sizeof(shown), names, n);
		SS_E2E_CHECK(t, n > 0 && !strcmp(names[0], fn),
			     "the stack of a %s slice starts elsewhere: %s", fn, shown);
		int s = 1;
		if (!strcmp(fn, "by_value")) {
			/* qsort's frames, then the instrumented caller */
			int q = 0;
			while (s < n && strcmp(names[s], "sort_them")) {
				SS_E2E_CHECK(t, strcmp(names[s], "by_value") &&
						     strcmp(names[s], "train_step") &&
						     strcmp(names[s], "main"),
					     "by_value's stack has an instrumented frame before sort_them: %s",
					     shown);
				q += is_qsort(names[s]);
				s++;
			}
			SS_E2E_CHECK(t, q >= 1 && s > 1,
				     "no qsort frame between by_value and sort_them: %s", shown);
		}
		if (!strcmp(fn, "by_value"))
			s++; /* sort_them */
		if (strcmp(fn, "train_step")) {
			SS_E2E_CHECK(t, s < n && !strcmp(names[s], "train_step"),
				     "expected ... <- train_step in %s", shown);
			s++;
		}
		SS_E2E_CHECK(t, s < n && !strcmp(names[s], "main"),
			     "expected ... <- main in %s", shown);
		if (!strcmp(fn, "by_value"))
			cmp_ok++;
		else if (!strcmp(fn, "sort_them"))
			sort_ok++;
		else
			step_ok++;
	}
	cJSON_Delete(root);
	SS_E2E_CHECK(t, cmp_ok == compares, "by_value slices with a stack through qsort: expected %ld, got %ld",
		     compares, cmp_ok);
	SS_E2E_CHECK(t, sort_ok == STEPS && step_ok == STEPS,
		     "sort_them / train_step slices with stacks: expected %d, got %ld / %ld",
		     STEPS, sort_ok, step_ok);

	/* folded stacks: qsort's frames between sort_them and by_value */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -q --format folded "
			"-o run/stacks.folded run");
	snprintf(path, sizeof(path), "%s/run/stacks.folded", t->dir);
	text = ss_ut_slurp(path);
	SS_E2E_CHECK(t, text != NULL, "no %s", path);
	long through = 0, direct = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *leaf = strstr(line, ";by_value ");
		if (!leaf)
			continue;
		/* after the thread's name, the first frame of every line */
		char *fr = strchr(line, ';') ? strchr(line, ';') + 1 : line;
		if (strncmp(fr, "main;train_step;sort_them;", 26)) {
			SS_E2E_CHECK(t, 0, "a by_value line not under main;train_step;sort_them: %s",
				     line);
		}
		*leaf = 0;
		if (strstr(fr + 26, "qsort"))
			through++;
		else
			direct++;
		*leaf = ';';
	}
	free(text);
	SS_E2E_CHECK(t, through > 0 && direct == 0,
		     "folded by_value lines: %ld through qsort, %ld without it", through,
		     direct);

	/* off by default: no stacks at all */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o plain -- ./s-stack %d %d",
		     STEPS, N);
	ss_e2e_symbolize(t, "plain");
	snprintf(path, sizeof(path), "%s/plain/trace.json", t->dir);
	text = ss_ut_slurp(path);
	SS_E2E_CHECK(t, text && !strstr(text, "\"sf\"") && !strstr(text, "stackFrames"),
		     "%s has stacks without record.stack", path);
	free(text);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_stack_qsort),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
