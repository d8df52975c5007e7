/*
 * memory-parse.h - the pure pieces of the memory poller (memory-parse.c):
 * the sample structs, and parsing and formatting that touch no state, so
 * tests/unit/test-memory.c can call them on fixed text.
 */
#ifndef SS_MEMORY_PARSE_H
#define SS_MEMORY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "nvml.h"

#define SS_MEM_MAX_DEV 16        /* GPUs reported per process */
#define SS_MEM_MAX_PROCS 512     /* NVML process list entries read */
#define SS_MEM_ID_MAX 96         /* a CUDA_VISIBLE_DEVICES entry */
#define SS_MEM_STOP_WAIT_S 2     /* bounded wait for the poller at exit */
#define SS_MEM_IDLE_MS 50        /* poll period until the process records */
#define SS_MEM_NVML_LIB "libnvidia-ml.so.1"

_Static_assert(offsetof(struct ss_nvml_proc_v1, pid) ==
		       offsetof(struct ss_nvml_proc_v2, pid) &&
	       offsetof(struct ss_nvml_proc_v1, used_gpu_memory) ==
		       offsetof(struct ss_nvml_proc_v2, used_gpu_memory),
	       "pid and used memory sit at the same offsets in v1 and v2");

struct ss_mem_host {
	uint64_t rss;       /* VmRSS, bytes */
	uint64_t hwm;       /* VmHWM: peak RSS, bytes */
};

/* One visible GPU in one sample. */
struct ss_mem_dev {
	int index;          /* CUDA's index: reported as "cuda:<index>" */
	int ok;             /* memory info read in this sample */
	int matched;        /* this pid found in NVML's process list */
	uint64_t used;      /* device-wide used bytes */
	uint64_t total;     /* device memory, bytes ("bytes_limit") */
	uint64_t proc;      /* this process's bytes, when matched */
	uint64_t in_use;    /* what memory_profile.json reports */
	uint64_t peak;      /* max in_use seen by the poller */
};

struct ss_mem_sample {
	uint64_t ts_ns;     /* CLOCK_REALTIME, for memory_profile.json */
	uint64_t ticks;     /* file clock, for the counter records */
	int host_ok;
	struct ss_mem_host host;
	int ndev;
	struct ss_mem_dev dev[SS_MEM_MAX_DEV];
};

int ss_memory_parse_status(const char *text, struct ss_mem_host *out);
int ss_memory_parse_visible(const char *env, char out[][SS_MEM_ID_MAX],
			    int max);
unsigned ss_memory_proc_pid(const void *infos, size_t stride, unsigned i);
int ss_memory_proc_used(const void *infos, size_t stride, unsigned n,
			unsigned pid, uint64_t *used);
size_t ss_memory_json_entry(char *buf, size_t len, int64_t step,
			    int pid, const struct ss_mem_sample *s);

#endif /* SS_MEMORY_PARSE_H */
