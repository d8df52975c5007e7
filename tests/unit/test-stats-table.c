/*
 * test-stats-table.c - the whole-run counters of runtime/stats.c on scripted
 * call sequences with scripted clock values: exact calls, self and total
 * for nesting, direct and mutual recursion, a table that grows (open
 * frames keep their slots), a table at its limit ("other" slot), a stack
 * too deep (dropped and counted), an exit that skips frames (longjmp) and
 * an exit without an enter; and the SS_META_STATS record it writes.
 *
 * Test binaries link the tool objects, not the runtime, so this file
 * includes stats.c and stands in for the runtime pieces it calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../runtime/stats.c"

/* ------------------------------------------------------------ stand-ins */

struct ss_hot ss_hot;
struct ss_runtime ss_rt = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };
__thread struct ss_thread ss_tls __attribute__((tls_model("initial-exec")));

static unsigned char last_rec[1 << 16];
static size_t last_len;
static int nrecs;

int ss_meta_write(uint16_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	if (type == SS_META_STATS && alen + blen <= sizeof(last_rec)) {
		memcpy(last_rec, a, alen);
		memcpy(last_rec + alen, b, blen);
		last_len = alen + blen;
		nrecs++;
	}
	return 0;
}

void ss_thread_init(struct ss_thread *t)
{
	t->state = SS_THREAD_LIVE;
	t->tid = 42;
	t->serial = 7;
}

int ss_elfsym_name(uintptr_t addr, char *buf, size_t len)
{
	snprintf(buf, len, "fn%lx", (unsigned long)addr);
	return 0;
}

/* ------------------------------------------------------------ helpers */

#define A 0x1000
#define B 0x2000
#define C 0x3000

static struct ss_stats *fresh(uint32_t first, uint32_t max_slots, uint32_t max_frames)
{
	struct ss_stats *s = ss_stats_new(first, max_slots, max_frames);
	assert_non_null(s);
	return s;
}

static const struct ss_stats_slot *slot(struct ss_stats *s, uintptr_t fn)
{
	struct ss_stats_slot *e = ss_stats_probe(s->tab, fn);
	if (e->fn != fn) {
		print_error("function %#lx is not in the table\n", (unsigned long)fn);
		fail();
	}
	return e;
}

static void expect(struct ss_stats *s, uintptr_t fn, uint64_t calls, uint64_t total,
		   uint64_t self)
{
	const struct ss_stats_slot *e = slot(s, fn);
	if (e->calls != calls || e->total != total || e->self != self) {
		print_error("%#lx: expected calls %llu total %llu self %llu, got %llu %llu %llu\n",
			    (unsigned long)fn, (unsigned long long)calls,
			    (unsigned long long)total, (unsigned long long)self,
			    (unsigned long long)e->calls, (unsigned long long)e->total,
			    (unsigned long long)e->self);
		fail();
	}
}

/* ------------------------------------------------------------ tests */

/* A(0..100) { B(10..30) { C(15..20) } B(40..50) } */
static void test_nesting(void **state)
{
	struct ss_stats *s = fresh(16, 1024, 64);
	ss_stats_push(s, A, 0);
	ss_stats_push(s, B, 10);
	ss_stats_push(s, C, 15);
	ss_stats_pop(s, C, 20);
	ss_stats_pop(s, B, 30);
	ss_stats_push(s, B, 40);
	ss_stats_pop(s, B, 50);
	ss_stats_pop(s, A, 100);
	expect(s, A, 1, 100, 70);
	expect(s, B, 2, 30, 25);
	expect(s, C, 1, 5, 5);
	assert_int_equal(s->depth, 0);
	ss_stats_free(s);
}

/* A(0..100) { A(10..60) { A(20..30) } B(70..90) { A(75..85) } }:
 * total counts A once (100), calls every activation, self excludes the
 * callees of each activation. */
static void test_recursion(void **state)
{
	struct ss_stats *s = fresh(16, 1024, 64);
	ss_stats_push(s, A, 0);
	ss_stats_push(s, A, 10);
	ss_stats_push(s, A, 20);
	ss_stats_pop(s, A, 30);
	ss_stats_pop(s, A, 60);
	ss_stats_push(s, B, 70);
	ss_stats_push(s, A, 75);
	ss_stats_pop(s, A, 85);
	ss_stats_pop(s, B, 90);
	ss_stats_pop(s, A, 100);
	/* self: outer 100-50-20 = 30, middle 50-10 = 40, inner 10, in B 10 */
	expect(s, A, 4, 100, 90);
	expect(s, B, 1, 20, 10);
	assert_int_equal(slot(s, A)->active, 0);
	ss_stats_free(s);
}

/* The table doubles while frames are open: they keep counting into the
 * new slots. */
static void test_grow(void **state)
{
	struct ss_stats *s = fresh(4, 1024, 64);
	ss_stats_push(s, A, 0);
	for (uintptr_t f = 1; f <= 100; f++) {
		ss_stats_push(s, 0x10000 + f * 16, f * 10);
		ss_stats_pop(s, 0x10000 + f * 16, f * 10 + 3);
	}
	ss_stats_pop(s, A, 2000);
	assert_true(s->tab->cap >= 256);
	assert_true(s->nretired > 0);
	expect(s, A, 1, 2000, 2000 - 300);
	for (uintptr_t f = 1; f <= 100; f++)
		expect(s, 0x10000 + f * 16, 1, 3, 3);
	assert_int_equal(s->other.calls, 0);
	ss_stats_free(s);
}

