/*
 * gpu-report.h - `stepscope report`'s GPU sections: device time per
 * launching host function (CUDA self, CUDA total) and per step the
 * host/GPU/idle split; printed only when the run has GPU activity.
 */
#ifndef SS_GPU_REPORT_H
#define SS_GPU_REPORT_H
#include <stdio.h>
#include "export.h"

struct ss_gpu_report;
/* An exporter to walk the run with (beside the aggregator). */
struct ss_exporter *ss_gpu_report_new(void);
/* Print both sections (nothing without GPU activity). */
void ss_gpu_report_print(FILE *f, struct ss_exporter *e);
#endif /* SS_GPU_REPORT_H */
