/*
 * fixture.h - shared by the e2e fixture programs (tests/e2e/s-*.c).
 *
 * Fixtures must keep every call the test counts, at -O0 and -O2, with gcc
 * and clang: NOINLINE stops inlining and (gcc) cloning, which would rename a
 * function to "f.constprop.0"; SINK gives calls a side effect -O2 cannot drop.
 * Fixtures define no function the test does not count.
 */
#ifndef SS_FIXTURE_H
#define SS_FIXTURE_H

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

extern volatile long fixture_sink;
#define SINK(x) (fixture_sink += (long)(x))
#define DEFINE_SINK volatile long fixture_sink

/* Spin NS nanoseconds on CLOCK_MONOTONIC: a cost the clock fixes, not the
 * machine's speed or load (a loop of N iterations takes longer on a busy
 * machine; this takes NS, and only a preemption across its end longer).
 * A macro, not a function: a fixture defines no function the test does
 * not count (clock_gettime is libc, never instrumented).  Needs <time.h>. */
#define SPIN_NS(ns)                                                             \
	do {                                                                    \
		struct timespec spin_a_, spin_b_;                               \
		clock_gettime(CLOCK_MONOTONIC, &spin_a_);                       \
		do {                                                            \
			clock_gettime(CLOCK_MONOTONIC, &spin_b_);               \
		} while ((spin_b_.tv_sec - spin_a_.tv_sec) * 1000000000L +      \
				 spin_b_.tv_nsec - spin_a_.tv_nsec <            \
			 (long)(ns));                                           \
	} while (0)
#define SPIN_US(us) SPIN_NS((long)(us) * 1000L)

/* Wall time (CLOCK_MONOTONIC) and this thread's CPU time, in ns, as one
 * pair: wall, CPU, wall again until both wall reads are within 20 us (no
 * switch fell between them), so that wall - cpu between two pairs counts
 * only the switches between them.  Needs <time.h>. */
#define CLOCK_PAIR(wall, cpu)                                                   \
	do {                                                                    \
		struct timespec cp_w0_, cp_c_, cp_w1_;                          \
		do {                                                            \
			clock_gettime(CLOCK_MONOTONIC, &cp_w0_);                \
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cp_c_);         \
			clock_gettime(CLOCK_MONOTONIC, &cp_w1_);                \
		} while ((cp_w1_.tv_sec - cp_w0_.tv_sec) * 1000000000LL +       \
				 cp_w1_.tv_nsec - cp_w0_.tv_nsec > 20000);      \
		(wall) = cp_w1_.tv_sec * 1000000000LL + cp_w1_.tv_nsec;         \
		(cpu) = cp_c_.tv_sec * 1000000000LL + cp_c_.tv_nsec;            \
	} while (0)

/* This thread's voluntary and involuntary context switches so far, from
 * /proc/thread-self/status (-1 each when it says none).  Needs <fcntl.h>,
 * <stdlib.h>, <string.h> and <unistd.h>. */
#define THREAD_SWITCHES(vol, invol)                                             \
	do {                                                                    \
		char ts_b_[2048];                                               \
		int ts_fd_ = open("/proc/thread-self/status", O_RDONLY);        \
		ssize_t ts_n_ = ts_fd_ >= 0 ? read(ts_fd_, ts_b_, sizeof(ts_b_) - 1) : -1; \
		if (ts_fd_ >= 0)                                                \
			close(ts_fd_);                                          \
		ts_b_[ts_n_ > 0 ? ts_n_ : 0] = 0;                               \
		char *ts_v_ = strstr(ts_b_, "voluntary_ctxt_switches:");        \
		char *ts_i_ = strstr(ts_b_, "nonvoluntary_ctxt_switches:");     \
		(vol) = ts_v_ ? atoll(ts_v_ + 24) : -1;                         \
		(invol) = ts_i_ ? atoll(ts_i_ + 27) : -1;                       \
	} while (0)

#endif /* SS_FIXTURE_H */
