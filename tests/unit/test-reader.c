/*
 * test-reader.c - unit tests of symbolize/read/reader.c and symbolize/read/slices.c
 * on synthetic traces from tests/lib/trace-writer.c: round trip, bad
 * magic, newer version, truncation at many offsets, garbage chunk sizes,
 * random damage (must not crash), TSC conversion, and the slicing rules
 * (unwound frames, clipped frames, windows, steps, ranges).
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
#include "slices.h"
#include "trace-writer.h"

static char tmpdir[] = "/tmp/ss-test-reader-XXXXXX";
static char tpath[256];

static struct ss_event ev(uint64_t ts, unsigned kind, uint64_t arg)
{
	struct ss_event e = { ts, SS_EV_WORD(kind, arg) };
	return e;
}

static struct ss_reader *write_and_open(struct ss_tw *w, size_t len, char *err,
					size_t errlen)
{
	assert_int_equal(ss_tw_write(w, tpath, len), 0);
	return ss_reader_open(tpath, err, errlen);
}

static size_t count_events(struct ss_reader *r)
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

static void test_round_trip(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 42);
	struct ss_event a[4], b[3], c[2];
	struct ss_reader *r;
	struct ss_event_iter it;
	struct ss_revent e;
	struct ss_meta_iter mi;
	struct ss_meta_rec m;
	char err[512];
	uint64_t want_ts[] = { 100, 110, 120, 130, 140, 150, 150 };
	int i, nthread_meta = 0;

	(void)state;
	ss_tw_meta_thread(w, 7, "worker");
	ss_tw_meta_maps(w, 1, "00400000-00401000 r-xp 00000000 08:01 1 /bin/true\n");
	a[0] = ev(100, SS_EV_ENTER, 0x1000);
	a[1] = ev(110, SS_EV_ENTER, 0x2000);
	a[2] = ev(120, SS_EV_EXIT, 0x2000);
	a[3] = ev(130, SS_EV_ENTER, 0x3000);
	b[0] = ev(140, SS_EV_EXIT, 0x3000);
	b[1] = ev(150, SS_EV_EXIT, 0x1000);
	b[2] = ev(145, SS_EV_LOST, 3);  /* a little back in time: clamped */
	c[0] = ev(105, SS_EV_ENTER, 0x9000);
	c[1] = ev(106, SS_EV_EXIT, 0x9000);
	/* seq 1 of thread 1 is written before seq 0: the reader orders them */
	ss_tw_events(w, 7, 1, 1, b, 3, 8);
	ss_tw_events(w, 8, 2, 0, c, 2, 2);
	ss_tw_events(w, 7, 1, 0, a, 4, 4);
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_non_null(r);
	assert_string_equal(r->warning, "");
	assert_int_equal(r->hdr.pid, 42);
	assert_int_equal(r->nthreads, 2);
	assert_int_equal(r->nevents, 9);
	assert_int_equal(r->threads[0].serial, 1);
	assert_int_equal(r->threads[0].tid, 7);
	assert_int_equal(r->threads[0].nevents, 7);
	ss_reader_events_begin(r, 0, &it);
	for (i = 0; ss_reader_events_next(&it, &e); i++) {
		assert_true(i < 7);
		assert_int_equal(e.ns, want_ts[i]);
	}
	assert_int_equal(i, 7);
	assert_int_equal(ss_reader_thread_first_ns(r, 1), 105);
	ss_reader_meta_begin(r, &mi);
	while (ss_reader_meta_next(&mi, &m))
		if (m.type == SS_META_THREAD)
			nthread_meta++;
	assert_int_equal(nthread_meta, 1);
	assert_string_equal(ss_reader_prog(r), "synthetic");
	ss_reader_free(r);
	ss_tw_free(w);
}

static void test_bad_magic(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 1);
	char err[512], want[512];
	struct ss_reader *r;

	(void)state;
	memcpy(ss_tw_header(w)->magic, "NOTTRACE", 8);
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_null(r);
	snprintf(want, sizeof(want), "%s: not a stepscope trace (bad magic)", tpath);
	assert_string_equal(err, want);
	/* a file shorter than the magic */
	r = write_and_open(w, 3, err, sizeof(err));
	assert_null(r);
	assert_string_equal(err, want);
	ss_tw_free(w);
}

