/*
 * alloc-own.h - an allocator of a program's or library's own, as
 * jemalloc, tcmalloc, arena allocators and leak checkers have: malloc,
 * calloc, realloc and free that count their calls in n_malloc, n_calloc,
 * n_realloc and n_free (a free of NULL not counted) and forward to glibc's
 * __libc_* functions.  Used by s-rt-alloc.c (in the program) and
 * lib-alloc-own.c (in a shared library).
 *
 * It defines them: include it in one file only, after <stdlib.h>, so that
 * their first declaration stays in a system header.
 */
#ifndef SS_ALLOC_OWN_H
#define SS_ALLOC_OWN_H

#include <stdatomic.h>
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

#endif /* SS_ALLOC_OWN_H */
