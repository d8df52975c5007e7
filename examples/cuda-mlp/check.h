/*
 * check.h - stop the program on a CUDA error, naming the call that failed.
 *
 * A training example has no way to recover from a failed cudaMalloc or a
 * bad launch, so CUDA_CHECK prints one line and exits 1.  The helper is
 * not instrumented: it runs after every CUDA call.  Never: use it for the
 * "no device" case, which main reports itself with exit status 3.
 */
#ifndef CUDA_EXAMPLE_CHECK_H
#define CUDA_EXAMPLE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

static inline __attribute__((no_instrument_function)) void
cuda_check(cudaError_t err, const char *what, const char *file, int line)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "train: %s failed at %s:%d: %s (%s)\n", what, file,
		line, cudaGetErrorString(err), cudaGetErrorName(err));
	exit(1);
}

/* CUDA_CHECK(cudaMalloc(...)): exit 1 with a message unless it succeeded. */
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
/* After a kernel launch: a bad configuration shows up here. */
#define CUDA_CHECK_LAUNCH(name)                                                \
	cuda_check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)

#endif /* CUDA_EXAMPLE_CHECK_H */
