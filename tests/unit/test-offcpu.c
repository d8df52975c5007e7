/*
 * test-offcpu.c - off-CPU intervals (record.sched) after the runtime:
 *   - read/offcpu-read.c groups the SS_META_SWITCH batches of a file by
 *     thread, sorts them, cuts overlaps, skips empty or reversed intervals,
 *     short records and counts past the payload, sums `lost`, and leaves
 *     records of other types alone;
 *   - ss_offcpu_in answers "switched out in [a, b)" like a walk over every
 *     interval would, preempted part included (random intervals and
 *     ranges);
 *   - agg.c: a call's Off-CPU is its overlap with the intervals, Off-CPU
 *     Self the part while no callee was open (an interval across a
 *     callee's end is split between them), a recursive call's Off-CPU is
 *     counted once, a step gets its own, and calls off the CPU longer than
 *     on it are counted.
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

#include "agg.h"
#include "export.h"
#include "offcpu.h"
#include "reader.h"
#include "trace-writer.h"

static char tmpdir[] = "/tmp/ss-test-offcpu-XXXXXX";
static char tpath[256];

static void put_switches(struct ss_tw *w, uint64_t tid, uint64_t lost, size_t n_claimed,
			 const struct ss_switch *s, size_t n)
{
	uint8_t buf[1024];
	struct ss_meta_switch h = { tid, tid, n_claimed, lost };
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), s, n * sizeof(*s));
	ss_tw_meta(w, SS_META_SWITCH, 1, buf, sizeof(h) + n * sizeof(*s));
}

static void test_read(void **state)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 42);
	struct ss_event e[2] = { { 100, SS_EV_WORD(SS_EV_ENTER, 0x1000) },
				 { 900, SS_EV_WORD(SS_EV_EXIT, 0x1000) } };
	const struct ss_switch a[] = { { 100, 200, SS_SWITCH_PREEMPTED, 0 }, { 300, 400, 0, 0 } };
	const struct ss_switch b[] = { { 150, 160, 0, 0 } };
	/* overlaps [300, 400): cut to [320, 400) after it; then an empty and
	 * a reversed one, skipped */
	const struct ss_switch c[] = { { 250, 320, 0, 0 }, { 500, 500, 0, 0 }, { 700, 600, 0, 0 } };
	const struct ss_switch d[] = { { 800, 850, SS_SWITCH_TO_END, 0 } };
	uint8_t junk[8] = { 1 };
	struct ss_offcpu off;
	char err[512];

	(void)state;
	ss_tw_meta(w, 99, 1, junk, sizeof(junk)); /* a type it does not know */
	put_switches(w, 10, 0, 2, a, 2);
	put_switches(w, 20, 2, 1, b, 1);
	put_switches(w, 10, 1, 3, c, 3);
	put_switches(w, 10, 0, 9, d, 1);              /* claims more than it holds */
	ss_tw_meta(w, SS_META_SWITCH, 1, junk, sizeof(junk)); /* too short */
	ss_tw_events(w, 10, 1, 0, e, 2, 2);
	assert_int_equal(ss_tw_write(w, tpath, SIZE_MAX), 0);
	ss_tw_free(w);
	struct ss_reader *r = ss_reader_open(tpath, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ss_offcpu_read(r, &off), 0);
	assert_int_equal(off.nrecords, 4);
	assert_int_equal(off.lost, 3);
	assert_int_equal(off.n, 2);
	assert_int_equal(off.th[0].tid, 10);
	assert_int_equal(off.th[1].tid, 20);
	const struct ss_offcpu_thread *t = ss_offcpu_find(&off, 10);
	assert_ptr_equal(t, &off.th[0]);
	assert_null(ss_offcpu_find(&off, 15));
	assert_int_equal(t->n, 4);
	assert_int_equal(t->lost, 1);
	uint64_t want[4][2] = { { 100, 200 }, { 250, 320 }, { 320, 400 }, { 800, 850 } };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(t->iv[i].begin_ns, want[i][0]);
		assert_int_equal(t->iv[i].end_ns, want[i][1]);
	}
	assert_int_equal(t->iv[3].flags, SS_SWITCH_TO_END);
	uint64_t pre;
	assert_int_equal(ss_offcpu_in(t, 0, 1000, NULL), 100 + 70 + 80 + 50);
	assert_int_equal(ss_offcpu_in(t, 0, 1000, &pre), 300);
	assert_int_equal(pre, 100);
	assert_int_equal(ss_offcpu_in(t, 150, 260, &pre), 60);
	assert_int_equal(pre, 50);
	assert_int_equal(ss_offcpu_in(t, 200, 250, NULL), 0);
	assert_int_equal(ss_offcpu_in(t, 310, 330, NULL), 20);
	assert_int_equal(ss_offcpu_in(t, 830, 830, NULL), 0);
	assert_int_equal(ss_offcpu_in(NULL, 0, 1000, NULL), 0);
	assert_int_equal(ss_offcpu_in(ss_offcpu_find(&off, 20), 0, 155, NULL), 5);
	ss_offcpu_release(&off);
	ss_reader_free(r);
}

