/*
 * test-stack.c - record.stack: the per-thread table of distinct stacks in
 * runtime/stack.c (lookup, dedup, hash collisions, a full table), a real
 * capture in this process (same call site, same id, one STACKDEF; another
 * site, another id), and the reading side in symbolize/read/slices.c (a STACK
 * event gives the entered frame its stack; frames shared by two stacks are
 * one node of the frame tree).
 *
 * Test binaries link the tool objects, not the runtime, so this file
 * includes stack.c and stands in for the runtime pieces it calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/stack.c"
#include "../../runtime/dl.c"    /* the dlopen stack.c loads libunwind with */
#include "slices.h"
#include "sym.h"
#include "trace-writer.h"
#include "unit-util.h"

/* ------------------------------------------------------------ stand-ins */

struct ss_hot ss_hot;
struct ss_runtime ss_rt = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };
__thread struct ss_thread ss_tls __attribute__((tls_model("initial-exec")));

static uint64_t events[128];
static int ndefs;
static uint64_t last_def_id, last_def_n;

int ss_meta_write_ts(uint16_t type, uint64_t ts, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	(void)ts, (void)b, (void)blen;
	if (type == SS_META_STACKDEF && alen == sizeof(struct ss_meta_stackdef)) {
		const struct ss_meta_stackdef *d = a;
		ndefs++;
		last_def_id = d->id;
		last_def_n = d->n;
	}
	return 0;
}

void ss_buf_refill(struct ss_thread *t, uint64_t word)
{
	(void)t, (void)word; /* 64 events are enough for these tests */
}

void ss_buf_fill(struct ss_thread *t, uint64_t *to)
{
	t->done = to; /* no signal handler runs in these tests */
}

void ss_emit_far(struct ss_thread *t, uint64_t *e, unsigned n, uint64_t word, uint64_t now)
{
	(void)t, (void)e, (void)n, (void)word, (void)now;
	fail_msg("an event took the slow path: the base is set before each test");
}

size_t ss_elfsym_instrumented(uintptr_t *lo, uintptr_t *hi, size_t max)
{
	(void)lo, (void)hi, (void)max;
	return 0; /* nothing trusted: every walk goes through libunwind */
}

void ss_warn(const char *fmt, ...)
{
	(void)fmt;
}

/* ------------------------------------------------------------ the table */

static struct ss_stack_table *small_table(uint32_t nslots, uint32_t cap)
{
	struct ss_stack_table *t = calloc(1, sizeof(*t));
	t->slot = calloc(nslots, sizeof(*t->slot));
	t->nslots = nslots;
	t->arena = calloc(cap, sizeof(*t->arena));
	t->cap = cap;
	return t;
}

static void free_table(struct ss_stack_table *t)
{
	free(t->slot);
	free(t->arena);
	free(t);
}

static void test_table_dedup(void **state)
{
	struct ss_stack_table *t = small_table(16, 64);
	uint64_t a[3] = { 0x1010, 0x2020, 0x3030 }, b[3] = { 0x1010, 0x2020, 0x3031 };
	uint64_t c[2] = { 0x1010, 0x2020 };
	uint32_t where;
	(void)state;

	uint64_t ha = ss_stack_hash(a, 3);
	assert_int_equal(ss_stack_table_find(t, a, 3, ha, &where), 0);
	assert_true(ss_stack_table_room(t, 3));
	ss_stack_table_add(t, where, a, 3, ha, 7);
	assert_int_equal(ss_stack_table_find(t, a, 3, ha, &where), 7);
	/* a different last frame, a prefix: different stacks */
	assert_int_equal(ss_stack_table_find(t, b, 3, ss_stack_hash(b, 3), &where), 0);
	assert_int_equal(ss_stack_table_find(t, c, 2, ss_stack_hash(c, 2), &where), 0);
	/* a hash collision never merges two stacks */
	assert_int_equal(ss_stack_table_find(t, b, 3, ha, &where), 0);
	ss_stack_table_add(t, where, b, 3, ha, 8);
	assert_int_equal(ss_stack_table_find(t, a, 3, ha, &where), 7);
	assert_int_equal(ss_stack_table_find(t, b, 3, ha, &where), 8);
	assert_int_equal(t->used, 2);
	assert_int_equal(t->fill, 6);
	free_table(t);
}

static void test_table_full(void **state)
{
	struct ss_stack_table *t = small_table(8, 1000);
	uint32_t where;
	uint64_t pc[1];
	(void)state;

	/* at most 3/4 of the slots: 6 of 8 */
	for (uint64_t i = 0; i < 6; i++) {
		pc[0] = 0x1000 + i;
		assert_true(ss_stack_table_room(t, 1));
		assert_int_equal(ss_stack_table_find(t, pc, 1, ss_stack_hash(pc, 1), &where), 0);
		ss_stack_table_add(t, where, pc, 1, ss_stack_hash(pc, 1), i + 1);
	}
	assert_false(ss_stack_table_room(t, 1));
	pc[0] = 0x1003;
	assert_int_equal(ss_stack_table_find(t, pc, 1, ss_stack_hash(pc, 1), &where), 4);
	free_table(t);
	/* the arena runs out first */
	t = small_table(64, 5);
	assert_true(ss_stack_table_room(t, 5));
	assert_false(ss_stack_table_room(t, 6));
	free_table(t);
}

/* ------------------------------------------------------------ capture */

