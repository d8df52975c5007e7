/*
 * cupti.h - the few CUPTI types and calls gpu.c and gpu-alloc.c use,
 * declared here so the runtime builds without the CUDA toolkit (CUPTI is
 * dlopen'd at run time).
 *
 * Layouts match CUPTI's ABI (cupti_activity.h of CUDA 12/13, 64-bit):
 * only the leading fields gpu.c reads are declared; records are walked
 * with cuptiActivityGetNextRecord, so the full record sizes never matter.
 * tests/unit/test-cupti-abi.c checks every offset against the installed
 * headers when they are present.  Versions: CUpti_ActivityKernel9 (CUDA
 * 13.0's current CUpti_ActivityKernel10 has the same offsets up to name:
 * start 16, deviceId 40, gridX 52, correlationId 92, name 104),
 * CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityAPI.
 */
#ifndef SS_CUPTI_H
#define SS_CUPTI_H
#include <stddef.h>
#include <stdint.h>

enum ss_cupti_kind {
	SS_CUPTI_KIND_MEMCPY = 1,
	SS_CUPTI_KIND_MEMSET = 2,
	SS_CUPTI_KIND_KERNEL = 3,
	SS_CUPTI_KIND_DRIVER = 4,
	SS_CUPTI_KIND_RUNTIME = 5,
	SS_CUPTI_KIND_CONCURRENT_KERNEL = 10,
};

#define SS_CUPTI_SUCCESS 0
#define SS_CUPTI_MAX_NUMBER_OF_RECORDS 3 /* CUPTI_ERROR_MAX_LIMIT_REACHED */

/* CUpti_ActivityKernel9 up to name */
struct ss_cupti_kernel {
	uint32_t kind;
	uint8_t cache_config;
	uint8_t shared_memory_config;
	uint16_t registers_per_thread;
	uint32_t pgc_requested, pgc_executed;
	uint64_t start, end, completed;
	uint32_t device_id, context_id, stream_id;
	int32_t grid_x, grid_y, grid_z;
	int32_t block_x, block_y, block_z;
	int32_t static_shared, dynamic_shared;
	uint32_t local_per_thread, local_total;
	uint32_t correlation_id;
	int64_t grid_id;
	const char *name;
};

/* CUpti_ActivityMemcpy6 up to correlationId */
struct ss_cupti_memcpy {
	uint32_t kind;
	uint8_t copy_kind, src_kind, dst_kind, flags;
	uint64_t bytes, start, end;
	uint32_t device_id, context_id, stream_id, correlation_id;
};

/* CUpti_ActivityMemset4 up to correlationId */
struct ss_cupti_memset {
	uint32_t kind;
	uint32_t value;
	uint64_t bytes, start, end;
	uint32_t device_id, context_id, stream_id, correlation_id;
};

/* CUpti_ActivityAPI (whole) */
struct ss_cupti_api {
	uint32_t kind;
	uint32_t cbid;
	uint64_t start, end;
	uint32_t process_id, thread_id, correlation_id, return_value;
};

_Static_assert(offsetof(struct ss_cupti_kernel, start) == 16, "kernel start");
_Static_assert(offsetof(struct ss_cupti_kernel, correlation_id) == 92, "kernel corr");
_Static_assert(offsetof(struct ss_cupti_kernel, name) == 104, "kernel name");
_Static_assert(offsetof(struct ss_cupti_memcpy, correlation_id) == 44, "memcpy corr");
_Static_assert(offsetof(struct ss_cupti_memset, correlation_id) == 44, "memset corr");
_Static_assert(sizeof(struct ss_cupti_api) == 40, "api size");

typedef void (*ss_cupti_request_fn)(uint8_t **buffer, size_t *size,
				    size_t *max_records);
typedef void (*ss_cupti_complete_fn)(void *ctx, uint32_t stream_id,
				     uint8_t *buffer, size_t size,
				     size_t valid_size);
typedef int (*ss_cupti_register_fn)(ss_cupti_request_fn, ss_cupti_complete_fn);
typedef int (*ss_cupti_enable_fn)(uint32_t kind);
typedef int (*ss_cupti_flush_fn)(uint32_t flag);
typedef int (*ss_cupti_next_fn)(uint8_t *buffer, size_t valid_size,
				void **record);
typedef int (*ss_cupti_timestamp_fn)(uint64_t *ts);
/* cuptiGetCallbackName(CUpti_CallbackDomain, cbid, const char **) */
typedef int (*ss_cupti_cbname_fn)(uint32_t domain, uint32_t cbid,
				  const char **name);
