/*
 * test-rt-harm.c - end to end: the runtime never harms the program, round
 * 3 (docs/robustness.md).  Each case compares the trace with the counts
 * the program keeps itself (s-rt-harm.c, s-rt-alloc.c):
 *   - fork() while another thread calls setenv: no child hangs;
 *   - handlers that siglongjmp out of the program's calls, at 64 KiB and
 *     1 MiB buffers: no call lost, no damage reported, a call cut by the
 *     jump is an unwound slice;
 *   - a 100 us timer whose handler records: no call split in two;
 *   - SIGKILL while three threads record, also while their rings are full
 *     and they drop: every returned call is a slice or counted as lost;
 *   - swapcontext: a context that never comes back, uftrace's
 *     s-ucontext.c with the coroutine's stack in main's frame or
 *     malloc'ed, a generator that yields N times and returns through
 *     uc_link: every call nested under the one that switched to it;
 *   - an instrumented .preinit_array hook;
 *   - a program with an allocator of its own: called as often as in the
 *     plain build, and its malloc and free in the trace;
 *   - the environment the program sees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

/* Slices named `name` with any of `flags`. */
static size_t count_flagged(const struct ss_e2e_trace *tr, const char *name,
			    unsigned flags)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++)
		n += !strcmp(tr->slices[i].name, name) && (tr->slices[i].flags & flags);
	return n;
}

/* Record ./s-NAME ARGS with `set` (--set options, may be ""), keep the
 * program's stdout in *out, check that symbolize said nothing about
 * damage, load the trace. */
static struct ss_e2e_trace *run(struct ss_e2e *t, const char *name, const char *set,
				const char *args, char **out)
{
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec %s -- ./s-%s %s",
			   set, name, args);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	*out = strdup(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_CHECK(t, !strstr(t->err, "damage") && !strstr(t->err, "empty word") &&
			     !strstr(t->err, "lost"),
		     "symbolize reported damage or loss: %s", t->err);
	SS_E2E_EXPECT_NESTED(t, tr);
	return tr;
}

static void test_fork_setenv(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-harm", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-harm", "", "forkenv 200", &out);
	SS_E2E_CHECK(t, strstr(out, "hung 0 of 200") != NULL,
		     "children hung after fork with a setenv thread: %s", out);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, 200);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, 2000);
	free(out);
	ss_e2e_pass(t);
}

static void sigjump(void **state, const char *set)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-harm", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-harm", set, "sigjump 300", &out);
	long train = ss_e2e_printed(t, out, "train"), leaf = ss_e2e_printed(t, out, "leaf");
	long handler = ss_e2e_printed(t, out, "handler"), jumps = ss_e2e_printed(t, out, "jumps");
	SS_E2E_CHECK(t, jumps > 10, "too few jumps to test anything: %s", out);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, (size_t)train);
	SS_E2E_EXPECT_CALLS(t, tr, "in_handler", 0, (size_t)handler);
	/* the program counts a leaf in its body: a jump between the enter
	 * hook and the body shows a slice the program did not count */
	size_t got = ss_e2e_count(tr, "leaf", NULL, 0);
	SS_E2E_CHECK(t, got >= (size_t)leaf && got <= (size_t)(leaf + jumps),
		     "leaf: the program counted %ld calls and %ld jumps, the trace has %zu",
		     leaf, jumps, got);
	size_t cut = count_flagged(tr, "leaf", SS_E2E_UNWOUND | SS_E2E_CLIPPED_BEGIN |
						   SS_E2E_CLIPPED_END);
	SS_E2E_CHECK(t, cut <= (size_t)jumps, "leaf: %zu slices cut, %ld jumps", cut,
		     jumps);
	free(out);
	ss_e2e_pass(t);
}

static void test_sigjump_64k(void **state)
{
	sigjump(state, "--set buffer_kb=64");
}

