/*
 * kernels.cu - the device code: a tiled matmul, bias, ReLU, softmax
 * cross-entropy, their backward passes, a sum and Adam, each with its host
 * launch wrapper.
 *
 * Design: plain, readable kernels sized for a small model, not tuned ones.
 * The matmul stages TILE x TILE blocks of both operands in shared memory
 * and reads a transposed operand through its index, so the backward pass
 * needs no transpose kernels.  Per-row and per-column kernels use one
 * thread each (rows and columns are at most a few thousand here).
 * Never: synchronize in a wrapper (the caller decides when to wait).
 */
#include "check.h"
#include "kernels.h"

#define TILE 16
#define THREADS 256

/* Blocks of THREADS for n elements (not instrumented: called per launch). */
static inline __attribute__((no_instrument_function)) int blocks_for(int n)
{
	return (n + THREADS - 1) / THREADS;
}

__global__ void matmul_tiled(float *c, const float *a, const float *b, int m,
			     int n, int k, int trans_a, int trans_b)
{
	__shared__ float as[TILE][TILE];
	__shared__ float bs[TILE][TILE + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
	float acc = 0.0f;

	for (int t = 0; t < k; t += TILE) {
		int ka = t + tx; /* column of op(a) this thread stages */
		int kb = t + ty; /* row of op(b) this thread stages */

		as[ty][tx] = row < m && ka < k ?
				     (trans_a ? a[ka * m + row] : a[row * k + ka]) :
				     0.0f;
		bs[ty][tx] = kb < k && col < n ?
				     (trans_b ? b[col * k + kb] : b[kb * n + col]) :
				     0.0f;
		__syncthreads();
		for (int i = 0; i < TILE; i++)
			acc += as[ty][i] * bs[i][tx];
		__syncthreads();
	}
	if (row < m && col < n)
		c[row * n + col] = acc;
}

__global__ void add_bias_rows(float *y, const float *bias, int rows, int cols)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < rows * cols)
		y[i] += bias[i % cols];
}

__global__ void relu_forward(float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && y[i] < 0.0f)
		y[i] = 0.0f;
}

__global__ void relu_backward(float *dy, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && !(y[i] > 0.0f))
		dy[i] = 0.0f;
}

__global__ void softmax_xent_rows(float *dlogits, float *row_loss,
				  const float *logits, const int *labels,
				  int rows, int classes)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	const float *z;
	float *dz;
	float mx, sum = 0.0f, log_sum;
	int c, y;

	if (i >= rows)
		return;
	z = logits + i * classes;
	dz = dlogits + i * classes;
	y = labels[i];
	mx = z[0];
	for (c = 1; c < classes; c++)
		mx = fmaxf(mx, z[c]);
	for (c = 0; c < classes; c++)
		sum += expf(z[c] - mx);
	log_sum = logf(sum);
	row_loss[i] = log_sum - (z[y] - mx);
	for (c = 0; c < classes; c++) {
		float p = expf(z[c] - mx - log_sum);

		dz[c] = (p - (c == y ? 1.0f : 0.0f)) / (float)rows;
	}
}

__global__ void sum_columns(float *db, const float *dy, int rows, int cols)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	float s = 0.0f;

	if (j >= cols)
		return;
	for (int i = 0; i < rows; i++)
		s += dy[i * cols + j];
	db[j] = s;
}

/* One block: a strided partial sum per thread, then a tree in shared
 * memory. */
__global__ void sum_all(float *out, const float *x, int n)
{
	__shared__ float part[THREADS];
	float s = 0.0f;

	for (int i = threadIdx.x; i < n; i += THREADS)
		s += x[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (int half = THREADS / 2; half > 0; half /= 2) {
		if ((int)threadIdx.x < half)
			part[threadIdx.x] += part[threadIdx.x + half];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[0] = part[0];
}

__global__ void adam_update(float *p, const float *g, float *m, float *v,
			    int n, float lr, float beta1, float beta2,
			    float eps, float c1, float c2)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float gi, mi, vi;

	if (i >= n)
		return;
	gi = g[i];
	mi = beta1 * m[i] + (1.0f - beta1) * gi;
	vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
	m[i] = mi;
	v[i] = vi;
	p[i] -= lr * (mi / c1) / (sqrtf(vi / c2) + eps);
}

extern "C" {

void launch_matmul(float *c, const float *a, const float *b, int m, int n,
		   int k, int trans_a, int trans_b)
{
	dim3 block(TILE, TILE);
	dim3 grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);

	matmul_tiled<<<grid, block>>>(c, a, b, m, n, k, trans_a, trans_b);
	CUDA_CHECK_LAUNCH("matmul_tiled");
}

void launch_add_bias(float *y, const float *bias, int rows, int cols)
{
	add_bias_rows<<<blocks_for(rows * cols), THREADS>>>(y, bias, rows,
							     cols);
	CUDA_CHECK_LAUNCH("add_bias_rows");
}

void launch_relu(float *y, int n)
{
	relu_forward<<<blocks_for(n), THREADS>>>(y, n);
	CUDA_CHECK_LAUNCH("relu_forward");
}

void launch_relu_backward(float *dy, const float *y, int n)
{
	relu_backward<<<blocks_for(n), THREADS>>>(dy, y, n);
	CUDA_CHECK_LAUNCH("relu_backward");
}

void launch_softmax_xent(float *dlogits, float *row_loss, const float *logits,
			 const int *labels, int rows, int classes)
{
	softmax_xent_rows<<<blocks_for(rows), THREADS>>>(
		dlogits, row_loss, logits, labels, rows, classes);
	CUDA_CHECK_LAUNCH("softmax_xent_rows");
}

void launch_bias_backward(float *db, const float *dy, int rows, int cols)
{
	sum_columns<<<blocks_for(cols), THREADS>>>(db, dy, rows, cols);
	CUDA_CHECK_LAUNCH("sum_columns");
}

void launch_sum(float *out, const float *x, int n)
{
	sum_all<<<1, THREADS>>>(out, x, n);
	CUDA_CHECK_LAUNCH("sum_all");
}

void launch_adam(float *p, const float *g, float *m, float *v, int n,
		 float lr, float beta1, float beta2, float eps, float c1,
		 float c2)
{
	adam_update<<<blocks_for(n), THREADS>>>(p, g, m, v, n, lr, beta1,
						beta2, eps, c1, c2);
	CUDA_CHECK_LAUNCH("adam_update");
}

} /* extern "C" */
