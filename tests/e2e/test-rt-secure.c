/*
 * test-rt-secure.c - a set-user-ID program built with stepscope-cc takes no
 * orders from its caller (docs/robustness.md, "Security"), and the files
 * the runtime makes are new and owner-only.
 *
 * The set-user-ID tests make s-rt-secure (tests/e2e/s-rt-secure.c) root's
 * and mode 4755 and run it as uid 65534 through setpriv, with each
 * STEPSCOPE_* variable (and a ./stepscope.yaml in its working directory)
 * pointing into a directory only root may enter, or at a root-only config
 * holding a secret: nothing may appear there, no byte of the secret in
 * its output, and the program runs as it would without stepscope (its
 * output, exit status 3), saying in one line that it records nothing.
 * They are skipped, saying why, without root, without setpriv, or where no
 * filesystem at hand runs set-user-ID programs (nosuid, no_new_privs):
 * the test's temp dir, the build dir and /var/tmp are tried.
 * test_setuid_env runs twice: gcc -O0 with libstepscope.so, and gcc -O2
 * linked -static.
 *
 * The other tests run as whoever runs them, under umask 022: a symlink
 * planted at the trace file's name or at the run directory's is never
 * followed, and traces are 0600, run directories 0700.
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

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define SECRET "XYZZY-7781-QUUX"
#define NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups"

/* Where the set-user-ID copy lives (P/p), with P/ro (root's, 0700), P/cwd
 * (the caller's working directory, 0777, with a root-only stepscope.yaml
 * that holds the secret) and P/secret.yaml (root-only, the secret). */
struct place {
	char dir[4096];
	int own; /* made outside the test's dir: removed at the end */
};

/* 1 if P/p runs set-user-ID root here: the kernel says AT_SECURE. */
static int try_place(struct ss_e2e *t, struct place *pl, const char *base)
{
	if (ss_e2e_sh(t, "mkdir -p '%s' && mktemp -d '%s/ss-secure.XXXXXX'", base, base) ||
	    sscanf(t->out, "%4095[^\n]", pl->dir) != 1)
		return 0;
	pl->own = strncmp(pl->dir, t->dir, strlen(t->dir)) != 0;
	if (ss_e2e_sh(t, "P='%s' && chmod 755 \"$P\" && cp s-rt-secure \"$P/p\" && "
			 "chown 0:0 \"$P/p\" && chmod 4755 \"$P/p\" && "
			 "cd \"$P\" && " NOBODY " ./p",
		      pl->dir) == 3 &&
	    strstr(t->out, "main: secure=1 ruid=65534 euid=0"))
		return 1;
	ss_e2e_sh(t, "rm -rf '%s'", pl->dir);
	return 0;
}

static void secure_prepare(struct ss_e2e *t, struct place *pl, const char *extra)
{
	if (geteuid() != 0)
		ss_e2e_skip(t, "making a set-user-ID root program needs root");
	if (ss_e2e_sh(t, "command -v setpriv"))
		ss_e2e_skip(t, "setpriv (util-linux) is not installed");
	ss_e2e_build(t, "rt-secure", extra);
	/* uid 65534 must reach the program: the test's dir is mkdtemp's 0700 */
	SS_E2E_SH_OK(t, "chmod 755 .");
	if (!try_place(t, pl, t->dir) && !try_place(t, pl, SS_BUILD_DIR "/tests") &&
	    !try_place(t, pl, "/var/tmp"))
		ss_e2e_skip(t, "no set-user-ID program runs here: %s, %s/tests and "
			    "/var/tmp are nosuid, or the test runs with no_new_privs",
			    t->dir, SS_BUILD_DIR);
	SS_E2E_SH_OK(t, "cd '%s' && mkdir -m 700 ro && mkdir -m 777 cwd && umask 077 && "
			"printf 'secret_token: " SECRET "\\n' > secret.yaml && "
			"printf 'output_dir: %s/ro/yaml\\nsecret_token: " SECRET "\\n' "
			"> cwd/stepscope.yaml && cp secret.yaml ro/secret.yaml",
		     pl->dir, pl->dir);
}

static void secure_done(struct ss_e2e *t, struct place *pl)
{
	if (pl->own)
		ss_e2e_sh(t, "rm -rf '%s'", pl->dir);
	ss_e2e_pass(t);
}

/* Nothing new in ro/ and cwd/ (but stepscope.yaml), the secret nowhere in
 * the output. */
