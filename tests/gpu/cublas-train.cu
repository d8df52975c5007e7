/*
 * cublas-train.cu - the GPU proof kit's second CUDA program: a two-layer
 * regression MLP trained with cuBLAS, in the shape of a real CUDA trainer.
 * device-check.sh builds it with nvcc through stepscope-cc, records three
 * of its steps and checks stepscope's picture against what the program
 * says it did.
 *
 *   cublas-train [STEPS] [SMI_STEP]        (default 6 and 3)
 *
 * Each step (train_step): load_batch fills x and y on the host (pinned)
 * and copies both host to device; forward runs sgemm (x.w1), relu,
 * sgemm (h.w2), zeroes the loss with cudaMemset and runs loss_kernel,
 * then copies the loss back (the step's wait for the GPU); backward runs
 * three sgemm and relu_bwd; sgd_update runs sgd on both weights and, on
 * odd steps, grad_norm with its result copied back (so the counts differ
 * from step to step and a step numbered wrongly shows).
 *
 * The program counts what it launches and copies and prints, per step,
 * "step N kernels K htod B dtoh B" (N as stepscope numbers steps: the
 * first call of train_step is step 0; one kernel per cublasSgemm call),
 * and in step SMI_STEP query_smi() reads `nvidia-smi
 * --query-gpu=memory.used` and prints "nvidia-smi memory.used M MiB".
 * Host functions have C names, so the trace shows them unmangled.
 *
 * Exit status: 0 done, 1 a CUDA or cuBLAS call failed (the line names it),
 * 3 no CUDA device.  Never: launch anything it does not count.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define EXIT_NO_DEVICE 3

enum { BATCH = 256, IN = 512, HID = 1024, OUT = 64, THREADS = 256 };

static inline __attribute__((no_instrument_function)) void
check_cuda(cudaError_t err, const char *what, int line)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "cublas-train: %s failed at line %d: %s\n", what, line,
		cudaGetErrorString(err));
	exit(1);
}

static inline __attribute__((no_instrument_function)) void
check_cublas(cublasStatus_t st, const char *what, int line)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return;
	fprintf(stderr, "cublas-train: %s failed at line %d: status %d\n", what, line,
		(int)st);
	exit(1);
}

#define CK(call) check_cuda((call), #call, __LINE__)
#define CB(call) check_cublas((call), #call, __LINE__)

__global__ void relu(float *h, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && h[i] < 0)
		h[i] = 0;
}

__global__ void relu_bwd(float *dh, const float *h, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && h[i] <= 0)
		dh[i] = 0;
}

/* dout = d(mean squared error)/do, loss += its share of the mean */
__global__ void loss_kernel(const float *o, const float *y, float *dout, float *loss, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float d = o[i] - y[i];
	dout[i] = 2 * d / n;
	atomicAdd(loss, d * d / n);
}

__global__ void sgd(float *w, const float *dw, float lr, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		w[i] -= lr * dw[i];
}

__global__ void grad_norm(const float *g, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(out, g[i] * g[i]);
}

