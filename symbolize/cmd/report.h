/*
 * report.h - what report.c shares with the files of its other views
 * (report-whole.c: --whole-run): the options, and the table, CSV and JSON
 * pieces every view prints alike.  Not used outside symbolize/cmd/.
 */
#ifndef SS_REPORT_H
#define SS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "agg.h"
#include "outfile.h"
#include "overhead.h"

struct ss_alloc_report;
struct ss_alloc_device;

struct ss_report_opts {
	const char *dir, *backend, *format, *out;
	int sort, limit, threads, steps, quiet, whole_run, ranks;
	int compensate;              /* --compensate */
	int group_args;              /* --group-by args (report-args.c) */
	struct ss_overhead over;     /* the run's calibrated hook cost */
	uint64_t calls, sum;         /* recorded calls; the 100% (compensated) */
	size_t nall;                 /* rows before --limit cut them */
	const struct ss_alloc_report *mem; /* memory.allocations, or NULL */
	const struct ss_alloc_device *memdev; /* its CUDA memory per device */
	struct ss_args_report *args;  /* record.args' FLOPs (args-report.c) */
};

/* text tables: "N more rows" under a cut table, a percentage (0 of 0),
 * the dashes line, one cell, a name cut like torch's, a row's thread */
void ss_report_more(FILE *f, size_t shown, size_t all);
double ss_report_pct(uint64_t v, uint64_t total);
void ss_report_dashes(FILE *f, const int *w, int ncol);
void ss_report_cell(FILE *f, const char *s, int w, int left, int last);
void ss_report_name(const char *name, char *buf, size_t len);
void ss_report_thread(const struct ss_agg_row *r, char *buf, size_t len);
/* CSV: the header line; a row's columns before the times */
void ss_report_csv_header(FILE *f, const struct ss_report_opts *o, int off);
void ss_report_csv_head(FILE *f, const struct ss_agg_row *r, const struct ss_report_opts *o);
/* JSON: row k up to the times */
void ss_report_json_head(FILE *f, const struct ss_agg_row *r, size_t k,
			 const struct ss_report_opts *o);
/* the output (stdout unless -o), opened once the run is read; closed:
 * 0, or 1 when it could not be written */
FILE *ss_report_open(struct ss_out *out, const char *path);
int ss_report_close(struct ss_out *out);

/* report-whole.c: --whole-run, the table from the runtime's whole-run
 * counts (stats: whole_run) */
int ss_report_whole_run(struct ss_report_opts *o, const char *sortname);

#endif /* SS_REPORT_H */