static void test_sigjump_1m(void **state)
{
	sigjump(state, "--set buffer_kb=1024");
}

static void test_timer_no_split(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-harm", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-harm", "", "sigtimer 2000000", &out);
	long leaf = ss_e2e_printed(t, out, "leaf"), handler = ss_e2e_printed(t, out, "handler");
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, (size_t)leaf);
	SS_E2E_EXPECT_CALLS(t, tr, "in_handler", 0, (size_t)handler);
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, 1);
	size_t cut = 0;
	for (size_t i = 0; i < tr->nslices; i++)
		cut += strcmp(tr->slices[i].name, "main") && tr->slices[i].flags;
	SS_E2E_CHECK(t, cut == 0, "%zu slices split or cut by a timer that never jumps",
		     cut);
	free(out);
	ss_e2e_pass(t);
}

/* SIGKILL while three threads record into 64 KiB blocks: what the file
 * holds is crash leftovers (blocks copied before the chunk's `used` was
 * written, blocks still in the rings), never damage, and every leaf call
 * the program saw return is there or counted as lost.  `env` runs the
 * recording with extra variables; must_drop: the rings must overflow. */
static void kill_threads(void **state, const char *env, int must_drop)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-harm", NULL);
	int st = ss_e2e_sh(t, "%s \"$SS_E2E_BUILD/bin/stepscope\" record -o rec --set buffer_kb=64 "
			   "-- ./s-rt-harm kill3 count", env);
	SS_E2E_EXPECT_STATUS(t, st, 128 + 9);
	SS_E2E_SH_OK(t, "od -An -t d8 -N 8 count");
	long count = atol(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_CHECK(t, !strstr(t->err, "warning"), "symbolize warned about a killed run: %s",
		     t->err);
	size_t got = ss_e2e_count(tr, "leaf", NULL, 0);
	/* with no core free for the copy thread a ring can fill: the events
	 * dropped are counted and said (docs/performance.md), never missing
	 * unsaid, also when the process dies while dropping (the ring's
	 * header holds the count); a leaf call is two events */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report rec | "
			"sed -n 's/^lost events: \\([0-9]*\\) on thread .*/\\1/p' | "
			"awk '{ n += $1 } END { print n + 0 }'");
	long lost = atol(t->out);
	if (lost)
		print_message("e2e: %ld leaf calls returned, %zu slices, %ld events dropped and "
			      "counted\n", count, got, lost);
	SS_E2E_CHECK(t, !must_drop || lost > 0, "the copy thread was stalled, yet no events "
		     "were said lost (%ld calls returned, %zu slices)", count, got);
	SS_E2E_CHECK(t, count > 1000 && got + (size_t)(lost + 1) / 2 >= (size_t)count &&
			got <= (size_t)count + 3,
		     "leaf: %ld calls returned in the program, %zu slices, %ld events lost",
		     count, got, lost);
	ss_e2e_pass(t);
}

static void test_kill_threads(void **state)
{
	kill_threads(state, "", 0);
}

/* Nothing copies blocks out (a test switch): the rings fill and every
 * thread drops until the SIGKILL; no LOST record is ever written, and the
 * count comes from the rings' headers.  Before they held it, 11,949 leaf
 * slices stood for 4.9 M returned calls with no word of the rest. */
static void test_kill_dropping(void **state)
{
	kill_threads(state, "STEPSCOPE__TEST_STALL_COPY=1", 1);
}

/* Function slices after main began (the fixture's .preinit_array hook
 * runs before): none outside main, and how many are flagged unwound (a
 * context switched away from: "suspended"). */
