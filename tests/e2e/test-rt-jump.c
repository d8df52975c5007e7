/*
 * test-rt-jump.c - end to end: control flow that skips frames.  longjmp and
 * siglongjmp out of instrumented frames (the skipped frames end where the
 * runtime sees the stack above them, marked unwound, and later calls nest
 * under the function that called setjmp), a 10000-deep recursion left by
 * longjmp, signal handlers (synchronous raise and an interval timer) nested
 * under the function they interrupted.
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

/* Every slice named `name` has (or, want 0, has not) the unwound flag. */
static void expect_unwound(struct ss_e2e *t, const struct ss_e2e_trace *tr,
			   const char *name, int want)
{
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, name))
			continue;
		int got = (s->flags & SS_E2E_UNWOUND) != 0;
		SS_E2E_CHECK(t, got == want,
			     "'%s' at %lld ns: expected %s, got args flags 0x%x",
			     name, (long long)s->ts_ns,
			     want ? "unwound (it never returned)" : "no unwound flag",
			     s->flags);
	}
}

static struct ss_e2e_trace *run(struct ss_e2e *t, const char *mode)
{
	ss_e2e_build(t, "rt-jump", NULL);
	int st = !strcmp(mode, "itimer")
		? ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec "
			    "--set buffer_kb=64 -- ./s-rt-jump itimer")
		: ss_e2e_record(t, "rec", "rt-jump", mode);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	char *out = strdup(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	free(t->out);
	t->out = out;
	SS_E2E_EXPECT_NESTED(t, tr);
	return tr;
}

static void test_longjmp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = run(t, "longjmp");
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "jumper", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "level1", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "level2", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "level3", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "after_jump", 0, 3);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 16);
	SS_E2E_EXPECT_INSIDE(t, tr, "jumper", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "level1", "jumper");
	SS_E2E_EXPECT_INSIDE(t, tr, "level2", "level1");
	SS_E2E_EXPECT_INSIDE(t, tr, "level3", "level2");
	/* the repair: after the jump, calls nest under jumper again */
	SS_E2E_EXPECT_INSIDE(t, tr, "after_jump", "jumper");
	expect_unwound(t, tr, "level1", 1);
	expect_unwound(t, tr, "level2", 1);
	expect_unwound(t, tr, "level3", 1);
	expect_unwound(t, tr, "jumper", 0);
	expect_unwound(t, tr, "after_jump", 0);
	ss_e2e_pass(t);
}

static void test_siglongjmp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = run(t, "siglongjmp");
	SS_E2E_EXPECT_CALLS(t, tr, "guarded", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "risky", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "fault", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "on_usr1", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "recovered", 0, 1);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 6);
	SS_E2E_EXPECT_INSIDE(t, tr, "risky", "guarded");
	SS_E2E_EXPECT_INSIDE(t, tr, "fault", "risky");
	/* the handler runs inside the function that raised the signal */
	SS_E2E_EXPECT_INSIDE(t, tr, "on_usr1", "fault");
	SS_E2E_EXPECT_INSIDE(t, tr, "recovered", "guarded");
	expect_unwound(t, tr, "risky", 1);
	expect_unwound(t, tr, "fault", 1);
	expect_unwound(t, tr, "on_usr1", 1);
	expect_unwound(t, tr, "recovered", 0);
	ss_e2e_pass(t);
}

static void test_raise(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = run(t, "raise");
	SS_E2E_EXPECT_CALLS(t, tr, "outer", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "on_usr2", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "in_handler", 0, 1);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 4);
	SS_E2E_EXPECT_INSIDE(t, tr, "outer", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "on_usr2", "outer");
	SS_E2E_EXPECT_INSIDE(t, tr, "in_handler", "on_usr2");
	for (size_t i = 0; i < tr->nslices; i++)
		SS_E2E_CHECK(t, tr->slices[i].flags == 0,
			     "'%s': unexpected flags 0x%x", tr->slices[i].name,
			     tr->slices[i].flags);
	ss_e2e_pass(t);
}

