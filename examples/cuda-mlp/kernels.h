/*
 * kernels.h - the CUDA kernels of the example, behind one host launch
 * wrapper each.
 *
 * Every pointer is device memory, every matrix row-major.  The wrappers
 * pick the grid, launch on the default stream and check the launch; they
 * do not wait for the kernel (launches are asynchronous, as in real
 * training code).  These host functions are what stepscope sees: the
 * kernels themselves run on the GPU and are never instrumented.
 */
#ifndef CUDA_EXAMPLE_KERNELS_H
#define CUDA_EXAMPLE_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* c (m x n) = op(a) (m x k) * op(b) (k x n); op transposes when trans_a /
 * trans_b is set (a is then stored k x m, b n x k). */
void launch_matmul(float *c, const float *a, const float *b, int m, int n,
		   int k, int trans_a, int trans_b);
/* y (rows x cols) += bias (cols) on every row. */
void launch_add_bias(float *y, const float *bias, int rows, int cols);
/* y = max(y, 0), n elements. */
void launch_relu(float *y, int n);
/* dy *= (y > 0), where y is the ReLU's output. */
void launch_relu_backward(float *dy, const float *y, int n);
/* Row-wise softmax of logits (rows x classes) against labels: the loss of
 * each row into row_loss, and d(mean loss)/d(logits) into dlogits. */
void launch_softmax_xent(float *dlogits, float *row_loss, const float *logits,
			 const int *labels, int rows, int classes);
/* db (cols) = the sum of dy (rows x cols) over its rows. */
void launch_bias_backward(float *db, const float *dy, int rows, int cols);
/* out[0] = x[0] + ... + x[n-1]. */
void launch_sum(float *out, const float *x, int n);
/* One Adam step on n parameters; c1 = 1 - beta1^t, c2 = 1 - beta2^t. */
void launch_adam(float *p, const float *g, float *m, float *v, int n,
		 float lr, float beta1, float beta2, float eps, float c1,
		 float c2);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_EXAMPLE_KERNELS_H */
