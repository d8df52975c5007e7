/*
 * test-bench.c - `make bench` still builds and runs to the end: the whole
 * of tests/bench/run-bench.sh once at its smallest sizes (SS_BENCH_SMOKE=1,
 * tests/bench/lib.sh), as `make bench` runs it.
 *
 * Design: this judges no figure (a smoke run's sizes are far too small for
 * them to mean anything, and timed verdicts belong to `make bench`, not to
 * the tests).  It checks that the run exits 0, that every section printed
 * its heading, and that the goal table at the end holds every figure of
 * the list below with a number and a yes/NO: a benchmark program that no
 * longer builds, a section that stops early or a figure that goes missing
 * fails `make test`.
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

/* what each section prints first */
static const char *const sections[] = {
	"fidelity (issue 14)",
	"floor (issue 46)",
	"window: b-window",
	"idle (issue 28)",
	"offcpu: b-omp-busy",
	"diff: 2 same-build pairs and 2 pairs against one operator +30%",
	"offcpu: diff, ",
	"overhead line (issue 48): stated vs measured",
	"memory.allocations: added ns per malloc/free pair",
	"hot path: per enter+exit pair",
	"build time, examples/mlp",
	"symbolize: raw -> Chrome JSON",
	"post-processing: a whole-run recording of b-calls",
	"record.args: b-args",
	"record.stack: cost per captured stack",
	"stats: whole_run, outside windows",
	"stats: whole_run on a trainer",
	"filter: s-filter",
	"filter workflow: s-autodiff",
	"make bench: every figure with a goal, this run",
};

/* every figure of the goal table (the rows uftrace adds included: `make
 * test` installs it) */
