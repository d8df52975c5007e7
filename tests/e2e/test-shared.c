/*
 * test-shared.c - end to end: s-uselib linked against libssfix.so
 * (lib-shared.c), both built through stepscope-cc.  The library's functions,
 * static ones included, are named and counted exactly, and calls cross the
 * library boundary both ways (lib_apply calls back into the program).
 * With the library stripped (only .dynsym left), the warning that some of
 * its addresses have no symbol is given once per run directory, by the
 * first command that reads it, not again by every later command.
 * Calls that go back and forth between the program and the library (their
 * addresses are too far apart for one compact event's window) are recorded
 * without a system call each: a few hundred rt_sigprocmask calls for the
 * whole run, not one pair per call.  filter.min_duration_us drops the
 * library's short calls as it does the program's, though their ENTER is a
 * long record.
 * The program and the library call the hooks stepscope-cc linked into
 * each directly (no PLT, not exported), and one runtime records both: one
 * trace file, every call counted once.
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

static void test_shared(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t,
		     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
		     "-o libssfix.so \"$SS_E2E_SRC/tests/e2e/lib-shared.c\"",
		     t->v->cc, t->v->opt);
	struct ss_e2e_trace *tr = ss_e2e_profile(
		t, "uselib", "-L. -lssfix -Wl,-rpath,\"$PWD\"", NULL);
	SS_E2E_EXPECT_NESTED(t, tr);

	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_outer", 0, 4);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_inner", 0, 4 * 3);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_apply", 0, 5);
	SS_E2E_EXPECT_CALLS(t, tr, "cb_square", 0, 5);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 4 + 12 + 5 + 5);

	SS_E2E_EXPECT_INSIDE(t, tr, "lib_outer", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "lib_inner", "lib_outer");
	SS_E2E_EXPECT_INSIDE(t, tr, "lib_apply", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "cb_square", "lib_apply");

	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		const char *want = !strncmp(s->name, "lib_", 4) ? "lib-shared.c:"
								: "s-uselib.c:";
		SS_E2E_CHECK(t, s->file && strstr(s->file, want),
			     "'%s': expected args.file \"...%sLINE\", got %s",
			     s->name, want, s->file ? s->file : "none");
	}
	ss_e2e_pass(t);
}

/* Issue 28: stepscope-cc links the hooks into the executable and the
 * library (runtime/exe/hooks-exe.c).  Their calls to them are direct
 * calls, neither exports them nor calls them through a PLT, both go on
 * into libstepscope.so, and the one runtime records both into one file,
 * every call exactly. */
static void test_hooks_in_program(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t,
		     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
		     "-o libssfix.so \"$SS_E2E_SRC/tests/e2e/lib-shared.c\"",
		     t->v->cc, t->v->opt);
	ss_e2e_build(t, "uselib", "-L. -lssfix -Wl,-rpath,\"$PWD\"");
	static const char *const hooks[] = { "__cyg_profile_func_enter",
					     "__cyg_profile_func_exit" };
	static const char *const mods[] = { "s-uselib", "libssfix.so" };
	for (int m = 0; m < 2; m++) {
		for (int i = 0; i < 2; i++) {
			SS_E2E_SH_OK(t, "objdump -d --no-show-raw-insn %s | "
					"grep -c 'call .*<%s>$' || true", mods[m], hooks[i]);
			SS_E2E_CHECK(t, atoi(t->out) >= 2,
				     "%s: expected direct calls to %s, objdump counts %s",
				     mods[m], hooks[i], t->out);
			SS_E2E_SH_OK(t, "objdump -d %s | grep -c '%s@plt' || true",
				     mods[m], hooks[i]);
			SS_E2E_CHECK(t, atoi(t->out) == 0,
				     "%s: expected no call to %s through the PLT, "
				     "objdump counts %s", mods[m], hooks[i], t->out);
			SS_E2E_SH_OK(t, "nm -D %s | grep -c ' %s$' || true", mods[m],
				     hooks[i]);
			SS_E2E_CHECK(t, atoi(t->out) == 0,
				     "%s: expected %s neither exported nor imported, "
				     "nm -D shows it:\n%s", mods[m], hooks[i], t->out);
		}
	}
	/* both go on into the one runtime (each module's first call does;
	 * disabled, so that no background thread's lines cut into these) */
	SS_E2E_SH_OK(t, "STEPSCOPE_DISABLE=1 LD_DEBUG=bindings ./s-uselib 2>&1 >/dev/null | "
			"grep -E '(s-uselib|libssfix.so).*stepscope__hook_enter' | "
			"grep libstepscope | sed -E 's/.*binding file ([^ ]*).*/\\1/' | "
			"sed 's|.*/||' | sort -u");
	SS_E2E_CHECK(t, !strcmp(t->out, "libssfix.so\ns-uselib\n"),
		     "expected s-uselib and libssfix.so bound to libstepscope's "
		     "stepscope__hook_enter, LD_DEBUG=bindings says:\n%s", t->out);
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "rec", "uselib", NULL), 0);
	SS_E2E_SH_OK(t, "ls rec/*.sstrace | wc -l");
	SS_E2E_CHECK(t, atoi(t->out) == 1,
		     "expected one trace file (one runtime recording), got %s",
		     t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_outer", 0, 4);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_inner", 0, 4 * 3);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_apply", 0, 5);
	SS_E2E_EXPECT_CALLS(t, tr, "cb_square", 0, 5);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 4 + 12 + 5 + 5);
	SS_E2E_EXPECT_INSIDE(t, tr, "cb_square", "lib_apply");
	/* STEPSCOPE_LINK_HOOKS=0: the program calls the runtime's through
	 * its PLT, as before */
	SS_E2E_SH_OK(t, "STEPSCOPE_LINK_HOOKS=0 \"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s "
			"-o s-uselib-plt \"$SS_E2E_SRC/tests/e2e/s-uselib.c\" "
			"-I\"$SS_E2E_SRC/tests/e2e\" -L. -lssfix -Wl,-rpath,\"$PWD\" && "
			"objdump -d s-uselib-plt | grep -c 'call.*<__cyg_profile_func_enter@plt>' || true",
		     t->v->cc, t->v->opt);
	SS_E2E_CHECK(t, atoi(t->out) >= 2,
		     "STEPSCOPE_LINK_HOOKS=0: expected the program's calls through "
		     "the PLT, objdump counts %s", t->out);
	ss_e2e_pass(t);
}

