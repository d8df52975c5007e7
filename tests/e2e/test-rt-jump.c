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
	int st = ss_e2e_record(t, "rec", "rt-jump", mode);
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
	/* asynchronous: inside whichever function the signal interrupted */
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "on_alarm"))
			continue;
		const char *par = ss_e2e_parent_name(tr, s);
		SS_E2E_CHECK(t, par && (!strcmp(par, "busy") || !strcmp(par, "spin")),
			     "on_alarm at %lld ns: expected parent busy or spin, got %s",
			     (long long)s->ts_ns, par ? par : "(none)");
		SS_E2E_CHECK(t, s->flags == 0, "on_alarm: unexpected flags 0x%x",
			     s->flags);
	}
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
		SS_E2E__ONE(test_deep, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_deep, ss_e2e_clang_O0, "clang-O0"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