static const char *const figures[] = {
	"fidelity: stepscope / floor (ns per call pair)",
	"fidelity: uftrace / stepscope",
	"fidelity: page faults added in the program thread",
	"fidelity: bytes per event",
	"fidelity: leaf outliers vs a minimal recorder",
	"fidelity: mlp first step / median of the others",
	"floor: stepscope recording / unfenced ring (ns per call pair)",
	"floor: uftrace / stepscope",
	"floor: dot product fastest recorded call / unrecorded",
	"window: opening on the program's thread, defaults (ms)",
	"window: opening on the program's thread, ring and pool 4x (ms)",
	"window: first recorded step / median recorded step",
	"idle: STEPSCOPE_DISABLE=1 / empty linked in (wall)",
	"idle: STEPSCOPE_DISABLE=1 / empty linked in (CPU)",
	"idle: window never opens / empty linked in (wall)",
	"idle: window never opens / empty linked in (CPU)",
	"idle: stepscope, hooks linked in / floor (wall)",
	"idle: stepscope, hooks linked in / floor (CPU)",
	"offcpu: overhead line / measured share (every call recorded)",
	"offcpu: warning when over 10% slower (every call recorded)",
	"offcpu: overhead line / measured share (filter.exclude=axpy8)",
	"offcpu: warning when over 10% slower (filter.exclude=axpy8)",
	"offcpu: warning when over 10% slower (axpy8, act without hooks)",
	"offcpu: diff --fail-above 10 false alarms, same build (of 2)",
	"offcpu: diff finds matvec +30% first, significant (of 2)",
	"overhead line: stated / measured, worst run (docs/filters.md)",
	"overhead line: stated / measured, worst run (examples/mlp)",
	"diff: --fail-above 10 false alarms, same build (kann, quiet, wall time, of 2)",
	"diff: one operator +30% first, significant (kann, quiet, wall time, of 2)",
	"diff: --fail-above 10 false alarms, same build (kann, busy neighbour, wall time, of 2)",
	"diff: one operator +30% first, significant (kann, busy neighbour, wall time, of 2)",
	"diff: --fail-above 10 false alarms, same build (mlp, quiet, wall time, of 2)",
	"diff: one operator +30% first, significant (mlp, quiet, wall time, of 2)",
	"diff: --fail-above 10 false alarms, same build (mlp, busy neighbour, wall time, of 2)",
	"diff: one operator +30% first, significant (mlp, busy neighbour, wall time, of 2)",
	"memory.allocations off: ns added per malloc/free pair",
	"memory.allocations on, outside a step: ns added per pair",
	"memory.allocations on, inside a step: ns added per pair",
	"report of allocation pairs: time / as many plain calls",
	"report of allocation pairs: max RSS (MB)",
	"hot path: b-calls recording / floor",
	"hot path: b-calls uftrace / recording",
	"hot path: b-calls outside window - empty hooks (ns)",
	"hot path: b-calls raw trace bytes per event",
	"hot path: b-recurse recording / floor",
	"hot path: b-recurse uftrace / recording",
	"hot path: b-recurse outside window - empty hooks (ns)",
	"hot path: b-recurse raw trace bytes per event",
	"hot path: mlp recording vs empty hooks (%)",
	"build: stepscope-cc / same flags direct",
	"symbolize: M events/s per CPU second",
	"symbolize: chrome bytes per slice",
	"symbolize: perfetto wall / chrome wall",
	"symbolize: perfetto max RSS (MB)",
	"symbolize: uftrace dump --chrome / stepscope (wall)",
	"post: symbolize M events/s (wall)",
	"post: symbolize on one thread, M events/s",
	"post: perfetto M events/s (wall)",
	"post: perfetto on one thread, M events/s",
	"post: report M events/s (wall)",
	"post: report on one thread, M events/s",
	"post: html M events/s (wall)",
	"post: html on one thread, M events/s",
	"post: max RSS of the four commands (MB)",
	"post: perfetto wall / chrome wall",
	"post: perfetto bytes per event",
	"record.args: ns added per call of a listed function",
	"record.args: never-called functions listed / not set",
	"record.stack: ns per stack, depth 16 into libc",
	"counting: stats: whole_run / empty hooks (wall)",
	"counting: stats: whole_run / empty hooks (CPU)",
	"counting: log.every_n_steps: 10 / empty hooks (wall)",
	"counting: log.every_n_steps: 10 / empty hooks (CPU)",
	"counting: stats + filter.exclude [leaf] / empty hooks (wall)",
	"counting: stats + filter.exclude [leaf] / empty hooks (CPU)",
	"counting: stats, trainer 4 threads / empty hooks (wall)",
	"counting: stats, trainer 4 threads / empty hooks (CPU)",
	"counting: stats, trainer, stepscope-cc / hooks linked in (wall)",
	"counting: stats, trainer, stepscope-cc / hooks linked in (CPU)",
	"filter: s-filter rebuilt with the list / plain",
	"filter workflow: s-autodiff rebuilt, idle / plain",
	"filter workflow: s-autodiff rebuilt, recording / plain",
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The table row of figure in out: "  FIGURE  MEASURED  GOAL  yes|NO", the
 * measured value a plain number; 0 when there is none. */
static int table_row(const char *out, const char *figure)
{
	const char *table = strstr(out, "make bench: every figure with a goal");
	if (!table)
		return 0;
	for (const char *p = table; (p = strstr(p, figure)); p++) {
		if (p[-1] != ' ' || strncmp(p - 2, "  ", 2))
			continue;
		const char *v = p + strlen(figure);
		char *end;
		while (*v == ' ')
			v++;
		strtod(v, &end);
		if (end == v || *end != ' ')
			return 0;
		const char *eol = strchr(end, '\n');
		size_t len = eol ? (size_t)(eol - end) : strlen(end);
		return len >= 3 && (!strncmp(end + len - 3, "yes", 3) ||
				    !strncmp(end + len - 3, " NO", 3));
	}
	return 0;
}

static void test_smoke(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_need(t, "command -v hyperfine", "hyperfine", "hyperfine");
	ss_e2e_need(t, "command -v uftrace", "uftrace", "uftrace");
	ss_e2e_need(t, "test -x /usr/bin/time", "/usr/bin/time", "time");
	setenv("SS_E2E_TIMEOUT", "900", 1);
	/* the scripts' work dirs under this test's dir, removed with it */
	SS_E2E_SH_OK(t, "mkdir -p tmp && SS_BENCH_SMOKE=1 TMPDIR=$PWD/tmp SS_BENCH_DIR=$PWD/w "
		     "SS_BENCH_FID_DIR=$PWD/fid SS_BENCH_IDLE_DIR=$PWD/idle CC=gcc "
		     "sh \"$SS_E2E_SRC/tests/bench/run-bench.sh\" 2>&1");
	for (size_t i = 0; i < N_OF(sections); i++)
		if (!strstr(t->out, sections[i])) {
			ss_e2e_show_last(t, 0);
			fail_msg("make bench (smoke) printed no section \"%s\"", sections[i]);
		}
	for (size_t i = 0; i < N_OF(figures); i++)
		if (!table_row(t->out, figures[i])) {
			ss_e2e_show_last(t, 0);
			fail_msg("make bench (smoke): the goal table has no row with a number for \"%s\"",
				 figures[i]);
		}
	char want[64];
	snprintf(want, sizeof(want), " of %zu goals met\n", N_OF(figures));
	if (!strstr(t->out, want)) {
		ss_e2e_show_last(t, 0);
		fail_msg("make bench (smoke): the table should end \"N%s\"", want);
	}
	if (strstr(t->out, " nan") || strstr(t->out, "-nan") || strstr(t->out, " inf") ||
	    strstr(t->out, "-inf") || strstr(t->out, "division by zero")) {
		ss_e2e_show_last(t, 0);
		fail_msg("make bench (smoke) printed nan, inf or a division by zero");
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_smoke),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
