/*
 * test-errors.c - the stepscope command refuses bad input with exit status 2
 * and a one-line message that names what is wrong; nothing is built here.
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

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""

/* Exit status 2, exactly one line on stderr containing `needle` (if not
 * NULL). */
#define EXPECT_REFUSED(t, needle, ...)                                         \
	do {                                                                   \
		int st_ = ss_e2e_sh((t), __VA_ARGS__);                         \
		SS_E2E_EXPECT_STATUS((t), st_, 2);                             \
		SS_E2E_EXPECT_LINES((t), "stderr", (t)->err, 1);               \
		if ((needle) && !strstr((t)->err, (needle))) {                 \
			ss_e2e_show_last((t), st_);                            \
			SS_E2E_FAIL((t), "stderr: expected it to name '%s'",   \
				    (const char *)(needle));                   \
		}                                                              \
	} while (0)

static void test_record_missing_program(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	EXPECT_REFUSED(t, "/nonexistent", SS " record -o r -- /nonexistent");
	ss_e2e_pass(t);
}

static void test_record_no_program(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int st = ss_e2e_sh(t, SS " record -o r");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_CHECK(t, t->err[0] != '\0', "stderr: expected a message, got "
		     "nothing");
	ss_e2e_pass(t);
}

/* A config nested 100k deep is refused at once, before libyaml's loader
 * (which takes time quadratic in the depth), naming file, line and column;
 * the program never runs. */
static void test_record_deep_config(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "awk 'BEGIN { s = \"[\"; for (i = 0; i < 17; i++) s = s s; print substr(s, 1, 100000) }' > deep.yaml");
	SS_E2E_SH_OK(t, "test $(tr -d '\\n' < deep.yaml | wc -c) = 100000");
	EXPECT_REFUSED(t, "deep.yaml:1:65: nested more than 64 levels deep (a config needs three)",
		       SS " record -c deep.yaml -o r -- sh -c 'touch ran'");
	SS_E2E_SH_OK(t, "test ! -e ran && test ! -e r");
	ss_e2e_pass(t);
}

static void test_record_nonempty_outdir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "mkdir full && echo data > full/keep");
	EXPECT_REFUSED(t, "full", SS " record -o full -- sh -c 'touch ran'");
	/* refused before the program ran, and the dir is as it was */
	SS_E2E_SH_OK(t, "test ! -e ran && test \"$(ls -A full)\" = keep && "
			"test \"$(cat full/keep)\" = data");
	ss_e2e_pass(t);
}

static void test_unknown_options(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const char *const cmds[] = {
		SS " record --no-such-option -o r -- true",
		SS " symbolize --no-such-option d",
		SS " no-such-command",
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int st = ss_e2e_sh(t, "%s", cmds[i]);
		SS_E2E_EXPECT_STATUS(t, st, 2);
		SS_E2E_CHECK(t, strstr(t->err, "no-such-") != NULL,
			     "'%s': expected stderr to name the bad word, "
			     "got: %s",
			     cmds[i], t->err);
	}
	/* the refused record started nothing */
	SS_E2E_SH_OK(t, "test ! -e r");
	ss_e2e_pass(t);
}

/* Every command that reads runs, given none, says so in its first line
 * ("stepscope: CMD: no run directory given (usage below)") and then prints
 * its usage, exit status 2 (issue 40). */
static void test_missing_dir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const struct { const char *args, *first; } cases[] = {
		{ "symbolize", "stepscope: symbolize: no run directory given (usage below)\n" },
		{ "report", "stepscope: report: no run directory given (usage below)\n" },
		{ "report --limit 3", "stepscope: report: no run directory given (usage below)\n" },
		{ "html", "stepscope: html: no run directory given (usage below)\n" },
		{ "flame", "stepscope: flame: no run directory given (usage below)\n" },
		{ "memory", "stepscope: memory: no run directory given (usage below)\n" },
		{ "filter", "stepscope: filter: no run directory given (usage below)\n" },
		{ "advise", "stepscope: advise: no run directory given (usage below)\n" },
		{ "advise --steps", "stepscope: advise: no run directory given (usage below)\n" },
		{ "steps", "stepscope: steps: no run directory or -- PROG given (usage below)\n" },
		{ "merge -o m", "stepscope: merge: no run directory given (usage below)\n" },
		{ "diff a", "stepscope: diff: two run directories needed, BASE and NEW (usage below)\n" },
		{ "html --diff", "stepscope: html --diff: two run directories needed, BASE and NEW (usage below)\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = ss_e2e_sh(t, SS " %s", cases[i].args);
		size_t l = strlen(cases[i].first);
		SS_E2E_EXPECT_STATUS(t, st, 2);
		SS_E2E_CHECK(t, !strncmp(t->err, cases[i].first, l),
			     "'stepscope %s': expected stderr to begin with %s"
			     "got: %s", cases[i].args, cases[i].first, t->err);
		SS_E2E_CHECK(t, !strncmp(t->err + l, "usage: stepscope ", 17),
			     "'stepscope %s': expected the usage after the first "
			     "line, got: %s", cases[i].args, t->err);
		SS_E2E_CHECK(t, t->out[0] == '\0', "'stepscope %s': stdout "
			     "should be empty, got: %s", cases[i].args, t->out);
	}
	ss_e2e_pass(t);
}

static void test_symbolize_empty_dir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "mkdir empty");
	EXPECT_REFUSED(t, "empty", SS " symbolize empty");
	SS_E2E_SH_OK(t, "test -z \"$(ls -A empty)\"");
	ss_e2e_pass(t);
}

static void test_symbolize_missing_dir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	EXPECT_REFUSED(t, "nowhere", SS " symbolize nowhere");
	ss_e2e_pass(t);
}

static void test_symbolize_garbage_file(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "mkdir g && i=0; while [ $i -lt 300 ]; do "
			"echo 'this is not a stepscope trace'; i=$((i+1)); "
			"done > g/x.1.sstrace");
	EXPECT_REFUSED(t, "x.1.sstrace", SS " symbolize g");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_record_missing_program),
		SS_E2E_TEST(test_record_no_program),
		SS_E2E_TEST(test_record_nonempty_outdir),
		SS_E2E_TEST(test_record_deep_config),
		SS_E2E_TEST(test_unknown_options),
		SS_E2E_TEST(test_missing_dir),
		SS_E2E_TEST(test_symbolize_empty_dir),
		SS_E2E_TEST(test_symbolize_missing_dir),
		SS_E2E_TEST(test_symbolize_garbage_file),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
