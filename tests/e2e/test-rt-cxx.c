/*
 * test-rt-cxx.c - end to end: C++ exceptions thrown through instrumented
 * frames and caught three levels up, in a loop (s-rt-cxx.cc, built with
 * g++ and clang++).  What the compilers do differs, and the test holds
 * each to it exactly:
 *   - g++ calls the exit hook from the cleanup code of every frame the
 *     exception passes: those frames simply end, no flags;
 *   - clang++ calls it on return only: the runtime sees the frames gone at
 *     the next call above them (~Guard in the landing pad of level2,
 *     after_catch in the handler), the slicer at the catcher's own exit
 *     when the handler calls nothing; they are marked unwound.
 * Either way every call is counted exactly, destructors run by the
 * unwinder nest in the frame that owns the object, the handler's calls
 * nest in the catching function, and later calls nest where they belong.
 * Names are demangled (namespace, class, template, constructor,
 * destructor).
 *
 * test_step_function: a C++ step function (s-step-cxx.cc) may be given to
 * `stepscope record` as its mangled symbol or demangled, with or without
 * its parameters ("train_step(Model *, int)", "train_step",
 * "ss::Trainer::step"); each records one step per call.  "update", which
 * names two overloads, is refused with one line listing both, exit 2,
 * before the program starts.
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

#define N 5 /* throws per catching function */

#define NS "ss::rt::"
#define THROWER "void ss::rt::thrower<int>(int)"
#define CTOR NS "Guard::Guard(int)"
#define DTOR NS "Guard::~Guard()"

/* Every slice named `name` is directly inside one of the `np` parents. */
static void expect_in(struct ss_e2e *t, const struct ss_e2e_trace *tr,
		      const char *name, size_t n, const char *const *parents,
		      size_t np)
{
	SS_E2E_EXPECT_CALLS(t, tr, name, 0, n);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, name))
			continue;
		const char *p = ss_e2e_parent_name(tr, s);
		size_t k = 0;
		while (k < np && !(p ? parents[k] && !strcmp(p, parents[k]) : !parents[k]))
			k++;
		SS_E2E_CHECK(t, k < np,
			     "'%s' at %lld ns: expected parent %s%s, got %s", name,
			     (long long)s->ts_ns, parents[0] ? parents[0] : "(none)",
			     np > 1 ? " (or another listed)" : "", p ? p : "(none)");
	}
}

#define IN(t, tr, name, n, ...)                                                \
	do {                                                                   \
		static const char *const ps_[] = { __VA_ARGS__ };              \
		expect_in((t), (tr), (name), (n), ps_,                         \
			  sizeof(ps_) / sizeof(ps_[0]));                       \
	} while (0)

static void test_exceptions(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int clang = !strcmp(t->v->cc, "clang");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -pthread -o s-rt-cxx "
		     "\"$SS_E2E_SRC/tests/e2e/s-rt-cxx.cc\"",
		     clang ? "clang++" : "g++", t->v->opt);
	int st = ss_e2e_record(t, "rec", "rt-cxx", "5");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "done"), "s-rt-cxx did not finish: %s", t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);

	IN(t, tr, "main", 1, NULL);
	IN(t, tr, NS "Worker::run(int)", 1, "main");
	IN(t, tr, NS "Worker::catcher(int)", N, NS "Worker::run(int)");
	IN(t, tr, NS "Worker::quiet(int)", N, NS "Worker::run(int)");
	IN(t, tr, NS "level1(int)", 2 * N, NS "Worker::catcher(int)",
	   NS "Worker::quiet(int)");
	IN(t, tr, NS "level2(int)", 2 * N, NS "level1(int)");
	IN(t, tr, NS "level3(int)", 2 * N, NS "level2(int)");
	IN(t, tr, THROWER, 2 * N, NS "level3(int)");
	/* the unwinder's ~Guard: in level2, after level3 (a sibling) */
	IN(t, tr, CTOR, 2 * N + 1, NS "level2(int)", NS "no_throw(int)");
	IN(t, tr, DTOR, 2 * N + 1, NS "level2(int)", NS "no_throw(int)");
	IN(t, tr, NS "after_catch(int)", N, NS "Worker::catcher(int)");
	IN(t, tr, NS "no_throw(int)", 1, "main");
	IN(t, tr, "settle()", 1, "main");
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0,
			    1 + 1 + 2 * N + 4 * 2 * N + 2 * (2 * N + 1) + N + 1 + 1);

	/* after the last throw, the tree is whole again */
	const struct ss_e2e_slice *run = ss_e2e_find(tr, NS "Worker::run(int)", 0);
	const struct ss_e2e_slice *nt = ss_e2e_find(tr, NS "no_throw(int)", 0);
	SS_E2E_CHECK(t, run && nt && run->ts_ns + run->dur_ns <= nt->ts_ns,
		     "no_throw must begin after Worker::run ends");

	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		int thrown = !strcmp(s->name, NS "level1(int)") ||
			     !strcmp(s->name, NS "level2(int)") ||
			     !strcmp(s->name, NS "level3(int)") ||
			     !strcmp(s->name, THROWER);
		unsigned want = clang && thrown ? SS_E2E_UNWOUND : 0;
		SS_E2E_CHECK(t, s->flags == want,
			     "'%s' at %lld ns: expected flags 0x%x (%s), got 0x%x",
			     s->name, (long long)s->ts_ns, want,
			     !thrown ? "returns normally"
			     : clang ? "clang: no exit hook on unwinding"
				     : "g++: exit hook in the cleanup code",
			     s->flags);
		if (thrown || !strcmp(s->name, "main"))
			SS_E2E_CHECK(t, s->file && strstr(s->file, "s-rt-cxx.cc:"),
				     "'%s': expected args.file \"...s-rt-cxx.cc:LINE\", "
				     "got %s", s->name, s->file ? s->file : "none");
	}
	ss_e2e_pass(t);
}

