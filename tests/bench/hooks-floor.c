/*
 * hooks-floor.c - the physical limit of recording: each hook reads the TSC
 * and stores one 16-byte record into a thread-local buffer that grows
 * sequentially (the same memory traffic as a real trace), nothing else.
 * No read is fenced: the yardstick is fixed (issue 46).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <x86intrin.h>

struct rec { uint64_t ts, word; };
static __thread struct rec *pos, *end;

static void refill(void)
{
	size_t size = 1 << 20;
	pos = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	end = pos + size / sizeof(struct rec);
}

static inline void put(uint64_t word)
{
	uint64_t now = __rdtsc();
	if (__builtin_expect(pos == end, 0))
		refill();
	pos->ts = now;
	pos->word = word;
	pos++;
}

void __cyg_profile_func_enter(void *fn, void *site) { (void)site; put((uintptr_t)fn | 1ull << 56); }
void __cyg_profile_func_exit(void *fn, void *site) { (void)site; put((uintptr_t)fn | 2ull << 56); }
