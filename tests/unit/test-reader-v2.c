/*
 * test-reader-v2.c - symbolize/read/reader.c on trace format version 2, files
 * built word by word with a small encoder of runtime/format.h's compact
 * records: blocks split over EVENTS and RING chunks, a block found twice
 * (the longer copy kept), an undrained ring block, a free ring, a torn
 * record, a time base moved past 2^32 ticks, far calls as long records,
 * padding, lost counts, and every kind of corrupt record (warned with the
 * file and offset, the events before it kept).  Then `stepscope report`
 * and the Chrome export on a version 2 run with lost events.
 *
 * Every expected event is written out by hand: kind, argument and time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "reader.h"
#include "trace-writer.h"
#include "unit-util.h"

__attribute__((noinline, used)) void ss_t2_work(void) { __asm__ volatile(""); }

static char tmpdir[] = "/tmp/ss-test-reader-v2-XXXXXX";
static char tpath[300];

#define A0 UINT64_C(0x400000)
#define T2 UINT64_C(9000000000)
#define TWRAP (UINT64_C(5000) + (UINT64_C(1) << 32) + 100)
#define FAR UINT64_C(0x7f0000001000)

/* The encoder: records appended to a word array (trace-writer.h). */
static void e_block(struct ss_tw_enc *e, uint64_t seq, uint64_t tbase, uint64_t abase)
{
	ss_tw_put(e, SS_CW_LONG(SS_EV_BLOCK, 3, 0));
	ss_tw_put(e, seq);
	ss_tw_put(e, tbase);
	ss_tw_put(e, abase);
}

static void e_base(struct ss_tw_enc *e, uint64_t tbase, uint64_t abase)
{
	ss_tw_put(e, SS_CW_LONG(SS_EV_BASE, 2, 0));
	ss_tw_put(e, tbase);
	ss_tw_put(e, abase);
}

/* ENTER (k 1) or EXIT (k 2) of abase + da, in one word */
static void e_short(struct ss_tw_enc *e, unsigned k, uint32_t dt, uint64_t da)
{
	ss_tw_put(e, SS_CW_SHORT(k, dt, da));
}

/* any other event, or a far ENTER/EXIT: head and the version 1 arg */
static void e_long(struct ss_tw_enc *e, unsigned kind, uint32_t dt, uint64_t arg)
{
	ss_tw_put(e, SS_CW_LONG(kind, 1, dt));
	ss_tw_put(e, arg);
}

static void e_pad(struct ss_tw_enc *e)
{
	ss_tw_put(e, SS_CW_LONG(SS_EV_PAD, 0, 0));
}

struct want {
	unsigned kind;
	uint64_t arg, ns;
};

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/prog.7.sstrace", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(tmpdir);
}

static struct ss_reader *open_image(struct ss_tw *w, size_t len)
{
	char err[512];
	struct ss_reader *r;

