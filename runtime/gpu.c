/*
 * gpu.c - GPU activity through CUPTI (gpu.enabled: true): kernels,
 * memcpy/memset and CUDA runtime/driver API calls, recorded inside step
 * windows only, on the same trace as the host functions.
 *
 * Design: nothing happens until a window opens in a process that uses the
 * CUDA runtime (a libcudart is mapped, linked or dlopen'd).  Then libcupti
 * is dlopen'd ($STEPSCOPE_CUPTI_LIBRARY names another library to load
 * instead: the e2e tests' stand-in), its buffer callbacks registered and a
 * (GPU clock, file clock) pair written (SS_META_GPU_CLOCK) so a reader can
 * place GPU times on the host timeline.  Activity kinds are enabled when a
 * window opens and disabled when it closes; CUPTI hands full buffers to
 * gpu_complete() on its own thread (or on ours in the final flush), which
 * copies each record into a SS_META_GPU_* record under ss_rt.lock.  The
 * CUPTI layouts come from cupti.h (no CUDA toolkit needed to build).
 *
 * Never: link CUPTI or CUDA into the program, create a CUDA context, call
 * CUPTI's flush with ss_rt.lock held (its callback takes the lock), or
 * kill/block the program when CUPTI is missing (one info line instead).
 */

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"
#include "internal.h"

#define SS_GPU_CUPTI_LIB "libcupti.so"
#define SS_GPU_BUF (4u << 20)

static struct {
	int tried, ready, on;
	void *dl;
	ss_cupti_enable_fn enable, disable;
	ss_cupti_flush_fn flush;
	ss_cupti_next_fn next;
	ss_cupti_timestamp_fn timestamp;
	ss_cupti_cbname_fn cbname;
} gpu;

static const uint32_t gpu_kinds[] = {
	SS_CUPTI_KIND_CONCURRENT_KERNEL, SS_CUPTI_KIND_MEMCPY,
	SS_CUPTI_KIND_MEMSET, SS_CUPTI_KIND_RUNTIME, SS_CUPTI_KIND_DRIVER,
};
#define GPU_NKINDS (sizeof(gpu_kinds) / sizeof(gpu_kinds[0]))

static int cudart_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	const char *base = slash ? slash + 1 : info->dlpi_name;
	return base && !strncmp(base, "libcudart", 9);
}

static void gpu_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte alignment */
	*buffer = ss_malloc(SS_GPU_BUF); /* 16-byte aligned, as CUPTI asks 8 */
	*size = *buffer ? SS_GPU_BUF : 0;
	*max_records = 0;
}

static void write_api(const struct ss_cupti_api *a)
{
	struct ss_meta_gpu_api m = {
		.start = a->start, .end = a->end, .correlation = a->correlation_id,
		.cbid = a->cbid, .tid = a->thread_id,
		.driver = a->kind == SS_CUPTI_KIND_DRIVER,
	};
	const char *name = NULL;
	char num[32];
	if (!gpu.cbname ||
	    gpu.cbname(m.driver ? SS_CUPTI_DOMAIN_DRIVER : SS_CUPTI_DOMAIN_RUNTIME,
		       a->cbid, &name) != SS_CUPTI_SUCCESS || !name) {
		snprintf(num, sizeof(num), "cbid %u", a->cbid);
		name = num;
	}
	ss_meta_write(SS_META_GPU_API, &m, sizeof(m), name, strlen(name) + 1);
}

static void write_record(const void *rec)
{
	uint32_t kind;
	memcpy(&kind, rec, sizeof(kind));
	if (kind == SS_CUPTI_KIND_KERNEL || kind == SS_CUPTI_KIND_CONCURRENT_KERNEL) {
		const struct ss_cupti_kernel *k = rec;
		struct ss_meta_gpu_kernel m = {
			.start = k->start, .end = k->end,
			.correlation = k->correlation_id,
			.device = k->device_id, .stream = k->stream_id,
			.grid = { k->grid_x, k->grid_y, k->grid_z },
			.block = { k->block_x, k->block_y, k->block_z },
		};
		const char *name = k->name ? k->name : "?";
		ss_meta_write(SS_META_GPU_KERNEL, &m, sizeof(m), name, strlen(name) + 1);
	} else if (kind == SS_CUPTI_KIND_MEMCPY) {
		const struct ss_cupti_memcpy *c = rec;
		struct ss_meta_gpu_copy m = {
			.start = c->start, .end = c->end, .bytes = c->bytes,
			.correlation = c->correlation_id, .device = c->device_id,
			.stream = c->stream_id, .kind = c->copy_kind,
		};
		ss_meta_write(SS_META_GPU_COPY, &m, sizeof(m), NULL, 0);
	} else if (kind == SS_CUPTI_KIND_MEMSET) {
		const struct ss_cupti_memset *c = rec;
		struct ss_meta_gpu_copy m = {
			.start = c->start, .end = c->end, .bytes = c->bytes,
			.correlation = c->correlation_id, .device = c->device_id,
			.stream = c->stream_id, .kind = SS_GPU_MEMSET,
		};
		ss_meta_write(SS_META_GPU_COPY, &m, sizeof(m), NULL, 0);
	} else if (kind == SS_CUPTI_KIND_RUNTIME || kind == SS_CUPTI_KIND_DRIVER) {
		write_api(rec);
	}
}

