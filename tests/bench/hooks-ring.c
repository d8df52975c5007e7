/*
 * hooks-ring.c - the true floor of recording, linked into the benchmark
 * executable itself (no PLT, no preload): each hook reads the TSC and
 * stores one 16-byte record into a thread-local ring (initial-exec TLS) of
 * 4096 slots, 64 KiB that stay in cache.  No file, no page fault, no
 * syscall: what remains is the clock read and the store.  Any recorder of
 * raw timestamps pays at least this; stepscope's figures are compared to it.
 * The EXIT's read is fenced (lfence) as stepscope's is: unfenced, rdtsc
 * runs ahead of the call's last instructions and the call measures
 * shorter than its work (issue 40 item 3), so a recorder of true durations
 * pays the fence too.
 */
#include <stdint.h>
#include <x86intrin.h>

#define RING 4096

struct rec { uint64_t ts, word; };
/* not static: the stores must not be optimised away */
__thread struct rec ss_floor_ring[RING] __attribute__((tls_model("initial-exec")));
__thread unsigned ss_floor_pos __attribute__((tls_model("initial-exec")));

__attribute__((no_instrument_function)) static inline void put(uint64_t word, int is_exit)
{
	unsigned i = ss_floor_pos;
	if (is_exit)
		_mm_lfence();
	ss_floor_ring[i].ts = __rdtsc();
	ss_floor_ring[i].word = word;
	ss_floor_pos = (i + 1) & (RING - 1);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	put((uintptr_t)fn | 1ull << 56, 0);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	put((uintptr_t)fn | 2ull << 56, 1);
}
