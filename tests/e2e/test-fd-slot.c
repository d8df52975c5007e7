/*
 * test-fd-slot.c - end to end: the trace file's descriptor takes the high
 * slot the runtime reserved at start-up (buffer.c ss_buf_fd_reserve).
 * Growing the fd table to a high number once the program has a second
 * thread waits for an RCU grace period (6-16 ms on the development VM),
 * so the runtime takes its slot while the program has one thread, and
 * moves the trace's fd onto it when the file is created.  s-fd-slot
 * starts a thread before its first step and lists its descriptors above
 * 99 at main's start and in its last (recorded) step: /dev/null at some
 * slot N at the start, the trace file at the same N in the step, and
 * nothing else up there either time.  The judgement is by descriptor
 * numbers and targets, never by time.
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

static int count_tag(const char *out, const char *tag, int *fd, char *to, size_t len)
{
	int n = 0;
	size_t tl = strlen(tag);
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, tag, tl) || p[tl] != ' ')
			continue;
		n++;
		int off = 0;
		if (sscanf(p + tl + 1, "%d %n", fd, &off) == 1) {
			size_t l = strcspn(p + tl + 1 + off, "\n");
			snprintf(to, len, "%.*s", (int)(l < len ? l : len - 1), p + tl + 1 + off);
		}
	}
	return n;
}

static void test_trace_on_reserved_slot(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "fd-slot", NULL);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o run "
		     "--set step.function=train_step --set schedule.wait=1 "
		     "--set schedule.warmup=1 --set schedule.active=3 --set schedule.repeat=1 "
		     "-- ./s-fd-slot 6");
	int fd0 = -1, fd1 = -2;
	char to0[4096] = "", to1[4096] = "";
	int n0 = count_tag(t->out, "start", &fd0, to0, sizeof(to0));
	int n1 = count_tag(t->out, "step", &fd1, to1, sizeof(to1));
	SS_E2E_CHECK(t, n0 == 1 && !strcmp(to0, "/dev/null"),
		     "at main's start: %d descriptors above 999, expected one on /dev/null "
		     "(the reserved slot):\n%s", n0, t->out);
	SS_E2E_CHECK(t, n1 == 1 && strstr(to1, ".sstrace") != NULL,
		     "in the last step: %d descriptors above 999, expected the trace file:\n%s",
		     n1, t->out);
	SS_E2E_CHECK(t, fd0 == fd1, "the trace file is on fd %d, the reserved slot was %d",
		     fd1, fd0);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	SS_E2E_CHECK(t, ss_e2e_count(tr, "leaf", NULL, 0) == 3, "leaf: %zu calls, expected 3",
		     ss_e2e_count(tr, "leaf", NULL, 0));
	ss_e2e_pass(t);
}

static void test_without_stepscope(void **state)
{
	/* the same build with the runtime off holds no such slot */
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "fd-slot", NULL);
	SS_E2E_SH_OK(t, "STEPSCOPE_DISABLE=1 ./s-fd-slot 6");
	int fd = -1;
	char to[4096];
	SS_E2E_CHECK(t, count_tag(t->out, "start", &fd, to, sizeof(to)) == 0 &&
			count_tag(t->out, "step", &fd, to, sizeof(to)) == 0,
		     "STEPSCOPE_DISABLE=1: descriptors above 999:\n%s", t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_trace_on_reserved_slot),
		SS_E2E_VARIANTS(test_without_stepscope),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
