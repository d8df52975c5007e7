/*
 * test-deps.c - scripts/deps.sh and the Makefile's dependency stamp, run
 * against stand-ins for dpkg-query, apt-get and id put first on PATH (no
 * package is really installed): nothing missing is silent; as root the
 * missing packages are installed in one apt-get call; a failed install is
 * one line naming the package and apt-get's error; not as root, one line
 * naming what to install; build/.deps-ok is written only after a
 * successful check, and a changed deps.sh checks again.
 *
 * The stand-ins: dpkg-query says every package is installed except those
 * listed in $FAKE/missing; apt-get logs its arguments to $FAKE/apt.log and
 * "installs" by taking names off that list, failing (status 100, with
 * apt's own message) on a package named no-such-package; id -u prints
 * $FAKE_UID.
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

/* Stand-ins under ./fake, $FAKE exported by every command through ENV. */
#define ENV "FAKE=\"$PWD/fake\" PATH=\"$PWD/fake:$PATH\" "
#define DEPS ENV "sh \"$SS_E2E_SRC/scripts/deps.sh\""

static void fakes(struct ss_e2e *t, const char *missing, int uid)
{
	SS_E2E_SH_OK(t, "mkdir -p fake && printf '%%s\\n' %s > fake/missing && "
		     "echo %d > fake/uid && : > fake/apt.log", missing, uid);
	SS_E2E_SH_OK(t, "cat > fake/dpkg-query <<'EOF'\n"
		     "#!/bin/sh\n"
		     "for p; do :; done\n"
		     "grep -qxFe \"$p\" \"$FAKE/missing\" && exit 1\n"
		     "echo 'install ok installed'\n"
		     "EOF\n"
		     "cat > fake/apt-get <<'EOF'\n"
		     "#!/bin/sh\n"
		     "echo \"$*\" >> \"$FAKE/apt.log\"\n"
		     "[ \"$1\" = install ] || exit 0\n"
		     "for p; do case $p in no-such-package) "
		     "echo \"E: Unable to locate package $p\" >&2; exit 100;; esac; done\n"
		     "for p; do grep -vxFe \"$p\" \"$FAKE/missing\" > \"$FAKE/m\"; "
		     "mv \"$FAKE/m\" \"$FAKE/missing\"; done\n"
		     "EOF\n"
		     "printf '#!/bin/sh\\ncat \"$FAKE/uid\"\\n' > fake/id && "
		     "chmod +x fake/dpkg-query fake/apt-get fake/id");
}

/* Everything there: status 0, no output, apt-get never called. */
static void test_nothing_missing(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	fakes(t, "''", 0);
	SS_E2E_SH_OK(t, DEPS " test");
	SS_E2E_CHECK(t, !strcmp(t->out, "") && !strcmp(t->err, ""),
		     "expected no output, got stdout \"%s\" stderr \"%s\"", t->out, t->err);
	SS_E2E_SH_OK(t, "cat fake/apt.log");
	SS_E2E_CHECK(t, !strcmp(t->out, ""), "apt-get was called: %s", t->out);
	ss_e2e_pass(t);
}

/* As root: the missing ones of the set, in one install, then status 0. */
static void test_root_installs(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	/* fortune-mod: in no set, so left missing */
	fakes(t, "clang chromium fortune-mod", 0);
	SS_E2E_SH_OK(t, DEPS " test");
	SS_E2E_CHECK(t, !strcmp(t->out, "  DEPS    installing: clang chromium\n"),
		     "stdout: \"%s\"", t->out);
	SS_E2E_SH_OK(t, "cat fake/apt.log");
	SS_E2E_CHECK(t, !strcmp(t->out, "update\ninstall -y --no-install-recommends "
				 "clang chromium\n"), "apt-get calls: \"%s\"", t->out);
	SS_E2E_SH_OK(t, "cat fake/missing");
	SS_E2E_CHECK(t, !strcmp(t->out, "fortune-mod\n"), "still missing: \"%s\"", t->out);
	ss_e2e_pass(t);
}

