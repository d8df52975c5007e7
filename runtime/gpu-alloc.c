/*
 * gpu-alloc.c - CUDA's memory calls as recorded allocations
 * (memory.allocations and gpu.enabled both on): cudaMalloc, cudaFree,
 * cudaMallocAsync, cudaFreeAsync (and their _ptsz forms),
 * cudaMallocFromPoolAsync, cudaMallocPitch, cudaMallocHost, cudaHostAlloc,
 * cudaFreeHost and cudaMallocManaged become SS_EV_ALLOC / SS_EV_FREE
 * records with a CUDA space (format.h), on the calling thread's own ring,
 * so the reader charges each to the innermost recorded call around it.
 *
 * How: when gpu.c has loaded CUPTI (a window opened in a process that uses
 * the CUDA runtime), ss_gpu_alloc_load subscribes to CUPTI's callback API
 * and enables the runtime API callbacks of those calls, for the rest of
 * the run: alloc.c records inside recorded steps only, but follows the
 * blocks it recorded until they are freed, outside the steps too (a CUDA
 * memory call takes microseconds; outside a step the callback only looks
 * the address up in alloc.c's table).
 * CUPTI calls gpu_alloc_cb on the program's thread.  An allocation is
 * recorded at the call's exit, when it succeeded: the pointer and size
 * from the call's parameter struct (cupti.h: the layouts of
 * generated_cuda_runtime_api_meta.h), the device from cuptiGetDeviceId on
 * the callback's context.  A free is recorded at the call's entry, before
 * the block is given back, so that another thread's allocation of the
 * same address cannot come first (alloc.h); one that then fails (a CUDA
 * error) is allocated again at its exit.  The records go through alloc.c
 * (ss_alloc_record, ss_alloc_record_free), the malloc wrappers' path.
 *
 * Never: create a CUDA context or call the CUDA runtime (a call from a
 * callback would call back), block or take ss_rt.lock in the callback
 * (it runs inside the program's CUDA call, on any thread), or stop the
 * run when CUPTI refuses a subscriber (Nsight or another tool holds
 * CUPTI's one subscription: one warning, CUDA memory unrecorded).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "alloc.h"
#include "cupti.h"
#include "internal.h"

static struct {
	void *sub;
	ss_cupti_device_id_fn device_id;
	int ready;
} ga;

static const uint32_t ga_cbids[] = {
	SS_CBID_cudaMalloc, SS_CBID_cudaMallocPitch, SS_CBID_cudaFree,
	SS_CBID_cudaMallocHost, SS_CBID_cudaFreeHost, SS_CBID_cudaHostAlloc,
	SS_CBID_cudaMallocManaged, SS_CBID_cudaMallocAsync,
	SS_CBID_cudaMallocAsync_ptsz, SS_CBID_cudaFreeAsync,
	SS_CBID_cudaFreeAsync_ptsz, SS_CBID_cudaMallocFromPoolAsync,
	SS_CBID_cudaMallocFromPoolAsync_ptsz,
};
#define GA_NCBIDS (sizeof(ga_cbids) / sizeof(ga_cbids[0]))

/* The space kind a call allocates in or frees from (enum ss_alloc_space),
 * -1 for none of ours; *is_free set for the freeing calls. */
static int ga_kind(uint32_t cbid, int *is_free)
{
	*is_free = 0;
	switch (cbid) {
	case SS_CBID_cudaFree:
		*is_free = 1;
		return SS_SPACE_CUDA_DEVICE; /* or managed: the reader matches
					      * a free on the address */
	case SS_CBID_cudaFreeAsync:
	case SS_CBID_cudaFreeAsync_ptsz:
		*is_free = 1;
		return SS_SPACE_CUDA_DEVICE;
	case SS_CBID_cudaFreeHost:
		*is_free = 1;
		return SS_SPACE_CUDA_PINNED;
	case SS_CBID_cudaMalloc:
	case SS_CBID_cudaMallocPitch:
	case SS_CBID_cudaMallocAsync:
	case SS_CBID_cudaMallocAsync_ptsz:
	case SS_CBID_cudaMallocFromPoolAsync:
	case SS_CBID_cudaMallocFromPoolAsync_ptsz:
		return SS_SPACE_CUDA_DEVICE;
	case SS_CBID_cudaMallocHost:
	case SS_CBID_cudaHostAlloc:
		return SS_SPACE_CUDA_PINNED;
	case SS_CBID_cudaMallocManaged:
		return SS_SPACE_CUDA_MANAGED;
	}
	return -1;
}

/* The call's device: its context's (cuptiGetDeviceId), 0 when unknown,
 * and not asked for outside a recorded step, where nothing is written. */
