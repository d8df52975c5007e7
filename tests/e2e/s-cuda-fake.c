/*
 * s-cuda-fake.c - fixture for the GPU path (test-cuda-fake.c): a training
 * loop against the stand-in CUDA runtime of lib-cupti-fake.c.
 *
 *   s-cuda-fake STEPS
 *
 * Each step: load_batch() copies 4096 bytes host to device, zero_grad()
 * sets 1024 bytes, forward() launches gemm_fwd and relu_fwd, backward()
 * launches gemm_bwd twice and sgd_update once (all on stream 7 but
 * sgd_update, on stream 9), then the step waits in cudaDeviceSynchronize.
 * Functions: main, step, load_batch, zero_grad, forward, backward.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

int fakeLaunchKernel(const char *name, int grid, int block, uint32_t stream);
int cudaMemcpy(void *dst, const void *src, size_t n, int kind);
int cudaMemset(void *p, int v, size_t n);
int cudaDeviceSynchronize(void);

static char host[4096], dev[4096];

NOINLINE static void load_batch(int i)
{
	host[0] = (char)i;
	SINK(cudaMemcpy(dev, host, sizeof(host), 1));
}

NOINLINE static void zero_grad(void)
{
	SINK(cudaMemset(dev, 0, 1024));
}

NOINLINE static void forward(void)
{
	SINK(fakeLaunchKernel("gemm_fwd", 64, 256, 7));
	SINK(fakeLaunchKernel("relu_fwd", 32, 128, 7));
}

NOINLINE static void backward(void)
{
	SINK(fakeLaunchKernel("gemm_bwd", 64, 256, 7));
	SINK(fakeLaunchKernel("gemm_bwd", 64, 256, 7));
	SINK(fakeLaunchKernel("sgd_update", 16, 64, 9));
}

NOINLINE static void step(int i)
{
	load_batch(i);
	zero_grad();
	forward();
	backward();
	SINK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 4;
	for (int i = 0; i < steps; i++)
		step(i);
	return 0;
}