static void test_in_walk(void **state)
{
	struct ss_offcpu_thread t = { 0 };
	struct ss_offcpu_iv iv[64];
	uint64_t before[65];

	(void)state;
	srand(35);
	for (int round = 0; round < 200; round++) {
		uint64_t at = (uint64_t)(rand() % 50);
		t.n = (size_t)(rand() % 64);
		before[0] = 0;
		for (size_t i = 0; i < t.n; i++) {
			iv[i].begin_ns = at + (uint64_t)(rand() % 20);
			iv[i].end_ns = iv[i].begin_ns + 1 + (uint64_t)(rand() % 30);
			iv[i].flags = rand() % 2 ? SS_SWITCH_PREEMPTED : 0;
			at = iv[i].end_ns + (uint64_t)(rand() % 3);
			before[i + 1] = before[i] + iv[i].end_ns - iv[i].begin_ns;
		}
		t.iv = iv;
		t.before = before;
		for (int q = 0; q < 50; q++) {
			uint64_t a = (uint64_t)(rand() % 2500), b = a + (uint64_t)(rand() % 1500);
			uint64_t want = 0, wpre = 0, pre;
			for (size_t i = 0; i < t.n; i++) {
				uint64_t lo = iv[i].begin_ns > a ? iv[i].begin_ns : a;
				uint64_t hi = iv[i].end_ns < b ? iv[i].end_ns : b;
				if (hi > lo) {
					want += hi - lo;
					if (iv[i].flags & SS_SWITCH_PREEMPTED)
						wpre += hi - lo;
				}
			}
			assert_int_equal(ss_offcpu_in(&t, a, b, NULL), want);
			assert_int_equal(ss_offcpu_in(&t, a, b, &pre), want);
			assert_int_equal(pre, wpre);
		}
	}
}

static void slice(struct ss_exporter *ex, const char *name, uint64_t addr, uint64_t b,
		  uint64_t e, unsigned depth, enum ss_slice_cat cat)
{
	struct ss_slice s;
	memset(&s, 0, sizeof(s));
	s.cat = cat;
	s.name = name;
	s.addr = addr;
	s.begin_ns = b;
	s.end_ns = e;
	s.depth = depth;
	s.nest = depth;
	s.has_step = 1;
	s.step = 0;
	ex->slice(ex->ctx, 1, 7, &s);
}

static const struct ss_agg_row *row(struct ss_agg_row *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	fail_msg("no row %s", name);
	return NULL;
}

/* A [0, 1000) calls B [100, 500), which calls B [200, 300) (recursion);
 * then A calls C [600, 700).  Switched out: [50, 80) in A alone,
 * [250, 260) in the inner B, [450, 550) across the outer B's end (50 in B,
 * 50 in A alone), [610, 690) in C (80 of its 100: longer than it ran). */