static uint32_t ga_device(const struct ss_cupti_cbdata *d)
{
	uint32_t dev = 0;
	if (!(ss_hot.gate & ss_alloc_hot.mask) || !ga.device_id ||
	    ga.device_id(d->context, &dev) != SS_CUPTI_SUCCESS)
		dev = 0;
	return dev;
}

/* A free's entry: noted before CUDA has the block back; what the exit
 * needs to undo it (size + 1, 0 unknown) kept in correlationData. */
static void ga_free_enter(const struct ss_cupti_cbdata *d, int kind)
{
	const struct ss_cuda_free_params *f = d->function_params;
	if (!f->ptr)
		return; /* cudaFree(NULL): no block */
	uint64_t size = 0;
	int known = ss_alloc_record_free((uint64_t)(uintptr_t)f->ptr,
					 SS_SPACE(kind, ga_device(d)), &size);
	if (d->correlation_data)
		*d->correlation_data = known ? size + 1 : 0;
}

/* A free's exit: it failed (a CUDA error), so the block is still the
 * program's: recorded and followed again inside a recorded step (outside
 * one alloc.c follows no new block: it is not followed any more). */
static void ga_free_exit(const struct ss_cupti_cbdata *d, int kind)
{
	const struct ss_cuda_free_params *f = d->function_params;
	if (f->ptr && d->correlation_data && *d->correlation_data)
		ss_alloc_record((uint64_t)(uintptr_t)f->ptr, *d->correlation_data - 1,
				SS_SPACE(kind, ga_device(d)));
}

/* CUPTI's callback, on the program's thread, inside its CUDA call. */
static void gpu_alloc_cb(void *user, uint32_t domain, uint32_t cbid, const void *data)
{
	(void)user;
	const struct ss_cupti_cbdata *d = data;
	int is_free;
	int kind = ga_kind(cbid, &is_free);
	if (domain != SS_CUPTI_DOMAIN_RUNTIME || !d || kind < 0 || !d->function_params)
		return;
	if (d->callback_site == SS_CUPTI_API_ENTER) {
		if (is_free)
			ga_free_enter(d, kind);
		return;
	}
	if (d->callback_site != SS_CUPTI_API_EXIT || !d->function_return_value)
		return;
	int failed = *(const int *)d->function_return_value != 0; /* cudaError_t */
	if (is_free) {
		if (failed)
			ga_free_exit(d, kind);
		return;
	}
	if (failed)
		return;
	uint64_t size;
	void *const *pp;
	if (cbid == SS_CBID_cudaMallocPitch) {
		const struct ss_cuda_pitch_params *p = d->function_params;
		pp = p->ptr;
		size = p->pitch ? *p->pitch * p->height : p->width * p->height;
	} else {
		const struct ss_cuda_alloc_params *p = d->function_params;
		pp = p->ptr;
		size = p->size;
	}
	if (pp && *pp)
		ss_alloc_record((uint64_t)(uintptr_t)*pp, size, SS_SPACE(kind, ga_device(d)));
}

/* Lock held, from gpu.c once CUPTI is loaded (dl: its handle). */
void ss_gpu_alloc_load(void *dl)
{
	if (ga.ready || !ss_rt.cfg.memory_allocations || !ss_alloc_hot.mask)
		return;
	ss_cupti_subscribe_fn subscribe =
		(ss_cupti_subscribe_fn)dlsym(dl, "cuptiSubscribe");
	ss_cupti_enable_cb_fn enable_cb =
		(ss_cupti_enable_cb_fn)dlsym(dl, "cuptiEnableCallback");
	ga.device_id = (ss_cupti_device_id_fn)dlsym(dl, "cuptiGetDeviceId");
	if (!subscribe || !enable_cb) {
		ss_warn("gpu: CUPTI has no callback API (cuptiSubscribe); "
			"CUDA allocations are not recorded");
		return;
	}
	int rc = subscribe(&ga.sub, gpu_alloc_cb, NULL);
	if (rc == SS_CUPTI_MULTIPLE_SUBSCRIBERS) {
		ss_warn("gpu: another tool holds CUPTI's callback subscription "
			"(Nsight, a profiler); CUDA allocations are not recorded");
		return;
	}
	if (rc != SS_CUPTI_SUCCESS) {
		ss_warn("gpu: cuptiSubscribe failed (CUPTI error %d); "
			"CUDA allocations are not recorded", rc);
		return;
	}
	int failed = 0;
	for (size_t i = 0; i < GA_NCBIDS; i++)
		failed += enable_cb(1, ga.sub, SS_CUPTI_DOMAIN_RUNTIME, ga_cbids[i]) !=
			  SS_CUPTI_SUCCESS;
	if (failed)
		ss_warn("gpu: CUPTI refused %d of the %zu CUDA memory callbacks; "
			"those calls are not recorded", failed, GA_NCBIDS);
	ga.ready = 1;
}
