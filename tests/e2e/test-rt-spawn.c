/*
 * test-rt-spawn.c - end to end: the runtime never harms the processes of
 * a run, and every process joins the run.  With a step function set,
 * system(), popen() and a shell script launching the program run
 * untouched (status 0, their output, no runtime message); children
 * started with an environment of their own (posix_spawn, posix_spawnp,
 * fork + execve, PATH only) are recorded into the same run with exact
 * per-process counts; the config is read once, so a pipe (-c <(...))
 * works and a config deleted after start changes nothing; a daemon()'d
 * child still writing is waited for.
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

#define REC "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec "

/* stderr holds only record's own lines ("config ..." or "no config ...",
 * "recorded ...", "next: ...") */
static void expect_quiet(struct ss_e2e *t)
{
	const char *p = t->err;
	while ((p = strstr(p, "stepscope: "))) {
		const char *what = p + 11;
		SS_E2E_CHECK(t, !strncmp(what, "recorded ", 9) || !strncmp(what, "next: ", 6) ||
				     !strncmp(what, "config ", 7) || !strncmp(what, "no config ", 10),
			     "unexpected runtime message: %s", t->err);
		p = what;
	}
}

/* step_fn slices in process pid (0: all) */
static size_t in_pid(const struct ss_e2e_trace *tr, long pid, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++)
		if ((!pid || tr->slices[i].pid == pid) && !strcmp(tr->slices[i].name, name))
			n++;
	return n;
}

static void test_system(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, REC "--set step.function=step_fn -- ./s-rt-spawn system");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "from-sh\n") && strstr(t->out, "system 0\n") &&
			     strstr(t->out, "popen Linux\n") && strstr(t->out, "pclose 0\n"),
		     "expected from-sh, system 0, popen Linux, pclose 0; got: %s", t->out);
	expect_quiet(t);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 2);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, 2);
	ss_e2e_pass(t);
}

static void test_script(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	SS_E2E_SH_OK(t, "printf '#!/bin/sh\\n./s-rt-spawn child 3\\nenv >/dev/null\\n' >run.sh && "
			"chmod +x run.sh && printf 'step:\\n  function: step_fn\\n' >cfg.yaml");
	int st = ss_e2e_sh(t, REC "-c cfg.yaml -- ./run.sh");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "child 3\n") != NULL, "expected \"child 3\", got: %s", t->out);
	expect_quiet(t);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 3);
	SS_E2E_EXPECT_INSIDE(t, tr, "leaf", "step_fn");
	ss_e2e_pass(t);
}

/* The children the fixture printed as "pid P N status S" (out): `want`
 * of them, each exited 0 with exactly N step_fn calls in its own process,
 * and none left the run for a ./stepscope-out of its own. */
static void expect_children(struct ss_e2e *t, const struct ss_e2e_trace *tr, const char *out,
			    int want)
{
	int seen = 0;
	for (const char *p = out; (p = strstr(p, "pid ")); p++) {
		long pid = 0;
		int n = 0, wst = -1;
		if (sscanf(p, "pid %ld %d status %d", &pid, &n, &wst) != 3)
			continue;
		seen++;
		SS_E2E_CHECK(t, wst == 0, "child %d: status %d", n, wst);
		SS_E2E_CHECK(t, in_pid(tr, pid, "step_fn") == (size_t)n,
			     "pid %ld: expected %d step_fn calls, got %zu", pid, n,
			     in_pid(tr, pid, "step_fn"));
	}
	SS_E2E_CHECK(t, seen == want, "expected %d children, got %d: %s", want, seen, out);
	SS_E2E_CHECK(t, ss_e2e_sh(t, "test ! -e stepscope-out") == 0,
		     "a child wrote a stray ./stepscope-out");
}

static void test_envp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, REC "-- ./s-rt-spawn envp");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	char *out = strdup(t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 2 + 3 + 4 + 5);
	expect_children(t, tr, out, 3);
	free(out);
	ss_e2e_pass(t);
}

