/*
 * lib-alloc-own.c - test-alloc's allocator of its own in a shared library
 * (as jemalloc or tcmalloc are linked): malloc, calloc, realloc and free
 * that count their calls and forward to glibc's __libc_* functions.  At
 * exit it prints "lib-alloc-own: malloc M calloc C realloc R free F" on
 * stderr.  Built with plain gcc -shared: no instrumentation.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static atomic_long n_malloc, n_calloc, n_realloc, n_free;

void *malloc(size_t n)
{
	atomic_fetch_add(&n_malloc, 1);
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	atomic_fetch_add(&n_calloc, 1);
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	atomic_fetch_add(&n_realloc, 1);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		atomic_fetch_add(&n_free, 1);
	__libc_free(p);
}

__attribute__((destructor)) static void say(void)
{
	fprintf(stderr, "lib-alloc-own: malloc %ld calloc %ld realloc %ld free %ld\n",
		(long)n_malloc, (long)n_calloc, (long)n_realloc, (long)n_free);
}
