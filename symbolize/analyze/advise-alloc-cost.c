/*
 * advise-alloc-cost.c - what one malloc or free costs on this machine,
 * for `stepscope advise`'s allocation category (advise-split.c) and
 * checks: an allocation record has a time, not a duration, so each is
 * charged half of a malloc/free pair of its size, timed here.
 *
 * Design: measured once per size bucket (four per power of two) in this
 * process, the least of 5 rounds of 64 pairs after a warm-up round, and
 * cached.  A pair writes its block's first byte so the compiler keeps it.
 * It is the allocator's cost, not the first touch of fresh pages that
 * follows in the program (docs/advise.md).  Must never: fail (a size that
 * cannot be allocated costs 0).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "advise.h"

#define AC_SIZES 128

static double ac_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* the least time of a malloc + free pair of size bytes, over 5 rounds
 * of 64, halved */
static double ac_measure(uint64_t size)
{
	double best = INFINITY;

	for (int r = 0; r < 6; r++) {
		double t0 = ac_now();
		int i;
		for (i = 0; i < 64; i++) {
			volatile char *p = malloc(size);
			if (!p)
				return 0;
			p[0] = 1; /* a pair the compiler cannot drop */
			free((void *)p);
		}
		double t = (ac_now() - t0) / 64;
		if (r && t < best) /* round 0 warms up */
			best = t;
	}
	return best / 2;
}

double ss_adv_alloc_call_ns(uint64_t size)
{
	static struct {
		unsigned key;
		double ns;
	} cache[AC_SIZES];
	static size_t n;
	unsigned key, lg;

	if (size < 16)
		size = 16; /* a free of unknown size: the smallest block */
	if (size > (UINT64_C(1) << 34))
		size = UINT64_C(1) << 34;
	/* four buckets per power of two */
	lg = 63 - (unsigned)__builtin_clzll(size);
	key = lg * 4 + (unsigned)((size >> (lg - 2)) & 3); /* size >= 16: lg >= 4 */
	for (size_t i = 0; i < n; i++)
		if (cache[i].key == key)
			return cache[i].ns;
	double ns = ac_measure(size);
	if (n < AC_SIZES) {
		cache[n].key = key;
		cache[n].ns = ns;
		n++;
	}
	return ns;
}
