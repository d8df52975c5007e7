/*
 * test-stats-table.c - the whole-run counters of runtime/stats.c on scripted
 * call sequences: exact calls through the inlined hooks of stats.h for
 * nesting and recursion, an index that grows (open frames keep their
 * slots), an index at its limit ("other" slot), an excluded function
 * (counted, no frame), a signal handler that finds the index busy
 * (dropped and counted), an exit that skips frames (longjmp) and an exit
 * without an enter; the sampler's charging of scripted tick intervals
 * (self to the top, total once per function on the stack); the step
 * function's exact total; and the SS_META_STATS record it writes.
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

void ss_fork_resume(void)
{
}

void ss_thread_init(struct ss_thread *t)
{
	t->state = SS_THREAD_LIVE;
	t->tid = 42;
	t->serial = 7;
}

void ss_warn(const char *fmt, ...)
{
	(void)fmt;
}

/* thread.c's, without the runtime's thread state */
int ss_thread_start(pthread_t *th, void *(*fn)(void *), void *arg, const char *name)
{
	int err = pthread_create(th, NULL, fn, arg);
	if (!err && name)
		pthread_setname_np(*th, name);
	return err;
}

static struct ss_filter_slot filter_slots[16];
struct ss_filter_slot *ss_filter_table = filter_slots;
unsigned ss_filter_bits = 4;
size_t ss_filter_used;

int ss_elfsym_name(uintptr_t addr, char *buf, size_t len)
{
	snprintf(buf, len, "fn%lx", (unsigned long)addr);
	return 0;
}

/* ------------------------------------------------------------ helpers */

#define A 0x1000
#define B 0x2000
#define C 0x3000

/* A fresh table as the calling thread's (the hooks use ss_stats_self). */
static struct ss_stats *fresh(uint32_t first, uint32_t max_slots)
{
	struct ss_stats *s = ss_stats_new(first, max_slots);
	assert_non_null(s);
	ss_stats_self = s;
	return s;
}

static void done(struct ss_stats *s)
{
	ss_stats_self = NULL;
	ss_stats_free(s);
}

static void in(uintptr_t fn)
{
	ss_stats_hook_enter((void *)fn);
}

static void out(uintptr_t fn)
{
	ss_stats_hook_exit((void *)fn);
}

