/*
 * alloc-report.h - report's memory columns from recorded allocations
 * (memory.allocations; read/alloc-read.h): per function Self CPU Mem, CPU
 * Mem and Allocs (and the CUDA pair when CUDA allocations were recorded),
 * the peak live bytes of each step, the footer.  An exporter (export.h)
 * that only takes the `alloc` callback: fed by ss_agg_walk beside the
 * aggregate, asked per report row afterwards.
 *
 * Meaning (torch.profiler's key_averages): Self Mem = bytes allocated
 * minus bytes freed directly in the function's calls; Mem = the same
 * with its callees, a recursive function counted once; Allocs = blocks
 * allocated directly in it.  A free of unknown size counts 0 bytes.
 */
#ifndef SS_ALLOC_REPORT_H
#define SS_ALLOC_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "agg.h"
#include "export.h"

struct ss_alloc_report;

/* Totals of one function (merged over threads, or on one thread). */
struct ss_alloc_fstat {
	int64_t self[2], total[2];  /* [0] CPU (heap, pinned), [1] CUDA */
	uint64_t allocs[2];
	uint64_t alloc_bytes[2];    /* bytes of those blocks */
};

struct ss_exporter *ss_alloc_report_new(void); /* NULL: out of memory */
/* The report behind the exporter (NULL-safe: NULL in, NULL out). */
const struct ss_alloc_report *ss_alloc_report_of(const struct ss_exporter *e);
/* Something was recorded (cuda: CUDA memory was) */
int ss_alloc_report_have(const struct ss_alloc_report *m, int cuda);
/* The stats of a report row (pid, tid 0: merged), or NULL */
const struct ss_alloc_fstat *ss_alloc_report_row(const struct ss_alloc_report *m,
						 const struct ss_agg_row *r);

/* The table's columns: Self CPU Mem, CPU Mem, Allocs, Self CUDA Mem,
 * CUDA Mem, CUDA Allocs; shown when their kind was recorded. */
#define SS_ALLOC_NCOL 6
extern const char *const ss_alloc_report_heads[SS_ALLOC_NCOL];
int ss_alloc_report_shown(const struct ss_alloc_report *m, int col);
/* cells[i] (128 bytes each) of row r, human units ("1.50 MiB", "-512 B") */
void ss_alloc_report_cells(const struct ss_alloc_report *m, const struct ss_agg_row *r,
			   char (*cells)[128]);
/* "1.50 MiB": bytes in buf */
char *ss_alloc_fmt_bytes(int64_t b, char *buf, size_t len);
/* The footer lines under the table (nothing when nothing was recorded). */
void ss_alloc_report_footer(FILE *f, const struct ss_alloc_report *m);
/* report's exporters: agg, gpu (NULL: none), mem (NULL: none) into walk
 * (room for 3), *m the memory report; how many */
size_t ss_alloc_report_list(struct ss_exporter **walk, struct ss_exporter *agg,
			    struct ss_exporter *gpu, struct ss_exporter *mem,
			    const struct ss_alloc_report **m);
/* csv: ",self_cpu_mem,cpu_mem,allocs[,...]" header part (the caller
 * ends the line: alloc-device.h's per-device columns follow) and row part */
void ss_alloc_report_csv_header(FILE *f, const struct ss_alloc_report *m);
void ss_alloc_report_csv_row(FILE *f, const struct ss_alloc_report *m,
			     const struct ss_agg_row *r);
/* json: ,"self_cpu_mem":B,... in a row; ,"memory":{...} at the top level;
 * ,"peak_bytes":{...} in a step */
void ss_alloc_report_json_row(FILE *f, const struct ss_alloc_report *m,
			      const struct ss_agg_row *r);
void ss_alloc_report_json(FILE *f, const struct ss_alloc_report *m);
void ss_alloc_report_json_step(FILE *f, const struct ss_alloc_report *m,
			       const struct ss_agg_step *s);
/* report --steps: the peak live bytes of each recorded step */
void ss_alloc_report_steps(FILE *f, const struct ss_alloc_report *m);

/* The merged rows (over processes and threads) of the functions that
 * allocated, most bytes allocated first (CPU and CUDA together): up to max
 * names and stats; how many */
size_t ss_alloc_report_top(const struct ss_alloc_report *m, const char **names,
			   const struct ss_alloc_fstat **st, size_t max);

/* The peak live bytes of step `step` of process pid in space (-1: 0) */
uint64_t ss_alloc_report_step_peak(const struct ss_alloc_report *m, uint64_t pid,
				   uint64_t step, uint64_t space, int *found);

#endif /* SS_ALLOC_REPORT_H */
