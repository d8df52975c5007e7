/*
 * test-rebuild.c - end to end: a run stays readable after its program and
 * its shared library are rebuilt (with a change, at another -O level) or
 * deleted.  s-rebuild (with libssrb.so, lib-rebuild.c) is recorded four
 * ways (whole run with allocations, whole-run statistics, two runs of
 * step windows); every reading command (report, report --whole-run,
 * steps, filter, flame, html, diff, memory --leaks, symbolize) is run on
 * them before the rebuild, after it, and after the binary is deleted, and
 * must print and write byte for byte the same each time: the names of
 * the build that ran, from the copies `record` kept in the runs.  Without
 * the kept copy of the library (or the program) every command exits 2
 * with one line naming the file and its build-ids, and writes nothing.
 * The same for a program and library linked without a build-id (a file
 * modified since the run began is not the one that ran).  A run made
 * without record (STEPSCOPE_DIR) is kept by the first command that reads
 * it: read before the rebuild, the same after; never read, refused.  A
 * run merged (stepscope merge) before the rebuild reads the same after.
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

/* Each reading command; {W} a whole run with allocations, {T} one with
 * whole-run statistics, {S} and {R} runs of steps, {P} the prefix of
 * this phase's outputs (its stdout in {P}.out, a file it writes {P}.f). */
static const char *const cmds[] = {
	"report --format csv {W}",
	"report --whole-run {T}",
	"steps {W}",
	"filter {W}",
	"flame -o {P}.f {W}",
	"html -o {P}.f {S}",
	"diff {S} {R}",
	"memory --leaks {W}",
	"symbolize -o {P}.f {S}",
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* cmds[i] with the run directories of set (W T S R: suffix "" or "-x")
 * and phase's prefix, into buf. */
static void expand(char *buf, size_t len, const char *cmd, const char *set,
		   const char *phase, size_t i)
{
	size_t n = 0;

	for (const char *c = cmd; *c && n + 64 < len; c++) {
		if (c[0] == '{' && c[1] && c[2] == '}') {
			switch (c[1]) {
			case 'W': n += (size_t)snprintf(buf + n, len - n, "w%s", set); break;
			case 'T': n += (size_t)snprintf(buf + n, len - n, "t%s", set); break;
			case 'S': n += (size_t)snprintf(buf + n, len - n, "s%s", set); break;
			case 'R': n += (size_t)snprintf(buf + n, len - n, "r%s", set); break;
			case 'P': n += (size_t)snprintf(buf + n, len - n, "%s-%zu", phase, i); break;
			}
			c += 2;
		} else {
			buf[n++] = *c;
		}
	}
	buf[n] = 0;
}

/* Build libssrb.so and s-rebuild with flags after the variant's. */
static void build(struct ss_e2e *t, const char *flags)
{
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s %s -shared -fPIC "
		     "-o libssrb.so \"$SS_E2E_SRC/tests/e2e/lib-rebuild.c\"",
		     t->v->cc, t->v->opt, flags);
	char extra[512];
	snprintf(extra, sizeof(extra), "%s -L. -lssrb -Wl,-rpath,\"$PWD\"", flags);
	ss_e2e_build(t, "rebuild", extra);
}

/* The build-id of file into out (hex, as readelf shows it). */
static void build_id(struct ss_e2e *t, const char *file, char *out, size_t len)
{
	SS_E2E_SH_OK(t, "readelf -n %s | sed -n 's/.*Build ID: *//p'", file);
	snprintf(out, len, "%s", t->out);
	out[strcspn(out, "\n")] = 0;
	SS_E2E_CHECK(t, strlen(out) >= 16, "%s: no build-id (readelf -n)", file);
}

/* Every command on the runs of set, its stdout and file saved as phase. */
static void run_all(struct ss_e2e *t, const char *set, const char *phase)
{
	char c[1024];

	for (size_t i = 0; i < NCMDS; i++) {
		expand(c, sizeof(c), cmds[i], set, phase, i);
		int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" %s > %s-%zu.out",
				   c, phase, i);
		if (st != 0) {
			ss_e2e_show_last(t, st);
			SS_E2E_FAIL(t, "stepscope %s (%s): expected status 0, got %d", c,
				    phase, st);
		}
	}
}

