/*
 * test-qsort-empty.c - nothing to sort is never sorted (issue 45):
 * qsort(NULL, 0, ...) is undefined behaviour (glibc declares its base
 * nonnull; UBSan stops there), and intact runs reached it in the report
 * by arguments with no listed call, and in the off-CPU reader for a thread
 * whose switch record holds no switch.
 *
 * Design: this binary defines qsort itself, so every call from the
 * stepscope code linked in comes here: a NULL base is counted as a
 * failure, anything else is sorted (insertion sort, small inputs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "args-report.h"
#include "offcpu.h"
#include "reader.h"
#include "trace-writer.h"

static int null_sorts, sorts;

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b, tmp[256];
	uintptr_t p = (uintptr_t)base;

	/* glibc's declaration says base is never NULL: the compiler may drop
	 * a plain test of it */
	__asm__("" : "+r"(p));
	b = (char *)p;
	if (!b) {
		null_sorts++;
		return;
	}
	sorts++;
	if (size > sizeof(tmp))
		abort();
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0; j--) {
			memcpy(tmp, b + j * size, size);
			memcpy(b + j * size, b + (j - 1) * size, size);
			memcpy(b + (j - 1) * size, tmp, size);
		}
}

static void test_args_report_empty(void **state)
{
	struct ss_args_report *r = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	(void)state;

	assert_non_null(f);
	assert_non_null(ss_args_report_new(&r));
	null_sorts = 0;
	ss_args_report_print(f, r, "table", 0);
	ss_args_report_print(f, r, "csv", 0);
	ss_args_report_print(f, r, "json", 0);
	fclose(f);
	assert_int_equal(null_sorts, 0);
	free(text);
	ss_args_report_free(r);
}

static void test_offcpu_no_switch(void **state)
{
	static char dir[] = "/tmp/ss-test-qsort-XXXXXX";
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 5);
	struct ss_meta_switch h = { 7, 1, 0, 3 };  /* tid 7: no switch, 3 lost */
	struct ss_offcpu d;
	struct ss_reader *r;
	char path[300], err[512];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.sstrace", dir);
	ss_tw_meta(w, SS_META_SWITCH, 5, &h, sizeof(h));
	ss_tw_meta_flush(w);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);
	r = ss_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	null_sorts = 0;
	assert_int_equal(ss_offcpu_read(r, &d), 0);
	assert_int_equal(null_sorts, 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.lost, 3);
	assert_non_null(ss_offcpu_find(&d, 7));
	assert_int_equal(ss_offcpu_find(&d, 7)->n, 0);
	ss_offcpu_release(&d);
	ss_reader_free(r);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_report_empty),
		cmocka_unit_test(test_offcpu_no_switch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
