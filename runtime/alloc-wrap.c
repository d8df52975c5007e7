/*
 * alloc-wrap.c - the malloc family of libstepscope.so: malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc and pvalloc (C++ new and delete call them), each forwarding to
 * the next definition in the lookup order (glibc's, or an allocator
 * library the program links: jemalloc, tcmalloc, its own), which is the
 * one recorded (alloc.c; docs/memory.md, "Recorded allocations").
 *
 * How: the next definitions are looked up once (dlsym RTLD_NEXT) on the
 * first call; dlsym may allocate, so calls made while it runs get memory
 * from a small static arena (a free of it is a no-op, a realloc copies it
 * out).  Each wrapper forwards with the same arguments and returns what
 * the allocator returned; only then, when a window is open or the table
 * holds blocks (one test of two words), it notes the call (alloc.c).  A
 * free or realloc notes the FREE before the block is given back.
 *
 * Never: change what the program gets (pointers, sizes, errno of a failed
 * call), call the program's allocator for the runtime, or do anything but
 * forward with memory.allocations off.  A program that defines malloc in
 * its executable comes first in the lookup order: these are never called,
 * ss_alloc_wrap_check says so at start-up.
 *
 * libstepscope.a (a -static link) has this file built with SS_ALLOC_STATIC:
 * the wrappers are __wrap_malloc and so on, which stepscope-cc's
 * -Wl,--wrap=malloc,... make every reference of the program and of the
 * static libc go to; the next definition is __real_malloc (the program's
 * own malloc if it defines one, else glibc's), no dlsym.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "internal.h"

struct next {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
};
#ifdef SS_ALLOC_STATIC
#define W(name) __wrap_##name
extern void *__real_malloc(size_t);
extern void *__real_calloc(size_t, size_t);
extern void *__real_realloc(void *, size_t);
extern void *__real_reallocarray(void *, size_t, size_t);
extern void __real_free(void *);
extern int __real_posix_memalign(void **, size_t, size_t);
extern void *__real_aligned_alloc(size_t, size_t);
extern void *__real_memalign(size_t, size_t);
extern void *__real_valloc(size_t);
extern void *__real_pvalloc(size_t);
static struct next next = { __real_malloc, __real_calloc, __real_realloc, __real_reallocarray,
			    __real_free, __real_posix_memalign, __real_aligned_alloc,
			    __real_memalign, __real_valloc, __real_pvalloc };
#define resolving 0
#define READY() 1
#define in_boot(p) 0
#define boot_alloc(n, a) NULL
static void resolve(void)
{
}
#else
#define W(name) name
/* malloc, calloc and free start as these: the first call looks the next
 * definitions up (so the common path has no test of it); the others test
 * `resolved` */
static void *first_malloc(size_t n);
static void *first_calloc(size_t k, size_t n);
static void first_free(void *p);
static struct next next = { .malloc = first_malloc, .calloc = first_calloc, .free = first_free };
static int resolved;
static __thread int resolving;

/* What dlsym allocates while the next definitions are looked up. */
static _Alignas(64) char boot[65536];
static size_t boot_used;

static void *boot_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	size_t at = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start;
	do {
		start = (at + 16 + align - 1) & ~(align - 1);
		if (n > sizeof(boot) || start + n > sizeof(boot))
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &at, start + n, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	memcpy(boot + start - 16, &n, sizeof(n)); /* its size, for realloc */
	return boot + start;
}

static inline int in_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot < sizeof(boot);
}

