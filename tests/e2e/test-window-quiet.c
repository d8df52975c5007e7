/*
 * test-window-quiet.c - end to end: a window that was prepared opens
 * without a file or memory system call on the program's thread (issue
 * 46).  The step before a window has the background thread open the
 * trace file, page in the rings and make them (pool.c ss_pool_early);
 * the opening itself then only takes what was made.  Before, the opening
 * step's boundary read /proc/self/maps (pthread_getattr_np, for the
 * frame walk's stack bounds), the executable's symbol table (was the step
 * function inlined?) and /proc/self/status (threads without a ring), and
 * woke the background thread several times: 0.35-9.4 ms of the program's
 * time.
 *
 * s-window-quiet makes a marker system call on each side of every step
 * boundary (write(-1, "B") in main before the call, write(-1, "E") first
 * in train_step), and sleeps 200 ms a step, time enough for the
 * background thread to prepare.  Run under strace -f with windows at
 * steps 2-3 and 6-7 (wait 1, warmup 1, active 2, repeat 2), the main
 * thread's system calls between the markers of steps 2 and 6 must hold
 * none of open/openat, read, mmap, munmap, mprotect, madvise, fallocate,
 * pwrite64, ftruncate, clone/clone3.  Judged on which system calls, never
 * on time; the trace still holds the 4 recorded steps.
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

static const char *const forbidden[] = { "open",   "openat", "read",      "mmap",
					 "munmap", "mprotect", "madvise", "fallocate",
					 "pwrite64", "ftruncate", "clone", "clone3" };

static void test_window_opens_quietly(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_need(t, "command -v strace", "strace", "strace");
	if (ss_e2e_sh(t, "strace -f -o /dev/null true") != 0)
		ss_e2e_skip(t, "strace cannot trace here (ptrace not permitted): %s", t->err);
	ss_e2e_build(t, "window-quiet", NULL);
	SS_E2E_SH_OK(t, "strace -f -qq -o st.log \"$SS_E2E_BUILD/bin/stepscope\" record -o run "
		     "--set step.function=train_step --set schedule.wait=1 --set schedule.warmup=1 "
		     "--set schedule.active=2 --set schedule.repeat=2 -- ./s-window-quiet 8 200");
	/* "B k" and "E k" for the markers of step k, "S k NAME" for each
	 * system call of the program's main thread in between */
	SS_E2E_SH_OK(t, "awk '/execve\\(\"\\.\\/s-window-quiet\"/ && !pid { pid = $1 }"
		     " $1 != pid || !pid { next }"
		     " /write\\(-1, \"B\", 1/ { print \"B\", nb++; on = 1; next }"
		     " /write\\(-1, \"E\", 1/ { print \"E\", ne++; on = 0; next }"
		     " on { sub(/^[0-9]+ +/, \"\"); if (/^<\\.\\.\\. /) n = $2; else { n = $0; sub(/\\(.*/, \"\", n) }"
		     " if (n !~ /^(\\+\\+\\+|---)/) print \"S\", nb - 1, n }' st.log");
	int nb = 0, ne = 0, seen[8] = { 0 };
	char bad[2048] = "";
	for (const char *p = t->out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		int k = -1;
		char name[64] = "";
		if (sscanf(p, "B %d", &k) == 1 && p[0] == 'B') {
			nb++;
			continue;
		}
		if (sscanf(p, "E %d", &k) == 1 && p[0] == 'E') {
			ne++;
			continue;
		}
		if (sscanf(p, "S %d %63s", &k, name) != 2 || (k != 2 && k != 6))
			continue;
		seen[k]++;
		for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
			if (!strcmp(name, forbidden[i]) && strlen(bad) + 80 < sizeof(bad))
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
					 " %s (step %d)", name, k);
	}
	SS_E2E_CHECK(t, nb == 8 && ne == 8,
		     "expected 8 markers on each side of the step boundaries, got %d and %d:\n%s",
		     nb, ne, t->out);
	SS_E2E_CHECK(t, seen[2] > 0 && seen[6] > 0,
		     "no system call seen at the openings (steps 2 and 6: %d, %d): is the "
		     "trace's main thread found?\n%s", seen[2], seen[6], t->out);
	SS_E2E_CHECK(t, !bad[0], "the window openings made file or memory system calls on "
		     "the program's thread:%s\n%s", bad, t->out);

	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	for (int k = 0; k < 8; k++) {
		char name[32];
		int rec = k == 2 || k == 3 || k == 6 || k == 7;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		SS_E2E_CHECK(t, ss_e2e_count(tr, name, NULL, 0) == (size_t)rec, "%s: %zu slices",
			     name, ss_e2e_count(tr, name, NULL, 0));
	}
	SS_E2E_CHECK(t, ss_e2e_count(tr, "leaf", NULL, 0) == 4, "leaf: %zu calls, expected 4",
		     ss_e2e_count(tr, "leaf", NULL, 0));
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_window_opens_quietly),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