static void test_agg(void **state)
{
	struct ss_agg *a = ss_agg_new();
	struct ss_exporter *ex = ss_agg_exporter(a);
	struct ss_offcpu_iv iv[] = { { 50, 80, 0 }, { 250, 260, SS_SWITCH_PREEMPTED },
				     { 450, 550, 0 }, { 610, 690, 0 } };
	uint64_t before[] = { 0, 30, 40, 140, 220 };
	struct ss_offcpu_thread th = { 7, iv, 4, before, 0 };
	struct ss_offcpu off = { &th, 1, 5, 1 };
	char err[256];

	(void)state;
	assert_false(ss_agg_have_offcpu(a, NULL));
	assert_int_equal(ex->begin(ex->ctx, 0), 0);
	ex->process(ex->ctx, 1, "p");
	ex->thread(ex->ctx, 1, 7, "t");
	ex->offcpu(ex->ctx, 1, &off);
	slice(ex, "B", 0xb, 200, 300, 2, SS_SLICE_FUNCTION);
	slice(ex, "B", 0xb, 100, 500, 1, SS_SLICE_FUNCTION);
	slice(ex, "C", 0xc, 600, 700, 1, SS_SLICE_FUNCTION);
	slice(ex, "A", 0xa, 0, 1000, 0, SS_SLICE_FUNCTION);
	slice(ex, "ProfilerStep#0", 0, 0, 1000, 0, SS_SLICE_STEP);
	assert_int_equal(ex->end(ex->ctx, err, sizeof(err)), 0);
	uint64_t lost;
	assert_true(ss_agg_have_offcpu(a, &lost));
	assert_int_equal(lost, 5);

	struct ss_agg_row *r;
	size_t n = ss_agg_rows(a, 0, &r);
	const struct ss_agg_row *ra = row(r, n, "A"), *rb = row(r, n, "B"), *rc = row(r, n, "C");
	assert_int_equal(ra->off_ns, 30 + 10 + 100 + 80);
	assert_int_equal(ra->off_self_ns, 30 + 50);
	assert_int_equal(rb->off_ns, 10 + 50);        /* the outer B's, once */
	assert_int_equal(rb->off_self_ns, 10 + 50);   /* inner 10, outer 50 */
	assert_int_equal(rc->off_ns, 80);
	assert_int_equal(rc->off_self_ns, 80);
	assert_int_equal(rc->off_most, 1);
	assert_int_equal(ra->off_most + rb->off_most, 0);
	assert_true(ra->off_self_ns <= ra->self_ns && rb->off_self_ns <= rb->self_ns);
	/* Min/Max and the off-CPU time inside those very calls: B's fastest
	 * is the inner one (100, 10 switched out), its slowest the outer
	 * (400, its 10 + 50); C's one call 100 with 80 */
	assert_int_equal(rb->min_ns, 100);
	assert_int_equal(rb->min_off_ns, 10);
	assert_int_equal(rb->max_ns, 400);
	assert_int_equal(rb->max_off_ns, 60);
	assert_int_equal(rc->min_off_ns, 80);
	assert_int_equal(rc->max_off_ns, 80);
	assert_int_equal(ra->max_off_ns, 220);

	const struct ss_agg_step *st;
	assert_int_equal(ss_agg_steps(a, &st), 1);
	assert_int_equal(st[0].off_ns, 220);
	assert_int_equal(st[0].off_preempted_ns, 10);
	/* per step, each function's off-CPU self (diff's on-CPU self) */
	assert_int_equal(ss_agg_step_off_self(a, "A", &st[0]), 30 + 50);
	assert_int_equal(ss_agg_step_off_self(a, "B", &st[0]), 10 + 50);
	assert_int_equal(ss_agg_step_off_self(a, "C", &st[0]), 80);
	ss_agg_free(a);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/t.sstrace", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(tpath);
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_in_walk),
		cmocka_unit_test(test_agg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