#define SS_CUPTI_DOMAIN_DRIVER 1
#define SS_CUPTI_DOMAIN_RUNTIME 2

/*
 * The callback API (cupti_callbacks.h), for gpu-alloc.c: CUDA's memory
 * calls seen at their exit, on the calling thread.  CUpti_CallbackData
 * whole; the runtime API's cbids (cupti_runtime_cbid.h) and parameter
 * structs (generated_cuda_runtime_api_meta.h) of the calls recorded.
 */
#define SS_CUPTI_API_ENTER 0
#define SS_CUPTI_API_EXIT 1
#define SS_CUPTI_MULTIPLE_SUBSCRIBERS 39 /* ..._NOT_SUPPORTED */

struct ss_cupti_cbdata {
	uint32_t callback_site;          /* SS_CUPTI_API_ENTER / _EXIT */
	const char *function_name;
	const void *function_params;     /* the call's ss_cuda_*_params */
	void *function_return_value;     /* cudaError_t *, valid at exit */
	const char *symbol_name;
	void *context;                   /* CUcontext, NULL if none */
	uint32_t context_uid;
	uint64_t *correlation_data;
	uint32_t correlation_id;
};
_Static_assert(offsetof(struct ss_cupti_cbdata, function_params) == 16, "cb params");
_Static_assert(offsetof(struct ss_cupti_cbdata, context) == 40, "cb context");
_Static_assert(offsetof(struct ss_cupti_cbdata, correlation_id) == 64, "cb corr");
_Static_assert(sizeof(struct ss_cupti_cbdata) == 72, "cb size");

enum ss_cupti_rt_cbid {
	SS_CBID_cudaMalloc = 20,             /* cudaMalloc_v3020 */
	SS_CBID_cudaMallocPitch = 21,        /* cudaMallocPitch_v3020 */
	SS_CBID_cudaFree = 22,               /* cudaFree_v3020 */
	SS_CBID_cudaMallocHost = 25,         /* cudaMallocHost_v3020 */
	SS_CBID_cudaFreeHost = 26,           /* cudaFreeHost_v3020 */
	SS_CBID_cudaHostAlloc = 27,          /* cudaHostAlloc_v3020 */
	SS_CBID_cudaMallocManaged = 206,     /* cudaMallocManaged_v6000 */
	SS_CBID_cudaMallocAsync = 373,       /* cudaMallocAsync_v11020 */
	SS_CBID_cudaMallocAsync_ptsz = 374,
	SS_CBID_cudaFreeAsync = 375,         /* cudaFreeAsync_v11020 */
	SS_CBID_cudaFreeAsync_ptsz = 376,
	SS_CBID_cudaMallocFromPoolAsync = 391, /* cudaMallocFromPoolAsync_v11020 */
	SS_CBID_cudaMallocFromPoolAsync_ptsz = 392,
};

/* cudaMalloc, cudaMallocHost (ptr), cudaHostAlloc (pHost),
 * cudaMallocManaged, cudaMallocAsync(_ptsz), cudaMallocFromPoolAsync(_ptsz):
 * the returned pointer's address, then the size */
struct ss_cuda_alloc_params {
	void **ptr;
	size_t size;
};
/* cudaFree, cudaFreeHost, cudaFreeAsync(_ptsz): the pointer first */
struct ss_cuda_free_params {
	void *ptr;
};
/* cudaMallocPitch_v3020: pitch x height bytes */
struct ss_cuda_pitch_params {
	void **ptr;
	size_t *pitch;
	size_t width, height;
};
_Static_assert(offsetof(struct ss_cuda_alloc_params, size) == 8, "alloc size");
_Static_assert(offsetof(struct ss_cuda_pitch_params, height) == 24, "pitch height");

/* CUpti_CallbackFunc(void *userdata, CUpti_CallbackDomain, CUpti_CallbackId,
 * const void *cbdata) */
typedef void (*ss_cupti_callback_fn)(void *userdata, uint32_t domain, uint32_t cbid,
				     const void *cbdata);
typedef int (*ss_cupti_subscribe_fn)(void **subscriber, ss_cupti_callback_fn cb,
				     void *userdata);
typedef int (*ss_cupti_unsubscribe_fn)(void *subscriber);
typedef int (*ss_cupti_enable_cb_fn)(uint32_t enable, void *subscriber,
				     uint32_t domain, uint32_t cbid);
typedef int (*ss_cupti_device_id_fn)(void *context, uint32_t *device);

#endif /* SS_CUPTI_H */
