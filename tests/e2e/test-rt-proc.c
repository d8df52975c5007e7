/*
 * test-rt-proc.c - end to end: processes and images.  s-rt-fork forks two
 * children (each a process of its own in trace.json, its calls nested
 * under the frames it inherited, marked clipped at their begin; the
 * parent's trace untouched), starts s-rt-exec-child with vfork + exec and
 * with posix_spawn (a second program recorded into the same run), and
 * execs itself (a second image of the same pid, its own file
 * <prog>.<pid>.1.sstrace).  Exit statuses pass through `stepscope record`.
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

/* Record ./s-rt-fork MODE into rec (status `status`), keep its stdout in
 * *out, symbolize and load. */
static struct ss_e2e_trace *run(struct ss_e2e *t, const char *mode, int status,
				char **out)
{
	int st = ss_e2e_record(t, "rec", "rt-fork", mode);
	SS_E2E_EXPECT_STATUS(t, st, status);
	*out = strdup(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	return tr;
}

/* Every slice named `name` in process `pid` is directly inside one named
 * `parent` (NULL: at the top), and there are `n` of them. */
static void expect_in(struct ss_e2e *t, const struct ss_e2e_trace *tr,
		      long pid, const char *name, const char *parent, size_t n)
{
	size_t seen = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (s->pid != pid || strcmp(s->name, name))
			continue;
		seen++;
		const char *p = ss_e2e_parent_name(tr, s);
		SS_E2E_CHECK(t, parent ? p && !strcmp(p, parent) : !p,
			     "pid %ld: '%s' at %lld ns: expected parent %s, got %s",
			     pid, name, (long long)s->ts_ns, parent ? parent : "(none)",
			     p ? p : "(none)");
	}
	SS_E2E_CHECK(t, seen == n, "pid %ld: expected %zu calls of '%s', got %zu",
		     pid, n, name, seen);
}

/* Slices of process `pid` named `name` carry exactly `flags`; all
 * others of the process none. */
static void expect_flags(struct ss_e2e *t, const struct ss_e2e_trace *tr,
			 long pid, const char *const *names, const unsigned *flags,
			 size_t nnames)
{
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (s->pid != pid)
			continue;
		unsigned want = 0;
		for (size_t k = 0; k < nnames; k++)
			if (!strcmp(s->name, names[k]))
				want = flags[k];
		SS_E2E_CHECK(t, s->flags == want,
			     "pid %ld: '%s' at %lld ns: expected flags 0x%x, got 0x%x",
			     pid, s->name, (long long)s->ts_ns, want, s->flags);
	}
}

static void expect_process(struct ss_e2e *t, const struct ss_e2e_trace *tr,
			   long pid, const char *prog)
{
	const char *name = ss_e2e_process_name(tr, pid);
	char want[96];
	snprintf(want, sizeof(want), "%s (pid %ld)", prog, pid);
	SS_E2E_CHECK(t, name && !strcmp(name, want),
		     "pid %ld: expected process name \"%s\", got %s", pid, want,
		     name ? name : "none");
	SS_E2E_EXPECT_CALLS(t, tr, "main", pid, 1);
}