extern "C" {

struct model {
	cublasHandle_t cb;
	float *x, *y;                    /* pinned host batch */
	float *d_x, *d_y, *w1, *w2, *h, *o, *dout, *dh, *dw1, *dw2, *d_loss;
	float loss, norm;
	int kernels;                     /* this step's counts */
	size_t htod, dtoh;
};

static int blocks(int n)
{
	return (n + THREADS - 1) / THREADS;
}

static void copy(struct model *m, void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
	CK(cudaMemcpy(dst, src, n, kind));
	if (kind == cudaMemcpyHostToDevice)
		m->htod += n;
	else
		m->dtoh += n;
}

/* Row-major C (rows x cols) = op(A) op(B), k the inner size; lda, ldb:
 * the row lengths of A and B as stored.  cuBLAS is column-major, so it
 * computes C^T = op(B)^T op(A)^T. */
static void gemm(struct model *m, int ta, int tb, int rows, int cols, int k,
		 const float *a, int lda, const float *b, int ldb, float *c)
{
	const float one = 1, zero = 0;
	CB(cublasSgemm(m->cb, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
		       cols, rows, k, &one, b, ldb, a, lda, &zero, c, cols));
	m->kernels++;
}

void load_batch(struct model *m, int step)
{
	for (int i = 0; i < BATCH * IN; i++)
		m->x[i] = (float)((i * 7 + step) % 13) / 13.0f - 0.5f;
	for (int i = 0; i < BATCH * OUT; i++)
		m->y[i] = (float)((i + step) % OUT == 0);
	copy(m, m->d_x, m->x, sizeof(float) * BATCH * IN, cudaMemcpyHostToDevice);
	copy(m, m->d_y, m->y, sizeof(float) * BATCH * OUT, cudaMemcpyHostToDevice);
}

float forward(struct model *m)
{
	gemm(m, 0, 0, BATCH, HID, IN, m->d_x, IN, m->w1, HID, m->h);
	relu<<<blocks(BATCH * HID), THREADS>>>(m->h, BATCH * HID);
	CK(cudaGetLastError());
	m->kernels++;
	gemm(m, 0, 0, BATCH, OUT, HID, m->h, HID, m->w2, OUT, m->o);
	CK(cudaMemset(m->d_loss, 0, sizeof(float)));
	loss_kernel<<<blocks(BATCH * OUT), THREADS>>>(m->o, m->d_y, m->dout, m->d_loss,
						       BATCH * OUT);
	CK(cudaGetLastError());
	m->kernels++;
	copy(m, &m->loss, m->d_loss, sizeof(float), cudaMemcpyDeviceToHost);
	return m->loss;
}

void backward(struct model *m)
{
	gemm(m, 1, 0, HID, OUT, BATCH, m->h, HID, m->dout, OUT, m->dw2);
	gemm(m, 0, 1, BATCH, HID, OUT, m->dout, OUT, m->w2, OUT, m->dh);
	relu_bwd<<<blocks(BATCH * HID), THREADS>>>(m->dh, m->h, BATCH * HID);
	CK(cudaGetLastError());
	m->kernels++;
	gemm(m, 1, 0, IN, HID, BATCH, m->d_x, IN, m->dh, HID, m->dw1);
}

void sgd_update(struct model *m, int step)
{
	if (step % 2) {
		CK(cudaMemset(m->d_loss, 0, sizeof(float)));
		grad_norm<<<blocks(HID * OUT), THREADS>>>(m->dw2, m->d_loss, HID * OUT);
		CK(cudaGetLastError());
		m->kernels++;
		copy(m, &m->norm, m->d_loss, sizeof(float), cudaMemcpyDeviceToHost);
	}
	sgd<<<blocks(IN * HID), THREADS>>>(m->w1, m->dw1, 0.01f, IN * HID);
	CK(cudaGetLastError());
	sgd<<<blocks(HID * OUT), THREADS>>>(m->w2, m->dw2, 0.01f, HID * OUT);
	CK(cudaGetLastError());
	m->kernels += 2;
}

void query_smi(void)
{
	FILE *p = popen("LD_PRELOAD= nvidia-smi --query-gpu=memory.used "
			"--format=csv,noheader,nounits --id=0", "r");
	long mib = -1;
	if (!p || fscanf(p, "%ld", &mib) != 1)
		mib = -1;
	if (p)
		pclose(p);
	printf("nvidia-smi memory.used %ld MiB\n", mib);
}

void train_step(struct model *m, int step, int smi_step)
{
	m->kernels = 0;
	m->htod = m->dtoh = 0;
	load_batch(m, step);
	forward(m);
	backward(m);
	sgd_update(m, step);
	if (step == smi_step) {
		CK(cudaDeviceSynchronize());
		query_smi();
	}
	printf("step %d kernels %d htod %zu dtoh %zu loss %.6f\n", step, m->kernels, m->htod,
	       m->dtoh, m->loss);
	fflush(stdout);
}

} /* extern "C" */

static float *dev_alloc(size_t n)
{
	float *p;
	CK(cudaMalloc(&p, n * sizeof(float)));
	return p;
}

static void init_weights(float *d, size_t n, float scale, unsigned seed)
{
	float *h = (float *)malloc(n * sizeof(float));
	if (!h) {
		fprintf(stderr, "cublas-train: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		h[i] = scale * ((float)(seed >> 8 & 0xffff) / 65536.0f - 0.5f);
	}
	CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
	free(h);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 6;
	int smi_step = argc > 2 ? atoi(argv[2]) : 3;
	int ndev = 0;
	cudaError_t err = cudaGetDeviceCount(&ndev);
	struct model m = {};

	if (err != cudaSuccess || ndev == 0) {
		fprintf(stderr, "cublas-train: no CUDA device (cudaGetDeviceCount: %s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
		return EXIT_NO_DEVICE;
	}
	CB(cublasCreate(&m.cb));
	CK(cudaMallocHost(&m.x, sizeof(float) * BATCH * IN));
	CK(cudaMallocHost(&m.y, sizeof(float) * BATCH * OUT));
	m.d_x = dev_alloc(BATCH * IN);
	m.d_y = dev_alloc(BATCH * OUT);
	m.w1 = dev_alloc(IN * HID);
	m.w2 = dev_alloc(HID * OUT);
	m.h = dev_alloc(BATCH * HID);
	m.o = dev_alloc(BATCH * OUT);
	m.dout = dev_alloc(BATCH * OUT);
	m.dh = dev_alloc(BATCH * HID);
	m.dw1 = dev_alloc(IN * HID);
	m.dw2 = dev_alloc(HID * OUT);
	m.d_loss = dev_alloc(1);
	init_weights(m.w1, IN * HID, 0.1f, 1);
	init_weights(m.w2, HID * OUT, 0.1f, 2);
	CK(cudaDeviceSynchronize());

	for (int i = 0; i < steps; i++)
		train_step(&m, i, smi_step);

	CB(cublasDestroy(m.cb));
	CK(cudaFreeHost(m.x));
	CK(cudaFreeHost(m.y));
	float *bufs[] = { m.d_x, m.d_y, m.w1, m.w2, m.h, m.o, m.dout, m.dh, m.dw1, m.dw2,
			  m.d_loss };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		CK(cudaFree(bufs[i]));
	return 0;
}

