/*
 * alloc.h - recorded allocations (memory.allocations): what the malloc
 * wrappers (alloc-wrap.c), the CUDA side (gpu*.c) and the runtime's start,
 * fork and exit paths call in alloc.c.  Not exported.
 */
#ifndef SS_ALLOC_H
#define SS_ALLOC_H

#include <stdint.h>

/* One block of the table (alloc.c): key 0 free, 1 a removed entry. */
struct ss_alloc_slot {
	uint64_t key;                  /* address, atomically */
	uint64_t size;
	uint64_t space;
	uint64_t pad;
};
#define SS_ALLOC_TAB_BITS 20

/* Tested by the wrappers on every call: nothing else. */
struct ss_alloc_hot {
	int mask;       /* SS_GATE_REC with memory.allocations, else 0: the
	                 * wrappers record when ss_hot.gate & mask */
	int pad;
	long live;      /* 1 once the table held a block: a free outside a
	                 * window looks there only then */
	struct ss_alloc_slot *tab;     /* the table, NULL without one */
	uint64_t *home;                /* a bit per slot: some block's probe
	                                * began there (set, never cleared
	                                * until a fork): 128 KiB a free
	                                * outside a window looks at instead
	                                * of the 32 MiB table */
} __attribute__((aligned(64)));
extern struct ss_alloc_hot ss_alloc_hot __attribute__((visibility("hidden")));

static inline uint32_t ss_alloc_hash(uint64_t a)
{
	return (uint32_t)(((a >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - SS_ALLOC_TAB_BITS));
}

/* A free outside a window: the block leaves the table if it is there.
 * The first slot of its probe answers the common case (empty: it is not
 * there) inline; anything else out of line (alloc.c). */
void ss_alloc_forget_slow(uint64_t addr) __attribute__((visibility("hidden")));
static inline void ss_alloc_forget(uint64_t addr)
{
	const uint64_t *home = ss_alloc_hot.home;
	uint32_t h = ss_alloc_hash(addr);
	if (home && (__atomic_load_n(&home[h >> 6], __ATOMIC_ACQUIRE) >> (h & 63) & 1))
		ss_alloc_forget_slow(addr);
}

/* An allocation of `size` bytes at addr in `space` (format.h: SS_SPACE(),
 * enum ss_alloc_space): recorded when a window is open on this thread,
 * and followed in the table until freed. */
void ss_alloc_record(uint64_t addr, uint64_t size, uint64_t space)
	__attribute__((visibility("hidden")));
/* A free of addr: taken out of the table (1 and its size in *size when it
 * was there), recorded when a window is open.  Call it before the block
 * is given back, so that no other thread's ALLOC of the same address can
 * come first. */
int ss_alloc_record_free(uint64_t addr, uint64_t space, uint64_t *size)
	__attribute__((visibility("hidden")));
/* The same from the malloc wrappers: csp is their caller's stack pointer
 * at the call (__builtin_dwarf_cfa), to close frames a longjmp left */
void ss_alloc_record_at(uint64_t addr, uint64_t size, uint64_t space, uintptr_t csp)
	__attribute__((visibility("hidden")));
int ss_alloc_record_free_at(uint64_t addr, uint64_t space, uint64_t *size, uintptr_t csp)
	__attribute__((visibility("hidden")));
/* realloc failed after ss_alloc_record_free(addr): the block is live again */
void ss_alloc_record_undo(uint64_t addr, uint64_t size, int known)
	__attribute__((visibility("hidden")));

void ss_alloc_init(void) __attribute__((visibility("hidden")));       /* before main */
void ss_alloc_after_fork(void) __attribute__((visibility("hidden"))); /* child */
void ss_alloc_write_live(void) __attribute__((visibility("hidden"))); /* exit, lock held */
void ss_alloc_thread_gone(void) __attribute__((visibility("hidden"))); /* its exit */
/* alloc-wrap.c: why the wrappers cannot see the program's allocations
 * (a static link without them, the program's own malloc), or NULL */
const char *ss_alloc_wrap_check(void) __attribute__((visibility("hidden"), weak));

#endif /* SS_ALLOC_H */
