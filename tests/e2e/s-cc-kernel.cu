/*
 * s-cc-kernel.cu - a CUDA program with a kernel: only built (it needs a GPU
 * to run).  Host code is instrumented, device code is not.
 */
#include <stdio.h>

__global__ void add_one(int *v)
{
	v[threadIdx.x] += 1;
}

int main(void)
{
	int *d = NULL;
	if (cudaMalloc(&d, 32 * sizeof(int)) != cudaSuccess) {
		printf("no GPU\n");
		return 77;
	}
	add_one<<<1, 32>>>(d);
	cudaDeviceSynchronize();
	cudaFree(d);
	return 0;
}