static size_t check_in_main(struct ss_e2e *t, const struct ss_e2e_trace *tr)
{
	size_t unwound = 0;
	const struct ss_e2e_slice *m = ss_e2e_find(tr, "main", 0);
	SS_E2E_CHECK(t, m && !m->flags, "main is missing or cut (flags %u)",
		     m ? m->flags : 0);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (s->catbit != SS_E2E_CAT_FUNCTION || s == m || s->ts_ns < m->ts_ns)
			continue;
		SS_E2E_CHECK(t, ss_e2e_chain(tr, s, "main") == 1,
			     "%s (at %lld ns) is outside main: parent %s", s->name,
			     (long long)s->ts_ns,
			     ss_e2e_parent_name(tr, s) ? ss_e2e_parent_name(tr, s) : "none");
		unwound += (s->flags & SS_E2E_UNWOUND) != 0;
	}
	return unwound;
}

/* Slices named `name` that begin a call (a coroutine's frame switched to
 * again continues its call in a slice clipped at the begin). */
static size_t count_begun(const struct ss_e2e_trace *tr, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++)
		n += !strcmp(tr->slices[i].name, name) &&
		     !(tr->slices[i].flags & SS_E2E_CLIPPED_BEGIN);
	return n;
}

/* `report`'s calls of `name` (csv) equal `calls`. */
static void expect_report_calls(struct ss_e2e *t, const char *name, long calls)
{
	struct ss_e2e_row rows[64];
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report -q --limit 0 --format csv rec");
	size_t nr = ss_e2e_report_rows(t->out, rows, 64);
	const struct ss_e2e_row *r = ss_e2e_row_find(rows, nr, name);
	SS_E2E_CHECK(t, r && r->calls == (unsigned long long)calls,
		     "report: %s has %llu calls, the program counted %ld:\n%s", name,
		     r ? r->calls : 0, calls, t->out);
}

static void test_ucontext(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-harm", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-harm", "", "ucontext", &out);
	SS_E2E_EXPECT_CALLS(t, tr, "foo", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "bar", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "baz", 0, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "foo", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "bar", "co_body");
	SS_E2E_EXPECT_INSIDE(t, tr, "co_body", "foo");
	/* co_body swaps back and is never switched to again: it is the one
	 * slice cut (suspended), bar inside it returned */
	size_t unwound = check_in_main(t, tr);
	SS_E2E_CHECK(t, unwound == 1 && count_flagged(tr, "co_body", SS_E2E_UNWOUND) == 1,
		     "%zu slices unwound, expected co_body alone", unwound);
	const struct ss_e2e_slice *bar = ss_e2e_find(tr, "bar", 0);
	const struct ss_e2e_slice *baz = ss_e2e_find(tr, "baz", 0);
	SS_E2E_CHECK(t, bar && ss_e2e_chain(tr, bar, "foo") == 1,
		     "bar (run on the context foo switched to) is not inside foo");
	SS_E2E_CHECK(t, baz && ss_e2e_parent_name(tr, baz) &&
			     !strcmp(ss_e2e_parent_name(tr, baz), "main"),
		     "baz: parent %s, expected main",
		     baz && ss_e2e_parent_name(tr, baz) ? ss_e2e_parent_name(tr, baz) : "none");
	free(out);
	ss_e2e_pass(t);
}

/* uftrace's s-ucontext.c: the coroutine (uc_bar itself) runs on an array
 * in main's frame, above uc_foo's, which looked like a longjmp out of
 * uc_foo: uc_bar came out beside it, uc_foo cut, and uc_baz outside main
 * (uc_foo's return, not on the shadow any more, closed every frame).
 * `where`: "local" or "heap" (malloc'ed, far below the thread's stack). */
static void ucontext_link(void **state, const char *where)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out, args[32];
	ss_e2e_build(t, "rt-harm", NULL);
	snprintf(args, sizeof(args), "uctx %s", where);
	struct ss_e2e_trace *tr = run(t, "rt-harm", "", args, &out);
	SS_E2E_CHECK(t, strstr(out, "foo 1 bar 1 baz 1") != NULL, "program: %s", out);
	SS_E2E_EXPECT_CALLS(t, tr, "uc_foo", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "uc_bar", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "uc_baz", 0, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "uc_foo", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "uc_bar", "uc_foo");
	SS_E2E_EXPECT_INSIDE(t, tr, "uc_baz", "main");
	size_t unwound = check_in_main(t, tr);
	SS_E2E_CHECK(t, unwound == 0, "%zu slices unwound, expected none", unwound);
	free(out);
	ss_e2e_pass(t);
}

