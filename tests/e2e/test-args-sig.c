/*
 * test-args-sig.c - end to end: record.args against signal handlers that
 * call a listed function at any instant of another listed call's capture
 * (issue 44), on s-args-sig: 4 threads in turn, each under its own timer
 * whose handler (300 bytes of locals) calls f(-1, k), while the thread
 * makes 20,000 calls f(1000 + i, k); k is a check word of the first
 * argument, so a value mixed from two calls shows.
 *
 *   test_sig: 20 us timer.  record runs to its end (a handler that waited
 *     on a lock the interrupted capture held hung it); every call of f the
 *     program made is one slice with its own arguments: exactly as many
 *     f(-1) as the handler counted, each f(1000 + i) once per thread, k
 *     always the check word of x, none without arguments; no slice named
 *     by a raw address and no corrupt record when it is read; the program
 *     made as many mallocs while it ran as it does recorded without
 *     record.args (the capture path never calls the program's malloc).
 *   test_nodefer: the same with SA_NODEFER (handlers nest) and a 50 us
 *     timer (at 20 us, nested handlers on this 2-CPU machine under load
 *     overflow the stack even when the runtime is disabled).
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

enum { THREADS = 4, CALLS = 20000 };

static const struct ss_e2e_variant gcc_O0 = { "gcc", "-O0" }, gcc_O2 = { "gcc", "-O2" },
	clang_O0 = { "clang", "-O0" }, clang_O2 = { "clang", "-O2" };

/* "calls N handler H mallocs M" from the ledger at `rel` */
static void read_ledger(struct ss_e2e *t, const char *rel, long *calls, long *handler,
			long *mallocs)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	FILE *f = fopen(path, "r");
	SS_E2E_CHECK(t, f != NULL, "the program wrote no ledger %s", rel);
	int n = fscanf(f, "calls %ld handler %ld mallocs %ld", calls, handler, mallocs);
	fclose(f);
	SS_E2E_CHECK(t, n == 3, "ledger %s: unreadable", rel);
}

static void run_sig(void **state, int period_us, const char *mode)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	long calls, handler, mallocs, calls0, handler0, mallocs0;
	static unsigned char seen[CALLS];

	ss_e2e_build(t, "args-sig", NULL);
	/* the same program recorded without record.args: its malloc count */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o plain -- ./s-args-sig plain.ledger "
			"%d %d %d %s", THREADS, CALLS, period_us, mode);
	read_ledger(t, "plain.ledger", &calls0, &handler0, &mallocs0);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set record.args=f -o run -- "
			"./s-args-sig ledger %d %d %d %s", THREADS, CALLS, period_us, mode);
	read_ledger(t, "ledger", &calls, &handler, &mallocs);
	SS_E2E_CHECK(t, calls == THREADS * CALLS, "ledger: %ld calls, expected %d", calls,
		     THREADS * CALLS);
	SS_E2E_CHECK(t, handler > 0, "the timer's handler never ran");
	SS_E2E_CHECK(t, mallocs == mallocs0,
		     "the program made %ld mallocs recorded with record.args, %ld without", mallocs,
		     mallocs0);
	ss_e2e_symbolize(t, "run");
	SS_E2E_CHECK(t, !strstr(t->err, "corrupt"), "reading the trace: %s", t->err);

	cJSON *root = ss_e2e_load_json(t, "run/trace.json"), *ev;
	long f_all = 0, f_handler = 0, f_none = 0;
	memset(seen, 0, sizeof(seen));
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (!cJSON_IsString(name))
			continue;
		SS_E2E_CHECK(t, strncmp(name->valuestring, "0x", 2),
			     "a slice named by a raw address: %s", name->valuestring);
		if (strcmp(name->valuestring, "f"))
			continue;
		f_all++;
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, "x");
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(a, "k");
		if (!cJSON_IsNumber(x) || !cJSON_IsNumber(k)) {
			f_none++;
			continue;
		}
		long xv = (long)x->valuedouble, kv = (long)k->valuedouble;
		SS_E2E_CHECK(t, kv == xv * 7919 + 17, "f(x=%ld, k=%ld): k is not x's (%ld): mixed",
			     xv, kv, xv * 7919 + 17);
		if (xv == -1) {
			f_handler++;
			continue;
		}
		SS_E2E_CHECK(t, xv >= 1000 && xv < 1000 + CALLS, "f(x=%ld): no such call", xv);
		SS_E2E_CHECK(t, seen[xv - 1000] < THREADS, "f(x=%ld) more than %d times",
			     xv, THREADS);
		seen[xv - 1000]++;
	}
	cJSON_Delete(root);
	SS_E2E_CHECK(t, f_none == 0, "%ld calls of f without arguments", f_none);
	SS_E2E_CHECK(t, f_all == calls + handler,
		     "trace: %ld calls of f, the program made %ld (%ld in the handler)", f_all,
		     calls + handler, handler);
	SS_E2E_CHECK(t, f_handler == handler, "trace: %ld calls f(-1), the handler made %ld",
		     f_handler, handler);
	for (int i = 0; i < CALLS; i++)
		SS_E2E_CHECK(t, seen[i] == THREADS, "f(x=%d): %d times, expected %d",
			     1000 + i, seen[i], THREADS);
	print_message("e2e: %ld calls of f, %ld in the handler, %ld mallocs\n", f_all, handler,
		      mallocs);
	ss_e2e_pass(t);
}

static void test_sig(void **state)
{
	run_sig(state, 20, "");
}

static void test_nodefer(void **state)
{
	run_sig(state, 50, "nodefer");
}

#define VARIANT(fn, var, tag) { #fn "/" tag, fn, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(test_sig, gcc_O0, "gcc-O0"),
		VARIANT(test_sig, gcc_O2, "gcc-O2"),
		VARIANT(test_sig, clang_O0, "clang-O0"),
		VARIANT(test_sig, clang_O2, "clang-O2"),
		VARIANT(test_nodefer, gcc_O0, "gcc-O0"),
		VARIANT(test_nodefer, clang_O2, "clang-O2"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