static void test_fork(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-fork", NULL);
	struct ss_e2e_trace *tr = run(t, "fork", 34, &out);
	long p = ss_e2e_printed(t, out, "parent"), a = ss_e2e_printed(t, out, "child-a"),
	     b = ss_e2e_printed(t, out, "child-b");
	free(out);
	SS_E2E_CHECK(t, tr->nprocesses == 3, "expected 3 processes, got %zu",
		     tr->nprocesses);

	/* the parent: as if it never forked */
	expect_process(t, tr, p, "s-rt-fork");
	expect_in(t, tr, p, "main", NULL, 1);
	expect_in(t, tr, p, "spawn_children", "main", 1);
	expect_in(t, tr, p, "status_of", "spawn_children", 2);
	expect_in(t, tr, p, "parent_work", "main", 7);
	expect_in(t, tr, p, "leaf", "parent_work", 7);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", p, 18);
	expect_flags(t, tr, p, NULL, NULL, 0);

	/* child A: inside the frames open at the fork, which it leaves */
	expect_process(t, tr, a, "s-rt-fork");
	expect_in(t, tr, a, "main", NULL, 1);
	expect_in(t, tr, a, "spawn_children", "main", 1);
	expect_in(t, tr, a, "child_work", "spawn_children", 5);
	expect_in(t, tr, a, "leaf", "child_work", 5);
	expect_in(t, tr, a, "child_tail", "main", 1);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", a, 13);
	static const char *const inh[] = { "main", "spawn_children" };
	static const unsigned fa[] = { SS_E2E_CLIPPED_BEGIN, SS_E2E_CLIPPED_BEGIN };
	expect_flags(t, tr, a, inh, fa, 2);

	/* child B: exit() inside child_exit, below the inherited frames */
	expect_process(t, tr, b, "s-rt-fork");
	expect_in(t, tr, b, "main", NULL, 1);
	expect_in(t, tr, b, "spawn_children", "main", 1);
	expect_in(t, tr, b, "child_work", "spawn_children", 2);
	expect_in(t, tr, b, "leaf", "child_work", 2);
	expect_in(t, tr, b, "child_exit", "spawn_children", 2);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", b, 8);
	const struct ss_e2e_slice *last = NULL;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (s->pid == b && !strcmp(s->name, "child_exit") &&
		    (!last || s->ts_ns > last->ts_ns))
			last = s;
	}
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (s->pid != b)
			continue;
		unsigned want = !strcmp(s->name, "main") || !strcmp(s->name, "spawn_children")
					? SS_E2E_CLIPPED_BEGIN | SS_E2E_UNWOUND
				: s == last ? SS_E2E_UNWOUND : 0;
		SS_E2E_CHECK(t, s->flags == want,
			     "pid %ld: '%s' at %lld ns: expected flags 0x%x, got 0x%x",
			     b, s->name, (long long)s->ts_ns, want, s->flags);
	}
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 18 + 13 + 8);
	ss_e2e_pass(t);
}

/* s-rt-exec-child N in process `pid`: main -> exec_step -> exec_leaf. */
static void expect_exec_child(struct ss_e2e *t, const struct ss_e2e_trace *tr,
			      long pid, size_t n)
{
	expect_process(t, tr, pid, "s-rt-exec-child");
	expect_in(t, tr, pid, "main", NULL, 1);
	expect_in(t, tr, pid, "exec_step", "main", n);
	expect_in(t, tr, pid, "exec_leaf", "exec_step", n);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", pid, 1 + 2 * n);
	expect_flags(t, tr, pid, NULL, NULL, 0);
}

static void expect_file(struct ss_e2e *t, const char *name, long pid)
{
	SS_E2E_SH_OK(t, "test -s rec/%s.%ld.sstrace", name, pid);
}

/* vfork + exec and posix_spawn of another instrumented program. */
static void test_exec_child(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-fork", NULL);
	ss_e2e_build(t, "rt-exec-child", NULL);
	static const struct {
		const char *mode, *fn;
		int status;
		size_t n;
	} cases[] = { { "vfork", "run_vfork", 45, 4 }, { "spawn", "run_spawn", 47, 6 } };
	for (size_t c = 0; c < 2; c++) {
		char *out;
		if (c)
			SS_E2E_SH_OK(t, "rm -rf rec");
		struct ss_e2e_trace *tr = run(t, cases[c].mode, cases[c].status, &out);
		long p = ss_e2e_printed(t, out, "parent"), k = ss_e2e_printed(t, out, cases[c].mode);
		long seen = ss_e2e_printed(t, out, "exec-child");
		free(out);
		SS_E2E_CHECK(t, seen == k, "%s: child printed pid %ld, parent %ld",
			     cases[c].mode, seen, k);
		SS_E2E_CHECK(t, tr->nprocesses == 2, "%s: expected 2 processes, got %zu",
			     cases[c].mode, tr->nprocesses);
		expect_file(t, "s-rt-fork", p);
		expect_file(t, "s-rt-exec-child", k);
		expect_process(t, tr, p, "s-rt-fork");
		expect_in(t, tr, p, cases[c].fn, "main", 1);
		expect_in(t, tr, p, "status_of", cases[c].fn, 1);
		SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", p, 3);
		expect_flags(t, tr, p, NULL, NULL, 0);
		expect_exec_child(t, tr, k, cases[c].n);
		ss_e2e_trace_release(tr);
		free(tr);
		t->ntraces--;
	}
	ss_e2e_pass(t);
}

