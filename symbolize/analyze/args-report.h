/*
 * args-report.h - `report --group-by args` (args-report.c): rows per
 * function and distinct argument values, with FLOPs and GFLOP/s.
 */
#ifndef SS_ARGS_REPORT_H
#define SS_ARGS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "slices.h"

struct ss_args_report;
struct ss_exporter;

/* An exporter that groups the slices carrying arguments; *out is the
 * report it fills (free it with ss_args_report_free, not the exporter). */
struct ss_exporter *ss_args_report_new(struct ss_args_report **out);
void ss_args_report_free(struct ss_args_report *r);
/* format: "table", "csv" or "json"; limit: groups shown, 0 = all. */
void ss_args_report_print(FILE *f, struct ss_args_report *r, const char *format,
			  size_t limit);
/* The Args text of a slice: its non-pointer values, "B=4 T=64 ...". */
void ss_args_key(const struct ss_slice *s, char *buf, size_t len);

/* report's FLOPs and GFLOP/s columns: shown when the run has flops:;
 * function fn's figures over all its calls ("-" when it has none). */
int ss_args_report_flops_shown(const struct ss_args_report *r);
void ss_args_report_cells(const struct ss_args_report *r, const char *fn, char *flops,
			  char *gflops, size_t len);

/* One group (function and distinct argument values) as `advise` reads
 * it: i from 0 while 0 comes back (per-function rows are not groups). */
struct ss_args_shape {
	const char *fn, *key;      /* owned by the report */
	uint64_t calls, total_ns;  /* all its calls, wall time */
	double flops;              /* of the calls that had them */
	uint64_t flops_calls;      /* 0: no FLOPs (gflops < 0) */
	double gflops;             /* as the table shows it, or < 0 */
};
int ss_args_report_shape(const struct ss_args_report *r, size_t i, struct ss_args_shape *out);

/* The line under a table with FLOPs: where they come from and what
 * GFLOP/s is over (wall time less the time preempted with record.sched,
 * else wall time). */
void ss_args_report_footer(FILE *f, const struct ss_args_report *r);

/* ... and in report's csv (after the other columns, when shown) and json */
void ss_args_report_csv_header(FILE *f, const struct ss_args_report *r);
void ss_args_report_csv_row(FILE *f, const struct ss_args_report *r, const char *fn);
void ss_args_report_json_row(FILE *f, const struct ss_args_report *r, const char *fn);

/* html: a "Calls by arguments" section when the run recorded arguments
 * (a second walk of the run), else nothing. */
void ss_args_html(FILE *f, const char *dir, const char *backend);

/* cmd/report-args.c: the whole command; exit status. */
int ss_report_args(const char *dir, const char *backend, int quiet, const char *out,
		   const char *format, size_t limit);

#endif /* SS_ARGS_REPORT_H */
