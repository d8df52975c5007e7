/*
 * test-pipe.c - end to end: the commands that read a run walk its threads
 * on a worker thread while the exporters run on the main one
 * (read/slices-pipe.c); their outputs are the same bytes as the serial
 * walk's (STEPSCOPE_JOBS=1), which is the oracle here.
 *
 *   test_threads   s-ring: three threads of 20000 leaf calls each, the
 *                  whole run recorded: some 60000 slices, far more than
 *                  the pipeline's ring of chunks holds, and several
 *                  threads handed over one after another
 *   test_steps     s-steps with a schedule: ProfilerStep slices (names
 *                  built by the walk), windows, clipped calls
 *   test_stopped   s-ring cut by max_trace_mb: "recording stopped"
 *                  markers, whose name is the walk's own
 *
 * Every command of the table runs twice, serial and with 4 jobs, and the
 * two outputs are compared with cmp.
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
	{ "chrome", SS " symbolize -q" },
	{ "details", SS " symbolize -q --details" },
	{ "perfetto", SS " symbolize -q --format perfetto" },
	{ "folded", SS " symbolize -q --format folded" },
	{ "speedscope", SS " symbolize -q --format speedscope" },
	{ "flame", SS " flame -q" },
	{ "html", SS " html -q" },
	{ "report", SS " report -q" },
	{ "threads", SS " report -q --threads --limit 0" },
	{ "csv", SS " report -q --format csv --limit 0" },
};

/* Each command on run dir `run`, serial and piped: the same bytes. */
static void same_bytes(struct ss_e2e *t, const char *run, int with_steps)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *tag = cmds[i].tag, *cmd = cmds[i].cmd;
		SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=1 %s -o serial.%s %s", cmd, tag, run);
		SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=4 %s -o piped.%s %s", cmd, tag, run);
		SS_E2E_SH_OK(t, "test -s serial.%s", tag);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "cmp serial.%s piped.%s", tag, tag) == 0,
			     "%s on %s: STEPSCOPE_JOBS=4 wrote other bytes than the serial walk: %s",
			     tag, run, t->out);
	}
	if (with_steps) {
		SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=1 " SS " report -q --steps -o serial.steps %s", run);
		SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=4 " SS " report -q --steps -o piped.steps %s", run);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "cmp serial.steps piped.steps") == 0,
			     "report --steps on %s: other bytes with STEPSCOPE_JOBS=4", run);
	}
}

static void test_threads(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	ss_e2e_build(t, "ring", NULL);
	SS_E2E_SH_OK(t, SS " record -o rec -- ./s-ring exit 3 20000 >/dev/null");
	/* the oracle's own count: every leaf call is a slice in the JSON */
	SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=4 " SS " symbolize -q -o all.json rec && "
		     "test $(grep -c '\"name\":\"leaf\"' all.json) = 60000");
	same_bytes(t, "rec", 0);
	ss_e2e_pass(t);
}

static void test_steps(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	ss_e2e_build(t, "steps", NULL);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\nschedule:\\n  wait: 1\\n"
		     "  active: 3\\n  repeat: 2\\n' > c.yaml");
	SS_E2E_SH_OK(t, SS " record -c c.yaml -o rec -- ./s-steps fn 12 >/dev/null");
	SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=4 " SS " symbolize -q -o all.json rec && "
		     "grep -q '\"name\":\"ProfilerStep#1\"' all.json");
	same_bytes(t, "rec", 1);
	ss_e2e_pass(t);
}

static void test_stopped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	ss_e2e_build(t, "ring", NULL);
	SS_E2E_SH_OK(t, SS " record --set max_trace_mb=8 -o rec -- ./s-ring exit 2 200000 "
		     ">/dev/null 2>&1");
	SS_E2E_SH_OK(t, "STEPSCOPE_JOBS=4 " SS " symbolize -q -o all.json rec && "
		     "grep -q 'recording stopped' all.json");
	same_bytes(t, "rec", 0);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_threads),
		SS_E2E_TEST(test_steps),
		SS_E2E_TEST(test_stopped),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