static __attribute__((noinline)) void site_a(void)
{
	ss_stack_capture();
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void site_b(void)
{
	ss_stack_capture();
	__asm__ volatile("" ::: "memory");
}

/* The i-th record: a long SS_EV_STACK record of two words (format.h). */
static uint64_t stack_event(size_t i)
{
	assert_true(&events[2 * i + 1] < ss_tls.pos);
	assert_int_equal(SS_CW_K(events[2 * i]), 3);
	assert_int_equal(SS_CW_KIND(events[2 * i]), SS_EV_STACK);
	assert_int_equal(SS_CW_N(events[2 * i]), 1);
	return events[2 * i + 1];
}

static void test_capture(void **state)
{
	(void)state;
	ss_rt.cfg.record_stack_depth = 8;
	ss_stack_init();
	if (!ss_hot.stacks)
		fail_msg("ss_stack_init did not turn stacks on");
	if (!ss_unw_ok)
		fail_msg("libunwind.so.8 did not load (Debian package libunwind8, "
			 "which libunwind-dev brings; `make test` installs it)");
	ss_tls.pos = events;
	ss_tls.end = events + 64;
	ss_tls.tbase = ss_clock_now();
	/* one call site, three times */
#pragma GCC unroll 1
	for (volatile int i = 0; i < 3; i++)
		site_a();
	site_b();
	assert_int_equal(ss_tls.pos - events, 8);
	uint64_t a = stack_event(0);
	assert_true(a > 0);
	assert_int_equal(stack_event(1), a);
	assert_int_equal(stack_event(2), a);
	assert_true(stack_event(3) != a);
	assert_int_equal(ndefs, 2); /* one record per distinct stack */
	assert_int_equal(last_def_id, stack_event(3));
	assert_true(last_def_n >= 2 && last_def_n <= 8);
	/* busy (a signal handler during a capture): no stack, no recursion */
	ss_stack_busy = 1;
	site_a();
	ss_stack_busy = 0;
	assert_int_equal(ss_tls.pos - events, 8);
}

/* ------------------------------------------------------------ reading */

struct got {
	int n;
	uint64_t addr[8];
	const struct ss_stack *stack[8];
	uint64_t stack_id[8];
	uint32_t leaf[8];
};

static void on_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct got *g = ctx;
	(void)tid;
	if (s->cat != SS_SLICE_FUNCTION || g->n == 8)
		return;
	g->addr[g->n] = s->addr;
	g->stack[g->n] = s->stack;
	g->stack_id[g->n] = s->stack ? s->stack->id : 0;
	g->leaf[g->n] = s->stack ? s->stack->leaf : 0;
	g->n++;
}

static void test_slices(void **state)
{
	char path[] = "/tmp/ss-test-stack.XXXXXX", err[256];
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 42);
	const uint64_t s5[3] = { 0x1005, 0x2005, 0x3005 }, s6[3] = { 0x1105, 0x2005, 0x3005 };
	struct ss_event ev[] = {
		{ 100, SS_EV_WORD(SS_EV_ENTER, 0x1000) },
		{ 101, SS_EV_WORD(SS_EV_STACK, 5) },
		{ 110, SS_EV_WORD(SS_EV_ENTER, 0x1100) },
		{ 111, SS_EV_WORD(SS_EV_STACK, 6) },
		{ 120, SS_EV_WORD(SS_EV_EXIT, 0x1100) },
		{ 130, SS_EV_WORD(SS_EV_ENTER, 0x1200) },  /* no stack */
		{ 140, SS_EV_WORD(SS_EV_EXIT, 0x1200) },
		{ 150, SS_EV_WORD(SS_EV_EXIT, 0x1000) },
	};
	struct got g;
	const struct ss_stack_node *nodes;
	(void)state;

	ss_ut_tw_stackdef_pcs(w, 5, s5, 3);
	ss_ut_tw_stackdef_pcs(w, 6, s6, 3);
	ss_tw_events(w, 7, 1, 0, ev, sizeof(ev) / sizeof(ev[0]), 16);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);

	struct ss_reader *r = ss_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	struct ss_sym *sym = ss_sym_new(NULL, err, sizeof(err));
	ss_sym_set_quiet(sym, 1);
	struct ss_sym_space *sp = ss_sym_space_new(sym);
	struct ss_slicer *sl = ss_slicer_new(r, sp);
	assert_non_null(sl);
	memset(&g, 0, sizeof(g));
	ss_slicer_thread(sl, 0, on_slice, &g);
	/* slices close innermost first: 0x1100, 0x1200, 0x1000 */
	assert_int_equal(g.n, 3);
	assert_int_equal(g.addr[0], 0x1100);
	assert_int_equal(g.stack_id[0], 6);
	assert_int_equal(g.addr[1], 0x1200);
	assert_null(g.stack[1]);
	assert_int_equal(g.addr[2], 0x1000);
	assert_int_equal(g.stack_id[2], 5);
	/* the frames of 5 and 6 share their two outer frames */
	size_t nn = ss_slicer_stack_nodes(sl, &nodes);
	assert_int_equal(nn, 4);
	assert_true(g.leaf[0] && g.leaf[2] && g.leaf[0] != g.leaf[2]);
	assert_int_equal(nodes[g.leaf[0] - 1].parent, nodes[g.leaf[2] - 1].parent);
	uint32_t mid = nodes[g.leaf[0] - 1].parent;
	assert_true(mid > 0);
	uint32_t root = nodes[mid - 1].parent;
	assert_true(root > 0);
	assert_int_equal(nodes[root - 1].parent, 0);
	ss_slicer_free(sl);
	ss_sym_space_free(sp);
	ss_sym_free(sym);
	ss_reader_free(r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_dedup),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_slices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
