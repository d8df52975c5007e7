/*
 * test-outputs.c - end to end: every command that writes one file
 * (symbolize in its three formats, flame, html, memory, report) treats
 * `-o OUT` the same way (symbolize/outfile.c):
 *
 *   - `-o -` writes to standard output, and no file named "-" appears;
 *   - a regular OUT is replaced by the complete output, no temporary file
 *     is left behind;
 *   - a symlink stays a symlink and its target gets the output;
 *   - a FIFO stays a FIFO and its reader gets the output;
 *   - a symlink to /dev/null, and /dev/null itself, stay a character
 *     device (the real /dev/null is tried last, after the link cases
 *     passed, so a broken writer fails before it can replace it).
 *
 * Each output is compared byte for byte with the one written to a
 * regular file.
 *
 * test_big_json: a Chrome JSON past the size viewers load well (lowered
 * with STEPSCOPE__TEST_BIG_JSON_MB) gets one line naming --format
 * perfetto; a smaller one, a Perfetto file, standard output and a device
 * get none.
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

static const struct {
	const char *tag;   /* file names in the test dir */
	const char *cmd;   /* the command line before -o */
} cmds[] = {
	{ "chrome", SS " symbolize -q run" },
	{ "perfetto", SS " symbolize -q --format perfetto run" },
	{ "folded", SS " symbolize -q --format folded run" },
	{ "flame", SS " flame -q run" },
	{ "html", SS " html -q run" },
	{ "memory", SS " memory run" },
	{ "report", SS " report -q run" },
};

static void test_outputs(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	size_t i;

	ss_e2e_build(t, "memory", NULL);
	SS_E2E_SH_OK(t, SS " record --set step.function=step --set memory.enabled=true "
		     "--set memory.interval_ms=2 --set memory.every_n_steps=1 "
		     "-o run -- ./s-memory 4 1");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *tag = cmds[i].tag, *cmd = cmds[i].cmd;

		/* a regular file: the reference, replaced whole, nothing left over */
		SS_E2E_SH_OK(t, "echo old > ref.%s && %s -o ref.%s && test -f ref.%s && "
			     "test -s ref.%s && ! grep -qx old ref.%s", tag, cmd, tag, tag, tag, tag);
		SS_E2E_SH_OK(t, "%s -o again.%s && cmp ref.%s again.%s", cmd, tag, tag, tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "ls | grep -F .tmp") == 1,
			     "%s: a temporary file was left behind: %s", tag, t->out);
		/* - is standard output */
		SS_E2E_SH_OK(t, "%s -o - > stdout.%s && cmp ref.%s stdout.%s", cmd, tag, tag, tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -e ./-") == 1,
			     "%s -o - created a file named '-'", tag);
		/* a symlink: still a link, its target has the output */
		SS_E2E_SH_OK(t, "ln -s target.%s link.%s && %s -o link.%s", tag, tag, cmd, tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -L link.%s && cmp ref.%s target.%s", tag,
					  tag, tag) == 0,
			     "%s -o SYMLINK: the link was replaced or its target is wrong", tag);
		/* a FIFO: still a FIFO, its reader got the output */
		SS_E2E_SH_OK(t, "mkfifo fifo.%s && { cat fifo.%s > fromfifo.%s & } && "
			     "%s -o fifo.%s; rc=$?; wait; test $rc = 0", tag, tag, tag, cmd, tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -p fifo.%s && cmp ref.%s fromfifo.%s", tag, tag,
					  tag) == 0,
			     "%s -o FIFO: the FIFO was replaced or its reader got other bytes", tag);
		/* a link to /dev/null */
		SS_E2E_SH_OK(t, "ln -s /dev/null null.%s && %s -o null.%s", tag, cmd, tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -L null.%s && test -c /dev/null", tag) == 0,
			     "%s -o LINK-TO-/dev/null replaced the link", tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "ls | grep -F .tmp") == 1,
			     "%s: a temporary file was left behind: %s", tag, t->out);
	}
	/* only now, with every link case passed: the real /dev/null */
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		SS_E2E_SH_OK(t, "%s -o /dev/null", cmds[i].cmd);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -c /dev/null") == 0,
			     "%s -o /dev/null: /dev/null is no longer a character device",
			     cmds[i].tag);
	}
	/* a directory is refused with one line naming it; nothing is created */
	SS_E2E_SH_OK(t, "mkdir adir");
	SS_E2E_CHECK(t, ss_e2e_sh(t, SS " flame -q -o adir run") == 2,
		     "flame -o DIRECTORY: expected exit 2");
	SS_E2E_CHECK(t, strstr(t->err, "stepscope: adir: cannot create: Is a directory\n") != NULL,
		     "flame -o DIRECTORY: got %s", t->err);
	ss_e2e_pass(t);
}

#define BIG "past the %s MB that chrome://tracing and the Perfetto UI's JSON " \
	"import load well: --format perfetto writes a trace the Perfetto UI opens at this size\n"

static void test_big_json(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char want[512];

	ss_e2e_build(t, "memory", NULL);
	SS_E2E_SH_OK(t, SS " record --set step.function=step -o run -- ./s-memory 4 1");
	SS_E2E_SH_OK(t, "STEPSCOPE__TEST_BIG_JSON_MB=0.001 " SS " symbolize -q run");
	SS_E2E_CHECK(t, strstr(t->err, "stepscope: run/trace.json is ") != NULL &&
		     ss_e2e_lines_with(t->err, "--format perfetto") == 1,
		     "a trace.json past STEPSCOPE__TEST_BIG_JSON_MB: expected one line naming "
		     "its size and --format perfetto, got:\n%s", t->err);
	snprintf(want, sizeof(want), BIG, "0.001");
	SS_E2E_CHECK(t, strstr(t->err, want) != NULL, "expected '%s' in:\n%s", want, t->err);
	/* -o FILE */
	SS_E2E_SH_OK(t, "STEPSCOPE__TEST_BIG_JSON_MB=0.001 " SS " symbolize -q -o big.json run");
	SS_E2E_CHECK(t, strstr(t->err, "stepscope: big.json is ") != NULL,
		     "-o big.json: expected the line, got:\n%s", t->err);
	/* under the limit (the default, 256 MB), and outputs it cannot weigh
	 * or that are not JSON: no word */
	SS_E2E_SH_OK(t, SS " symbolize -q run");
	SS_E2E_CHECK(t, !strstr(t->err, "--format perfetto"), "a small trace.json: got:\n%s",
		     t->err);
	SS_E2E_SH_OK(t, "STEPSCOPE__TEST_BIG_JSON_MB=0.001 " SS " symbolize -q --format perfetto "
		     "run && STEPSCOPE__TEST_BIG_JSON_MB=0.001 " SS " symbolize -q -o - run > out.json "
		     "&& STEPSCOPE__TEST_BIG_JSON_MB=0.001 " SS " symbolize -q -o /dev/null run");
	SS_E2E_CHECK(t, !strstr(t->err, "--format perfetto"), "perfetto, -o -, -o /dev/null: "
		     "no line expected, got:\n%s", t->err);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_outputs),
		SS_E2E_TEST(test_big_json),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
