/*
 * test-args-dw.c - unit tests of names/args-dw.c on a program built here
 * (gcc -g -O0, not PIE, so file and runtime addresses agree): a capture
 * whose hook address lies outside every instance of the listed function
 * (no body, clone or inlined copy of it around the call) still gives every
 * parameter by name, each <optimized out> (issue 44: never an empty args),
 * and an address with no function's DWARF gives nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#include "args.h"

static char dir[] = "/tmp/ss-args-dw-XXXXXX";
static char exe[256];

static const char fixture[] =
	"int sgemm(int trans_A, int trans_B, int M, int N, int K, float *c)\n"
	"{ return trans_A + trans_B + M + N + K + (c != 0); }\n"
	"int main(void) { return sgemm(0, 1, 64, 64, 2, 0) == 0; }\n";

/* The file address of symbol name in exe (nm), or 0. */
static uint64_t sym_addr(const char *name)
{
	char cmd[512], line[256];
	unsigned long long a = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" { print $1 }'", exe, name);
	if (!(p = popen(cmd, "r")))
		return 0;
	if (fgets(line, sizeof(line), p))
		a = strtoull(line, NULL, 16);
	pclose(p);
	return a;
}

static int setup(void **state)
{
	char path[256], cmd[1024];
	FILE *f;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/f.c", dir);
	snprintf(exe, sizeof(exe), "%s/f", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(fixture, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -g -O0 -fno-pie -no-pie -o %s %s", exe, path);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	ss_args_dw_release();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_names_only(void **state)
{
	static const char *const names[] = { "trans_A", "trans_B", "M", "N", "K", "c" };
	struct ss_args_cap cap = { 0 };
	struct ss_argv v[SS_ARGS_MAX];
	int n;

	(void)state;
	cap.fn = sym_addr("sgemm");
	cap.pc = sym_addr("main") + 4;  /* main's code: no instance of sgemm */
	cap.arch = 1;
	assert_true(cap.fn && cap.pc > 4);
	n = ss_args_dw_eval(exe, NULL, 0, &cap, v, SS_ARGS_MAX);
	assert_int_equal(n, 6);
	for (int i = 0; i < n; i++) {
		assert_string_equal(v[i].name, names[i]);
		assert_int_equal(v[i].kind, SS_ARGV_OUT);
	}
}

static void test_no_function(void **state)
{
	struct ss_args_cap cap = { 0 };
	struct ss_argv v[SS_ARGS_MAX];

	(void)state;
	cap.fn = sym_addr("main") + 1;  /* no function begins there */
	cap.pc = sym_addr("main") + 4;
	cap.arch = 1;
	assert_int_equal(ss_args_dw_eval(exe, NULL, 0, &cap, v, SS_ARGS_MAX), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_only),
		cmocka_unit_test(test_no_function),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