static void resolve(void)
{
	resolving = 1;
	struct next n;
	n.malloc = dlsym(RTLD_NEXT, "malloc");
	n.calloc = dlsym(RTLD_NEXT, "calloc");
	n.realloc = dlsym(RTLD_NEXT, "realloc");
	n.reallocarray = dlsym(RTLD_NEXT, "reallocarray");
	n.free = dlsym(RTLD_NEXT, "free");
	n.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	n.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	n.memalign = dlsym(RTLD_NEXT, "memalign");
	n.valloc = dlsym(RTLD_NEXT, "valloc");
	n.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	if (!n.malloc || !n.free || !n.calloc || !n.realloc) { /* no next: glibc's */
		n.malloc = __libc_malloc;
		n.calloc = __libc_calloc;
		n.realloc = __libc_realloc;
		n.free = __libc_free;
	}
	next.realloc = n.realloc;
	next.reallocarray = n.reallocarray;
	next.posix_memalign = n.posix_memalign;
	next.aligned_alloc = n.aligned_alloc;
	next.memalign = n.memalign;
	next.valloc = n.valloc;
	next.pvalloc = n.pvalloc;
	/* one pointer store each: a thread that reads the old one calls
	 * first_* and looks them up again */
	__atomic_store_n(&next.calloc, n.calloc, __ATOMIC_RELEASE);
	__atomic_store_n(&next.free, n.free, __ATOMIC_RELEASE);
	__atomic_store_n(&next.malloc, n.malloc, __ATOMIC_RELEASE);
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
	resolving = 0;
}

#define READY() ss_likely(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
#endif /* SS_ALLOC_STATIC */

/* no frame of their own on the common path: a test and a tail call */
#define SS_WRAP SS_EXPORT __attribute__((optimize("omit-frame-pointer")))

#define RECORDING() ss_unlikely(ss_hot.gate & ss_alloc_hot.mask)
#define LOOKING() ss_unlikely((ss_hot.gate & ss_alloc_hot.mask) | (ss_alloc_hot.live != 0))

/* errno is kept by alloc.c: its slow paths save and restore it.  CSP: the
 * caller's stack pointer at its call of the wrapper (alloc.c closes the
 * recorded frames below it: a longjmp went past them) */
#define CSP ((uintptr_t)__builtin_dwarf_cfa())
#define note(p, n) note_at((p), (n), CSP)
#define note_free(p) ss_alloc_record_free_at((uintptr_t)(p), SS_SPACE_HEAP, NULL, CSP)
static inline void note_at(void *p, size_t n, uintptr_t csp)
{
	if (p)
		ss_alloc_record_at((uintptr_t)p, n, SS_SPACE_HEAP, csp);
}

/* The recording halves, reached by tail calls (their CSP is the caller's
 * stack pointer at its call of the wrapper), so that the common path of
 * malloc, calloc and free saves no register: a test and a jump. */
__attribute__((noinline)) static void *malloc_rec(size_t n)
{
	void *p = next.malloc(n);
	note(p, n);
	return p;
}

__attribute__((noinline)) static void *calloc_rec(size_t k, size_t n)
{
	void *p = next.calloc(k, n);
	note(p, k * n);
	return p;
}

__attribute__((noinline)) static void free_rec(void *p)
{
	note_free(p);
	next.free(p);
}

SS_WRAP void *W(malloc)(size_t n)
{
	if (RECORDING())
		return malloc_rec(n);
	return next.malloc(n); /* a tail call */
}

SS_WRAP void W(free)(void *p)
{
	if (ss_unlikely(in_boot(p)))
		return;
	if (RECORDING() && p) {
		free_rec(p);
		return;
	}
	if (ss_unlikely(ss_alloc_hot.live) && p)
		ss_alloc_forget((uintptr_t)p); /* outside a window: the table */
	next.free(p);
}

SS_WRAP void *W(calloc)(size_t k, size_t n)
{
	if (RECORDING())
		return calloc_rec(k, n);
	return next.calloc(k, n);
}

#ifndef SS_ALLOC_STATIC
static void *first_malloc(size_t n)
{
	if (resolving)
		return boot_alloc(n, 16);
	resolve();
	return next.malloc(n); /* the wrapper's caller records, if it does */
}

static void *first_calloc(size_t k, size_t n)
{
	if (resolving) {
		size_t b;
		if (__builtin_mul_overflow(k, n, &b))
			return NULL;
		return boot_alloc(b, 16); /* static: zero */
	}
	resolve();
	return next.calloc(k, n);
}

static void first_free(void *p)
{
	if (resolving) { /* dlsym's own, from before us: glibc's */
		__libc_free(p);
		return;
	}
	resolve();
	next.free(p); /* the wrapper noted it, if it does */
}
#endif