static void test_stripped_warned_once(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t,
		     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
		     "-o libssfix.so \"$SS_E2E_SRC/tests/e2e/lib-shared.c\" && "
		     "strip --strip-unneeded libssfix.so",
		     t->v->cc, t->v->opt);
	ss_e2e_build(t, "uselib", "-L. -lssfix -Wl,-rpath,\"$PWD\"");
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "run", "uselib", NULL), 0);
	static const char *const cmds[] = { "symbolize", "report", "flame", "html",
					    "symbolize" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" %s run >/dev/null 2>err && "
				"grep -c 'libssfix.so: no symbol for some addresses' err || true",
			     cmds[i]);
		SS_E2E_CHECK(t, !strcmp(t->out, i ? "0\n" : "1\n"),
			     "stepscope %s: expected the stripped-library warning %s, got %s",
			     cmds[i], i ? "not again" : "once", t->out);
	}
	ss_e2e_pass(t);
}

/* libssfix.so and s-uselib linked to it, both through stepscope-cc. */
static void build_uselib(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t,
		     "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -shared -fPIC "
		     "-o libssfix.so \"$SS_E2E_SRC/tests/e2e/lib-shared.c\"",
		     t->v->cc, t->v->opt);
	ss_e2e_build(t, "uselib", "-L. -lssfix -Wl,-rpath,\"$PWD\"");
}

/* 20000 rounds: 1.04 million events, half of them more than the compact
 * window away from the block's address base. */
static void test_far_calls_no_syscalls(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_row rows[16];
	ss_e2e_need(t, "command -v strace", "strace", "strace");
	if (ss_e2e_sh(t, "strace -f -o /dev/null true") != 0)
		ss_e2e_skip(t, "strace cannot trace here (ptrace not permitted): %s", t->err);
	build_uselib(t);
	SS_E2E_SH_OK(t, "strace -f -qq -c -o sc.txt -e trace=rt_sigprocmask "
			"\"$SS_E2E_BUILD/bin/stepscope\" record -o run -- ./s-uselib 20000 >prog.out && "
			"awk '$NF == \"rt_sigprocmask\" { print $4 }' sc.txt");
	long masks = atol(t->out);
	SS_E2E_CHECK(t, masks < 2000,
		     "expected a few hundred rt_sigprocmask calls for 1.04 million events, got %ld",
		     masks);
	print_message("rt_sigprocmask calls: %ld\n", masks);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --limit 0 --format csv run");
	size_t n = ss_e2e_report_rows(t->out, rows, 16);
	static const struct {
		const char *name;
		unsigned long long calls;
	} want[] = { { "main", 1 }, { "lib_outer", 80000 }, { "lib_inner", 240000 },
		     { "lib_apply", 100000 }, { "cb_square", 100000 } };
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		const struct ss_e2e_row *r = ss_e2e_row_find(rows, n, want[k].name);
		unsigned long long got = r ? r->calls : 0;
		SS_E2E_CHECK(t, got == want[k].calls, "%s: %llu calls, expected %llu",
			     want[k].name, got, want[k].calls);
	}
	ss_e2e_pass(t);
}

/* Every call but main's (150 ms of sleep) is far shorter than 100 ms:
 * all are dropped, the library's (long ENTER records: the block began
 * with main, in the program) as well as cb_square's. */
static void test_min_duration_library(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_row rows[16];
	build_uselib(t);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o run "
			"--set filter.min_duration_us=100000 -- ./s-uselib 1000 150 >prog.out");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --limit 0 --format csv run");
	size_t n = ss_e2e_report_rows(t->out, rows, 16);
	SS_E2E_CHECK(t, n == 1 && !strcmp(rows[0].name, "main") && rows[0].calls == 1,
		     "expected main alone (1 call), every shorter call dropped; report:\n%s",
		     t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_shared),
		SS_E2E_VARIANTS(test_hooks_in_program),
		SS_E2E_TEST(test_stripped_warned_once),
		SS_E2E_VARIANTS(test_far_calls_no_syscalls),
		SS_E2E_VARIANTS(test_min_duration_library),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
