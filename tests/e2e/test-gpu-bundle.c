/*
 * test-gpu-bundle.c - end to end: the GPU proof kit without a GPU.
 *
 * test_dry_run: `make gpu-bundle`; the tarball is at most 60 MB and holds
 * the kit's parts; unpacked into the test's dir, every ELF file in it finds
 * each library it needs in the kit or the system, nothing in the build or
 * source tree; `device-check.sh --cpu-dry-run`, run with an environment of
 * its own (env -i: PATH=/usr/bin:/bin, no LD_LIBRARY_PATH), ends with
 * "N passed, 0 failed", prints no FAIL line and writes the traces and
 * report.html under $OUT, cuda-mem's 7 checks (recorded CUDA allocations
 * against its ledger) among them.  Then the checker is shown to catch a lie: the
 * program's printed kernel count of one step raised by one fails exactly
 * "kernels per step".
 *
 * test_bare_root: the same dry run inside a bare Debian 12 root (debootstrap
 * --variant=minbase: no compiler, no -dev package, no python) named by
 * $SS_BARE_ROOT, through chroot with /proc mounted.  Skipped, saying why,
 * without that root or without root privileges; the test never downloads
 * one (docs/cuda.md says how to prepare it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e.h"

#define BUNDLE "\"$SS_E2E_BUILD/gpu-bundle.tar.gz\""
#define KIT "stepscope-gpu-kit"

/* The dry run's output in t->out: "N passed, 0 failed" last, no FAIL. */
static void check_dry_run(struct ss_e2e *t, const char *where)
{
	const char *last = t->out + strlen(t->out);
	while (last > t->out && last[-1] == '\n')
		last--;
	while (last > t->out && last[-1] != '\n')
		last--;
	int passed = -1, failed = -1;
	SS_E2E_CHECK(t, sscanf(last, "%d passed, %d failed", &passed, &failed) == 2 &&
			     passed >= 13 && failed == 0 && !strstr(t->out, "\nFAIL "),
		     "%s: expected at least 13 checks passed and none failed, got:\n%s",
		     where, t->out);
}

static void test_dry_run(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	SS_E2E_SH_OK(t, "make -s -C \"$SS_E2E_SRC\" B=\"$SS_E2E_BUILD\" gpu-bundle");
	SS_E2E_SH_OK(t, "wc -c < " BUNDLE);
	long size = atol(t->out);
	SS_E2E_CHECK(t, size > 0 && size <= 60L * 1024 * 1024,
		     "gpu-bundle.tar.gz: %ld bytes, expected at most 60 MiB", size);
	SS_E2E_SH_OK(t, "mkdir kit && tar -C kit -xzf " BUNDLE " && cd kit/" KIT " && "
			"for f in device-check.sh bin/stepscope bin/stepscope-cc bin/gpu-check "
			"lib/libstepscope.so.0 lib/libstepscope-hooks.a lib/libdw.so.1 lib/libelf.so.1 lib/libcjson.so.1 "
			"lib/libyaml-0.so.2 lib/libunwind.so.8 include/stepscope.h "
			"src/cuda-mlp/train.cu src/common/train-cli.h src/cublas-train/cublas-train.cu "
			"dry/bin/fake-train dry/bin/nvidia-smi dry/lib/libcudart.so "
			"bin/mem-check dry/bin/cuda-mem src/cuda-mem/s-cuda-mem.c "
			"src/cuda-mem/fixture.h "
			"dry/lib/libnvml-fake.so; do test -e $f || echo \"missing $f\"; done; "
			"ls lib/libbfd*.so >/dev/null");
	SS_E2E_CHECK(t, !*t->out, "the kit lacks files:\n%s", t->out);

	/* every ELF file: its libraries in the kit or the system, none not
	 * found, none from the build or source tree */
	SS_E2E_SH_OK(t, "cd kit/" KIT " && for f in bin/stepscope bin/gpu-check bin/mem-check "
			"lib/*.so* dry/bin/fake-train dry/bin/cuda-mem dry/lib/*.so; do "
			"env -i PATH=/usr/bin:/bin ldd \"$f\" | "
			"grep -e 'not found' -e \"$SS_E2E_BUILD\" -e \"$SS_E2E_SRC/\" | "
			"sed \"s|^|$f: |\"; done");
	SS_E2E_CHECK(t, !*t->out, "kit libraries not found or found in the tree:\n%s",
		     t->out);

	ss_e2e_sh(t, "env -i PATH=/usr/bin:/bin HOME=\"$PWD\" TMPDIR=\"$PWD\" "
		     "OUT=\"$PWD/out\" SS_CHECK_DIR=\"$PWD/work\" "
		     "sh kit/" KIT "/device-check.sh --cpu-dry-run");
	check_dry_run(t, "device-check.sh --cpu-dry-run");
	/* recorded CUDA allocations (mem-check, issue 34): its five checks */
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, "ok   cuda-mem: ") == 7,
		     "dry run: expected 7 ok lines of cuda-mem (record, report, 5 of mem-check)"
		     ", got:\n%s", t->out);
	SS_E2E_SH_OK(t, "cd out/fake-train && ls trace.json trace.perfetto-trace report.html "
			"report.txt program-output.txt checks.txt >/dev/null");
	SS_E2E_SH_OK(t, "cd out/cuda-mem && ls report.json leaks.txt ledger.txt checks.txt "
			">/dev/null");

	/* a program that says it launched one kernel more in step 3 */
	SS_E2E_SH_OK(t, "sed 's/^step 3 kernels \\([0-9]*\\)/step 3 kernels 1\\1/' "
			"work/fake-train.out > lie.out && ! cmp -s lie.out work/fake-train.out");
	int rc = ss_e2e_sh(t, "kit/" KIT "/bin/gpu-check --label lie --program-output lie.out "
			      "--report work/fake-train.report.txt work/fake-train.run");
	SS_E2E_CHECK(t, rc == 1 && ss_e2e_lines_with(t->out, "FAIL ") == 1 &&
			     ss_e2e_lines_with(t->out, "FAIL lie: kernels per step: step 3: ") == 1,
		     "gpu-check with a wrong kernel count: expected exit 1 and one FAIL "
		     "line for kernels per step, got %d:\n%s", rc, t->out);
	ss_e2e_pass(t);
}