/* A program that clears its environment, then starts children through the
 * forms that take it (execv, execvp, execl, execlp, system): glibc runs
 * them through its own execve and posix_spawn, past the envp wrappers, and
 * every child used to leave the run for a ./stepscope-out of its own. */
static void test_clearenv(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, REC "-- ./s-rt-spawn clearenv");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	char *out = strdup(t->out);
	SS_E2E_CHECK(t, strstr(out, "child 7\n") && strstr(out, "system 0\n"),
		     "expected child 7 and system 0; got: %s", out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 2 + 3 + 4 + 5 + 6 + 7);
	expect_children(t, tr, out, 4);
	free(out);
	ss_e2e_pass(t);
}

static void test_config_deleted(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: step_fn\\nwindow:\\n  start_step: 1\\n"
			"  end_step: 3\\n' >cfg.yaml");
	int st = ss_e2e_sh(t, REC "-c cfg.yaml -- ./s-rt-spawn rmcfg cfg.yaml");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "child 6\n") && strstr(t->out, "system 0\n"),
		     "expected child 6, system 0; got: %s", t->out);
	expect_quiet(t);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	/* the child's window: steps 1 and 2 of its 6 */
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 2);
	ss_e2e_pass(t);
}

static void test_config_pipe(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, "bash -c '" REC "-c <(printf \"step:\\n  function: step_fn\\n"
			      "window:\\n  start_step: 1\\n  end_step: 3\\n\") -- "
			      "./s-rt-spawn child 5'");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 2);
	ss_e2e_pass(t);
}

static void test_daemon(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, REC "-- ./s-rt-spawn daemon");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 2 + 7);
	ss_e2e_pass(t);
}

/* A FIFO nobody writes to as -c: refused in bounded time, one line. */
static void test_fifo(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	SS_E2E_SH_OK(t, "mkfifo cfg.fifo");
	int st = ss_e2e_sh(t, "timeout 30 " REC "-c cfg.fifo -- ./s-rt-spawn child 1");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, "cfg.fifo: nothing to read") != NULL,
		     "expected \"cfg.fifo: nothing to read\", got: %s", t->err);
	ss_e2e_pass(t);
}

/* Two records into the same directory at once: one is refused. */
static void test_same_dir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, REC "-- ./s-rt-spawn daemon 2>a.err & p1=$!; "
			      REC "-- ./s-rt-spawn daemon 2>b.err & p2=$!; "
			      "wait $p1; a=$?; wait $p2; b=$?; echo \"st $a $b\"; cat a.err b.err >&2");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	int a = -1, b = -1;
	const char *p = strstr(t->out, "st ");
	SS_E2E_CHECK(t, p && sscanf(p, "st %d %d", &a, &b) == 2, "no statuses: %s", t->out);
	SS_E2E_CHECK(t, (a == 0 && b == 2) || (a == 2 && b == 0),
		     "expected one record to succeed and one to exit 2, got %d and %d: %s",
		     a, b, t->err);
	SS_E2E_CHECK(t, strstr(t->err, "rec: another stepscope record is writing into it") ||
			     strstr(t->err, "rec: output directory is not empty"),
		     "expected the refusal on stderr, got: %s", t->err);
	ss_e2e_pass(t);
}

/* One pid, two images after exec: counted as one process. */
static void test_images(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-spawn", NULL);
	int st = ss_e2e_sh(t, REC "-- ./s-rt-spawn reexec");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->err, "recorded 1 process(es) (2 images, counting each exec)"),
		     "expected \"recorded 1 process(es) (2 images...\", got: %s", t->err);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "step_fn", 0, 3);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_system),
		SS_E2E_TEST(test_clearenv),
		SS_E2E_TEST(test_script),
		SS_E2E__ONE(test_envp, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E__ONE(test_envp, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E_TEST(test_config_deleted),
		SS_E2E_TEST(test_config_pipe),
		SS_E2E_TEST(test_daemon),
		SS_E2E_TEST(test_fifo),
		SS_E2E_TEST(test_same_dir),
		SS_E2E_TEST(test_images),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