static void test_ucontext_local(void **state)
{
	ucontext_link(state, "local");
}

static void test_ucontext_heap(void **state)
{
	ucontext_link(state, "heap");
}

/* A generator on a stack in main's frame, yielding 7 times: each
 * gen_next's switch resumes producer and the yield_value call it was
 * suspended in, nested under that gen_next (slices clipped at the begin,
 * the part before the switch unwound "suspended"); the last one returns
 * through uc_link.  Calls (slices not clipped at the begin, and report's
 * counts) are the program's own. */
static void test_ucontext_generator(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-harm", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-harm", "", "gen 7", &out);
	long next = ss_e2e_printed(t, out, "next"), prod = ss_e2e_printed(t, out, "producer");
	long yield = ss_e2e_printed(t, out, "yield"), make = ss_e2e_printed(t, out, "make");
	SS_E2E_CHECK(t, next == 8 && prod == 1 && yield == 7 && make == 7, "program: %s", out);
	SS_E2E_EXPECT_CALLS(t, tr, "gen_next", 0, (size_t)next);
	SS_E2E_EXPECT_CALLS(t, tr, "make_value", 0, (size_t)make);
	/* producer runs a piece inside every gen_next, yield_value two
	 * pieces a call: until its switch, and from its resume */
	SS_E2E_EXPECT_CALLS(t, tr, "producer", 0, (size_t)next);
	SS_E2E_EXPECT_CALLS(t, tr, "yield_value", 0, (size_t)(2 * yield));
	SS_E2E_CHECK(t, count_begun(tr, "gen_next") == (size_t)next &&
			     count_begun(tr, "producer") == (size_t)prod &&
			     count_begun(tr, "yield_value") == (size_t)yield &&
			     count_begun(tr, "make_value") == (size_t)make,
		     "calls begun: gen_next %zu, producer %zu, yield_value %zu, make_value "
		     "%zu; the program: %s", count_begun(tr, "gen_next"),
		     count_begun(tr, "producer"), count_begun(tr, "yield_value"),
		     count_begun(tr, "make_value"), out);
	SS_E2E_EXPECT_INSIDE(t, tr, "gen_next", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "producer", "gen_next");
	SS_E2E_EXPECT_INSIDE(t, tr, "yield_value", "producer");
	SS_E2E_EXPECT_INSIDE(t, tr, "make_value", "producer");
	size_t unwound = check_in_main(t, tr);
	SS_E2E_CHECK(t, unwound == (size_t)(2 * yield) &&
			     count_flagged(tr, "producer", SS_E2E_UNWOUND) == (size_t)yield &&
			     count_flagged(tr, "yield_value", SS_E2E_UNWOUND) == (size_t)yield,
		     "%zu slices unwound, expected producer and yield_value %ld times each",
		     unwound, yield);
	SS_E2E_CHECK(t, count_flagged(tr, "gen_next", ~0u) == 0 &&
			     count_flagged(tr, "make_value", ~0u) == 0,
		     "gen_next or make_value cut or clipped");
	SS_E2E_SH_OK(t, "grep -o '\"unwound\":\"suspended\"' rec/trace.json | wc -l");
	SS_E2E_CHECK(t, atol(t->out) == 2 * yield, "%ld slices unwound \"suspended\", "
		     "expected %ld", atol(t->out), 2 * yield);
	expect_report_calls(t, "gen_next", next);
	expect_report_calls(t, "producer", prod);
	expect_report_calls(t, "yield_value", yield);
	expect_report_calls(t, "make_value", make);
	free(out);
	ss_e2e_pass(t);
}

