/*
 * test-reader-cache.c - symbolize/read/reader-cache.c: while the cache is
 * on, a freed reader is kept and opening its path again hands the same
 * reader back (its MPI clock shift cleared), one user at a time; while it
 * is off, or for a path never opened, or a file that did not open whole,
 * every open is a new reader; ss_reader_cache_off frees what it kept (an
 * ASAN build says so if it did not).  The oracle is the reader pointers
 * and the events each reader hands out, counted against the ones written.
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

#include "reader.h"
#include "trace-writer.h"

static char tmpdir[] = "/tmp/ss-test-reader-cache-XXXXXX";
static char apath[256], bpath[256], badpath[256];

static struct ss_event ev(uint64_t ts, unsigned kind, uint64_t arg)
{
	struct ss_event e = { ts, SS_EV_WORD(kind, arg) };
	return e;
}

/* A trace of n calls of one function on thread tid. */
static void write_trace(const char *path, uint64_t tid, size_t n)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_event *e = calloc(2 * n, sizeof(*e));
	size_t i;

	assert_non_null(e);
	for (i = 0; i < n; i++) {
		e[2 * i] = ev(1000 + 10 * i, SS_EV_ENTER, 0x401000);
		e[2 * i + 1] = ev(1005 + 10 * i, SS_EV_EXIT, 0x401000);
	}
	ss_tw_events(w, tid, 1, 0, e, 2 * n, 64);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);
	free(e);
}

static size_t count_events(const struct ss_reader *r)
{
	size_t t, n = 0;

	for (t = 0; t < r->nthreads; t++) {
		struct ss_event_iter it;
		struct ss_revent e;
		ss_reader_events_begin(r, t, &it);
		while (ss_reader_events_next(&it, &e))
			n++;
	}
	return n;
}

static int setup(void **state)
{
	FILE *f;

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(apath, sizeof(apath), "%s/a.sstrace", tmpdir);
	snprintf(bpath, sizeof(bpath), "%s/b.sstrace", tmpdir);
	snprintf(badpath, sizeof(badpath), "%s/bad.sstrace", tmpdir);
	write_trace(apath, 11, 100);
	write_trace(bpath, 12, 30);
	f = fopen(badpath, "w");
	if (!f)
		return -1;
	fputs("not a trace at all, but long enough to be read as one", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(apath);
	unlink(bpath);
	unlink(badpath);
	return rmdir(tmpdir);
}

/* Off (the default): two opens of one path are two readers. */
static void test_off(void **state)
{
	char err[512];
	struct ss_reader *r1, *r2;

	(void)state;
	r1 = ss_reader_open(apath, err, sizeof(err));
	assert_non_null(r1);
	ss_reader_free(r1);
	r2 = ss_reader_open(apath, err, sizeof(err));
	assert_non_null(r2);
	r1 = ss_reader_open(apath, err, sizeof(err));
	assert_non_null(r1);
	assert_ptr_not_equal(r1, r2);
	assert_int_equal(count_events(r1), 200);
	ss_reader_free(r1);
	ss_reader_free(r2);
}

/* On: a freed reader comes back for its path, whole and with its shift
 * cleared; one in use is never handed out twice; other paths are their
 * own readers. */
static void test_on(void **state)
{
	char err[512];
	struct ss_reader *a1, *a2, *a3, *b1;

	(void)state;
	ss_reader_cache_on();
	a1 = ss_reader_open(apath, err, sizeof(err));
	assert_non_null(a1);
	assert_int_equal(count_events(a1), 200);
	a1->shift_ns = 12345;
	/* in use: a second open of the path is a reader of its own */
	a2 = ss_reader_open(apath, err, sizeof(err));
	assert_non_null(a2);
	assert_ptr_not_equal(a1, a2);
	ss_reader_free(a1);
	/* the freed one comes back, as a fresh reader would be */
	a3 = ss_reader_open(apath, err, sizeof(err));
	assert_ptr_equal(a3, a1);
	assert_int_equal(a3->shift_ns, 0);
	assert_int_equal(count_events(a3), 200);
	assert_int_equal(a3->nevents, 200);
	/* another path is another reader, with its own events */
	b1 = ss_reader_open(bpath, err, sizeof(err));
	assert_non_null(b1);
	assert_ptr_not_equal(b1, a2);
	assert_ptr_not_equal(b1, a3);
	assert_int_equal(count_events(b1), 60);
	ss_reader_free(b1);
	ss_reader_free(a2);
	ss_reader_free(a3);
	/* every one of them kept: off frees them (ASAN: no leak) */
	ss_reader_cache_off();
	/* off again: a new reader */
	a1 = ss_reader_open(apath, err, sizeof(err));
	assert_non_null(a1);
	assert_int_equal(count_events(a1), 200);
	ss_reader_free(a1);
}

/* A file that does not open is not kept and says why each time. */
static void test_bad(void **state)
{
	char err[512];
	struct ss_reader *r;

	(void)state;
	ss_reader_cache_on();
	r = ss_reader_open(badpath, err, sizeof(err));
	assert_null(r);
	assert_non_null(strstr(err, "bad.sstrace"));
	err[0] = 0;
	r = ss_reader_open(badpath, err, sizeof(err));
	assert_null(r);
	assert_non_null(strstr(err, "bad.sstrace"));
	ss_reader_cache_off();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_on),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