static void test_bare_root(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *root = getenv("SS_BARE_ROOT");

	if (!root || !*root)
		ss_e2e_skip(t, "SS_BARE_ROOT is not set: the GPU kit's dry run in a bare "
			       "Debian root is not checked (docs/cuda.md: debootstrap "
			       "--variant=minbase bookworm DIR, then SS_BARE_ROOT=DIR)");
	if (access(root, F_OK) || ss_e2e_sh(t, "test -x \"%s/bin/sh\"", root))
		ss_e2e_skip(t, "SS_BARE_ROOT=%s is not a Debian root (no bin/sh)", root);
	if (geteuid() != 0)
		ss_e2e_skip(t, "not root: chroot into SS_BARE_ROOT=%s needs root", root);
	if (ss_e2e_sh(t, "test -x \"%s/usr/bin/gcc\" || test -x \"%s/usr/bin/python3\"",
		      root, root) == 0)
		ss_e2e_skip(t, "SS_BARE_ROOT=%s has gcc or python3: not a bare root", root);

	SS_E2E_SH_OK(t, "make -s -C \"$SS_E2E_SRC\" B=\"$SS_E2E_BUILD\" gpu-bundle");
	char kit[256];
	snprintf(kit, sizeof(kit), "/tmp/ss-gpu-kit.%d", (int)getpid());
	/* /proc for the runtime; unmounted after only if mounted here */
	SS_E2E_SH_OK(t, "r=\"%s\" && rm -rf \"$r%s\" && mkdir -p \"$r%s\" && "
			"tar -C \"$r%s\" -xzf " BUNDLE " && "
			"if test -e \"$r/proc/self\"; then m=0; else "
			"mount -t proc proc \"$r/proc\" || exit 1; m=1; fi; "
			"chroot \"$r\" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp TMPDIR=%s "
			"sh %s/" KIT "/device-check.sh --cpu-dry-run; rc=$?; "
			"test $m = 0 || umount \"$r/proc\"; rm -rf \"$r%s\"; exit $rc",
		     root, kit, kit, kit, kit, kit, kit);
	check_dry_run(t, "device-check.sh --cpu-dry-run in SS_BARE_ROOT");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_dry_run),
		SS_E2E_TEST(test_bare_root),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
