/*
 * gpu.h - the GPU activity of one trace (SS_META_GPU_* records, written by
 * runtime/gpu.c from CUPTI), on the host timeline.
 */
#ifndef SS_GPU_H
#define SS_GPU_H
#include <stddef.h>
#include <stdint.h>
#include "reader.h"

enum ss_gpu_op_type { SS_GPU_KERNEL, SS_GPU_COPY, SS_GPU_API };

struct ss_gpu_op {
	enum ss_gpu_op_type type;
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC, like the reader's */
	uint64_t bytes;              /* COPY */
	uint32_t correlation, device, stream;
	uint32_t kind;               /* COPY: enum ss_gpu_copy_kind; API: 1 driver */
	uint32_t cbid, tid;          /* API */
	int32_t grid[3], block[3];   /* KERNEL */
	const char *name;            /* KERNEL, API: into the reader's map */
};

struct ss_gpu_data {
	struct ss_gpu_op *ops;       /* file order */
	size_t n;
	size_t *apis;                /* API ops' indexes, by correlation */
	size_t napis;
};

/* Read the GPU records of `r`.  0 (g->n may be 0), -1 out of memory.  The
 * names stay valid while `r` is open. */
int ss_gpu_read(const struct ss_reader *r, struct ss_gpu_data *g);
void ss_gpu_release(struct ss_gpu_data *g);
/* The API op whose correlation id is `c` (the launch of a kernel or
 * copy), or NULL. */
const struct ss_gpu_op *ss_gpu_launch(const struct ss_gpu_data *g, uint32_t c);
/* "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memset", "Memcpy" */
const char *ss_gpu_copy_name(uint32_t kind);
#endif /* SS_GPU_H */