static void expect_untouched(struct ss_e2e *t, struct place *pl, int status)
{
	char *out = strdup(t->out), *err = strdup(t->err);
	SS_E2E_CHECK(t, !strstr(out, "XYZZY") && !strstr(err, "XYZZY") &&
			 !strstr(out, "secret_token") && !strstr(err, "secret_token"),
		     "the secret config's content is in the output:\n%s%s", out, err);
	SS_E2E_CHECK(t, !strstr(out, "STEPSCOPE") && !strstr(out, "LD_PRELOAD"),
		     "a child got the caller's variables:\n%s", out);
	free(out);
	free(err);
	SS_E2E_SH_OK(t, "cd '%s' && test \"$(ls -A ro)\" = secret.yaml && "
			"test \"$(ls -A cwd)\" = stepscope.yaml && "
			"test \"$(ls -A)\" = \"$(printf 'cwd\\np\\nro\\nsecret.yaml')\"",
		     pl->dir);
	(void)status;
}

/* Each variable alone, then all together, with and without a child
 * spawned with an environment of the program's own. */
static void test_setuid_env(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct place pl;
	secure_prepare(t, &pl, t->v == &ss_e2e_gcc_O2 ? "-static" : NULL);
	static const char *const envs[] = {
		"",
		"STEPSCOPE_DIR=$P/ro",
		"STEPSCOPE_DIR=$P/ro/new",
		"STEPSCOPE_SET=output_dir=$P/ro/set",
		"STEPSCOPE_CONFIG=$P/secret.yaml",
		"STEPSCOPE_CONFIG=$P/ro/secret.yaml",
		"STEPSCOPE__CONFIG=output_dir=$P/ro/handed",
		"STEPSCOPE__DIRECT=1 STEPSCOPE_DIR=$P/ro",
		"STEPSCOPE_DIR=$P/ro STEPSCOPE_SET=output_dir=$P/ro/set "
		"STEPSCOPE_CONFIG=$P/secret.yaml STEPSCOPE_CUPTI_LIBRARY=$P/ro/x.so "
		"STEPSCOPE_NVML_LIBRARY=$P/ro/y.so STEPSCOPE_CLOCK_MONOTONIC=1 "
		"STEPSCOPE_DISABLE=0 STEPSCOPE_MARK=caller",
	};
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
		for (int spawn = 0; spawn < 2; spawn++) {
			int st = ss_e2e_sh(t, "P='%s' && cd \"$P/cwd\" && env %s " NOBODY
					      " ../p %s", pl.dir, envs[i],
					   spawn ? "spawn" : "");
			SS_E2E_EXPECT_STATUS(t, st, 3);
			const char *want = spawn ? "spawn: secure=1 ruid=65534 euid=0 "
						   "stepscope-vars=0 mark=0\n"
						 : "main: secure=1 ruid=65534 euid=0 "
						   "stepscope-vars=0 mark=0\n";
			SS_E2E_CHECK(t, !strncmp(t->out, want, strlen(want)),
				     "%s: expected stdout to begin '%s', got '%s'",
				     envs[i], want, t->out);
			if (spawn) /* env printed its whole environment */
				SS_E2E_CHECK(t, !strcmp(t->out + strlen(want),
							"PATH=/usr/bin:/bin\n"),
					     "%s: the spawned child's environment: '%s'",
					     envs[i], t->out + strlen(want));
			SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
			SS_E2E_CHECK(t, strstr(t->err, "stepscope: not recording: a set-user-ID, "
						       "set-group-ID or file-capability program"),
				     "%s: stderr: expected the one line saying why "
				     "nothing is recorded, got '%s'", envs[i], t->err);
			expect_untouched(t, &pl, st);
		}
	secure_done(t, &pl);
}

/* The program becomes root for good (setuid(0)) and runs itself again:
 * no longer AT_SECURE, so its runtime records, but it never saw the
 * caller's variables (the runtime took them out of the environment as
 * the loader does LD_PRELOAD): its run goes to its own stepscope-out. */
