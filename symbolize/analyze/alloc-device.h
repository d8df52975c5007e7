/*
 * alloc-device.h - recorded CUDA memory per device (memory.allocations
 * with gpu.enabled; read/alloc-read.h): Self CUDA Mem and CUDA Mem of
 * each function on each device, for report's per-device section and its
 * csv/json keys.  alloc-report.c sums all devices into one CUDA pair;
 * this keeps them apart.  An exporter (export.h) that takes only the
 * `alloc` callback, fed by ss_agg_walk beside the aggregate.
 *
 * Meaning: as alloc-report.h's CUDA Mem / Self CUDA Mem (device and
 * managed memory, a free of unknown size 0 bytes, a recursive function
 * counted once), restricted to the blocks of one device.
 */
#ifndef SS_ALLOC_DEVICE_H
#define SS_ALLOC_DEVICE_H

#include <stdint.h>
#include <stdio.h>

#include "agg.h"
#include "export.h"

#define SS_ALLOC_DEVICES 32 /* devices kept apart; higher ordinals share the last */

struct ss_alloc_device;

struct ss_exporter *ss_alloc_device_new(void); /* NULL: out of memory */
const struct ss_alloc_device *ss_alloc_device_of(const struct ss_exporter *e);
/* Devices with recorded CUDA memory, ascending ordinals in devs (may be
 * NULL); 0 when none (or m NULL). */
size_t ss_alloc_device_list(const struct ss_alloc_device *m, const uint32_t **devs);
/* Self and total CUDA bytes of report row r on the i-th listed device;
 * 0 when the row has none. */
void ss_alloc_device_row(const struct ss_alloc_device *m, const struct ss_agg_row *r,
			 size_t i, int64_t *self, int64_t *total);
/* report's text: with two devices or more, a table of the rows (as the
 * main table shows them, first max) with CUDA memory, Self and Mem per
 * device; nothing with one device or none. */
void ss_alloc_device_section(FILE *f, const struct ss_alloc_device *m,
			     const struct ss_agg_row *rows, size_t n);
/* csv, with two devices or more: ",self_cuda_mem_dev0,cuda_mem_dev0,..." */
void ss_alloc_device_csv_header(FILE *f, const struct ss_alloc_device *m);
void ss_alloc_device_csv_row(FILE *f, const struct ss_alloc_device *m,
			     const struct ss_agg_row *r);
/* json, whenever CUDA memory was recorded:
 * ,"cuda_mem_by_device":{"0":B,...},"self_cuda_mem_by_device":{"0":B,...} */
void ss_alloc_device_json_row(FILE *f, const struct ss_alloc_device *m,
			      const struct ss_agg_row *r);

#endif /* SS_ALLOC_DEVICE_H */
