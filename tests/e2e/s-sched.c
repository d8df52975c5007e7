/*
 * s-sched.c - fixture for off-CPU time (record.sched): a trainer-shaped
 * loop whose step spins on the CPU, then sleeps.
 *
 *   s-sched STEPS        main calls train_step STEPS times; train_step
 *                        calls spinner() (spins 12 ms on CLOCK_MONOTONIC:
 *                        on a CPU the whole time unless a busy process on
 *                        the same CPU preempts it) and sleeper() (one
 *                        nanosleep of 5 ms: blocked nearly all of it)
 *   s-sched STEPS noperf the same, after a seccomp filter made
 *                        perf_event_open fail with EACCES (as Docker's
 *                        default profile does), before the first step
 *
 * What the kernel says, for the test to compare with: around each call and
 * around the step's body the fixture reads the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID, read between two reads of the wall clock with
 * no switch between them: schedstat's first field lags until the next
 * tick or switch), the time it waited on a run queue (the second field of
 * /proc/thread-self/schedstat, ns) and its voluntary and involuntary
 * switch counts (/proc/thread-self/status), and prints, after the step,
 * one line per call and one for the step:
 *
 *   call STEP NAME wall NS cpu NS wait NS vol N invol N
 *   step STEP wall NS cpu NS wait NS vol N invol N
 *
 * wall - cpu is the time the thread was off the CPU (switched out) in it.
 * Prints "steps N" at the end.
 * Functions: main, train_step, spinner, sleeper.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

/* one reading of the kernel's view of this thread (libc calls and macros
 * only: no function the test does not count) */
struct look {
	long long wall, cpu, wait, vol, invol;
};

/* The clocks as one pair (fixture.h's CLOCK_PAIR: both wall reads within
 * 20 us), so that wall - cpu differences count only the switches between
 * two looks. */
#define CLOCKS(l) CLOCK_PAIR((l).wall, (l).cpu)

/* The run-queue wait and the switch counts, from /proc. */
#define PROC(l)                                                                 \
	do {                                                                    \
		char b_[2048];                                                  \
		long long run_ = 0;                                             \
		int fd_ = open("/proc/thread-self/schedstat", O_RDONLY);        \
		ssize_t n_ = fd_ >= 0 ? read(fd_, b_, sizeof(b_) - 1) : -1;     \
		if (fd_ >= 0)                                                   \
			close(fd_);                                             \
		b_[n_ > 0 ? n_ : 0] = 0;                                        \
		(l).wait = 0;                                                   \
		sscanf(b_, "%lld %lld", &run_, &(l).wait);                      \
		THREAD_SWITCHES((l).vol, (l).invol);                            \
	} while (0)

/* Before a call: /proc first, the clocks last, right before it; after a
 * call: the clocks first, right after it.  The clocks then bracket the
 * call and its hooks only. */
#define LOOK_BEFORE(l)                                                          \
	do {                                                                    \
		PROC(l);                                                        \
		CLOCKS(l);                                                      \
	} while (0)
#define LOOK_AFTER(l)                                                           \
	do {                                                                    \
		CLOCKS(l);                                                      \
		PROC(l);                                                        \
	} while (0)

#define SAY(i, what, a, b)                                                      \
	snprintf(lines[i], sizeof(lines[0]),                                    \
		 "%s wall %lld cpu %lld wait %lld vol %lld invol %lld\n", what, \
		 (b).wall - (a).wall, (b).cpu - (a).cpu, (b).wait - (a).wait,   \
		 (b).vol - (a).vol, (b).invol - (a).invol)

NOINLINE void spinner(void)
{
	SPIN_NS(12000000);
	SINK(1);
}

NOINLINE void sleeper(void)
{
	struct timespec ts = { 0, 5000000 };
	nanosleep(&ts, NULL);
	SINK(2);
}

static char lines[3][160]; /* the step's, spinner's, sleeper's */

NOINLINE void train_step(long step)
{
	struct look s0, a, b, c, d, s1;
	char what[64];
	LOOK_BEFORE(s0);
	LOOK_BEFORE(a);
	spinner();
	LOOK_AFTER(b);
	LOOK_BEFORE(c);
	sleeper();
	LOOK_AFTER(d);
	LOOK_AFTER(s1);
	snprintf(what, sizeof(what), "call %ld spinner", step);
	SAY(1, what, a, b);
	snprintf(what, sizeof(what), "call %ld sleeper", step);
	SAY(2, what, c, d);
	snprintf(what, sizeof(what), "step %ld", step);
	SAY(0, what, s0, s1);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 6;
	if (argc > 2 && !strcmp(argv[2], "noperf")) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
			perror("s-sched: seccomp");
			return 1;
		}
	}
	for (long s = 0; s < steps; s++) {
		train_step(s);
		/* printed outside the step: stdio is not step time */
		fputs(lines[1], stdout);
		fputs(lines[2], stdout);
		fputs(lines[0], stdout);
	}
	printf("steps %ld\n", steps);
	return 0;
}
