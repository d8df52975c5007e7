/*
 * nvml.h - the few NVML types and functions the memory poller calls,
 * declared here so that building stepscope needs no NVIDIA header and
 * libstepscope has no link-time dependency on the driver: memory.c finds
 * every function with dlsym() in libnvidia-ml.so.1 at run time.
 *
 * Layouts follow NVML's C ABI (a function's _vN suffix fixes the layout
 * of its arguments).  Only add what memory.c calls; never the CUDA runtime
 * or driver API - the poller must not create a CUDA context.
 */
#ifndef SS_NVML_H
#define SS_NVML_H

typedef int ss_nvml_return;          /* nvmlReturn_t */
typedef struct ss_nvml_device *ss_nvml_device;  /* nvmlDevice_t */

#define SS_NVML_SUCCESS 0
#define SS_NVML_ERROR_INSUFFICIENT_SIZE 7
/* usedGpuMemory when the driver cannot tell (e.g. WDDM, some vGPUs) */
#define SS_NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* nvmlMemory_t, filled by nvmlDeviceGetMemoryInfo */
struct ss_nvml_memory {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/* nvmlProcessInfo_v1_t: nvmlDeviceGetComputeRunningProcesses */
struct ss_nvml_proc_v1 {
	unsigned int pid;
	unsigned long long used_gpu_memory;
};

/* nvmlProcessInfo_v2_t, also what the _v3 function fills:
 * nvmlDeviceGetComputeRunningProcesses_v2 / _v3 */
struct ss_nvml_proc_v2 {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};

/* The functions, as memory.c holds them after dlsym(). */
typedef ss_nvml_return (*ss_nvml_init_fn)(void);          /* nvmlInit_v2 */
typedef ss_nvml_return (*ss_nvml_count_fn)(unsigned int *);
							   /* nvmlDeviceGetCount_v2 */
typedef ss_nvml_return (*ss_nvml_by_index_fn)(unsigned int, ss_nvml_device *);
						 /* nvmlDeviceGetHandleByIndex_v2 */
typedef ss_nvml_return (*ss_nvml_by_uuid_fn)(const char *, ss_nvml_device *);
						     /* nvmlDeviceGetHandleByUUID */
typedef ss_nvml_return (*ss_nvml_meminfo_fn)(ss_nvml_device,
					     struct ss_nvml_memory *);
						       /* nvmlDeviceGetMemoryInfo */
/* nvmlDeviceGetComputeRunningProcesses{,_v2,_v3}: `infos` is an array of
 * ss_nvml_proc_v1 (plain) or ss_nvml_proc_v2 (_v2, _v3) */
typedef ss_nvml_return (*ss_nvml_procs_fn)(ss_nvml_device, unsigned int *count,
					   void *infos);

#endif /* SS_NVML_H */
