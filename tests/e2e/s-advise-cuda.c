/*
 * s-advise-cuda.c - fixture for test-advise-cuda: a training step against
 * the stand-in CUDA runtime of lib-cupti-fake.c whose optimizer launches
 * one tiny kernel per parameter tensor and waits for each.
 *
 *   s-advise-cuda STEPS MODE [KERNEL_NS [PARAMS]]
 *
 * Each step: forward() and backward() launch one 1 ms gemm each; then
 * optimizer_step() launches sgd_param (KERNEL_NS on the GPU, 5000) for
 * each of PARAMS tensors (160).  MODE 0 (the planted round trips):
 * cudaDeviceSynchronize after every sgd_param, so the GPU idles while the
 * host makes a round trip per tensor.  MODE 1 (that advice applied): the
 * launches are queued back to back and the step synchronizes once, at
 * its end; with tiny kernels and many tensors this is the planted launch
 * overhead.  MODE 2 (that advice applied): one fused sgd_all kernel does
 * what the PARAMS kernels did.  Functions: main, step, forward, backward,
 * optimizer_step.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fixture.h"


DEFINE_SINK;

int fakeLaunchKernelNs(const char *name, int grid, int block, uint32_t stream, uint64_t ns);
int cudaDeviceSynchronize(void);

NOINLINE static void forward(void)
{
	SINK(fakeLaunchKernelNs("gemm_fwd", 64, 256, 7, 1000000));
}

NOINLINE static void backward(void)
{
	SINK(fakeLaunchKernelNs("gemm_bwd", 64, 256, 7, 1000000));
}

NOINLINE static void optimizer_step(int mode, uint64_t ns, int params)
{
	if (mode == 2) {
		SINK(fakeLaunchKernelNs("sgd_all", params, 128, 7, ns * (uint64_t)params));
		return;
	}
	for (int p = 0; p < params; p++) {
		SINK(fakeLaunchKernelNs("sgd_param", 1, 128, 7, ns));
		if (mode == 0)
			SINK(cudaDeviceSynchronize());
	}
}

NOINLINE static void step(int mode, uint64_t ns, int params)
{
	forward();
	backward();
	optimizer_step(mode, ns, params);
	SINK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 12;
	int mode = argc > 2 ? atoi(argv[2]) : 0;
	uint64_t ns = argc > 3 ? strtoull(argv[3], NULL, 10) : 5000;
	int params = argc > 4 ? atoi(argv[4]) : 160;
	for (int i = 0; i < steps; i++)
		step(mode, ns, params);
	return 0;
}