static void test_setuid_root_child(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct place pl;
	secure_prepare(t, &pl, NULL);
	SS_E2E_SH_OK(t, "cd '%s' && mkdir -m 777 cwd2", pl.dir);
	int st = ss_e2e_sh(t, "P='%s' && cd \"$P/cwd2\" && env STEPSCOPE_DIR=$P/ro "
			      "STEPSCOPE_SET=output_dir=$P/ro/set STEPSCOPE_MARK=caller "
			      "STEPSCOPE_CONFIG=$P/secret.yaml " NOBODY " ../p rootexec",
			   pl.dir);
	SS_E2E_EXPECT_STATUS(t, st, 3);
	SS_E2E_CHECK(t, strstr(t->out, "rootexec: secure=1 ruid=65534 euid=0 "
				       "stepscope-vars=0 mark=0\n") &&
			 strstr(t->out, "child: secure=0 ruid=0 euid=0 ") &&
			 strstr(t->out, " mark=0\n"),
		     "stdout: '%s'", t->out);
	SS_E2E_CHECK(t, !strstr(t->out, "XYZZY") && !strstr(t->err, "XYZZY"),
		     "the secret is in the output");
	SS_E2E_SH_OK(t, "cd '%s' && test \"$(ls -A ro)\" = secret.yaml && "
			"test \"$(ls -A cwd2)\" = stepscope-out && "
			"ls cwd2/stepscope-out/p-*/p.*.sstrace",
		     pl.dir);
	SS_E2E_SH_OK(t, "rm -rf '%s/cwd2'", pl.dir);
	secure_done(t, &pl);
}

/* A symlink at the trace file's name (the pid is known: sh execs the
 * program) is left alone, its target unchanged; the trace takes the next
 * name, 0600, and reads. */
static void test_symlink_trace(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-secure", NULL);
	SS_E2E_SH_OK(t, "umask 022 && mkdir out && echo keep > victim && "
			"sh -c 'ln -s ../victim out/s-rt-secure.$$.sstrace && "
			"echo $$ > pid && exec env STEPSCOPE_DIR=\"$PWD/out\" ./s-rt-secure'; "
			"test $? = 3");
	SS_E2E_SH_OK(t, "pid=$(cat pid) && test \"$(cat victim)\" = keep && "
			"test -L out/s-rt-secure.$pid.sstrace && "
			"test \"$(ls out)\" = \"$(printf 's-rt-secure.%%s.1.sstrace\\n"
			"s-rt-secure.%%s.sstrace' $pid $pid)\" && "
			"test \"$(stat -c %%a out/s-rt-secure.$pid.1.sstrace)\" = 600");
	SS_E2E_SH_OK(t, "rm out/s-rt-secure.$(cat pid).sstrace && " SS " report out");
	SS_E2E_CHECK(t, strstr(t->out, "work"), "report: expected work() in '%s'", t->out);
	ss_e2e_pass(t);
}

/* Run directories: a symlink planted at the name a direct run would take
 * (program, second, pid) is not followed, the run takes "-2"; it and
 * `record`'s are 0700 and their traces 0600 under umask 022. */
static void test_modes(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-secure", NULL);
	SS_E2E_SH_OK(t, "umask 022 && mkdir out victim && "
			"sh -c 'now=$(date +%%s); for s in 0 1 2 3 4; do "
			"ln -s ../victim out/s-rt-secure-$(date -d @$((now + s)) +%%Y%%m%%d-%%H%%M%%S)-$$; "
			"done; echo $$ > pid; exec env STEPSCOPE_SET=output_dir=out ./s-rt-secure'; "
			"test $? = 3");
	SS_E2E_SH_OK(t, "test -z \"$(ls -A victim)\" && pid=$(cat pid) && "
			"d=$(find out -mindepth 1 -maxdepth 1 -type d) && "
			"case $d in out/s-rt-secure-*-$pid-2) ;; *) exit 1;; esac && "
			"test \"$(stat -c %%a $d)\" = 700 && "
			"test \"$(stat -c %%a $d/s-rt-secure.$pid.sstrace)\" = 600");
	SS_E2E_SH_OK(t, "umask 022 && " SS " record -o rec -- ./s-rt-secure; test $? = 3");
	SS_E2E_SH_OK(t, "test \"$(stat -c %%a rec)\" = 700 && "
			"test \"$(stat -c %%a rec/s-rt-secure.*.sstrace)\" = 600");
	SS_E2E_SH_OK(t, "umask 022 && " SS " record -- ./s-rt-secure; test $? = 3");
	SS_E2E_SH_OK(t, "d=$(ls -d stepscope-out/s-rt-secure-*) && "
			"test \"$(stat -c %%a $d)\" = 700 && "
			"test \"$(stat -c %%a $d/s-rt-secure.*.sstrace)\" = 600");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_setuid_env),
		/* the same, linked -static (libstepscope.a) */
		SS_E2E__ONE(test_setuid_env, ss_e2e_gcc_O2, "gcc-O2-static"),
		SS_E2E_TEST(test_setuid_root_child),
		SS_E2E_TEST(test_symlink_trace),
		SS_E2E_TEST(test_modes),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
