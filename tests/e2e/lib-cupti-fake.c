/*
 * lib-cupti-fake.c - a stand-in CUDA runtime and CUPTI in one library, for
 * tests without a GPU (test-cuda-fake.c).  Built as libcudart.so, so the
 * runtime sees "a CUDA runtime is mapped", and named in
 * STEPSCOPE_CUPTI_LIBRARY, so the runtime's dlopen of "libcupti" gets this
 * same object and both halves share one state.
 *
 * CUDA half: fakeLaunchKernel(name, grid, block, stream), cudaMemcpy,
 * cudaMemset and cudaDeviceSynchronize.  The "GPU" runs work back to back
 * on its own clock (CLOCK_MONOTONIC + 7 s, so a reader must align clocks):
 * a kernel takes 200 us (fakeLaunchKernelNs: the kernel's time given), a
 * copy 1 ns per byte, plus 1 us each; synchronize sleeps until the GPU is
 * idle, in naps of 50 us (a round trip to the GPU costs the host that).  Each call, while the activity kinds are
 * enabled, adds a runtime API record and an activity record with the same
 * correlation id.
 *
 * CUPTI half: cuptiActivityRegisterCallbacks/Enable/Disable/FlushAll/
 * GetNextRecord, cuptiGetTimestamp, cuptiGetCallbackName.  Records use the
 * layouts of runtime/cupti.h (CUPTI's ABI) at a fixed 256-byte stride;
 * full buffers and the flush go to the completion callback.
 *
 * Memory (the second half of this file): cudaMalloc, cudaFree,
 * cudaMallocAsync, cudaFreeAsync, cudaMallocHost, cudaFreeHost,
 * cudaHostAlloc, cudaMallocManaged, cudaSetDevice/cudaGetDevice, and the
 * callback API (cuptiSubscribe, cuptiEnableCallback, cuptiEnableDomain,
 * cuptiUnsubscribe, cuptiGetDeviceId) that reports them as CUPTI does.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "../../runtime/cupti.h"

#define STRIDE 256
#define GPU_OFFSET 7000000000ull
#define CBID_LAUNCH 211     /* cudaLaunchKernel_v7000 */
#define CBID_MEMCPY 31      /* cudaMemcpy_v3020 */
#define CBID_MEMSET 48      /* cudaMemset_v3020 */
#define CBID_SYNC 165       /* cudaDeviceSynchronize_v3020 */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ss_cupti_request_fn req;
static ss_cupti_complete_fn done;
static int enabled[32];
static uint8_t *buf;
static size_t buf_size, used;
static uint32_t corr;
static uint64_t gpu_free;

static uint64_t gpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + GPU_OFFSET;
}

int cuptiGetTimestamp(uint64_t *ts)
{
	*ts = gpu_now();
	return 0;
}

int cuptiActivityRegisterCallbacks(ss_cupti_request_fn r, ss_cupti_complete_fn c)
{
	req = r;
	done = c;
	return 0;
}

int cuptiActivityEnable(uint32_t kind)
{
	if (kind >= 32)
		return 1;
	enabled[kind] = 1;
	return 0;
}

int cuptiActivityDisable(uint32_t kind)
{
	if (kind >= 32)
		return 1;
	enabled[kind] = 0;
	return 0;
}

/* lock held */
static void deliver(void)
{
	if (buf && done) {
		uint8_t *b = buf;
		size_t n = used, size = buf_size;
		buf = NULL;
		used = 0;
		pthread_mutex_unlock(&lock);
		done(NULL, 0, b, size, n);
		pthread_mutex_lock(&lock);
	}
}

/* lock held: room for one record, zeroed */
static void *slot(void)
{
	if (buf && used + STRIDE > buf_size)
		deliver();
	if (!buf) {
		size_t max = 0;
		req(&buf, &buf_size, &max);
		used = 0;
		if (!buf)
			return NULL;
	}
	void *p = buf + used;
	memset(p, 0, STRIDE);
	used += STRIDE;
	return p;
}

int cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&lock);
	deliver();
	pthread_mutex_unlock(&lock);
	return 0;
}

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record)
{
	uint8_t *next = *record ? (uint8_t *)*record + STRIDE : buffer;
	if (next + STRIDE > buffer + valid)
		return SS_CUPTI_MAX_NUMBER_OF_RECORDS;
	*record = next;
	return 0;
}

static int fake_mem_cbname(uint32_t cbid, const char **name);

int cuptiGetCallbackName(uint32_t domain, uint32_t cbid, const char **name)
{
	if (domain != SS_CUPTI_DOMAIN_RUNTIME)
		return 1;
	switch (cbid) {
	case CBID_LAUNCH: *name = "cudaLaunchKernel"; return 0;
	case CBID_MEMCPY: *name = "cudaMemcpy"; return 0;
	case CBID_MEMSET: *name = "cudaMemset"; return 0;
	case CBID_SYNC: *name = "cudaDeviceSynchronize"; return 0;
	}
	return fake_mem_cbname(cbid, name);
}

/* lock held: the API record of one call that began at `start` */
static void api(uint32_t cbid, uint64_t start, uint32_t c)
{
	if (!enabled[SS_CUPTI_KIND_RUNTIME])
		return;
	struct ss_cupti_api *a = slot();
	if (!a)
		return;
	a->kind = SS_CUPTI_KIND_RUNTIME;
	a->cbid = cbid;
	a->start = start;
	a->end = gpu_now();
	a->process_id = (uint32_t)getpid();
	a->thread_id = (uint32_t)syscall(SYS_gettid);
	a->correlation_id = c;
}

/* lock held: the GPU's next busy interval of `ns` */
static void busy(uint64_t ns, uint64_t *start, uint64_t *end)
{
	uint64_t now = gpu_now();
	*start = (gpu_free > now ? gpu_free : now) + 1000;
	*end = *start + ns;
	gpu_free = *end;
}

int fakeLaunchKernelNs(const char *name, int grid, int block, uint32_t stream, uint64_t ns)
{
	static const char *names[64];
	uint64_t t0 = gpu_now(); /* the call's start: waiting for the lock is in it */
	pthread_mutex_lock(&lock);
	uint32_t c = ++corr;
	const char *kept = NULL;
	for (int i = 0; i < 64 && !kept; i++) {
		if (!names[i])
			names[i] = strdup(name);
		if (names[i] && !strcmp(names[i], name))
			kept = names[i];
	}
	if (enabled[SS_CUPTI_KIND_CONCURRENT_KERNEL]) {
		struct ss_cupti_kernel *k = slot();
		if (k) {
			k->kind = SS_CUPTI_KIND_CONCURRENT_KERNEL;
			busy(ns, &k->start, &k->end);
			k->completed = k->end;
			k->device_id = 0;
			k->context_id = 1;
			k->stream_id = stream;
			k->grid_x = grid;
			k->grid_y = k->grid_z = 1;
			k->block_x = block;
			k->block_y = k->block_z = 1;
			k->correlation_id = c;
			k->name = kept;
		}
	}
	api(CBID_LAUNCH, t0, c);
	pthread_mutex_unlock(&lock);
	return 0;
}

int fakeLaunchKernel(const char *name, int grid, int block, uint32_t stream)
{
	return fakeLaunchKernelNs(name, grid, block, stream, 200000);
}

static void copy(uint32_t kind, uint32_t cbid, size_t n, int copy_kind)
{
	pthread_mutex_lock(&lock);
	uint64_t t0 = gpu_now();
	uint32_t c = ++corr;
	if (enabled[kind]) {
		struct ss_cupti_memcpy *m = slot(); /* memset shares the layout */
		if (m) {
			m->kind = kind;
			if (kind == SS_CUPTI_KIND_MEMCPY)
				m->copy_kind = (uint8_t)copy_kind;
			m->bytes = n;
			busy(n, &m->start, &m->end);
			m->device_id = 0;
			m->context_id = 1;
			m->stream_id = 7;
			m->correlation_id = c;
		}
	}
	api(cbid, t0, c);
	pthread_mutex_unlock(&lock);
}

int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	if (dst && src)
		memmove(dst, src, n);
	copy(SS_CUPTI_KIND_MEMCPY, CBID_MEMCPY, n, kind);
	return 0;
}