static void test_preinit(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-harm", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-harm", "", "preinit", &out);
	SS_E2E_CHECK(t, ss_e2e_printed(t, out, "early") == 1, "fixture: %s", out);
	SS_E2E_EXPECT_CALLS(t, tr, "early", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, 3);
	const struct ss_e2e_slice *e = ss_e2e_find(tr, "early", 0);
	SS_E2E_CHECK(t, e && ss_e2e_chain(tr, e, "main") == 0,
		     "early ran before main but is inside it");
	free(out);
	ss_e2e_pass(t);
}

/* The four counts of one line "PREFIXmalloc M calloc C realloc R free F". */
static void alloc_counts(struct ss_e2e *t, const char *out, const char *prefix,
			 long c[4])
{
	const char *p = strstr(out, prefix);
	if (!p || sscanf(p + strlen(prefix), "malloc %ld calloc %ld realloc %ld free %ld",
			 &c[0], &c[1], &c[2], &c[3]) != 4)
		SS_E2E_FAIL(t, "fixture did not print \"%smalloc ...\": %s", prefix, out);
}

/* Slices named `name` in process `pid` (0: any) inside one `parent`. */
static size_t count_under(const struct ss_e2e_trace *tr, int64_t pid, const char *name,
			  const char *parent)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++)
		n += (!pid || tr->slices[i].pid == pid) && !strcmp(tr->slices[i].name, name) &&
		     ss_e2e_chain(tr, &tr->slices[i], parent) == 1;
	return n;
}

/* s-rt-alloc MODE, plain and under record: the program's allocator is
 * called as often in both; returns the trace. */
static struct ss_e2e_trace *own_allocator(struct ss_e2e *t, const char *mode)
{
	char *out;
	/* the plain build's counts, then the instrumented one under record */
	SS_E2E_SH_OK(t, "%s %s -pthread -I\"$SS_E2E_SRC/tests/e2e\" -o plain "
		     "\"$SS_E2E_SRC/tests/e2e/s-rt-alloc.c\" && ./plain %s", t->v->cc, t->v->opt,
		     mode);
	char *plain = strdup(t->out);
	ss_e2e_build(t, "rt-alloc", NULL);
	struct ss_e2e_trace *tr = run(t, "rt-alloc", "", mode, &out);
	long a[4], b[4], pa[4], pb[4];
	alloc_counts(t, plain, "\nbefore main: ", pa);
	alloc_counts(t, out, "\nbefore main: ", pb);
	alloc_counts(t, plain, "", a);
	alloc_counts(t, out, "", b);
	const char *what[4] = { "malloc", "calloc", "realloc", "free" };
	for (int i = 0; i < 4; i++) {
		SS_E2E_CHECK(t, a[i] == b[i], "main: %s called %ld times plain, %ld under record",
			     what[i], a[i], b[i]);
		/* pthread_create takes the TLS vector of each runtime thread
		 * from the loader's calloc: the one call the runtime cannot
		 * keep from the program's allocator (docs/robustness.md) */
		long extra = i == 1 ? 1 : 0;
		SS_E2E_CHECK(t, pb[i] >= pa[i] && pb[i] <= pa[i] + extra,
			     "before main: %s called %ld times plain, %ld under record",
			     what[i], pa[i], pb[i]);
	}
	free(plain);
	free(out);
	/* the calls the runtime set off itself (a thread started, a forked
	 * child's restart) are neither the program's calls nor its losses */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report rec 2>&1");
	SS_E2E_CHECK(t, !strstr(t->out, "lost events"),
		     "report counts lost events where the program lost none:\n%s", t->out);
	return tr;
}