#define STEPS 4

/* Record s-step-cxx with `opts` into `dir`: STEPS steps, one per call of
 * the step function `fn` (demangled, as the trace names it). */
static void step_run(struct ss_e2e *t, const char *dir, const char *opts, const char *fn)
{
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o %s %s -- ./s-step-cxx %d",
		     dir, opts, STEPS);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, dir);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "step", 0, STEPS);
	SS_E2E_EXPECT_COUNT(t, tr, fn, NULL, 0, STEPS);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *sl = &tr->slices[i];
		if (strcmp(sl->name, fn))
			continue;
		int in = 0;
		for (size_t j = 0; j < tr->nslices; j++) {
			const struct ss_e2e_slice *st = &tr->slices[j];
			if (!strcmp(st->cat, "step") && st->ts_ns <= sl->ts_ns &&
			    sl->ts_ns + sl->dur_ns <= st->ts_ns + st->dur_ns + 1)
				in = 1;
		}
		SS_E2E_CHECK(t, in, "%s (%s): a call of %s outside every step", dir, opts, fn);
	}
}

static void test_step_function(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int clang = !strcmp(t->v->cc, "clang");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -I\"$SS_E2E_SRC/tests/e2e\" "
		     "-o s-step-cxx \"$SS_E2E_SRC/tests/e2e/s-step-cxx.cc\"",
		     clang ? "clang++" : "g++", t->v->opt);
	step_run(t, "mangled", "--set step.function=_Z10train_stepP5Modeli",
		 "train_step(Model*, int)");
	step_run(t, "base", "--set step.function=train_step", "train_step(Model*, int)");
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: \"train_step(Model *, int)\"\\n' > c.yaml");
	step_run(t, "full", "-c c.yaml", "train_step(Model*, int)");
	step_run(t, "member", "--set step.function=ss::Trainer::step", "ss::Trainer::step(int)");
	step_run(t, "overload", "--set 'step.function=update(double)'", "update(double)");

	/* two overloads: one line naming both, nothing started */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o amb --set "
			   "step.function=update -- sh -c 'touch ran'");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_SH_OK(t, "test ! -e ran");
	st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o amb --set "
		       "step.function=update -- ./s-step-cxx 1");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, !strncmp(t->err, "stepscope: --set step.function=update: step.function "
				 "'update' is ambiguous in ./s-step-cxx: ", 92) &&
		     strstr(t->err, "'update(float)' (_Z6updatef)") &&
		     strstr(t->err, "'update(double)' (_Z6updated)") && !t->out[0],
		     "expected one line naming update(float) and update(double), got:\n%s%s",
		     t->out, t->err);
	SS_E2E_SH_OK(t, "test ! -e amb");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_exceptions, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_exceptions, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_exceptions, ss_e2e_clang_O0, "clang-O0"),
		SS_E2E__ONE(test_exceptions, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E__ONE(test_step_function, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_step_function, ss_e2e_clang_O2, "clang-O2"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