static void test_newer_version(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 1);
	char err[512], want[512];
	struct ss_reader *r;

	(void)state;
	ss_tw_header(w)->version = 7;
	ss_tw_header(w)->min_read_version = 5;
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_null(r);
	snprintf(want, sizeof(want),
		 "%s: trace format version 7 is newer than this stepscope (reads up to %d); upgrade stepscope",
		 tpath, SS_VERSION);
	assert_string_equal(err, want);
	/* a newer version that old readers may still read opens fine */
	ss_tw_header(w)->min_read_version = SS_VERSION;
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_non_null(r);
	ss_reader_free(r);
	/* absurd header size */
	ss_tw_header(w)->header_size = 12;
	assert_null(write_and_open(w, SIZE_MAX, err, sizeof(err)));
	assert_non_null(strstr(err, "bad header size 12"));
	ss_tw_free(w);
}

static void test_truncated(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 1);
	struct ss_event e[10];
	size_t off[3], total, cut;
	char err[512];
	int k;

	(void)state;
	ss_tw_meta_thread(w, 1, "main");
	for (k = 0; k < 10; k++)
		e[k] = ev(1000 + (uint64_t)k, SS_EV_ENTER, 0x10 + (uint64_t)k);
	off[0] = ss_tw_events(w, 1, 1, 0, e, 10, 10);
	off[1] = ss_tw_events(w, 1, 1, 1, e, 10, 10);
	off[2] = ss_tw_events(w, 1, 1, 2, e, 6, 10);
	ss_tw_data(w, &total);
	for (cut = off[0] - 8; cut <= total; cut += 7) {
		size_t want = 0, c;
		struct ss_reader *r;
		int at_boundary = 0;

		for (c = 0; c < 3; c++) {
			size_t n = c == 2 ? 6 : 10;
			if (cut <= off[c])
				continue;
			if (cut >= off[c] + 64) {
				size_t fit = (cut - off[c] - 64) / 16;
				want += fit < n ? fit : n;
			}
		}
		for (c = 0; c < 3; c++)
			if (cut == off[c])
				at_boundary = 1;
		r = write_and_open(w, cut, err, sizeof(err));
		assert_non_null(r);
		if (count_events(r) != want)
			fail_msg("cut at %zu: kept %zu events, want %zu", cut,
				 count_events(r), want);
		if (cut == total || at_boundary) {
			assert_string_equal(r->warning, "");
		} else if (cut > off[0]) {
			char msg[512];
			snprintf(msg, sizeof(msg),
				 "%s: truncated at offset %zu: kept %zu events before it",
				 tpath, cut, want);
			if (strcmp(r->warning, msg))
				fail_msg("cut at %zu: warning '%s', want '%s'", cut,
					 r->warning, msg);
		}
		ss_reader_free(r);
	}
	ss_tw_free(w);
}

static void test_garbage_size(void **state)
{
	static const uint64_t sizes[] = { 0, 1, 63, 65, UINT64_MAX, UINT64_MAX - 63,
					  UINT64_C(1) << 63, 4096 };
	struct ss_event e[4];
	char err[512];
	size_t i, len;
	int k;

	(void)state;
	for (k = 0; k < 4; k++)
		e[k] = ev(50 + (uint64_t)k, SS_EV_ENTER, 1);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 1);
		struct ss_chunk_header ch;
		struct ss_reader *r;
		uint8_t *d;
		size_t o2;

		ss_tw_events(w, 1, 1, 0, e, 4, 4);
		o2 = ss_tw_events(w, 1, 1, 1, e, 4, 4);
		d = ss_tw_data_mut(w, &len);
		memcpy(&ch, d + o2, sizeof(ch));
		ch.size = sizes[i];
		memcpy(d + o2, &ch, sizeof(ch));
		r = write_and_open(w, SIZE_MAX, err, sizeof(err));
		assert_non_null(r);
		/* the first chunk always survives */
		assert_true(count_events(r) >= 4);
		if (sizes[i] < 64)
			assert_non_null(strstr(r->warning, "corrupt chunk at offset"));
		ss_reader_free(r);
		ss_tw_free(w);
	}
}

static void ignore_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	(void)ctx;
	(void)tid;
	assert_true(s->end_ns >= s->begin_ns);
}

