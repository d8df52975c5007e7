/*
 * test-install.c - end to end: `make install` and `make uninstall` into a
 * DESTDIR, from a copy of the build tree (so that a LIBDIR of its own
 * rebuilds nothing the other tests use).  A multiarch LIBDIR: the runtime
 * with a versioned SONAME and its links there, a .pc without an rpath
 * into the system directory, configs, man pages and LICENSE; the installed
 * stepscope-cc and `stepscope record` find the runtime in that LIBDIR.  A
 * PREFIX of its own (/opt/...): the .pc keeps the rpath.  Uninstall leaves
 * nothing behind.
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

#define MAKE "make -s -C \"$SS_E2E_SRC\" B=\"$PWD/b\" DESTDIR=\"$PWD/d\" "

static void test_install(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "mkdir b && cd \"$SS_E2E_BUILD\" && cp -a .deps-ok bin "
			"include lib obj \"$OLDPWD/b/\"");
	SS_E2E_SH_OK(t, "gcc -print-multiarch");
	char arch[128];
	snprintf(arch, sizeof(arch), "%s", t->out);
	arch[strcspn(arch, "\n")] = 0;
	SS_E2E_CHECK(t, arch[0] != 0, "gcc -print-multiarch: empty");
	char libdir[256];
	snprintf(libdir, sizeof(libdir), "/usr/lib/%s", arch);

	SS_E2E_SH_OK(t, MAKE "PREFIX=/usr LIBDIR=%s install >/dev/null",
		     libdir);
	/* the runtime: versioned, with its links, SONAME libstepscope.so.0 */
	SS_E2E_SH_OK(t, "cd d%s && test -f libstepscope.so.0.1.0 && "
		     "test \"$(readlink libstepscope.so.0)\" = "
		     "libstepscope.so.0.1.0 && test \"$(readlink "
		     "libstepscope.so)\" = libstepscope.so.0 && "
		     "test -f libstepscope.a && readelf -d libstepscope.so.0.1.0 "
		     "| grep -q 'SONAME.*\\[libstepscope.so.0\\]' && "
		     "test ! -e ../libstepscope.so.0", libdir);
	/* the .pc: that libdir, no rpath into it */
	SS_E2E_SH_OK(t, "cat d%s/pkgconfig/stepscope.pc", libdir);
	char want[300];
	snprintf(want, sizeof(want), "libdir=%s\n", libdir);
	SS_E2E_CHECK(t, strstr(t->out, want) && !strstr(t->out, "-rpath") &&
			    strstr(t->out, "-Wl,--push-state,--no-as-needed "
					   "-lstepscope -Wl,--pop-state"),
		     "stepscope.pc: expected %s, the runtime between "
		     "--push-state and --pop-state and no rpath, got:\n%s",
		     want, t->out);
	/* configs, man pages, LICENSE, header, docs */
	SS_E2E_SH_OK(t, "cd d/usr/share && for f in \"$SS_E2E_SRC\"/configs/*.yaml; "
			"do cmp \"$f\" stepscope/configs/${f##*/} || exit 1; done && "
			"test $(ls stepscope/configs | wc -l) = $(ls "
			"\"$SS_E2E_SRC\"/configs/*.yaml | wc -l) && "
			"test -s man/man1/stepscope.1 && test -s man/man1/stepscope-cc.1 && "
			"cmp doc/stepscope/LICENSE \"$SS_E2E_SRC/LICENSE\" && "
			"test -f doc/stepscope/stepscope-cc.md && "
			"test -f ../include/stepscope.h");
	/* the installed tools find the runtime in the multiarch libdir */
	SS_E2E_SH_OK(t, "d/usr/bin/stepscope-cc %s %s -o s-cc-calls "
		     "\"$SS_E2E_SRC/tests/e2e/s-cc-calls.c\" "
		     "\"$SS_E2E_SRC/tests/e2e/cc/calls-lib.c\" -I\"$SS_E2E_SRC/tests/e2e\" "
		     "&& readelf -d s-cc-calls | grep -q 'NEEDED.*libstepscope.so.0' "
		     "&& readelf -d s-cc-calls | grep RUNPATH | grep -q \"$PWD/d%s\"",
		     t->v->cc, t->v->opt, libdir);
	SS_E2E_SH_OK(t, "d/usr/bin/stepscope record -o rec -- ./s-cc-calls");
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_fn", 0, 4);
	/* uninstall: nothing left but directories */
	SS_E2E_SH_OK(t, MAKE "PREFIX=/usr LIBDIR=%s uninstall >/dev/null && "
		     "test -z \"$(find d ! -type d)\"", libdir);

	/* a prefix of its own: the rpath stays */
	SS_E2E_SH_OK(t, MAKE "PREFIX=/opt/ss install >/dev/null && "
			"grep -q '^libdir=/opt/ss/lib$' d/opt/ss/lib/pkgconfig/stepscope.pc && "
			"grep -q 'Libs:.*-Wl,-rpath,${libdir} ' "
			"d/opt/ss/lib/pkgconfig/stepscope.pc && "
			MAKE "PREFIX=/opt/ss uninstall >/dev/null && "
			"test -z \"$(find d ! -type d)\"");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_install),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
