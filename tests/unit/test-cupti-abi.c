/*
 * test-cupti-abi.c - runtime/cupti.h against CUPTI's own headers: every
 * field gpu.c reads sits at the offset cupti_activity.h gives it, and the
 * callback data, runtime API cbids and parameter structs gpu-alloc.c
 * reads match cupti_callbacks.h, cupti_runtime_cbid.h and
 * generated_cuda_runtime_api_meta.h.
 *
 * The runtime builds without the CUDA toolkit, so the headers are looked
 * for at run time ($CUDA_HOME, /usr/local/cuda, in include/ and
 * extras/CUPTI/include/); a small program that prints the real offsets is
 * compiled with cc and its output compared with offsetof() on cupti.h.
 * Without the headers the test skips and says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/cupti.h"

#define FIELDS(X)                                                           \
	X(CUpti_ActivityKernel9, kind, ss_cupti_kernel, kind)                \
	X(CUpti_ActivityKernel9, start, ss_cupti_kernel, start)              \
	X(CUpti_ActivityKernel9, end, ss_cupti_kernel, end)                  \
	X(CUpti_ActivityKernel9, deviceId, ss_cupti_kernel, device_id)       \
	X(CUpti_ActivityKernel9, streamId, ss_cupti_kernel, stream_id)       \
	X(CUpti_ActivityKernel9, gridX, ss_cupti_kernel, grid_x)             \
	X(CUpti_ActivityKernel9, gridZ, ss_cupti_kernel, grid_z)             \
	X(CUpti_ActivityKernel9, blockX, ss_cupti_kernel, block_x)           \
	X(CUpti_ActivityKernel9, blockZ, ss_cupti_kernel, block_z)           \
	X(CUpti_ActivityKernel9, correlationId, ss_cupti_kernel, correlation_id) \
	X(CUpti_ActivityKernel9, name, ss_cupti_kernel, name)                \
	X(CUpti_ActivityMemcpy6, copyKind, ss_cupti_memcpy, copy_kind)       \
	X(CUpti_ActivityMemcpy6, bytes, ss_cupti_memcpy, bytes)              \
	X(CUpti_ActivityMemcpy6, start, ss_cupti_memcpy, start)              \
	X(CUpti_ActivityMemcpy6, end, ss_cupti_memcpy, end)                  \
	X(CUpti_ActivityMemcpy6, deviceId, ss_cupti_memcpy, device_id)       \
	X(CUpti_ActivityMemcpy6, streamId, ss_cupti_memcpy, stream_id)       \
	X(CUpti_ActivityMemcpy6, correlationId, ss_cupti_memcpy, correlation_id) \
	X(CUpti_ActivityMemset4, bytes, ss_cupti_memset, bytes)              \
	X(CUpti_ActivityMemset4, start, ss_cupti_memset, start)              \
	X(CUpti_ActivityMemset4, end, ss_cupti_memset, end)                  \
	X(CUpti_ActivityMemset4, deviceId, ss_cupti_memset, device_id)       \
	X(CUpti_ActivityMemset4, streamId, ss_cupti_memset, stream_id)       \
	X(CUpti_ActivityMemset4, correlationId, ss_cupti_memset, correlation_id) \
	X(CUpti_ActivityAPI, cbid, ss_cupti_api, cbid)                       \
	X(CUpti_ActivityAPI, start, ss_cupti_api, start)                     \
	X(CUpti_ActivityAPI, end, ss_cupti_api, end)                         \
	X(CUpti_ActivityAPI, threadId, ss_cupti_api, thread_id)              \
	X(CUpti_ActivityAPI, correlationId, ss_cupti_api, correlation_id)    \
	X(CUpti_CallbackData, callbackSite, ss_cupti_cbdata, callback_site)  \
	X(CUpti_CallbackData, functionParams, ss_cupti_cbdata, function_params) \
	X(CUpti_CallbackData, functionReturnValue, ss_cupti_cbdata, function_return_value) \
	X(CUpti_CallbackData, context, ss_cupti_cbdata, context)             \
	X(CUpti_CallbackData, correlationId, ss_cupti_cbdata, correlation_id) \
	X(cudaMalloc_v3020_params, size, ss_cuda_alloc_params, size)         \
	X(cudaMallocHost_v3020_params, size, ss_cuda_alloc_params, size)     \
	X(cudaHostAlloc_v3020_params, size, ss_cuda_alloc_params, size)      \
	X(cudaMallocManaged_v6000_params, size, ss_cuda_alloc_params, size)  \
	X(cudaMallocAsync_v11020_params, size, ss_cuda_alloc_params, size)   \
	X(cudaMallocAsync_ptsz_v11020_params, size, ss_cuda_alloc_params, size) \
	X(cudaMallocFromPoolAsync_v11020_params, size, ss_cuda_alloc_params, size) \
	X(cudaMallocPitch_v3020_params, pitch, ss_cuda_pitch_params, pitch)  \
	X(cudaMallocPitch_v3020_params, height, ss_cuda_pitch_params, height) \
	X(cudaFreeAsync_v11020_params, devPtr, ss_cuda_free_params, ptr)

/* the runtime API callback ids gpu-alloc.c enables (cupti_runtime_cbid.h) */
#define CBIDS(X)                                                            \
	X(cudaMalloc_v3020, SS_CBID_cudaMalloc)                              \
	X(cudaMallocPitch_v3020, SS_CBID_cudaMallocPitch)                    \
	X(cudaFree_v3020, SS_CBID_cudaFree)                                  \
	X(cudaMallocHost_v3020, SS_CBID_cudaMallocHost)                      \
	X(cudaFreeHost_v3020, SS_CBID_cudaFreeHost)                          \
	X(cudaHostAlloc_v3020, SS_CBID_cudaHostAlloc)                        \
	X(cudaMallocManaged_v6000, SS_CBID_cudaMallocManaged)                \
	X(cudaMallocAsync_v11020, SS_CBID_cudaMallocAsync)                   \
	X(cudaMallocAsync_ptsz_v11020, SS_CBID_cudaMallocAsync_ptsz)         \
	X(cudaFreeAsync_v11020, SS_CBID_cudaFreeAsync)                       \
	X(cudaFreeAsync_ptsz_v11020, SS_CBID_cudaFreeAsync_ptsz)             \
	X(cudaMallocFromPoolAsync_v11020, SS_CBID_cudaMallocFromPoolAsync)   \
	X(cudaMallocFromPoolAsync_ptsz_v11020, SS_CBID_cudaMallocFromPoolAsync_ptsz)

