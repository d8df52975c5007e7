/*
 * hooks-minrec.c - a minimal in-process recorder, linked into the
 * benchmark executable like hooks-ring.c: each hook reads the TSC and
 * stores a 16-byte record into a thread-local ring that stays in cache;
 * the exit hook also measures the call it closes and counts those longer
 * than SS_MINREC_US (5 us).  What it counts is what the machine itself
 * does to a tiny leaf (interrupts, preemption, the other core's load): the
 * baseline for stepscope's own outliers in fidelity.sh.  Prints
 * "minrec calls N over M" on stderr at exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

#define RING 4096
#define SS_MINREC_US 5

struct rec { uint64_t ts, word; };
__thread struct rec ss_minrec_ring[RING] __attribute__((tls_model("initial-exec")));
__thread unsigned ss_minrec_pos __attribute__((tls_model("initial-exec")));
__thread uint64_t ss_minrec_enter __attribute__((tls_model("initial-exec")));
static uint64_t limit_ticks = UINT64_MAX, calls, over;

__attribute__((no_instrument_function)) static inline uint64_t put(uint64_t word)
{
	unsigned i = ss_minrec_pos;
	uint64_t now = __rdtsc();
	ss_minrec_ring[i].ts = now;
	ss_minrec_ring[i].word = word;
	ss_minrec_pos = (i + 1) & (RING - 1);
	return now;
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	ss_minrec_enter = put((uintptr_t)fn | 1ull << 56);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	uint64_t now = put((uintptr_t)fn | 2ull << 56);
	calls++;
	over += now - ss_minrec_enter > limit_ticks;
}

__attribute__((no_instrument_function)) static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the TSC rate, over 20 ms */
__attribute__((no_instrument_function, constructor)) static void minrec_start(void)
{
	uint64_t n0 = mono_ns(), t0 = __rdtsc(), n1;
	while ((n1 = mono_ns()) - n0 < 20000000)
		;
	double per_ns = (double)(__rdtsc() - t0) / (double)(n1 - n0);
	limit_ticks = (uint64_t)(per_ns * SS_MINREC_US * 1000);
}

__attribute__((no_instrument_function, destructor)) static void minrec_end(void)
{
	fprintf(stderr, "minrec calls %llu over %llu\n", (unsigned long long)calls,
		(unsigned long long)over);
}
