/*
 * test-args-list.c - end to end: every name and glob record.args lists is
 * honoured or refused in one line (issue 44), on s-args-entry.cc
 * (shift and pick, 3 calls each, g++ -O0).
 *
 *   test_many: 64 globs that match nothing, then `shift` (the 65th), then
 *     a 305-character glob that matches pick: all 6 calls carry every
 *     value; the one warning line names the globs that matched nothing
 *     and neither of the two that did (globs after the 64th were dropped,
 *     and globs of 256 characters or more, without a word).
 *   test_keys: scale(long flops, long n) with flops: scale: "2*flops*n"
 *     and none(int, int): each call of scale has its parameter flops and
 *     the computed value under "flops (computed)", one key each (the two
 *     were both "flops"), and none's args are empty (it had
 *     "args":{"args":""}).
 *   test_step_lambda: step.function: train_step, a C++ function with two
 *     lambdas in its body (s-step-lambda.cc): record takes it (it was
 *     refused as ambiguous with its lambdas' operator() as candidates),
 *     and the trace has its 3 steps.
 *   test_nul: a list item with a NUL byte ("pi\0ck") stops record before
 *     the program runs: exit 2, one line with the file, line and column
 *     (it was cut to "pi" and matched nothing).
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

static const struct ss_e2e_variant gcc_O0 = { "g++", "-O0" };

static void build(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -o s-args-entry "
			"\"$SS_E2E_SRC/tests/e2e/s-args-entry.cc\"", t->v->cc, t->v->opt);
}

static void test_many(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static char list[4000], glob[320];
	size_t at = 0, shifts = 0, picks = 0;
	cJSON *ev;

	build(t);
	for (int i = 0; i < 64; i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "nomatch%d,", i);
	memset(glob, 'p', 301);
	glob[0] = '[';
	memcpy(glob + 301, "]ick", 5); /* [ppp...p]ick: pick, 305 characters */
	snprintf(list + at, sizeof(list) - at, "shift,%s", glob);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set 'record.args=%s' -o run -- "
			"./s-args-entry ledger", list);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "no instrumented function matches") == 1,
		     "expected one warning line about unmatched globs: %s", t->err);
	const char *w = strstr(t->err, "no instrumented function matches");
	const char *eol = strchr(w, '\n');
	size_t wl = eol ? (size_t)(eol - w) : strlen(w);
	char warn[600];
	snprintf(warn, sizeof(warn), "%.*s", (int)(wl < 599 ? wl : 599), w);
	SS_E2E_CHECK(t, strstr(warn, "'nomatch0'") && !strstr(warn, "shift") &&
				!strstr(warn, "ick"),
		     "the warning names the wrong globs: %s", warn);
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
		if (!cJSON_IsString(name))
			continue;
		if (!strcmp(name->valuestring, "shift")) {
			SS_E2E_CHECK(t, cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "n")) &&
						cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "k")),
				     "a call of shift (the 65th glob) has no arguments");
			shifts++;
		} else if (!strcmp(name->valuestring, "pick")) {
			SS_E2E_CHECK(t, cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "b")),
				     "a call of pick (a 305-character glob) has no arguments");
			picks++;
		}
	}
	cJSON_Delete(root);
	SS_E2E_CHECK(t, shifts == 3 && picks == 3, "%zu calls of shift, %zu of pick, expected 3 each",
		     shifts, picks);
	ss_e2e_pass(t);
}

static void test_keys(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	SS_E2E_SH_OK(t, "printf 'record:\\n  args: [scale, none]\\nflops:\\n  scale: \"2*flops*n\"\\n' "
			"> keys.yaml");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c keys.yaml -o run -- "
			"./s-args-entry ledger");
	ss_e2e_symbolize(t, "run");
	for (long i = 0; i < 3; i++) {
		long fl = 100 + i, n = i + 1;
		SS_E2E_SH_OK(t, "grep -c '\"name\":\"scale\",[^}]*\"args\":{\"flops\":%ld,\"n\":%ld,"
				"\"flops (computed)\":%ld,' run/trace.json", fl, n, 2 * fl * n);
		SS_E2E_CHECK(t, atoi(t->out) == 1, "scale(flops=%ld, n=%ld): %d slices with both "
			     "keys, expected 1", fl, n, atoi(t->out));
	}
	SS_E2E_SH_OK(t, "grep -o '\"name\":\"none\",[^}]*}' run/trace.json | grep -c "
			"'\"args\":{\"file\"'");
	SS_E2E_CHECK(t, atoi(t->out) == 3, "none: %d slices whose args start with file, expected 3",
		     atoi(t->out));
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -q '\"args\":\"\"' run/trace.json") != 0,
		     "trace.json has an \"args\":\"\" key");
	ss_e2e_pass(t);
}

static void test_step_lambda(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -o s-step-lambda "
			"\"$SS_E2E_SRC/tests/e2e/s-step-lambda.cc\"", t->v->cc, t->v->opt);
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set step.function=train_step "
			      "-o run -- ./s-step-lambda");
	SS_E2E_CHECK(t, st == 0 && !strstr(t->err, "ambiguous"), "record: status %d: %s", st,
		     t->err);
	ss_e2e_symbolize(t, "run");
	SS_E2E_SH_OK(t, "grep -o '\"cat\":\"step\"' run/trace.json | wc -l");
	SS_E2E_CHECK(t, atoi(t->out) == 3, "%d steps, expected 3", atoi(t->out));
	ss_e2e_pass(t);
}

static void test_nul(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	SS_E2E_SH_OK(t, "printf 'record:\\n  args: [shift, \"pi\\\\0ck\"]\\n' > nul.yaml");
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c nul.yaml -o run -- "
			      "./s-args-entry ledger");
	SS_E2E_CHECK(t, st == 2, "record: expected status 2, got %d: %s", st, t->err);
	SS_E2E_CHECK(t, strstr(t->err, "nul.yaml:2:17: record.args must not contain a NUL byte, "
				       "got 'pi\\0ck'") &&
				ss_e2e_lines_with(t->err, "nul.yaml") == 1,
		     "unexpected message: %s", t->err);
	SS_E2E_CHECK(t, ss_e2e_sh(t, "test -e ledger") != 0, "the program ran");
	ss_e2e_pass(t);
}

#define VARIANT(fn, var, tag) { #fn "/" tag, fn, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(test_many, gcc_O0, "g++-O0"),
		VARIANT(test_keys, gcc_O0, "g++-O0"),
		VARIANT(test_step_lambda, gcc_O0, "g++-O0"),
		VARIANT(test_nul, gcc_O0, "g++-O0"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
