/*
 * test-sym.c - unit tests of the symbol backends (symbolize/sym*.c): the
 * test binary resolves its own functions through its own /proc/self/maps
 * with libdw and libbfd, and both must give the same exact names, a
 * static function included, and a file:line ending in test-sym.c:<line>.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libelf.h>

#include "sym.h"

static char maps_text[1 << 20];
static size_t maps_len;

static const int static_line = __LINE__ + 2;
__attribute__((noinline)) static int
ss_test_static_target(int x)
{
	return x * 3 + 1;
}

static const int global_line = __LINE__ + 1;
__attribute__((noinline)) int ss_test_global_target(int x)
{
	return ss_test_static_target(x) + 2;
}

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n;

	assert_non_null(f);
	n = fread(maps_text, 1, sizeof(maps_text) - 1, f);
	fclose(f);
	maps_text[n] = 0;
	maps_len = n;
}

static void check_file_line(const char *file, int line)
{
	char want[64];
	size_t lf, lw;

	assert_non_null(file);
	snprintf(want, sizeof(want), "test-sym.c:%d", line);
	lf = strlen(file);
	lw = strlen(want);
	if (lf < lw || strcmp(file + lf - lw, want) ||
	    (lf > lw && file[lf - lw - 1] != '/'))
		fail_msg("file '%s' does not end in '/%s'", file, want);
}

static void check_backend(const char *backend)
{
	char err[256];
	struct ss_sym *s = ss_sym_new(backend, err, sizeof(err));
	struct ss_sym_space *sp;
	const struct ss_sym_info *i;
	uint64_t a_static = (uint64_t)(uintptr_t)&ss_test_static_target;
	uint64_t a_global = (uint64_t)(uintptr_t)&ss_test_global_target;

	assert_non_null(s);
	ss_sym_set_quiet(s, 1);
	sp = ss_sym_space_new(s);
	assert_non_null(sp);
	ss_sym_space_add_maps(sp, maps_text, maps_len);

	i = ss_sym_lookup(sp, a_static);
	assert_true(i->resolved);
	assert_string_equal(i->name, "ss_test_static_target");
	assert_int_equal(i->start, a_static);
	check_file_line(i->file, static_line);

	i = ss_sym_lookup(sp, a_global);
	assert_string_equal(i->name, "ss_test_global_target");
	check_file_line(i->file, global_line);

	/* inside a function (a return address - 1): same function */
	i = ss_sym_lookup(sp, a_global + 5);
	assert_string_equal(i->name, "ss_test_global_target");
	assert_int_equal(i->start, a_global);

	/* the cache hands back the same answer */
	assert_ptr_equal(ss_sym_lookup(sp, a_static), ss_sym_lookup(sp, a_static));

	/* a symbol from a shared library (one sanitizers do not intercept) */
	i = ss_sym_lookup(sp, (uint64_t)(uintptr_t)&elf_version);
	assert_true(i->resolved);
	assert_string_equal(i->name, "elf_version");

	/* a module that does not exist: module+0xoffset */
	ss_sym_space_add_maps(sp,
		"7ff000000000-7ff000002000 r-xp 00001000 00:00 0   /nonexistent/libgone.so\n",
		SIZE_MAX);
	i = ss_sym_lookup(sp, UINT64_C(0x7ff000000010));
	assert_false(i->resolved);
	assert_string_equal(i->name, "libgone.so+0x1010");
	assert_null(i->file);

	/* in no mapping at all */
	i = ss_sym_lookup(sp, 16);
	assert_false(i->resolved);
	assert_string_equal(i->name, "0x10");

	ss_sym_space_free(sp);
	ss_sym_free(s);
}

static void test_dw(void **state)
{
	(void)state;
	check_backend("dw");
}

static void test_bfd(void **state)
{
	(void)state;
	check_backend("bfd");
}

static void test_bad_backend(void **state)
{
	char err[256];

	(void)state;
	assert_null(ss_sym_new("llvm", err, sizeof(err)));
	assert_string_equal(err, "unknown symbol backend 'llvm' (use dw or bfd)");
}

static void test_demangle(void **state)
{
	char *d = ss_sym_demangle("_ZN5optim3SGD4stepEPfi");

	(void)state;
	assert_non_null(d);
	assert_string_equal(d, "optim::SGD::step(float*, int)");
	free(d);
	assert_null(ss_sym_demangle("main"));
	assert_null(ss_sym_demangle("_Znot a name"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dw),
		cmocka_unit_test(test_bfd),
		cmocka_unit_test(test_bad_backend),
		cmocka_unit_test(test_demangle),
	};

	read_maps();
	/* keep the targets alive and called */
	if (ss_test_global_target(1) != 6)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