static void test_timer(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = run(t, "timer");
	int alarms = 0;
	const char *p = strstr(t->out, "alarms ");
	SS_E2E_CHECK(t, p && sscanf(p, "alarms %d", &alarms) == 1 && alarms >= 20,
		     "s-rt-jump timer: expected \"alarms N\" (N >= 20), got: %s",
		     t->out);
	SS_E2E_EXPECT_CALLS(t, tr, "spin", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "on_alarm", 0, (size_t)alarms);
	SS_E2E_EXPECT_CALLS(t, tr, "tick", 0, (size_t)alarms);
	SS_E2E_EXPECT_INSIDE(t, tr, "tick", "on_alarm");
	SS_E2E_EXPECT_INSIDE(t, tr, "busy", "spin");
	/* asynchronous: inside whichever function the signal interrupted;
	 * an alarm that fires between setitimer and spin(), or after spin
	 * returned, interrupts main itself */
	const struct ss_e2e_slice *sp = ss_e2e_find(tr, "spin", 0);
	for (size_t i = 0; sp && i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "on_alarm"))
			continue;
		const char *par = ss_e2e_parent_name(tr, s);
		int in_spin = s->ts_ns >= sp->ts_ns &&
			      s->ts_ns + s->dur_ns <= sp->ts_ns + sp->dur_ns;
		SS_E2E_CHECK(t, par && (in_spin ? !strcmp(par, "busy") || !strcmp(par, "spin")
						: !strcmp(par, "main")),
			     "on_alarm at %lld ns: expected parent %s, got %s",
			     (long long)s->ts_ns, in_spin ? "busy or spin" : "main",
			     par ? par : "(none)");
		SS_E2E_CHECK(t, s->flags == 0, "on_alarm: unexpected flags 0x%x",
			     s->flags);
	}
	ss_e2e_pass(t);
}

/* A 200 us interval timer with 64 KiB chunks: many ticks interrupt a chunk
 * refill.  Each handler slice must nest under the function it interrupted
 * (leaf or churn, main before or after churn) with its true length, and
 * its tick() inside it. */
static void test_itimer(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = run(t, "itimer");
	int ticks = 0;
	const char *p = strstr(t->out, "ticks ");
	SS_E2E_CHECK(t, p && sscanf(p, "ticks %d", &ticks) == 1 && ticks >= 300,
		     "s-rt-jump itimer: expected \"ticks N\" (N >= 300), got: %s",
		     t->out);
	SS_E2E_EXPECT_CALLS(t, tr, "churn", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "on_tick", 0, (size_t)ticks);
	SS_E2E_EXPECT_CALLS(t, tr, "tick", 0, (size_t)ticks);
	SS_E2E_EXPECT_INSIDE(t, tr, "tick", "on_tick");
	const struct ss_e2e_slice *ch = ss_e2e_find(tr, "churn", 0);
	size_t bad = 0, empty = 0;
	char first[256] = "";
	for (size_t i = 0; ch && i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "on_tick"))
			continue;
		const char *par = ss_e2e_parent_name(tr, s);
		int in_churn = s->ts_ns >= ch->ts_ns &&
			       s->ts_ns + s->dur_ns <= ch->ts_ns + ch->dur_ns;
		int ok = par && (in_churn ? !strcmp(par, "leaf") || !strcmp(par, "churn")
					  : !strcmp(par, "main"));
		if (!ok && !bad++)
			snprintf(first, sizeof(first), "on_tick at %lld ns in %s",
				 (long long)s->ts_ns, par ? par : "(none)");
		empty += s->dur_ns <= 0;
	}
	SS_E2E_CHECK(t, bad == 0, "%zu of %d on_tick slices not under the function they "
		     "interrupted (first: %s)", bad, ticks, first);
	SS_E2E_CHECK(t, empty == 0, "%zu of %d on_tick slices have no length", empty, ticks);
	ss_e2e_pass(t);
}

static void test_deep(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = run(t, "deep");
	SS_E2E_EXPECT_CALLS(t, tr, "descend", 0, 10000);
	SS_E2E_CHECK(t, ss_e2e_max_chain(tr, "descend") == 10000,
		     "descend: expected depth 10000, got %d",
		     ss_e2e_max_chain(tr, "descend"));
	SS_E2E_EXPECT_CALLS(t, tr, "after_jump", 0, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "after_jump", "main");
	expect_unwound(t, tr, "descend", 1);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_longjmp),
		SS_E2E_VARIANTS(test_siglongjmp),
		SS_E2E_VARIANTS(test_raise),
		SS_E2E_VARIANTS(test_timer),
		SS_E2E__ONE(test_itimer, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_itimer, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E__ONE(test_deep, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_deep, ss_e2e_clang_O0, "clang-O0"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