/* At its limit the table counts new functions as "other"; nothing lost. */
static void test_overflow_other(void **state)
{
	struct ss_stats *s = fresh(8, 8, 64); /* 6 functions fit (3/4 of 8) */
	uint64_t calls = 0;
	for (uintptr_t f = 1; f <= 20; f++) {
		ss_stats_push(s, f * 16, 0);
		ss_stats_pop(s, f * 16, 5);
		calls++;
	}
	/* a recursive "other" function: total once */
	ss_stats_push(s, 0x9990, 100);
	ss_stats_push(s, 0x9990, 110);
	ss_stats_pop(s, 0x9990, 120);
	ss_stats_pop(s, 0x9990, 200);
	calls += 2;
	assert_int_equal(s->tab->used, 6);
	uint64_t in_table = 0;
	for (uint32_t i = 0; i < s->tab->cap; i++)
		in_table += s->tab->slot[i].calls;
	assert_int_equal(in_table + s->other.calls, calls);
	assert_int_equal(s->other.calls, 16);
	assert_int_equal(s->other.total, 14 * 5 + 100);
	assert_int_equal(s->other.active, 0);

	struct ss_meta_stats_entry e[16];
	size_t n = ss_stats_collect(s, e, 16);
	assert_int_equal(n, 7);
	assert_int_equal(e[6].fn, 0); /* other comes last, fn 0 */
	assert_int_equal(e[6].calls, 16);
	ss_stats_free(s);
}

/* Deeper than max_frames: the extra activations and their exits are
 * dropped and counted; the frames below stay exact. */
static void test_too_deep(void **state)
{
	struct ss_stats *s = fresh(16, 1024, 4);
	for (int d = 0; d < 10; d++)
		ss_stats_push(s, A, (uint64_t)d);
	for (int d = 9; d >= 0; d--)
		ss_stats_pop(s, A, 100 - (uint64_t)d);
	assert_int_equal(s->dropped, 6);
	assert_int_equal(s->overflow, 0);
	/* kept: entered at 0..3, returned at 97..100: innermost self 94,
	 * the three others 2 each; total once, the outermost 100 */
	expect(s, A, 4, 100, 94 + 2 + 2 + 2);
	ss_stats_free(s);
}

/* An exit that skips open frames (longjmp) ends them there; an exit with
 * no enter is ignored. */
static void test_skipped_frames(void **state)
{
	struct ss_stats *s = fresh(16, 1024, 64);
	ss_stats_pop(s, C, 1); /* never entered */
	ss_stats_push(s, A, 0);
	ss_stats_push(s, B, 10);
	ss_stats_push(s, C, 20); /* B and C are left by a longjmp */
	ss_stats_pop(s, A, 50);
	expect(s, A, 1, 50, 10);
	expect(s, B, 1, 40, 10);
	expect(s, C, 1, 30, 30);
	assert_int_equal(s->depth, 0);
	ss_stats_free(s);
}

/* The hook entry points, the record written for the thread, the busy flag
 * of a re-entered table. */
static void test_hooks_and_record(void **state)
{
	ss_rt.cfg.stats = SS_STATS_WHOLE_RUN;
	ss_rt.have_step = 1;
	ss_rt.step = 9;
	ss_stats_enter((void *)A);
	assert_non_null(ss_tls.stats);
	assert_int_equal(ss_tls.state, SS_THREAD_LIVE);
	ss_stats_enter((void *)B);
	ss_tls.stats->busy = 1; /* a signal handler arrives mid-update */
	ss_stats_enter((void *)C);
	ss_stats_exit((void *)C);
	ss_tls.stats->busy = 0;
	ss_stats_exit((void *)B);
	ss_stats_exit((void *)A);
	ss_stats_enter((void *)A); /* still open at the write: not counted */
	nrecs = 0;
	ss_stats_write(&ss_tls);
	assert_int_equal(nrecs, 1);
	struct ss_meta_stats h;
	memcpy(&h, last_rec, sizeof(h));
	assert_int_equal(h.tid, 42);
	assert_int_equal(h.serial, 7);
	assert_int_equal(h.steps, 10);
	assert_int_equal(h.dropped, 1);
	assert_int_equal(h.n, 2);
	assert_int_equal(last_len, sizeof(h) + 2 * sizeof(struct ss_meta_stats_entry));
	for (uint64_t i = 0; i < h.n; i++) {
		struct ss_meta_stats_entry e;
		memcpy(&e, last_rec + sizeof(h) + i * sizeof(e), sizeof(e));
		assert_true(e.fn == A || e.fn == B);
		assert_int_equal(e.calls, 1);
		assert_true(e.total_ticks >= e.self_ticks);
	}
	/* thread exit: the open frame ends, the table goes */
	ss_stats_close_frames(&ss_tls);
	assert_int_equal(slot(ss_tls.stats, A)->calls, 2);
	ss_stats_release(&ss_tls);
	assert_null(ss_tls.stats);
	/* stats: window writes nothing */
	ss_rt.cfg.stats = SS_STATS_WINDOW;
	ss_stats_enter((void *)A);
	ss_stats_exit((void *)A);
	nrecs = 0;
	ss_stats_write(&ss_tls);
	assert_int_equal(nrecs, 0);
	ss_stats_release(&ss_tls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_overflow_other),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_skipped_frames),
		cmocka_unit_test(test_hooks_and_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