/* exec of the same program: a second image of the same pid. */
static void test_exec_self(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *out;
	ss_e2e_build(t, "rt-fork", NULL);
	struct ss_e2e_trace *tr = run(t, "exec", 6, &out);
	long p = ss_e2e_printed(t, out, "parent"), p2 = ss_e2e_printed(t, out, "image2");
	free(out);
	SS_E2E_CHECK(t, p == p2, "exec: expected the same pid, got %ld and %ld", p, p2);
	expect_file(t, "s-rt-fork", p);
	SS_E2E_SH_OK(t, "test -s rec/s-rt-fork.%ld.1.sstrace", p);
	SS_E2E_CHECK(t, tr->nprocesses >= 1, "exec: no process in the trace");

	/* two mains on one track: the first image's ends at the exec */
	const struct ss_e2e_slice *m1 = NULL, *m2 = NULL;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "main"))
			continue;
		if (!m1 || s->ts_ns < m1->ts_ns) {
			m2 = m1;
			m1 = s;
		} else {
			m2 = s;
		}
	}
	SS_E2E_EXPECT_CALLS(t, tr, "main", p, 2);
	SS_E2E_CHECK(t, m1 && m2 && m1->ts_ns + m1->dur_ns <= m2->ts_ns,
		     "exec: expected the first image's main to end before the second's");
	SS_E2E_CHECK(t, m1->flags == SS_E2E_CLIPPED_END && m2->flags == 0,
		     "exec: expected main flags 0x%x then 0, got 0x%x and 0x%x",
		     SS_E2E_CLIPPED_END, m1->flags, m2->flags);
	expect_in(t, tr, p, "before_exec", "main", 2);
	expect_in(t, tr, p, "do_exec", "main", 1);
	expect_in(t, tr, p, "after_exec", "main", 3);
	expect_in(t, tr, p, "leaf", "after_exec", 3);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 2 + 2 + 1 + 3 + 3);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		int first = s->ts_ns < m2->ts_ns;
		if (!strcmp(s->name, "before_exec") || !strcmp(s->name, "do_exec"))
			SS_E2E_CHECK(t, first, "exec: '%s' after the exec", s->name);
		if (!strcmp(s->name, "after_exec") || !strcmp(s->name, "leaf"))
			SS_E2E_CHECK(t, !first, "exec: '%s' before the exec", s->name);
		if (s != m1 && s != m2)
			SS_E2E_CHECK(t, s->flags == (strcmp(s->name, "do_exec")
							     ? 0u : SS_E2E_CLIPPED_END),
				     "exec: '%s': unexpected flags 0x%x", s->name,
				     s->flags);
	}
	ss_e2e_pass(t);
}

#define PROC_VARIANTS(fn)                                                      \
	SS_E2E__ONE(fn, ss_e2e_gcc_O0, "gcc-O0"),                              \
	SS_E2E__ONE(fn, ss_e2e_gcc_O2, "gcc-O2"),                              \
	SS_E2E__ONE(fn, ss_e2e_clang_O2, "clang-O2")

int main(void)
{
	const struct CMUnitTest tests[] = {
		PROC_VARIANTS(test_fork),
		PROC_VARIANTS(test_exec_child),
		PROC_VARIANTS(test_exec_self),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
