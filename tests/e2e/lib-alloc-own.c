/*
 * lib-alloc-own.c - test-alloc's allocator of its own in a shared library
 * (as jemalloc or tcmalloc are linked): malloc, calloc, realloc and free
 * that count their calls and forward to glibc's __libc_* functions
 * (alloc-own.h, as s-rt-alloc.c has them in the program).  At
 * exit it prints "lib-alloc-own: malloc M calloc C realloc R free F" on
 * stderr.  Built with plain gcc -shared: no instrumentation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alloc-own.h"

__attribute__((destructor)) static void say(void)
{
	fprintf(stderr, "lib-alloc-own: malloc %ld calloc %ld realloc %ld free %ld\n",
		(long)n_malloc, (long)n_calloc, (long)n_realloc, (long)n_free);
}
