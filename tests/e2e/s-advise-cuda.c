/*
 * s-advise-cuda.c - fixture for test-advise-cuda: a training step against
 * the stand-in CUDA runtime of lib-cupti-fake.c whose optimizer launches
 * one tiny kernel per parameter tensor and waits for each.
 *
 *   s-advise-cuda STEPS BATCHED
 *
 * Each step: forward() and backward() launch one 1 ms gemm each; then
 * optimizer_step() launches sgd_param (5 us on the GPU) for each of
 * PARAMS tensors.  BATCHED 0 (the planted problem): cudaDeviceSynchronize
 * after every sgd_param, so the GPU idles while the host makes a round
 * trip per tensor.  BATCHED 1 (the advice applied): the launches are
 * queued back to back and the step synchronizes once, at its end.
 * Functions: main, step, forward, backward, optimizer_step.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fixture.h"

#define PARAMS 160

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

NOINLINE static void optimizer_step(int batched)
{
	for (int p = 0; p < PARAMS; p++) {
		SINK(fakeLaunchKernelNs("sgd_param", 1, 128, 7, 5000));
		if (!batched)
			SINK(cudaDeviceSynchronize());
	}
}

NOINLINE static void step(int batched)
{
	forward();
	backward();
	optimizer_step(batched);
	SINK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 12;
	int batched = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < steps; i++)
		step(batched);
	return 0;
}
