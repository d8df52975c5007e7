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

#endif /* SS_FIXTURE_H */
