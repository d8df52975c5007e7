/*
 * stats-read.h - the whole-run statistics of a run (SS_META_STATS records,
 * written with `stats: whole_run`), as rows of the report's table.
 *
 * For every raw trace of a run directory the last record of each thread
 * (by serial) counts; function addresses are resolved with the process's
 * maps like every other command does.  Rows reuse struct ss_agg_row so the
 * report sorts and prints them the same way; min_ns and max_ns are 0 (not
 * kept by the runtime).
 */
#ifndef SS_STATS_READ_H
#define SS_STATS_READ_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"

struct ss_stats_result {
	struct ss_agg_row *rows;  /* malloc'ed; names owned by the result */
	size_t nrows;
	uint64_t self_sum;        /* ns, every row */
	uint64_t steps;           /* steps begun (largest over processes) */
	uint64_t dropped;         /* hook calls the runtime could not count */
	uint64_t sample_ns;       /* times sampled every sample_ns (largest
	                           * over the records); 0: every call timed */
	size_t nprocesses, nthreads;
};

/* Read the stats of run directory `dir`; per_thread: one row per
 * (function, thread), else one per function name.  0; 2 (bad input, or no
 * SS_META_STATS record: message in err) or 1 (internal failure). */
int ss_stats_read(const char *dir, const char *backend, int quiet, int per_thread,
		  struct ss_stats_result *out, char *err, size_t errlen);
void ss_stats_result_release(struct ss_stats_result *res);

#endif /* SS_STATS_READ_H */
