/*
 * peak-measure.h - the machine's measured peak (peak-measure.c): GFLOP/s
 * of one core in a loop of independent fused multiply-adds, and GB/s of
 * a streaming loop over arrays larger than the caches.  Measured once
 * per machine and kept under ${XDG_CACHE_HOME:-~/.cache}/stepscope/,
 * keyed by the CPU model and count.
 */
#ifndef SS_PEAK_MEASURE_H
#define SS_PEAK_MEASURE_H

#include <stddef.h>

struct ss_peak {
	double gflops;        /* one core, single precision, best of 5 */
	double gbs;           /* bytes read + written a second, best of 5 */
	double took_s;        /* how long the measurement took */
	char isa[16];         /* "avx2+fma", "sse2", "generic" */
	char path[4096];      /* the cache file ("" when none could be made) */
	int cached;           /* read from path, not measured now */
};

/* The peak of this machine: from the cache, or measured now (and kept,
 * when the cache dir can be written).  STEPSCOPE_PEAK_REMEASURE=1 in the
 * environment measures again.  0; -1 when the measurement failed (out of
 * memory), message in err. */
int ss_peak_get(struct ss_peak *p, char *err, size_t errlen);

#endif /* SS_PEAK_MEASURE_H */