static struct ss_stats_slot *slot(struct ss_stats *s, uintptr_t fn)
{
	struct ss_stats_slot *e = *ss_stats_probe(s->index, s->icap, fn);
	if (!e || e->fn != fn) {
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

/* A { B { C } B } A, twice: exact calls, second round all cache hits. */
static void test_nesting(void **state)
{
	struct ss_stats *s = fresh(16, 1024);
	for (int r = 0; r < 2; r++) {
		in(A);
		in(B);
		in(C);
		out(C);
		out(B);
		in(B);
		out(B);
		out(A);
	}
	expect(s, A, 2, 0, 0);
	expect(s, B, 4, 0, 0);
	expect(s, C, 2, 0, 0);
	assert_int_equal(s->depth, 0);
	assert_int_equal(s->dropped, 0);
	done(s);
}

/* The sampler: at each look the interval goes to the top's self and once
 * to every function on the stack.  A { B { C } } with looks at 10 (in C),
 * 30 (in B), 35 (in A); then A { A { A } } and A { B { A } }: recursion
 * counts total once per look. */
static void test_sampling(void **state)
{
	struct ss_stats *s = fresh(16, 1024);
	s->sampled_at = 0;
	in(A);
	in(B);
	in(C);
	ss_stats_sample(s, 10);
	out(C);
	ss_stats_sample(s, 30);
	out(B);
	ss_stats_sample(s, 35);
	out(A);
	ss_stats_sample(s, 50); /* no frame open: nobody's */
	expect(s, A, 1, 35, 5);
	expect(s, B, 1, 30, 20);
	expect(s, C, 1, 10, 10);
	in(A);
	in(A);
	in(A);
	ss_stats_sample(s, 60);
	out(A);
	out(A);
	in(B);
	in(A);
	ss_stats_sample(s, 70);
	out(A);
	out(B);
	out(A);
	expect(s, A, 5, 35 + 10 + 10, 5 + 10 + 10);
	expect(s, B, 2, 30 + 10, 20);
	assert_int_equal(s->samples, 5);
	done(s);
}

/* The index doubles while a frame is open: slots never move, the open
 * frame and the cache keep counting into them. */
static void test_grow(void **state)
{
	struct ss_stats *s = fresh(4, 1024);
	in(A);
	for (uintptr_t f = 1; f <= 100; f++) {
		in(0x10000 + f * 16);
		out(0x10000 + f * 16);
	}
	out(A);
	assert_true(s->icap >= 256);
	expect(s, A, 1, 0, 0);
	for (uintptr_t f = 1; f <= 100; f++)
		expect(s, 0x10000 + f * 16, 1, 0, 0);
	assert_int_equal(s->other.calls, 0);
	assert_int_equal(s->depth, 0);
	done(s);
}

/* At its limit the index counts new functions as "other"; nothing lost. */
static void test_overflow_other(void **state)
{
	struct ss_stats *s = fresh(8, 8); /* 6 functions fit (3/4 of 8) */
	uint64_t calls = 0;
	for (uintptr_t f = 1; f <= 20; f++) {
		in(f * 16);
		out(f * 16);
		calls++;
	}
	/* a recursive "other" function */
	in(0x9990);
	in(0x9990);
	ss_stats_sample(s, s->sampled_at + 7);
	out(0x9990);
	out(0x9990);
	calls += 2;
	assert_int_equal(s->used, 6);
	assert_int_equal(s->other.calls, 16);
	assert_int_equal(s->other.total, 7);
	assert_int_equal(s->depth, 0);

	struct ss_meta_stats_entry e[16];
	size_t n = ss_stats_collect(s, e, NULL, 16);
	assert_int_equal(n, 7);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += e[i].calls;
	assert_int_equal(sum, calls);
	assert_int_equal(e[6].fn, 0); /* other comes last, fn 0 */
	assert_int_equal(e[6].calls, 16);
	done(s);
}

/* filter.exclude: counted at every entry, no frame, so no time: the
 * time stays with the caller. */
static void test_excluded(void **state)
{
	struct ss_stats *s = fresh(16, 1024);
	filter_slots[ss_filter_hash(B, 4)].addr = B;
	filter_slots[ss_filter_hash(B, 4)].kind = SS_FILTER_EXCLUDE;
	ss_filter_used = 1;
	ss_hot.filter = SS_FILTER_SKIP;
	s->sampled_at = 0;
	in(A);
	for (int i = 0; i < 3; i++) {
		in(B);
		ss_stats_sample(s, 10 * (uint64_t)(i + 1));
		out(B);
	}
	out(A);
	expect(s, B, 3, 0, 0);
	expect(s, A, 1, 30, 30);
	assert_int_equal(s->depth, 0);
	ss_hot.filter = 0;
	ss_filter_used = 0;
	memset(filter_slots, 0, sizeof(filter_slots));
	done(s);
}

/* A signal handler that arrives while the index is changed: its calls of
 * functions not yet cached are dropped and counted, their exits pop the
 * placeholder frame; cached functions count as usual. */
static void test_busy(void **state)
{
	struct ss_stats *s = fresh(16, 1024);
	in(A);
	out(A);
	in(B);
	s->busy = 1; /* the handler runs now */
	in(C);
	in(A);
	out(A);
	out(C);
	s->busy = 0;
	out(B);
	expect(s, A, 2, 0, 0);
	expect(s, B, 1, 0, 0);
	assert_int_equal(s->dropped, 1);
	assert_int_equal(s->depth, 0);
	done(s);
}

/* An exit that skips open frames (longjmp) ends them there; an exit with
 * no enter is ignored. */
static void test_skipped_frames(void **state)
{
	struct ss_stats *s = fresh(16, 1024);
	out(C); /* never entered */
	in(A);
	in(B);
	in(C); /* B and C are left by a longjmp */
	out(A);
	expect(s, A, 1, 0, 0);
	expect(s, B, 1, 0, 0);
	expect(s, C, 1, 0, 0);
	assert_int_equal(s->depth, 0);
	done(s);
}

/* The hook entry points of the slow path, the step function's exact
 * total, and the record written for the thread. */
static void test_hooks_and_record(void **state)
{
	ss_rt.cfg.stats = SS_STATS_WHOLE_RUN;
	ss_rt.have_step = 1;
	ss_rt.step = 9;
	ss_hot.watch = (void *)B;
	ss_stats_enter((void *)A); /* maps the table */
	assert_non_null(ss_tls.stats);
	assert_ptr_equal(ss_tls.stats, ss_stats_self);
	assert_int_equal(ss_tls.state, SS_THREAD_LIVE);
	ss_stats_enter((void *)B);
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
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
	assert_int_equal(h.dropped, 0);
	assert_int_equal(h.n, 2);
	assert_int_not_equal(h.sample_ticks, 0);
	/* the entries, then each one's first caller */
	assert_int_equal(last_len, sizeof(h) + 2 * sizeof(struct ss_meta_stats_entry) + 2 * 8);
	for (uint64_t i = 0; i < h.n; i++) {
		struct ss_meta_stats_entry e;
		uint64_t caller;
		memcpy(&e, last_rec + sizeof(h) + i * sizeof(e), sizeof(e));
		memcpy(&caller, last_rec + sizeof(h) + h.n * sizeof(e) + i * 8, 8);
		assert_true(e.fn == A || e.fn == B);
		/* A began the thread's calls; B was first called inside A */
		assert_int_equal(caller, e.fn == A ? 0 : A);
		assert_int_equal(e.calls, 1);
		assert_true(e.total_ticks >= e.self_ticks);
		if (e.fn == B) /* the step function: timed, >= 2 ms in ns */
			assert_true(e.total_ticks >= 2000000);
	}
	/* thread exit: the open frame ends, the table goes */
	ss_stats_close_frames(&ss_tls);
	assert_int_equal(slot(ss_tls.stats, A)->calls, 2);
	ss_stats_release(&ss_tls);
	assert_null(ss_tls.stats);
	assert_null(ss_stats_self);
	ss_hot.watch = NULL;
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
		cmocka_unit_test(test_sampling),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_overflow_other),
		cmocka_unit_test(test_excluded),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_skipped_frames),
		cmocka_unit_test(test_hooks_and_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