	assert_int_equal(ss_tw_write(w, tpath, len), 0);
	r = ss_reader_open(tpath, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	return r;
}

/* Thread t's events are exactly want[0..n). */
static void check_thread(struct ss_reader *r, size_t t, uint64_t tid,
			 const struct want *want, size_t n)
{
	struct ss_event_iter it;
	struct ss_revent ev;
	size_t i = 0;

	assert_true(t < r->nthreads);
	assert_int_equal(r->threads[t].tid, tid);
	assert_int_equal(r->threads[t].nevents, n);
	ss_reader_events_begin(r, t, &it);
	while (ss_reader_events_next(&it, &ev)) {
		assert_true(i < n);
		if (ev.kind != want[i].kind || ev.arg != want[i].arg || ev.ns != want[i].ns)
			fail_msg("thread %zu event %zu: kind %u arg %#llx ns %llu, want kind %u arg %#llx ns %llu",
				 t, i, ev.kind, (unsigned long long)ev.arg,
				 (unsigned long long)ev.ns, want[i].kind,
				 (unsigned long long)want[i].arg, (unsigned long long)want[i].ns);
		i++;
	}
	assert_int_equal(i, n);
}

static void check_warning(struct ss_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check_warning(struct ss_reader *r, const char *fmt, ...)
{
	char want[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	assert_string_equal(r->warning, want);
}

/* Thread 1 (tid 100), blocks 0 and 1 in its EVENTS chunk 0: */
static void blocks_0_1(struct ss_tw_enc *e)
{
	e_block(e, 0, 1000, A0);
	e_short(e, 1, 5, 0x10);
	e_pad(e);
	e_long(e, SS_EV_ENTER, 7, FAR);   /* outside [abase, abase + 2^30) */
	e_long(e, SS_EV_EXIT, 9, FAR);
	e_long(e, SS_EV_STEP, 10, 1);
	e_short(e, 2, 20, 0x10);
	e_block(e, 1, 5000, A0);
	e_short(e, 1, 0xfffffff0, 0x40);
	e_base(e, TWRAP, A0 + 0x20);      /* the next dt would not fit */
	e_short(e, 2, 1, 0x20);
	e_long(e, SS_EV_LOST, 2, 1234);
}

static const struct want thread1[] = {
	{ SS_EV_ENTER, A0 + 0x10, 1005 },
	{ SS_EV_ENTER, FAR, 1007 },
	{ SS_EV_EXIT, FAR, 1009 },
	{ SS_EV_STEP, 1, 1010 },
	{ SS_EV_EXIT, A0 + 0x10, 1020 },
	{ SS_EV_ENTER, A0 + 0x40, 5000 + UINT64_C(0xfffffff0) },
	{ SS_EV_EXIT, A0 + 0x40, TWRAP + 1 },
	{ SS_EV_LOST, 1234, TWRAP + 2 },
	{ SS_EV_ENTER, A0 + 0x20, T2 + 1 },     /* block 2, the ring's copy */
	{ SS_EV_EXIT, A0 + 0x20, T2 + 3 },
	{ SS_EV_ENTER, A0 + 0x30, T2 + 104 },   /* block 3, undrained */
	{ SS_EV_EXIT, A0 + 0x30, T2 + 201 },    /* block 4, up to the bad word */
};

static const struct want thread2[] = {
	{ SS_EV_ENTER, A0 + 0x50, 2001 },
	{ SS_EV_LOST, 77, 3000 },               /* block 3 after 0: no warning */
	{ SS_EV_EXIT, A0 + 0x50, 3005 },
};

/*
 * File order: META, thread 1's ring (block 2 whole, block 3 with a torn
 * record, an empty block, block 4 with a word of no kind), thread 1's
 * EVENTS chunk 1 (block 2 cut short), thread 2's EVENTS chunk (blocks 0
 * and 3, used unknown), thread 1's EVENTS chunk 0 (blocks 0 and 1), a free
 * ring whose stale block must not be read.  *bad: offset of the bad word.
 */
static struct ss_tw *build_main(size_t *bad)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc b2 = { .n = 0 }, b3 = { .n = 0 }, b4 = { .n = 0 }, s2 = { .n = 0 };
	struct ss_tw_enc t2 = { .n = 0 }, t1 = { .n = 0 }, stale = { .n = 0 };
	const uint64_t *ring[4];
	size_t nw[4], off;

	ss_tw_meta_thread(w, 100, "alpha");
	ss_tw_meta_thread(w, 101, "beta");

	e_block(&b2, 2, T2, A0);
	e_short(&b2, 1, 1, 0x20);
	e_short(&b2, 2, 3, 0x20);
	e_block(&b3, 3, T2 + 100, A0);
	e_short(&b3, 1, 4, 0x30);
	ss_tw_put(&b3, 0);                      /* torn: its head never written */
	ss_tw_put(&b3, 555);
	e_block(&b4, 4, T2 + 200, A0);
	e_short(&b4, 2, 1, 0x30);
	ss_tw_put(&b4, 5);                      /* k == 0 */
	e_short(&b4, 1, 2, 0x30);
	ring[0] = b2.w, nw[0] = b2.n;
	ring[1] = b3.w, nw[1] = b3.n;
	ring[2] = NULL, nw[2] = 0;
	ring[3] = b4.w, nw[3] = b4.n;
	off = ss_tw_ring(w, 100, 1, 128, 4, ring, nw);
	*bad = off + 64 + 64 + 3 * 128 + 5 * 8;

	e_block(&s2, 2, T2, A0);          /* copied out before its EXIT */
	e_short(&s2, 1, 1, 0x20);
	ss_tw_words(w, 100, 1, 1, s2.w, s2.n, 16, s2.n * 8);

	e_block(&t2, 0, 2000, A0);
	e_short(&t2, 1, 1, 0x50);
	e_block(&t2, 3, 3000, A0);
	e_long(&t2, SS_EV_LOST, 0, 77);
	e_short(&t2, 2, 5, 0x50);
	ss_tw_words(w, 101, 2, 0, t2.w, t2.n, 32, 0);

	blocks_0_1(&t1);
	ss_tw_words(w, 100, 1, 0, t1.w, t1.n, 64, t1.n * 8);

	e_block(&stale, 0, 7, 0);
	e_short(&stale, 1, 1, 1);
	ring[0] = stale.w, nw[0] = stale.n;
	ss_tw_ring(w, 0, 0, 64, 1, ring, nw);
	return w;
}

static void test_decode(void **state)
{
	size_t bad;
	struct ss_tw *w = build_main(&bad);
	struct ss_reader *r;

	(void)state;
	r = open_image(w, SIZE_MAX);
	assert_int_equal(r->hdr.version, 2);
	assert_int_equal(r->nthreads, 2);
	assert_int_equal(r->nevents, 15);
	check_thread(r, 0, 100, thread1, sizeof(thread1) / sizeof(thread1[0]));
	assert_int_equal(r->threads[0].serial, 1);
	check_thread(r, 1, 101, thread2, sizeof(thread2) / sizeof(thread2[0]));
	check_warning(r, "%s: corrupt event record at offset %zu (a word of no kind) in the chunk at offset %zu: kept the 1 events of its block before it",
		      tpath, bad, bad - (64 + 64 + 3 * 128 + 5 * 8));
	ss_reader_free(r);
	ss_tw_free(w);
}

/*
 * Like build_main without the bad word, in the order a clean end leaves
 * (tests/fuzz/corpus/v2-ring.seed is this file): META with the END record,
 * the EVENTS chunks, then the ring, then a free ring.
 */
static struct ss_tw *build_clean(void)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc b2 = { .n = 0 }, b3 = { .n = 0 }, b4 = { .n = 0 }, s2 = { .n = 0 };
	struct ss_tw_enc t2 = { .n = 0 }, t1 = { .n = 0 }, stale = { .n = 0 };
	const uint64_t *ring[4];
	size_t nw[4];
	struct ss_meta_end end = { 16, 0, 1, 0, 0 };

	ss_tw_meta_thread(w, 100, "alpha");
	ss_tw_meta_thread(w, 101, "beta");
	ss_tw_meta_step(w, 900, 0, 100, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 1008, 1, 100, 1, SS_STEP_RECORD, 0);
	ss_tw_meta(w, SS_META_END, T2 + 300, &end, sizeof(end));
	blocks_0_1(&t1);
	ss_tw_words(w, 100, 1, 0, t1.w, t1.n, 64, t1.n * 8);
	e_block(&t2, 0, 2000, A0);
	e_short(&t2, 1, 1, 0x50);
	e_block(&t2, 3, 3000, A0);
	e_long(&t2, SS_EV_LOST, 0, 77);
	e_short(&t2, 2, 5, 0x50);
	ss_tw_words(w, 101, 2, 0, t2.w, t2.n, 32, 0);
	e_block(&s2, 2, T2, A0);
	e_short(&s2, 1, 1, 0x20);
	ss_tw_words(w, 100, 1, 1, s2.w, s2.n, 16, s2.n * 8);
	e_block(&b2, 2, T2, A0);
	e_short(&b2, 1, 1, 0x20);
	e_short(&b2, 2, 3, 0x20);
	e_block(&b3, 3, T2 + 100, A0);
	e_short(&b3, 1, 4, 0x30);
	ss_tw_put(&b3, 0);
	ss_tw_put(&b3, 555);
	e_block(&b4, 4, T2 + 200, A0);
	e_short(&b4, 2, 1, 0x30);
	e_short(&b4, 1, 2, 0x30);
	ring[0] = b2.w, nw[0] = b2.n;
	ring[1] = b3.w, nw[1] = b3.n;
	ring[2] = NULL, nw[2] = 0;
	ring[3] = b4.w, nw[3] = b4.n;
	ss_tw_ring(w, 100, 1, 128, 4, ring, nw);
	e_block(&stale, 0, 7, 0);
	e_short(&stale, 1, 1, 1);
	ring[0] = stale.w, nw[0] = stale.n;
	ss_tw_ring(w, 0, 0, 64, 1, ring, nw);
	return w;
}

/* What test_leftovers and test_torn_copy read: a call in block 0 (time
 * base 1000), one in block 1 (2000). */
static const struct want two_blocks[] = {
	{ SS_EV_ENTER, A0 + 0x10, 1005 },
	{ SS_EV_EXIT, A0 + 0x10, 1009 },
	{ SS_EV_ENTER, A0 + 0x20, 2001 },
	{ SS_EV_EXIT, A0 + 0x20, 2002 },
};

/* Crash leftovers and signal paths, none of them damage: an EVENTS chunk
 * whose `used` covers block 0 while block 1 was copied after it (the
 * process died between the two writes of copy_out), and PAD records that
 * cover 1 to 3 words whatever they hold (a claim a signal handler closed,
 * a long record whose payload was being stored). */
static void test_leftovers(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc e = { .n = 0 };
	struct ss_reader *r;
	size_t used;

	(void)state;
	ss_tw_meta_thread(w, 100, "alpha");
	e_block(&e, 0, 1000, A0);
	e_short(&e, 1, 5, 0x10);
	ss_tw_put(&e, SS_CW_LONG(SS_EV_PAD, 1, 0));     /* a head over its payload */
	ss_tw_put(&e, A0 + 0x99);
	ss_tw_put(&e, SS_CW_LONG(SS_EV_PAD, 3, 0));
	ss_tw_put(&e, 0);
	ss_tw_put(&e, 12345);
	ss_tw_put(&e, SS_CW_LONG(SS_EV_ENTER, 1, 0));   /* a head that is not one */
	e_short(&e, 2, 9, 0x10);
	used = e.n * 8;
	e_block(&e, 1, 2000, A0);
	e_short(&e, 1, 1, 0x20);
	e_short(&e, 2, 2, 0x20);
	ss_tw_words(w, 100, 1, 0, e.w, e.n, 64, used);
	r = open_image(w, SIZE_MAX);
	assert_string_equal(r->warning, "");
	assert_int_equal(r->nevents, 4);
	check_thread(r, 0, 100, two_blocks, 4);
	ss_reader_free(r);
	ss_tw_free(w);
}

/* Killed while it copied block 1 out of the ring: the write stopped at a
 * page, inside the block record (its time base still 0), past `used`.
 * Not damage: block 1 is read whole from the ring, without a word. */
static void test_torn_copy(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc e = { .n = 0 }, rb = { .n = 0 };
	const uint64_t *ring[2];
	size_t nw[2], used;
	struct ss_reader *r;

	(void)state;
	ss_tw_meta_thread(w, 100, "alpha");
	e_block(&e, 0, 1000, A0);
	e_short(&e, 1, 5, 0x10);
	e_short(&e, 2, 9, 0x10);
	used = e.n * 8;
	ss_tw_put(&e, SS_CW_LONG(SS_EV_BLOCK, 3, 0));
	ss_tw_put(&e, 1);                                /* seq; the time base never came */
	e_block(&rb, 1, 2000, A0);
	e_short(&rb, 1, 1, 0x20);
	e_short(&rb, 2, 2, 0x20);
	ring[0] = rb.w, nw[0] = rb.n;
	ring[1] = NULL, nw[1] = 0;
	ss_tw_words(w, 100, 1, 0, e.w, e.n, 64, used);
	ss_tw_ring(w, 100, 1, 128, 2, ring, nw);
	r = open_image(w, SIZE_MAX);
	assert_string_equal(r->warning, "");
	check_thread(r, 0, 100, two_blocks, 4);
	ss_reader_free(r);
	ss_tw_free(w);
}

/* The clean file whole (no warning, the END count met), then cut at every
 * offset: the only warning is the cut (or the END count), never damage
 * inside the blocks, and each thread keeps a prefix of its events. */
static void test_cut_everywhere(void **state)
{
	struct ss_tw *w = build_clean();
	struct want full[2][16];
	size_t nfull[2], len, size, t;
	struct ss_reader *r;
	char trunc[400], ends[400];

	(void)state;
	ss_tw_data(w, &size);
	r = open_image(w, SIZE_MAX);
	assert_string_equal(r->warning, "");
	assert_int_equal(r->nevents, 16);
	assert_int_equal(r->nthreads, 2);
	for (t = 0; t < 2; t++) {
		struct ss_event_iter it;
		struct ss_revent ev;
		nfull[t] = 0;
		ss_reader_events_begin(r, t, &it);
		while (ss_reader_events_next(&it, &ev)) {
			assert_true(nfull[t] < 16);
			full[t][nfull[t]++] = (struct want){ ev.kind, ev.arg, ev.ns };
		}
	}
	ss_reader_free(r);
	for (len = size; len-- > SS_HEADER_SIZE;) {
		r = open_image(w, len);
		snprintf(trunc, sizeof(trunc), "%s: truncated at offset %zu: kept %llu events before it",
			 tpath, len, (unsigned long long)r->nevents);
		snprintf(ends, sizeof(ends), "%s: ends at offset %zu with %llu of the 16 events written: the rest of the file is missing",
			 tpath, len, (unsigned long long)r->nevents);
		if (r->warning[0] && strcmp(r->warning, trunc) && strcmp(r->warning, ends))
			fail_msg("cut at %zu: %s", len, r->warning);
		for (t = 0; t < r->nthreads; t++) {
			size_t k = r->threads[t].serial == 2;
			struct ss_event_iter it;
			struct ss_revent ev;
			size_t i = 0;
			ss_reader_events_begin(r, t, &it);
			while (ss_reader_events_next(&it, &ev)) {
				if (i >= nfull[k] || ev.kind != full[k][i].kind ||
				    ev.arg != full[k][i].arg || ev.ns != full[k][i].ns)
					fail_msg("cut at %zu: thread %zu event %zu is not the whole file's",
						 len, t, i);
				i++;
			}
		}
		ss_reader_free(r);
	}
	ss_tw_free(w);
}

/* Block 0 in a ring and, longer, in the EVENTS chunk; the file cut in
 * block 1: the warning counts block 0 once. */
static void test_truncated(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc rb = { .n = 0 }, ev = { .n = 0 };
	const uint64_t *ring[1];
	size_t nw[1], off, len;
	struct ss_reader *r;
	static const struct want want[] = {
		{ SS_EV_ENTER, A0 + 1, 101 },
		{ SS_EV_EXIT, A0 + 1, 102 },
		{ SS_EV_ENTER, A0 + 2, 201 },
		{ SS_EV_STEP, 9, 202 },
	};

	(void)state;
	e_block(&rb, 0, 100, A0);
	e_short(&rb, 1, 1, 1);
	ring[0] = rb.w, nw[0] = rb.n;
	ss_tw_ring(w, 5, 1, 64, 1, ring, nw);
	e_block(&ev, 0, 100, A0);
	e_short(&ev, 1, 1, 1);
	e_short(&ev, 2, 2, 1);
	e_block(&ev, 1, 200, A0);
	e_short(&ev, 1, 1, 2);
	e_long(&ev, SS_EV_STEP, 2, 9);
	e_long(&ev, SS_EV_STEP, 3, 10);
	off = ss_tw_words(w, 5, 1, 0, ev.w, ev.n, 32, ev.n * 8);
	len = off + 64 + (ev.n - 1) * 8;  /* the last payload word missing */
	r = open_image(w, len);
	check_thread(r, 0, 5, want, 4);
	check_warning(r, "%s: truncated at offset %zu: kept 4 events before it", tpath, len);
	assert_int_equal(r->nevents, 4);
	ss_reader_free(r);
	ss_tw_free(w);
}

/* One bad record in block 0 of an EVENTS chunk: kept what came before
 * it, went on at block 1. */
struct bad_case {
	const char *why;
	uint64_t word[4];
	size_t n;
	size_t kept;        /* events of block 0 kept */
};

static void test_corrupt_records(void **state)
{
	static const struct bad_case cases[] = {
		{ "a word of no kind", { UINT64_C(0x00000000ffffffff) }, 1, 1 },
		{ "a long record of the wrong length for its kind",
		  { SS_CW_LONG(SS_EV_STEP, 2, 3), 1, 2 }, 3, 1 },
		{ "a long record of the wrong length for its kind",
		  { SS_CW_LONG(SS_EV_BASE, 1, 0), 5000 }, 2, 1 },
		{ "a long record with bits 44-63 set",
		  { SS_CW_LONG(SS_EV_STEP, 1, 3) | UINT64_C(1) << 50, 1 }, 2, 1 },
		{ "a block or base record with a bad time",
		  { SS_CW_LONG(SS_EV_BASE, 2, 0), 0, A0 }, 3, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
		struct ss_tw_enc e = { .n = 0 };
		struct want want[3] = {
			{ SS_EV_ENTER, A0 + 4, 11 },
			{ SS_EV_ENTER, A0 + 8, 501 },
			{ SS_EV_EXIT, A0 + 8, 502 },
		};
		struct ss_reader *r;
		size_t off, k, at;

		e_block(&e, 0, 10, A0);
		e_short(&e, 1, 1, 4);
		at = e.n;
		for (k = 0; k < c->n; k++)
			ss_tw_put(&e, c->word[k]);
		e_short(&e, 2, 3, 4);     /* lost with the rest of block 0 */
		e_block(&e, 1, 500, A0);
		e_short(&e, 1, 1, 8);
		e_short(&e, 2, 2, 8);
		off = ss_tw_words(w, 9, 1, 0, e.w, e.n, 64, e.n * 8);
		r = open_image(w, SIZE_MAX);
		check_thread(r, 0, 9, want, 3);
		check_warning(r, "%s: corrupt event record at offset %zu (%s) in the chunk at offset %zu: kept the %zu events of its block before it",
			      tpath, off + 64 + at * 8, c->why, off, c->kept);
		ss_reader_free(r);
		ss_tw_free(w);
	}
}

/* Events before any block record, a record past its ring block's end and
 * a block record inside a ring block. */
static void test_corrupt_blocks(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc e = { .n = 0 }, b0 = { .n = 0 }, b1 = { .n = 0 };
	const uint64_t *ring[1];
	size_t nw[1], off, roff, roff2;
	struct ss_reader *r;
	static const struct want want[] = {
		{ SS_EV_ENTER, A0 + 1, 21 },
		{ SS_EV_EXIT, A0 + 1, 22 },
		{ SS_EV_ENTER, A0 + 2, 31 },
		{ SS_EV_EXIT, A0 + 2, 32 },
		{ SS_EV_ENTER, A0 + 3, 33 },
		{ SS_EV_ENTER, A0 + 4, 41 },
	};

	(void)state;
	e_short(&e, 1, 1, 1);             /* no block record yet */
	e_short(&e, 2, 2, 1);
	e_block(&e, 0, 20, A0);
	e_short(&e, 1, 1, 1);
	e_short(&e, 2, 2, 1);
	off = ss_tw_words(w, 9, 1, 0, e.w, e.n, 16, e.n * 8);
	/* 64-byte blocks: 8 words */
	e_block(&b0, 1, 30, A0);
	e_short(&b0, 1, 1, 2);
	e_short(&b0, 2, 2, 2);
	e_short(&b0, 1, 3, 3);
	ss_tw_put(&b0, SS_CW_LONG(SS_EV_STEP, 1, 4));   /* its payload would be word 8 */
	e_block(&b1, 2, 40, A0);
	e_short(&b1, 1, 1, 4);
	e_block(&b1, 3, 50, A0);
	ring[0] = b0.w, nw[0] = b0.n;
	roff = ss_tw_ring(w, 9, 1, 64, 1, ring, nw);
	ring[0] = b1.w, nw[0] = b1.n;
	roff2 = ss_tw_ring(w, 9, 1, 128, 1, ring, nw);
	r = open_image(w, SIZE_MAX);
	check_thread(r, 0, 9, want, 6);
	check_warning(r, "%s: corrupt event record at offset %zu (no block record where a block begins) in the chunk at offset %zu: kept the 0 events of its block before it; also damaged at offset %zu, %zu",
		      tpath, off + 64, off, roff + 128 + 7 * 8, roff2 + 128 + 5 * 8);
	ss_reader_free(r);
	ss_tw_free(w);
}

/* Bad ring headers are skipped with a warning; version 1 still reads. */
static void test_ring_header_and_v1(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc b = { .n = 0 };
	const uint64_t *ring[1];
	size_t nw[1], roff;
	struct ss_reader *r;
	uint8_t *img;
	size_t len;
	struct ss_ring_header rh;
	struct ss_event v1[2] = {
		ss_ut_event(10, SS_EV_ENTER, 0x1234),
		ss_ut_event(20, SS_EV_EXIT, 0x1234),
	};
	static const struct want want1[] = {
		{ SS_EV_ENTER, 0x1234, 10 },
		{ SS_EV_EXIT, 0x1234, 20 },
	};

	(void)state;
	e_block(&b, 0, 30, A0);
	e_short(&b, 1, 1, 2);
	ring[0] = b.w, nw[0] = b.n;
	roff = ss_tw_ring(w, 9, 1, 64, 1, ring, nw);
	img = ss_tw_data_mut(w, &len);
	memcpy(&rh, img + roff + 64, sizeof(rh));
	rh.nblocks = 2;                   /* more than the chunk holds */
	memcpy(img + roff + 64, &rh, sizeof(rh));
	r = open_image(w, SIZE_MAX);
	assert_int_equal(r->nthreads, 0);
	check_warning(r, "%s: ring chunk at offset %zu has a bad ring header (2 blocks of 64 bytes; the chunk holds 128): skipped it",
		      tpath, roff);
	ss_reader_free(r);
	ss_tw_free(w);

	/* version 1: 16-byte records, read as before */
	w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	ss_tw_events(w, 9, 1, 0, v1, 2, 8);
	r = open_image(w, SIZE_MAX);
	assert_int_equal(r->hdr.version, 1);
	check_thread(r, 0, 9, want1, 2);
	assert_string_equal(r->warning, "");
	ss_reader_free(r);
	ss_tw_free(w);
}

/* `stepscope report` says how many events a thread lost; the Chrome
 * export has the instant with the count. */
static void test_lost_report(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 4545);
	uint64_t fn = (uint64_t)(uintptr_t)ss_t2_work;
	struct ss_tw_enc e = { .n = 0 };
	char run[400], path[500], out[500], *t;

	(void)state;
	snprintf(run, sizeof(run), "%s/run", tmpdir);
	assert_int_equal(mkdir(run, 0755), 0);
	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 100, "trainer");
	ss_tw_meta_step(w, 900, 0, 100, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 2500, 1, 100, 1, SS_STEP_RECORD, 0);
	e_block(&e, 0, 1000, fn);
	e_short(&e, 1, 0, 0);
	e_long(&e, SS_EV_LOST, 500, 1234);
	e_short(&e, 2, 1000, 0);
	e_block(&e, 7, 2600, fn);         /* blocks 1 to 6 dropped */
	e_long(&e, SS_EV_LOST, 0, 66);
	e_short(&e, 1, 10, 0);
	e_short(&e, 2, 20, 0);
	ss_tw_words(w, 100, 1, 0, e.w, e.n, 64, e.n * 8);
	snprintf(path, sizeof(path), "%s/prog.4545.sstrace", run);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);

	snprintf(out, sizeof(out), "%s/report.txt", tmpdir);
	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope report -q -o %s %s", out, run);
	t = ss_ut_slurp(out);
	assert_non_null(t);
	if (!strstr(t, "\nlost events: 1300 on thread trainer (tid 100)\n"))
		fail_msg("no lost line in the report:\n%s", t);
	assert_non_null(strstr(t, "ss_t2_work"));
	free(t);
	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope report -q --format json -o %s %s", out, run);
	t = ss_ut_slurp(out);
	assert_non_null(t);
	if (!strstr(t, "\"lost\":[{\"pid\":4545,\"tid\":100,\"thread\":\"trainer\",\"events\":1300}]"))
		fail_msg("no lost counts in the JSON report:\n%s", t);
	free(t);

	/* times from the run's start, step 0 at 900 ns: 1500 and 2600 */
	snprintf(out, sizeof(out), "%s/trace.json", tmpdir);
	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope symbolize -q -o %s %s", out, run);
	t = ss_ut_slurp(out);
	assert_non_null(t);
	if (!strstr(t, "\"name\":\"stepscope: events lost\",\"pid\":4545,\"tid\":100,\"ts\":0.600,\"args\":{\"count\":1234}") ||
	    !strstr(t, "\"name\":\"stepscope: events lost\",\"pid\":4545,\"tid\":100,\"ts\":1.700,\"args\":{\"count\":66}"))
		fail_msg("no lost instants in the Chrome trace:\n%.4000s", t);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_cut_everywhere),
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_torn_copy),
		cmocka_unit_test(test_corrupt_records),
		cmocka_unit_test(test_corrupt_blocks),
		cmocka_unit_test(test_ring_header_and_v1),
		cmocka_unit_test(test_lost_report),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