static void gpu_complete(void *ctx, uint32_t stream_id, uint8_t *buffer,
			 size_t size, size_t valid)
{
	(void)ctx;
	(void)stream_id;
	(void)size;
	void *rec = NULL;
	pthread_mutex_lock(&ss_rt.lock);
	if (!ss_rt.disabled)
		while (gpu.next(buffer, valid, &rec) == SS_CUPTI_SUCCESS)
			write_record(rec);
	pthread_mutex_unlock(&ss_rt.lock);
	ss_free(buffer);
}

/* Lock held.  Load CUPTI once a CUDA runtime is there. */
static void gpu_load(void)
{
	const char *env = secure_getenv("STEPSCOPE_CUPTI_LIBRARY");
	const char *lib = env && *env ? env : SS_GPU_CUPTI_LIB;
	if (!dl_iterate_phdr(cudart_cb, NULL))
		return; /* no CUDA runtime (yet): look again at the next window */
	gpu.tried = 1;
	gpu.dl = ss_dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!gpu.dl) {
		const char *e = ss_dlerror();
		ss_warn("gpu: cannot load %s (%s); recording host functions only",
			lib, e ? e : "dlopen failed");
		return;
	}
	ss_cupti_register_fn reg =
		(ss_cupti_register_fn)dlsym(gpu.dl, "cuptiActivityRegisterCallbacks");
	gpu.enable = (ss_cupti_enable_fn)dlsym(gpu.dl, "cuptiActivityEnable");
	gpu.disable = (ss_cupti_enable_fn)dlsym(gpu.dl, "cuptiActivityDisable");
	gpu.flush = (ss_cupti_flush_fn)dlsym(gpu.dl, "cuptiActivityFlushAll");
	gpu.next = (ss_cupti_next_fn)dlsym(gpu.dl, "cuptiActivityGetNextRecord");
	gpu.timestamp = (ss_cupti_timestamp_fn)dlsym(gpu.dl, "cuptiGetTimestamp");
	gpu.cbname = (ss_cupti_cbname_fn)dlsym(gpu.dl, "cuptiGetCallbackName");
	if (!reg || !gpu.enable || !gpu.disable || !gpu.flush || !gpu.next ||
	    !gpu.timestamp || reg(gpu_request, gpu_complete) != SS_CUPTI_SUCCESS) {
		ss_warn("gpu: %s lacks the CUPTI activity API or refused it; "
			"recording host functions only", lib);
		return;
	}
	struct ss_meta_gpu_clock c;
	gpu.timestamp(&c.gpu_ns);
	c.ticks = ss_clock_now();
	ss_meta_write(SS_META_GPU_CLOCK, &c, sizeof(c), NULL, 0);
	gpu.ready = 1;
	ss_gpu_alloc_load(gpu.dl); /* memory.allocations: gpu-alloc.c */
}

void ss_gpu_on_window(int open)
{
	if (!ss_rt.cfg.gpu_enabled || open == gpu.on)
		return;
	if (open && !gpu.tried)
		gpu_load();
	if (!gpu.ready)
		return;
	for (size_t i = 0; i < GPU_NKINDS; i++)
		(open ? gpu.enable : gpu.disable)(gpu_kinds[i]);
	gpu.on = open;
}

void ss_gpu_stop(void)
{
	if (!gpu.ready)
		return;
	pthread_mutex_lock(&ss_rt.lock);
	ss_gpu_on_window(0);
	pthread_mutex_unlock(&ss_rt.lock);
	gpu.flush(1); /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED */
	gpu.ready = 0;
}
