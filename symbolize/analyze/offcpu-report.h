/*
 * offcpu-report.h - `stepscope report`'s off-CPU parts (record.sched):
 * the footer under the table, the per-step on/off-CPU split of --steps,
 * and their JSON; printed only when the run recorded context switches
 * (ss_agg_have_offcpu).  The Off-CPU columns themselves are report.c's.
 */
#ifndef SS_OFFCPU_REPORT_H
#define SS_OFFCPU_REPORT_H
#include <stdio.h>
#include "agg.h"

/* What the columns mean, the calls switched out longer than they ran (of
 * the n rows, before --limit) and lost switch records. */
void ss_offcpu_report_footer(FILE *f, const struct ss_agg *a,
			     const struct ss_agg_row *rows, size_t n);
/* The table's Min and Max cells of r (already written, len bytes each):
 * a '*' after the one whose call was switched out for part of its time,
 * so a preempted call is never read as a slow one. */
void ss_offcpu_report_minmax(const struct ss_agg_row *r, char *min, char *max, size_t len);
/* --steps: per step, on and off the CPU (preempted, blocked). */
void ss_offcpu_report_steps(FILE *f, const struct ss_agg *a);
/* CSV and JSON of a row: ,MIN_OFF,MAX_OFF (csv) or ,"min_off_cpu_ns":N,
 * "max_off_cpu_ns":N (json): the off-CPU time in the Min and Max calls. */
void ss_offcpu_report_minmax_csv(FILE *f, const struct ss_agg_row *r, int json);
/* JSON: ,"off_cpu":{"lost":N,"calls_off_longer":N} at the top level. */
void ss_offcpu_report_json(FILE *f, const struct ss_agg *a,
			   const struct ss_agg_row *rows, size_t n);
/* JSON: ,"on_cpu_ns":N,"off_cpu_ns":N,"preempted_ns":N in a step. */
void ss_offcpu_report_json_step(FILE *f, const struct ss_agg_step *s);
#endif /* SS_OFFCPU_REPORT_H */