int cudaMemset(void *p, int v, size_t n)
{
	if (p)
		memset(p, v, n);
	copy(SS_CUPTI_KIND_MEMSET, CBID_MEMSET, n, 0);
	return 0;
}

int cudaDeviceSynchronize(void)
{
	pthread_mutex_lock(&lock);
	uint64_t t0 = gpu_now(), until = gpu_free;
	uint32_t c = ++corr;
	pthread_mutex_unlock(&lock);
	while (gpu_now() < until) {
		struct timespec nap = { 0, 50000 };
		nanosleep(&nap, NULL);
	}
	pthread_mutex_lock(&lock);
	api(CBID_SYNC, t0, c);
	pthread_mutex_unlock(&lock);
	return 0;
}


/*
 * Memory.  Each space is an arena mapped on first use (never through
 * malloc: with memory.allocations on, a malloc here would be recorded as
 * the calling function's heap memory): device memory per device, pinned
 * host and managed memory.  A block's address is the arena's next free
 * one unless a freed block of the same size is there to take again, so
 * addresses come back as they do with CUDA's caching of equal sizes.
 * A request over FAKE_ARENA fails with cudaErrorMemoryAllocation (2) and
 * reports the exit callback with that return value and the pointer
 * untouched.
 *
 * Callbacks: one subscriber (a second gets
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and so does the first
 * with FAKE_CUPTI_BUSY=1: a profiler holds it), enabled per runtime
 * API cbid; each call makes an ENTER and an EXIT callback on the calling
 * thread, outside the library's lock, with a CUpti_CallbackData
 * (struct ss_cupti_cbdata) whose context stands for the current device
 * (FAKE_CTX(dev)); cuptiGetDeviceId maps it back, NULL meaning the
 * calling thread's current device.
 */
#include <sys/mman.h>

#define FAKE_DEVICES 8
#define FAKE_ARENA (256ull << 20)
#define FAKE_BLOCKS 4096
#define FAKE_CTX(dev) ((void *)(uintptr_t)(0x7000 + (dev)))
#define ERR_ALLOC 2 /* cudaErrorMemoryAllocation */
#define ERR_VALUE 1 /* cudaErrorInvalidValue */

struct fake_block {
	uint8_t *p;
	size_t size;
	int live;
};

struct fake_arena {
	uint8_t *base;
	size_t used;
	struct fake_block b[FAKE_BLOCKS];
	int n;
};

/* arenas: 0..FAKE_DEVICES-1 device memory, then pinned, then managed */
static struct fake_arena arenas[FAKE_DEVICES + 2];
#define ARENA_PINNED FAKE_DEVICES
#define ARENA_MANAGED (FAKE_DEVICES + 1)
static __thread int cur_dev;
static ss_cupti_callback_fn cb_fn;
static void *cb_user;
static int cb_on[512];
static int subscribed;
static char subscriber_token;

int cudaSetDevice(int dev)
{
	if (dev < 0 || dev >= FAKE_DEVICES)
		return 101; /* cudaErrorInvalidDevice */
	cur_dev = dev;
	return 0;
}

int cudaGetDevice(int *dev)
{
	*dev = cur_dev;
	return 0;
}