/* A failed install: status 1 and exactly one line on stderr. */
static void test_failed_install(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	fakes(t, "no-such-package", 0);
	int st = ss_e2e_sh(t, "SS_DEPS_EXTRA=no-such-package SS_DEPS_LOG=\"$PWD/apt.out\" "
			   DEPS " build");
	SS_E2E_EXPECT_STATUS(t, st, 1);
	const char *head = "stepscope: apt-get could not install: no-such-package "
			   "(E: Unable to locate package no-such-package; full output in ";
	size_t n = strlen(t->err);
	SS_E2E_CHECK(t, strchr(t->err, '\n') == t->err + n - 1 &&
		     !strncmp(t->err, head, strlen(head)) && n > 10 &&
		     !strcmp(t->err + n - 10, "/apt.out)\n"),
		     "expected one line naming the package and apt's error, got \"%s\"", t->err);
	ss_e2e_pass(t);
}

/* Not root: one line naming the missing packages, apt-get never called. */
static void test_not_root(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	fakes(t, "libcmocka-dev cmake", 1000);
	int st = ss_e2e_sh(t, DEPS " test");
	SS_E2E_EXPECT_STATUS(t, st, 1);
	SS_E2E_CHECK(t, !strcmp(t->err, "stepscope: missing Debian packages: libcmocka-dev "
				 "cmake (as root: apt-get install libcmocka-dev cmake)\n"),
		     "stderr: \"%s\"", t->err);
	SS_E2E_SH_OK(t, "cat fake/apt.log");
	SS_E2E_CHECK(t, !strcmp(t->out, ""), "apt-get was called: %s", t->out);
	ss_e2e_pass(t);
}

/* The stamp: absent after a failed check, written after a good one, and a
 * newer deps.sh checks again. */
static void test_stamp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	fakes(t, "gcc", 1000);
	/* a copy of the Makefile and scripts/, so the stamp's prerequisite
	 * can be touched without touching the source tree */
	SS_E2E_SH_OK(t, "mkdir src && cp \"$SS_E2E_SRC/Makefile\" src/ && "
		     "cp -r \"$SS_E2E_SRC/scripts\" \"$SS_E2E_SRC/runtime-mpi\" src/");
	int st = ss_e2e_sh(t, ENV "make -s -C src build/.deps-ok");
	SS_E2E_CHECK(t, st != 0, "make succeeded with gcc missing");
	SS_E2E_CHECK(t, ss_e2e_sh(t, "test -e src/build/.deps-ok") != 0,
		     "build/.deps-ok written although gcc is missing");
	SS_E2E_SH_OK(t, ": > fake/missing");
	SS_E2E_SH_OK(t, ENV "make -s -C src build/.deps-ok && test -e src/build/.deps-ok");
	/* gcc gone again: the stamp stands until deps.sh changes */
	SS_E2E_SH_OK(t, "echo gcc > fake/missing");
	SS_E2E_SH_OK(t, ENV "make -s -C src build/.deps-ok");
	SS_E2E_SH_OK(t, "sleep 1; touch src/scripts/deps.sh");
	st = ss_e2e_sh(t, ENV "make -s -C src build/.deps-ok");
	SS_E2E_CHECK(t, st != 0 && strstr(t->err, "missing Debian packages: gcc "),
		     "a changed deps.sh must check again: status %d, stderr \"%s\"", st, t->err);
	SS_E2E_CHECK(t, ss_e2e_sh(t, "test src/build/.deps-ok -nt src/scripts/deps.sh") != 0,
		     "build/.deps-ok renewed although gcc is missing");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_nothing_missing),
		SS_E2E_TEST(test_root_installs),
		SS_E2E_TEST(test_failed_install),
		SS_E2E_TEST(test_not_root),
		SS_E2E_TEST(test_stamp),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
