/*
 * test-sched-exit.c - end to end: the context switches of a process that
 * ends by _exit or _Exit, which skip the runtime's destructor (issue 45,
 * item 3).
 *
 * s-sched-exit's train_step sleeps 3 ms, three steps, all recorded with
 * record.sched on; then the process calls _exit(0) or _Exit(0), or a
 * forked child runs the steps and calls _exit(0).  The switches the
 * kernel wrote since the background thread last read the rings used to go
 * with the process: steps reported on the CPU the whole 3 ms, no loss
 * said.  Now, for each way out, report --steps json of the process that
 * ran the steps has 3 steps, each at least MIN_OFF_NS off the CPU (usleep
 * blocks 3 ms at least), says no record lost and no process cut short
 * (off_cpu.processes_cut 0).
 *
 * A raw exit_group or SIGKILL after the steps cannot be caught: the
 * report says so (off_cpu.processes_cut 1, the footer's "switches cut
 * short: 1 process" line) instead of nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define STEPS 3
#define MIN_OFF_NS 2500000.0

static void run_exit(void **state, const char *how)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "sched-exit", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step "
			"--set record.sched=true --set schedule.active=%d -- "
			"./s-sched-exit %d %s", STEPS, STEPS, how);
	SS_E2E_CHECK(t, !strstr(t->err, "record.sched:"),
		     "perf events refused (perf_event_open as root, "
		     "perf_event_paranoid <= 2): %s", t->err);
	long pid = ss_e2e_printed(t, t->out, "pid");
	SS_E2E_SH_OK(t, SS " report --steps --format json run > steps.json");
	cJSON *j = ss_e2e_load_json(t, "steps.json");
	cJSON *off = cJSON_GetObjectItem(j, "off_cpu");
	cJSON *lost = off ? cJSON_GetObjectItem(off, "lost") : NULL;
	SS_E2E_CHECK(t, cJSON_IsNumber(lost) && lost->valuedouble == 0,
		     "%s: off_cpu.lost must be 0 (no Off-CPU data at all?)", how);
	cJSON *cut = cJSON_GetObjectItem(off, "processes_cut");
	SS_E2E_CHECK(t, cJSON_IsNumber(cut) && cut->valuedouble == 0,
		     "%s: off_cpu.processes_cut must be 0", how);
	int n = 0;
	cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "step_list")) {
		cJSON *p = cJSON_GetObjectItem(s, "pid");
		if (!cJSON_IsNumber(p) || (long)p->valuedouble != pid)
			continue;
		double o = cJSON_GetObjectItem(s, "off_cpu_ns")->valuedouble;
		double ns = cJSON_GetObjectItem(s, "ns")->valuedouble;
		print_message("%s: step %d: %.3f ms, %.3f ms off the CPU\n", how, n,
			      ns / 1e6, o / 1e6);
		SS_E2E_CHECK(t, o >= MIN_OFF_NS,
			     "%s: step %d of process %ld: %.0f ns off the CPU, at least "
			     "%.0f expected (usleep(3000))", how, n, pid, o, MIN_OFF_NS);
		n++;
	}
	SS_E2E_CHECK(t, n == STEPS, "%s: %d steps of process %ld, expected %d", how, n,
		     pid, STEPS);
	cJSON_Delete(j);
	ss_e2e_pass(t);
}

/* exit_group or SIGKILL: what was not read is said missing */
static void run_cut(void **state, const char *how)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "sched-exit", NULL);
	ss_e2e_sh(t, SS " record -o run --set step.function=train_step "
		     "--set record.sched=true --set schedule.active=%d -- "
		     "./s-sched-exit %d %s", STEPS, STEPS, how);
	SS_E2E_SH_OK(t, SS " report --format json run > report.json");
	cJSON *j = ss_e2e_load_json(t, "report.json");
	cJSON *off = cJSON_GetObjectItem(j, "off_cpu");
	cJSON *cut = off ? cJSON_GetObjectItem(off, "processes_cut") : NULL;
	SS_E2E_CHECK(t, cJSON_IsNumber(cut) && cut->valuedouble == 1,
		     "%s: off_cpu.processes_cut must be 1", how);
	cJSON_Delete(j);
	SS_E2E_SH_OK(t, SS " report run");
	SS_E2E_CHECK(t, strstr(t->out, "switches cut short: 1 process ended without exit()"),
		     "%s: the footer must say the switches were cut short: %s", how, t->out);
	ss_e2e_pass(t);
}

static void test_exit_group(void **state)
{
	run_cut(state, "exit_group");
}

static void test_kill(void **state)
{
	run_cut(state, "kill");
}

static void test_exit_(void **state)
{
	run_exit(state, "_exit");
}

static void test_Exit(void **state)
{
	run_exit(state, "_Exit");
}

static void test_fork_exit(void **state)
{
	run_exit(state, "fork");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_exit_),
		SS_E2E_TEST(test_Exit),
		SS_E2E_TEST(test_fork_exit),
		SS_E2E_TEST(test_exit_group),
		SS_E2E_TEST(test_kill),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
