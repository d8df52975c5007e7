/*
 * util.h - the small helpers every part of symbolize/ shares: growing an
 * array and hashing a name.
 *
 * Design: an array is a pointer, a count and a capacity kept by its owner;
 * before storing element n the owner asks for room, and the capacity
 * doubles (from `first`) when n has reached it.  Header-only, so the files
 * the fuzzer builds on their own (reader, slicer, symbolizer) need nothing
 * more.
 *
 * Must never: lose an array when realloc fails (it stays as it was and the
 * caller reports out of memory).
 */
#ifndef SS_UTIL_H
#define SS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Room for element n of *p (elements of elem bytes, *cap of them now).
 * 0, or -1 when out of memory. */
static inline int ss_grow(void **p, size_t *cap, size_t n, size_t elem,
			  size_t first)
{
	void *np;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : first;
	while (nc <= n)
		nc *= 2;
	np = realloc(*p, nc * elem);
	if (!np)
		return -1;
	*p = np;
	*cap = nc;
	return 0;
}

/* FNV-1a of a string: the hash of every name table here. */
static inline uint64_t ss_hash_str(const char *s)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

#endif /* SS_UTIL_H */