static const char *find_headers(char *dir, size_t len)
{
	const char *home = getenv("CUDA_HOME");
	const char *roots[] = { home, "/usr/local/cuda" };
	for (int i = 0; i < 2; i++) {
		if (!roots[i] || !*roots[i])
			continue;
		const char *subs[] = { "include", "extras/CUPTI/include" };
		for (int j = 0; j < 2; j++) {
			char path[4200];
			snprintf(dir, len, "%s/%s", roots[i], subs[j]);
			snprintf(path, sizeof(path), "%s/cupti_activity.h", dir);
			if (!access(path, R_OK))
				return dir;
		}
	}
	return NULL;
}

static void test_layouts(void **state)
{
	(void)state;
	char dir[4096], cmd[9000];
	if (!find_headers(dir, sizeof(dir))) {
		printf("skip: no cupti_activity.h under $CUDA_HOME or /usr/local/cuda "
		       "(include/, extras/CUPTI/include/): runtime/cupti.h unchecked\n");
		skip();
	}
	char tmp[] = "/tmp/ss-cupti-abi-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	char src[4200];
	snprintf(src, sizeof(src), "%s/abi.c", tmp);
	FILE *f = fopen(src, "w");
	assert_non_null(f);
	/* cupti.h brings cupti_activity.h, cupti_callbacks.h, the cbids
	 * and the runtime API's parameter structs */
	fprintf(f, "#include <cupti.h>\n#include <stddef.h>\n#include <stdio.h>\n"
		   "int main(void) {\n");
#define REAL(T, F, S, G) fprintf(f, "printf(\"%%zu\\n\", offsetof(" #T ", " #F "));\n");
	FIELDS(REAL)
	fprintf(f, "printf(\"%%zu\\n\", sizeof(CUpti_CallbackData));\n");
#define REAL_CBID(N, E) fprintf(f, "printf(\"%%d\\n\", (int)CUPTI_RUNTIME_TRACE_CBID_" #N ");\n");
	CBIDS(REAL_CBID)
	fprintf(f, "return 0; }\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -I'%s' -o '%s/abi' '%s' && '%s/abi' > '%s/out'", dir,
		 tmp, src, tmp, tmp);
	assert_int_equal(system(cmd), 0);
	snprintf(src, sizeof(src), "%s/out", tmp);
	f = fopen(src, "r");
	assert_non_null(f);
	int bad = 0;
	size_t got;
#define MINE(T, F, S, G)                                                    \
	if (fscanf(f, "%zu", &got) != 1 || got != offsetof(struct S, G)) {    \
		printf("%s.%s: CUPTI offset %zu, cupti.h %zu\n", #T, #F, got,   \
		       offsetof(struct S, G));                                  \
		bad++;                                                          \
	}
	FIELDS(MINE)
	if (fscanf(f, "%zu", &got) != 1 || got != sizeof(struct ss_cupti_cbdata)) {
		printf("sizeof CUpti_CallbackData: CUPTI %zu, cupti.h %zu\n", got,
		       sizeof(struct ss_cupti_cbdata));
		bad++;
	}
	int id;
#define MINE_CBID(N, E)                                                     \
	if (fscanf(f, "%d", &id) != 1 || id != (int)(E)) {                    \
		printf("cbid %s: CUPTI %d, cupti.h %d\n", #N, id, (int)(E));    \
		bad++;                                                          \
	}
	CBIDS(MINE_CBID)
	fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	(void)!system(cmd);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