/* phase printed and wrote what "before" did, command by command. */
static void expect_same(struct ss_e2e *t, const char *phase)
{
	for (size_t i = 0; i < NCMDS; i++) {
		int st = ss_e2e_sh(t, "cmp before-%zu.out %s-%zu.out && "
				   "{ test ! -e before-%zu.f || cmp before-%zu.f %s-%zu.f; }",
				   i, phase, i, i, i, phase, i);
		if (st != 0) {
			ss_e2e_sh(t, "diff before-%zu.out %s-%zu.out | head -20", i, phase, i);
			SS_E2E_FAIL(t, "stepscope %s: %s its output differs from before the "
				    "rebuild:\n%s", cmds[i], phase, t->out);
		}
	}
}

/* Every command on the runs of set exits 2, prints one line on stderr
 * with each of the texts want (NULL-terminated) and nothing on stdout,
 * and writes no file. */
static void expect_refused(struct ss_e2e *t, const char *set, const char **want)
{
	char c[1024];

	for (size_t i = 0; i < NCMDS; i++) {
		expand(c, sizeof(c), cmds[i], set, "refused", i);
		int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" %s", c);
		SS_E2E_CHECK(t, st == 2, "stepscope %s: expected status 2, got %d (stderr: %s)",
			     c, st, t->err);
		SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
		SS_E2E_CHECK(t, !t->out[0], "stepscope %s printed: %s", c, t->out);
		for (const char **w = want; *w; w++)
			SS_E2E_CHECK(t, strstr(t->err, *w) != NULL,
				     "stepscope %s: expected '%s' in: %s", c, *w, t->err);
		SS_E2E_SH_OK(t, "test ! -e refused-%zu.f", i);
	}
}

/* The whole story; noid: program and library linked without a build-id
 * (their files count as the run's while not modified since it began). */
static void rebuild_story(void **state, int noid)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *other = strcmp(t->v->opt, "-O0") ? "-O0" : "-O2";
	const char *link = noid ? "-Wl,--build-id=none" : "";
	char exe_id[160] = "", lib_id[160] = "", lib_new[160] = "", buf[1024];
	size_t n;

	build(t, link);
	if (noid) {
		SS_E2E_SH_OK(t, "! readelf -n s-rebuild libssrb.so | grep 'Build ID'");
	} else {
		build_id(t, "s-rebuild", exe_id, sizeof(exe_id));
		build_id(t, "libssrb.so", lib_id, sizeof(lib_id));
	}
	SS_E2E_SH_OK(t, "R=\"$SS_E2E_BUILD/bin/stepscope\" && "
		     "$R record -o w --set memory.allocations=true -- ./s-rebuild && "
		     "$R record -o t --set stats=whole_run -- ./s-rebuild && "
		     "$R record -o s --set step.function=train_step -- ./s-rebuild && "
		     "$R record -o r --set step.function=train_step -- ./s-rebuild");
	/* record kept both, before any command read the runs */
	SS_E2E_SH_OK(t, "for d in w t s r; do cmp s-rebuild $d/.stepscope-bin/*/s-rebuild && "
		     "cmp libssrb.so $d/.stepscope-bin/*/libssrb.so || exit 1; done");
	/* merged (as the hosts of an MPI job are), and not read before the
	 * rebuild: its binaries are the ones merge took from w */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" merge w -o m");
	/* run directly (no record): d read before the rebuild, e not */
	if (!noid)
		SS_E2E_SH_OK(t, "mkdir d e && STEPSCOPE_DIR=\"$PWD/d\" ./s-rebuild && "
			     "STEPSCOPE_DIR=\"$PWD/e\" ./s-rebuild && "
			     "\"$SS_E2E_BUILD/bin/stepscope\" report --format csv d > d-before.out");

	run_all(t, "", "before");
	/* the names of the run, exactly */
	SS_E2E_SH_OK(t, "cat before-0.out");
	n = (size_t)ss_e2e_lines_with(t->out, ",function,");
	SS_E2E_CHECK(t, n == 4, "report lists %zu functions, expected 4:\n%s", n, t->out);
	const char *names[] = { "main", "train_step", "work", "lib_op" };
	const double calls[] = { 1, 10, 30, 20 };
	for (size_t i = 0; i < 4; i++) {
		double c = ss_e2e_csv_col(t->out, names[i], "calls");
		SS_E2E_CHECK(t, c == calls[i], "report: %s: %g calls, expected %g:\n%s",
			     names[i], c, calls[i], t->out);
	}
	SS_E2E_SH_OK(t, "grep -qx 'step.function: train_step' before-2.out");

	/* rebuilt with a change at another -O level, program and library */
	snprintf(buf, sizeof(buf), "%s %s -DSS_REBUILT", link, other);
	build(t, buf);
	if (!noid) {
		build_id(t, "libssrb.so", lib_new, sizeof(lib_new));
		SS_E2E_CHECK(t, strcmp(lib_id, lib_new),
			     "the rebuilt library has the same build-id");
	}
	SS_E2E_SH_OK(t, "R=\"$SS_E2E_BUILD/bin/stepscope\" && "
		     "$R record -o new --set stats=whole_run -- ./s-rebuild && "
		     "$R report --whole-run new | grep -q '^extra '");
	run_all(t, "", "rebuilt");
	expect_same(t, "rebuilt");
	if (!noid) {
		/* the direct run read before: kept then; the other refused */
		SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --format csv d > d-after.out "
			     "&& cmp d-before.out d-after.out");
		int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" report e");
		SS_E2E_EXPECT_STATUS(t, st, 2);
		SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
		SS_E2E_CHECK(t, strstr(t->err, "changed since the run (build-id ") != NULL,
			     "expected 'changed since the run (build-id ...', got: %s", t->err);
	}

	/* the program deleted */
	SS_E2E_SH_OK(t, "rm s-rebuild");
	run_all(t, "", "deleted");
	expect_same(t, "deleted");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --format csv m > m.out && "
		     "cmp before-0.out m.out");

	/* without the kept library: refused, naming it (and both build-ids) */
	SS_E2E_SH_OK(t, "for d in w t s r; do cp -r $d $d-x && "
		     "rm $d-x/.stepscope-bin/*/libssrb.so; done");
	{
		char a[256];
		if (noid)
			snprintf(a, sizeof(a), "libssrb.so: modified since the run (it has no build-id)");
		else
			snprintf(a, sizeof(a), "libssrb.so: changed since the run (build-id %s, now %s)",
				 lib_id, lib_new);
		const char *want[] = { a, "no copy of it kept in", NULL };
		expect_refused(t, "-x", want);
	}
	/* nor the deleted program */
	SS_E2E_SH_OK(t, "for d in w t s r; do rm -r $d-x && cp -r $d $d-x && "
		     "rm $d-x/.stepscope-bin/*/s-rebuild; done");
	{
		char a[256];
		if (noid)
			snprintf(a, sizeof(a), "s-rebuild: missing since the run (it has no build-id)");
		else
			snprintf(a, sizeof(a), "s-rebuild: missing since the run (build-id %s)", exe_id);
		const char *want[] = { a, NULL };
		expect_refused(t, "-x", want);
	}
	ss_e2e_pass(t);
}

