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
/* --steps: per step, on and off the CPU (preempted, blocked). */
void ss_offcpu_report_steps(FILE *f, const struct ss_agg *a);
/* JSON: ,"off_cpu":{"lost":N,"calls_off_longer":N} at the top level. */
void ss_offcpu_report_json(FILE *f, const struct ss_agg *a,
			   const struct ss_agg_row *rows, size_t n);
/* JSON: ,"on_cpu_ns":N,"off_cpu_ns":N,"preempted_ns":N in a step. */
void ss_offcpu_report_json_step(FILE *f, const struct ss_agg_step *s);
#endif /* SS_OFFCPU_REPORT_H */
