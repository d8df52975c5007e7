/*
 * hooks-ring.c - the true floor of recording, linked into the benchmark
 * executable itself (no PLT, no preload): each hook reads the TSC and
 * stores one 16-byte record into a thread-local ring (initial-exec TLS) of
 * 4096 slots, 64 KiB that stay in cache.  No file, no page fault, no
 * syscall: what remains is the clock read and the store.  Any recorder of
 * raw timestamps pays at least this; stepscope's figures are compared to it.
 * No read is fenced: the yardstick is fixed (issue 46), and how a recorder
 * keeps a call's measured time holding its work (stepscope: a sampled
 * ordered EXIT, runtime/hooks.c) is part of what it is measured on.
 */
#include <stdint.h>
#include <x86intrin.h>

#define RING 4096

struct rec { uint64_t ts, word; };
/* not static: the stores must not be optimised away */
__thread struct rec ss_floor_ring[RING] __attribute__((tls_model("initial-exec")));
__thread unsigned ss_floor_pos __attribute__((tls_model("initial-exec")));

__attribute__((no_instrument_function)) static inline void put(uint64_t word)
{
	unsigned i = ss_floor_pos;
	ss_floor_ring[i].ts = __rdtsc();
	ss_floor_ring[i].word = word;
	ss_floor_pos = (i + 1) & (RING - 1);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	put((uintptr_t)fn | 1ull << 56);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	put((uintptr_t)fn | 2ull << 56);
}