/* Random damage: whatever the bytes, reading must not crash. */
static void test_random_damage(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_TSC, 1);
	struct ss_event e[32];
	const uint8_t *d;
	uint8_t *copy;
	size_t len;
	int k, round;

	(void)state;
	srand(12345);
	ss_tw_meta_maps(w, 1, "00400000-00401000 r-xp 00000000 08:01 1 /bin/true\n");
	ss_tw_meta_step(w, 2, 0, 1, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_string(w, 3, "range");
	for (k = 0; k < 32; k++)
		e[k] = ev(100 + (uint64_t)k, 1 + (unsigned)(k % 5), (uint64_t)(k % 3));
	ss_tw_events(w, 1, 1, 0, e, 32, 40);
	ss_tw_events(w, 2, 2, 0, e, 20, 20);
	d = ss_tw_data(w, &len);
	copy = malloc(len);
	assert_non_null(copy);
	for (round = 0; round < 400; round++) {
		struct ss_reader *r;
		char err[512];
		FILE *f;
		size_t n = len, j;

		memcpy(copy, d, len);
		for (j = 0; j < 16; j++) {
			size_t at = SS_HEADER_SIZE - 64 + (size_t)rand() % (len - SS_HEADER_SIZE + 64);
			copy[at] = (uint8_t)rand();
		}
		if (round % 3 == 0)
			n = SS_HEADER_SIZE + (size_t)rand() % (len - SS_HEADER_SIZE);
		f = fopen(tpath, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(copy, 1, n, f), n);
		fclose(f);
		r = ss_reader_open(tpath, err, sizeof(err));
		if (r) {
			struct ss_slicer *sl = ss_slicer_new(r, NULL);
			struct ss_meta_iter mi;
			struct ss_meta_rec m;
			size_t t;

			count_events(r);
			ss_reader_meta_begin(r, &mi);
			while (ss_reader_meta_next(&mi, &m))
				;
			assert_non_null(sl);
			for (t = 0; t < r->nthreads; t++)
				ss_slicer_thread(sl, t, ignore_slice, NULL);
			ss_slicer_free(sl);
			ss_reader_free(r);
		}
	}
	free(copy);
	ss_tw_free(w);
}

static void test_tsc(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_TSC, 1);
	struct ss_file_header *h = ss_tw_header(w);
	struct ss_reader *r;
	struct ss_event e[1];
	char err[512];

	(void)state;
	/* header says 1 GHz, the pairs say 2 ticks per ns over 1 s */
	h->ticks_per_sec = 1000000000;
	h->calib_ticks = 1000000;
	h->calib_ns = 500000000;
	ss_tw_meta_calib(w, 1000000 + 2000000000ull, 1500000000ull);
	e[0] = ev(1000000 + 4000, SS_EV_ENTER, 1);
	ss_tw_events(w, 1, 1, 0, e, 1, 1);
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ss_reader_ns(r, 1000000), 500000000);
	assert_int_equal(ss_reader_ns(r, 1000000 + 4000), 500002000);
	assert_int_equal(ss_reader_thread_first_ns(r, 0), 500002000);
	ss_reader_free(r);
	ss_tw_free(w);

	/* pairs too close together: the header rate is used */
	w = ss_tw_new(SS_CLOCK_TSC, 1);
	h = ss_tw_header(w);
	h->ticks_per_sec = 2000000000;
	h->calib_ticks = 1000;
	h->calib_ns = 5000;
	ss_tw_meta_calib(w, 1100, 5020);
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ss_reader_ns(r, 3000), 6000);
	ss_reader_free(r);
	ss_tw_free(w);
}

/* ---- slicing ---- */

struct got {
	char text[64][128];
	int n;
};

static void collect(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct got *g = ctx;
	static const char *const clip[] = { "", " clipped=begin", " clipped=end",
					    " clipped=both" };

	(void)tid;
	if (g->n >= 64)
		return;
	snprintf(g->text[g->n++], sizeof(g->text[0]), "%s %llu-%llu%s%s",
		 s->name, (unsigned long long)s->begin_ns,
		 (unsigned long long)s->end_ns, clip[s->flags & 3],
		 (s->flags & SS_SLICE_UNWOUND) ? " unwound" : "");
}