/* The FREE of p, then the allocator, then the ALLOC of what it gave; a
 * failure (NULL with n > 0) leaves p the program's: allocated again. */
SS_EXPORT void *W(realloc)(void *p, size_t n)
{
	if (!READY()) {
		if (resolving) {
			void *q = boot_alloc(n, 16);
			if (q && p) {
				size_t old;
				memcpy(&old, (char *)p - 16, sizeof(old));
				memcpy(q, p, old < n ? old : n);
			}
			return q;
		}
		resolve();
	}
	if (ss_unlikely(in_boot(p))) { /* out of the arena, copied */
		size_t old;
		memcpy(&old, (char *)p - 16, sizeof(old));
		void *q = malloc(n);
		if (q)
			memcpy(q, p, old < n ? old : n);
		return q;
	}
	if (!LOOKING() || !p) {
		void *q = next.realloc(p, n);
		if (RECORDING())
			note(q, n);
		return q;
	}
	int saved = errno;
	uint64_t old = 0;
	int known = ss_alloc_record_free_at((uintptr_t)p, SS_SPACE_HEAP, &old, CSP);
	errno = saved;
	void *q = next.realloc(p, n);
	if (!q && n) {
		saved = errno;
		ss_alloc_record_undo((uintptr_t)p, old, known);
		errno = saved;
	} else if (RECORDING()) {
		note(q, n);
	}
	return q;
}

SS_EXPORT void *W(reallocarray)(void *p, size_t k, size_t n)
{
	size_t b;
	if (__builtin_mul_overflow(k, n, &b)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, b);
}

SS_EXPORT int W(posix_memalign)(void **out, size_t align, size_t n)
{
	if (!READY()) {
		if (resolving) {
			void *p = boot_alloc(n, align);
			if (!p)
				return ENOMEM;
			*out = p;
			return 0;
		}
		resolve();
	}
	int r = next.posix_memalign ? next.posix_memalign(out, align, n) : ENOMEM;
	if (RECORDING() && !r)
		note(*out, n);
	return r;
}

SS_EXPORT void *W(aligned_alloc)(size_t align, size_t n)
{
	if (!READY()) {
		if (resolving)
			return boot_alloc(n, align);
		resolve();
	}
	void *p = next.aligned_alloc ? next.aligned_alloc(align, n)
				     : next.memalign ? next.memalign(align, n) : NULL;
	if (RECORDING())
		note(p, n);
	return p;
}

SS_EXPORT void *W(memalign)(size_t align, size_t n)
{
	if (!READY()) {
		if (resolving)
			return boot_alloc(n, align);
		resolve();
	}
	void *p = next.memalign ? next.memalign(align, n) : NULL;
	if (RECORDING())
		note(p, n);
	return p;
}

SS_EXPORT void *W(valloc)(size_t n)
{
	if (!READY())
		resolve();
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = next.valloc ? next.valloc(n) : next.memalign ? next.memalign(page, n) : NULL;
	if (RECORDING())
		note(p, n);
	return p;
}

SS_EXPORT void *W(pvalloc)(size_t n)
{
	if (!READY())
		resolve();
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t r = n ? (n + page - 1) & ~(page - 1) : page;
	void *p = next.pvalloc ? next.pvalloc(n) : next.memalign ? next.memalign(page, r) : NULL;
	if (RECORDING())
		note(p, n);
	return p;
}

/* Start-up: whether these wrappers are the ones the program calls. */
const char *ss_alloc_wrap_check(void)
{
#ifdef SS_ALLOC_STATIC
	return NULL; /* --wrap: every reference comes here */
#else
	/* the module that defines the malloc everyone binds to */
	Dl_info first, self;
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	if (m && dladdr(m, &first) && dladdr((void *)ss_alloc_wrap_check, &self) &&
	    first.dli_fbase != self.dli_fbase)
		return "the program defines malloc itself, ahead of libstepscope in the "
		       "lookup order (its executable, or a library loaded before it)";
	return NULL;
#endif
}