/* What record copies and what it links: the program (small, the
 * user's) copied; a library of the user's over 64 MiB hard-linked, and
 * still read after a rebuild; libc (the system's) linked when the run is
 * on its filesystem, else not kept. */
static void test_keep_big(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t, "-DSS_BIG");
	SS_E2E_SH_OK(t, "test $(stat -c %%s libssrb.so) -gt $((64 << 20))");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o w -- ./s-rebuild && "
		     "\"$SS_E2E_BUILD/bin/stepscope\" report --format csv w > before.out");
	SS_E2E_SH_OK(t, "test $(stat -c %%h w/.stepscope-bin/*/s-rebuild) = 1 && "
		     "test $(stat -c %%i w/.stepscope-bin/*/libssrb.so) = $(stat -c %%i libssrb.so)");
	SS_E2E_SH_OK(t, "c=$(ls w/.stepscope-bin/*/libc.so.6 2>/dev/null); "
		     "l=$(ldd s-rebuild | sed -n 's/.*libc.so.6 => \\([^ ]*\\).*/\\1/p'); "
		     "if [ -n \"$c\" ]; then test $(stat -L -c %%i \"$l\") = $(stat -c %%i $c); "
		     "else test $(stat -L -c %%d \"$l\") != $(stat -c %%d w) || "
		     "[ \"$(id -u)\" != 0 ]; fi");
	/* the linker writes a new file: the link keeps the old build */
	build(t, "-DSS_BIG -DSS_REBUILT");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --format csv w > after.out && "
		     "cmp before.out after.out");
	ss_e2e_pass(t);
}

static void test_rebuild(void **state)
{
	rebuild_story(state, 0);
}

static void test_rebuild_no_build_id(void **state)
{
	rebuild_story(state, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_rebuild, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_rebuild, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E__ONE(test_rebuild_no_build_id, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E_TEST(test_keep_big),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