static void test_own_allocator(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = own_allocator(t, "");
	/* its malloc and free are the program's functions: in the trace */
	size_t in_step = count_under(tr, 0, "malloc", "train_step");
	SS_E2E_CHECK(t, in_step == 10, "malloc inside train_step: %zu, expected 10", in_step);
	SS_E2E_CHECK(t, ss_e2e_count(tr, "free", NULL, 0) >= 10,
		     "free: %zu slices, expected at least 10", ss_e2e_count(tr, "free", NULL, 0));
	ss_e2e_pass(t);
}

/* A program with its own allocator forks; the child allocates: both
 * processes' calls in the trace. */
static void test_own_allocator_fork(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = own_allocator(t, "fork");
	int64_t pids[2] = { 0, 0 };
	size_t np = 0;
	for (size_t i = 0; i < tr->nslices && np < 2; i++)
		if (!strcmp(tr->slices[i].name, "train_step") &&
		    (np == 0 || tr->slices[i].pid != pids[0]))
			pids[np++] = tr->slices[i].pid;
	SS_E2E_CHECK(t, np == 2, "train_step in %zu processes, expected the parent and the child",
		     np);
	for (size_t k = 0; k < np; k++) {
		size_t n = count_under(tr, pids[k], "malloc", "train_step");
		SS_E2E_CHECK(t, n == 10, "pid %lld: malloc inside train_step %zu times, expected 10",
			     (long long)pids[k], n);
	}
	ss_e2e_pass(t);
}

/* Its free called from a thread-specific data destructor at a thread's
 * exit, after the thread's last instrumented call returned. */
static void test_own_allocator_tsd(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = own_allocator(t, "tsd");
	SS_E2E_EXPECT_CALLS(t, tr, "release_slot", 0, 1);
	size_t n = count_under(tr, 0, "free", "release_slot");
	SS_E2E_CHECK(t, n == 1, "free inside release_slot: %zu, expected 1", n);
	ss_e2e_pass(t);
}

static void test_environment(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-harm", NULL);
	/* disabled, without record: the environment untouched */
	SS_E2E_SH_OK(t, "STEPSCOPE_DISABLE=1 ./s-rt-harm env");
	SS_E2E_CHECK(t, !strcmp(t->out, "STEPSCOPE_DISABLE=1\nend\n"),
		     "STEPSCOPE_DISABLE=1: the program saw %s", t->out);
	/* under record: the run's variables, each on one line */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec -- ./s-rt-harm env");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	int lines = 0, config = 0;
	for (const char *p = t->out; *p; p = strchr(p, '\n') + 1) {
		lines++;
		SS_E2E_CHECK(t, !strncmp(p, "STEPSCOPE", 9) || !strncmp(p, "end\n", 4),
			     "a line of the environment is not a variable: %.60s", p);
		config += !strncmp(p, "STEPSCOPE__CONFIG=enabled=true%n", 32);
		if (!strchr(p, '\n'))
			break;
	}
	SS_E2E_CHECK(t, config == 1, "STEPSCOPE__CONFIG is not one line: %s", t->out);
	SS_E2E_CHECK(t, lines <= 6, "%d lines: %s", lines, t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_fork_setenv, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_sigjump_64k, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_sigjump_64k, ss_e2e_clang_O0, "clang-O0"),
		SS_E2E__ONE(test_sigjump_1m, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_sigjump_1m, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E__ONE(test_timer_no_split, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_timer_no_split, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E__ONE(test_kill_threads, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_kill_threads, ss_e2e_clang_O0, "clang-O0"),
		SS_E2E__ONE(test_kill_dropping, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E_VARIANTS(test_ucontext),
		SS_E2E_VARIANTS(test_ucontext_local),
		SS_E2E_VARIANTS(test_ucontext_heap),
		SS_E2E_VARIANTS(test_ucontext_generator),
		SS_E2E_VARIANTS(test_preinit),
		SS_E2E__ONE(test_own_allocator, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_own_allocator, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_own_allocator_fork, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_own_allocator_tsd, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E_TEST(test_environment),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
