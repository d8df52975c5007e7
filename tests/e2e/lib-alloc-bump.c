/*
 * lib-alloc-bump.c - test-alloc's async-signal-safe allocator: malloc,
 * calloc, realloc, free, posix_memalign, aligned_alloc and memalign from
 * a 512 MiB arena by one atomic add (free gives nothing back), so a
 * signal handler may allocate at any instant, also while the thread it
 * interrupted is inside malloc or inside stepscope's recording of one.
 * Built with plain gcc -shared: no instrumentation.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (512ul << 20)

static char *arena;
static atomic_size_t used;

static void *take(size_t n, size_t align)
{
	if (!arena) {
		void *m = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		char *expect = NULL;
		if (m == MAP_FAILED)
			return NULL;
		if (!__atomic_compare_exchange_n(&arena, &expect, (char *)m, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			munmap(m, ARENA);
	}
	if (align < 16)
		align = 16;
	size_t need = n + align + 16, at = atomic_fetch_add(&used, need);
	if (at + need > ARENA)
		return NULL;
	uintptr_t p = ((uintptr_t)arena + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
	memcpy((char *)p - 16, &n, sizeof(n));
	return (void *)p;
}

void *malloc(size_t n) { return take(n, 16); }
void free(void *p) { (void)p; }
void *calloc(size_t k, size_t n) { return take(k * n, 16); } /* fresh pages: zero */
void *memalign(size_t a, size_t n) { return take(n, a); }
void *aligned_alloc(size_t a, size_t n) { return take(n, a); }

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p = take(n, a);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *realloc(void *p, size_t n)
{
	void *q = take(n, 16);
	if (q && p) {
		size_t old;
		memcpy(&old, (char *)p - 16, sizeof(old));
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}
