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

#endif /* SS_FIXTURE_H */