int cuptiSubscribe(void **sub, ss_cupti_callback_fn fn, void *user)
{
	pthread_mutex_lock(&lock);
	/* FAKE_CUPTI_BUSY=1: another tool holds the subscription */
	const char *busy = getenv("FAKE_CUPTI_BUSY");
	int rc = subscribed || (busy && *busy == '1') ? SS_CUPTI_MULTIPLE_SUBSCRIBERS : 0;
	if (!rc) {
		subscribed = 1;
		cb_fn = fn;
		cb_user = user;
		*sub = &subscriber_token;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int cuptiUnsubscribe(void *sub)
{
	if (sub != &subscriber_token)
		return 1;
	pthread_mutex_lock(&lock);
	subscribed = 0;
	cb_fn = NULL;
	memset(cb_on, 0, sizeof(cb_on));
	pthread_mutex_unlock(&lock);
	return 0;
}

int cuptiEnableCallback(uint32_t enable, void *sub, uint32_t domain, uint32_t cbid)
{
	if (sub != &subscriber_token || domain != SS_CUPTI_DOMAIN_RUNTIME || cbid >= 512)
		return 1;
	__atomic_store_n(&cb_on[cbid], !!enable, __ATOMIC_RELAXED);
	return 0;
}

int cuptiEnableDomain(uint32_t enable, void *sub, uint32_t domain)
{
	if (sub != &subscriber_token || domain != SS_CUPTI_DOMAIN_RUNTIME)
		return 1;
	for (int i = 0; i < 512; i++)
		__atomic_store_n(&cb_on[i], !!enable, __ATOMIC_RELAXED);
	return 0;
}

int cuptiGetDeviceId(void *ctx, uint32_t *dev)
{
	if (!dev)
		return 1;
	if (!ctx) {
		*dev = (uint32_t)cur_dev;
		return 0;
	}
	uintptr_t c = (uintptr_t)ctx;
	if (c < 0x7000 || c >= 0x7000 + FAKE_DEVICES)
		return 3; /* CUPTI_ERROR_INVALID_CONTEXT */
	*dev = (uint32_t)(c - 0x7000);
	return 0;
}

static const struct {
	uint32_t cbid;
	const char *name;
} mem_names[] = {
	{ SS_CBID_cudaMalloc, "cudaMalloc" },
	{ SS_CBID_cudaFree, "cudaFree" },
	{ SS_CBID_cudaMallocHost, "cudaMallocHost" },
	{ SS_CBID_cudaFreeHost, "cudaFreeHost" },
	{ SS_CBID_cudaHostAlloc, "cudaHostAlloc" },
	{ SS_CBID_cudaMallocManaged, "cudaMallocManaged" },
	{ SS_CBID_cudaMallocAsync, "cudaMallocAsync" },
	{ SS_CBID_cudaFreeAsync, "cudaFreeAsync" },
};

static int fake_mem_cbname(uint32_t cbid, const char **name)
{
	for (size_t i = 0; i < sizeof(mem_names) / sizeof(mem_names[0]); i++)
		if (mem_names[i].cbid == cbid) {
			*name = mem_names[i].name;
			return 0;
		}
	return 1;
}

static const char *cb_name(uint32_t cbid)
{
	const char *n = "?";
	fake_mem_cbname(cbid, &n);
	return n;
}

/* The ENTER or EXIT callback of one call, when its cbid is enabled. */
static void callback(uint32_t site, uint32_t cbid, const void *params, int *rc,
		     uint32_t c, uint64_t *corr_data)
{
	ss_cupti_callback_fn fn = cb_fn;
	if (!fn || cbid >= 512 || !__atomic_load_n(&cb_on[cbid], __ATOMIC_RELAXED))
		return;
	struct ss_cupti_cbdata d = {
		.callback_site = site,
		.function_name = cb_name(cbid),
		.function_params = params,
		.function_return_value = site == SS_CUPTI_API_EXIT ? rc : NULL,
		.context = FAKE_CTX(cur_dev),
		.context_uid = (uint32_t)cur_dev + 1,
		.correlation_data = corr_data,
		.correlation_id = c,
	};
	fn(cb_user, SS_CUPTI_DOMAIN_RUNTIME, cbid, &d);
}

/* lock held */
static void *arena_take(int a, size_t n)
{
	struct fake_arena *ar = &arenas[a];
	if (!ar->base) {
		void *m = mmap(NULL, FAKE_ARENA, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		ar->base = m;
	}
	size_t r = (n + 255) & ~(size_t)255;
	for (int i = 0; i < ar->n; i++)
		if (!ar->b[i].live && ar->b[i].size == n) {
			ar->b[i].live = 1;
			return ar->b[i].p;
		}
	if (n == 0 || r > FAKE_ARENA - ar->used || ar->n == FAKE_BLOCKS)
		return NULL;
	struct fake_block *b = &ar->b[ar->n++];
	b->p = ar->base + ar->used;
	b->size = n;
	b->live = 1;
	ar->used += r;
	return b->p;
}

/* lock held: 0, or ERR_VALUE for a pointer no arena of `first..last` gave */
static int arena_give(int first, int last, void *p)
{
	for (int a = first; a <= last; a++)
		for (int i = 0; i < arenas[a].n; i++)
			if (arenas[a].b[i].p == p && arenas[a].b[i].live) {
				arenas[a].b[i].live = 0;
				return 0;
			}
	return ERR_VALUE;
}

/* A memory call's start: its correlation id and start time, the ENTER
 * callback (outside the lock); returns with the lock held. */
static uint32_t mem_enter(uint32_t cbid, const void *prm, uint64_t *t0, uint64_t *cd)
{
	pthread_mutex_lock(&lock);
	uint32_t c = ++corr;
	*t0 = gpu_now();
	pthread_mutex_unlock(&lock);
	callback(SS_CUPTI_API_ENTER, cbid, prm, NULL, c, cd);
	pthread_mutex_lock(&lock);
	return c;
}

/* Its end, lock held: the API activity record, then the EXIT callback
 * with rc (outside the lock). */
static void mem_exit(uint32_t cbid, const void *prm, int *rc, uint64_t t0, uint32_t c,
		     uint64_t *cd)
{
	api(cbid, t0, c);
	pthread_mutex_unlock(&lock);
	callback(SS_CUPTI_API_EXIT, cbid, prm, rc, c, cd);
}

/* One allocating call: ENTER, the arena, the API activity record, EXIT. */
static int mem_alloc(uint32_t cbid, int arena, void **ptr, size_t n)
{
	struct ss_cuda_alloc_params prm = { ptr, n };
	uint64_t cd = 0, t0;
	uint32_t c = mem_enter(cbid, &prm, &t0, &cd);
	void *p = ptr ? arena_take(arena, n) : NULL;
	int rc = !ptr ? ERR_VALUE : p ? 0 : ERR_ALLOC;
	if (!rc)
		*ptr = p;
	mem_exit(cbid, &prm, &rc, t0, c, &cd);
	return rc;
}

/* One freeing call; NULL is no block and no error, as in CUDA. */
static int mem_free(uint32_t cbid, int first, int last, void *p)
{
	struct ss_cuda_free_params prm = { p };
	uint64_t cd = 0, t0;
	uint32_t c = mem_enter(cbid, &prm, &t0, &cd);
	int rc = p ? arena_give(first, last, p) : 0;
	if (rc && cbid == SS_CBID_cudaFree) /* managed memory too */
		rc = arena_give(ARENA_MANAGED, ARENA_MANAGED, p);
	mem_exit(cbid, &prm, &rc, t0, c, &cd);
	return rc;
}

int cudaMalloc(void **p, size_t n)
{
	return mem_alloc(SS_CBID_cudaMalloc, cur_dev, p, n);
}

int cudaMallocAsync(void **p, size_t n, void *stream)
{
	(void)stream;
	return mem_alloc(SS_CBID_cudaMallocAsync, cur_dev, p, n);
}

int cudaMallocHost(void **p, size_t n)
{
	return mem_alloc(SS_CBID_cudaMallocHost, ARENA_PINNED, p, n);
}

int cudaHostAlloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	return mem_alloc(SS_CBID_cudaHostAlloc, ARENA_PINNED, p, n);
}

int cudaMallocManaged(void **p, size_t n, unsigned flags)
{
	(void)flags;
	return mem_alloc(SS_CBID_cudaMallocManaged, ARENA_MANAGED, p, n);
}

/* device memory of any device, as CUDA's unified addressing allows, and
 * managed memory */
int cudaFree(void *p)
{
	return mem_free(SS_CBID_cudaFree, 0, FAKE_DEVICES - 1, p);
}

int cudaFreeAsync(void *p, void *stream)
{
	(void)stream;
	return mem_free(SS_CBID_cudaFreeAsync, 0, FAKE_DEVICES - 1, p);
}

int cudaFreeHost(void *p)
{
	return mem_free(SS_CBID_cudaFreeHost, ARENA_PINNED, ARENA_PINNED, p);
}