static void run_slicer(struct ss_tw *w, struct got *g)
{
	struct ss_reader *r;
	struct ss_slicer *sl;
	char err[512];
	size_t t;

	memset(g, 0, sizeof(*g));
	r = write_and_open(w, SIZE_MAX, err, sizeof(err));
	assert_non_null(r);
	sl = ss_slicer_new(r, NULL);
	assert_non_null(sl);
	for (t = 0; t < r->nthreads; t++)
		ss_slicer_thread(sl, t, collect, g);
	ss_slicer_free(sl);
	ss_reader_free(r);
}

static void expect(const struct got *g, const char *const *want, int n)
{
	int i;

	for (i = 0; i < g->n || i < n; i++) {
		const char *a = i < g->n ? g->text[i] : "(none)";
		const char *b = i < n ? want[i] : "(none)";
		if (strcmp(a, b))
			fail_msg("slice %d: got '%s', want '%s'", i, a, b);
	}
}

static void test_slices_whole_run(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 1);
	struct ss_event e[] = {
		ev(10, SS_EV_ENTER, 0xa), ev(20, SS_EV_ENTER, 0xb),
		ev(25, SS_EV_ENTER, 0xc), ev(30, SS_EV_EXIT, 0xa), /* b, c unwound */
		ev(40, SS_EV_ENTER, 0xd), ev(50, SS_EV_EXIT, 0xe), /* e began before */
		ev(60, SS_EV_ENTER, 0xf), ev(70, SS_EV_RANGE_PUSH, 3),
		ev(80, SS_EV_RANGE_POP, 3),
	};
	static const char *const want[] = {
		"0xa 10-30", "0xb 20-30 unwound", "0xc 25-30 unwound", /* parent first */
		"0xd 40-50 unwound", "0xe 10-50 clipped=begin", "fwd 70-80",
		"0xf 60-80 clipped=end",
	};
	struct got g;

	(void)state;
	ss_tw_meta_string(w, 3, "fwd");
	ss_tw_events(w, 1, 1, 0, e, sizeof(e) / sizeof(e[0]), 16);
	run_slicer(w, &g);
	expect(&g, want, sizeof(want) / sizeof(want[0]));
	ss_tw_free(w);
}

static void test_slices_windows(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 1);
	struct ss_event e[] = {
		ev(150, SS_EV_EXIT, 0xa),    /* before any window: dropped */
		ev(210, SS_EV_ENTER, 0xb), ev(220, SS_EV_EXIT, 0xb),
		ev(230, SS_EV_EXIT, 0xc),    /* began before the window */
		ev(240, SS_EV_ENTER, 0xd),   /* still open at the close (300) */
		ev(350, SS_EV_ENTER, 0xe),   /* between windows: dropped */
		ev(410, SS_EV_ENTER, 0xf), ev(420, SS_EV_EXIT, 0xf),
		ev(430, SS_EV_ENTER, 0x1),
	};
	static const char *const want[] = {
		"0xb 210-220", "0xc 200-230 clipped=begin", "0xd 240-300 clipped=end",
		"0xf 410-420", "0x1 430-430 clipped=end",
		"ProfilerStep#1 200-250", "ProfilerStep#2 250-300",
		"ProfilerStep#5 400-430",
	};
	struct got g;

	(void)state;
	ss_tw_meta_step(w, 100, 0, 1, 1, SS_STEP_NONE, 0);
	ss_tw_meta_step(w, 200, 1, 1, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 250, 2, 1, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 300, 3, 1, 1, SS_STEP_NONE, 1);
	ss_tw_meta_step(w, 350, 4, 1, 1, SS_STEP_WARMUP, 1);
	ss_tw_meta_step(w, 400, 5, 1, 1, SS_STEP_RECORD, 1);
	ss_tw_events(w, 1, 1, 0, e, sizeof(e) / sizeof(e[0]), 16);
	run_slicer(w, &g);
	expect(&g, want, sizeof(want) / sizeof(want[0]));
	ss_tw_free(w);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/t.1.sstrace", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(tpath);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_newer_version),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage_size),
		cmocka_unit_test(test_random_damage),
		cmocka_unit_test(test_tsc),
		cmocka_unit_test(test_slices_whole_run),
		cmocka_unit_test(test_slices_windows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
