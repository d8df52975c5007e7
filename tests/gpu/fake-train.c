/*
 * fake-train.c - the GPU proof kit's stand-in CUDA program, for
 * `device-check.sh --cpu-dry-run`: the host side of cublas-train.cu
 * (same loop, same functions, same printed counts) against the stand-in
 * CUDA runtime of tests/e2e/lib-cupti-fake.c instead of CUDA and cuBLAS.
 * `make gpu-bundle` builds it through stepscope-cc, so the dry run needs
 * no compiler.
 *
 *   fake-train [STEPS] [SMI_STEP]
 *
 * Each step: load_batch copies x and y host to device, forward launches
 * sgemm, relu, sgemm, loss_kernel (after a memset of the loss), the loss
 * comes back device to host, backward launches sgemm, sgemm, relu_bwd,
 * sgemm, sgd_update launches two kernels (and on odd steps clips the
 * gradient norm: one kernel more and 4 bytes back).  Per step it prints
 * "step N kernels K htod B dtoh B" (N as stepscope numbers steps: from 0),
 * and in step SMI_STEP query_smi() runs `nvidia-smi` (the kit puts a
 * stand-in first on PATH) and prints "nvidia-smi memory.used M MiB".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int fakeLaunchKernel(const char *name, int grid, int block, uint32_t stream);
int cudaMemcpy(void *dst, const void *src, size_t n, int kind);
int cudaMemset(void *p, int v, size_t n);

enum { BATCH = 64, IN = 32, OUT = 8, HtoD = 1, DtoH = 2 };

static float x[BATCH * IN], y[BATCH * OUT], d_x[BATCH * IN], d_y[BATCH * OUT];
static float loss, d_loss;
static int kernels;
static size_t htod, dtoh;

static void launch(const char *name, int grid, int block)
{
	fakeLaunchKernel(name, grid, block, 7);
	kernels++;
}

static void copy(void *dst, const void *src, size_t n, int kind)
{
	cudaMemcpy(dst, src, n, kind);
	if (kind == HtoD)
		htod += n;
	else
		dtoh += n;
}

__attribute__((noinline)) void load_batch(int step)
{
	for (int i = 0; i < BATCH * IN; i++)
		x[i] = (float)((i * 7 + step) % 13) / 13.0f;
	for (int i = 0; i < BATCH * OUT; i++)
		y[i] = (float)(i % OUT == step % OUT);
	copy(d_x, x, sizeof(x), HtoD);
	copy(d_y, y, sizeof(y), HtoD);
}

__attribute__((noinline)) float forward(void)
{
	launch("sgemm", 16, 256);
	launch("relu", 32, 256);
	launch("sgemm", 16, 256);
	cudaMemset(&d_loss, 0, sizeof(d_loss));
	launch("loss_kernel", 2, 256);
	copy(&loss, &d_loss, sizeof(loss), DtoH);
	return loss;
}

__attribute__((noinline)) void backward(void)
{
	launch("sgemm", 16, 256);
	launch("sgemm", 16, 256);
	launch("relu_bwd", 32, 256);
	launch("sgemm", 16, 256);
}

/* every other step the gradient norm is clipped and read back, so the
 * counts differ from step to step and a step numbered wrongly shows */
__attribute__((noinline)) void sgd_update(int step)
{
	if (step % 2) {
		launch("grad_norm", 1, 256);
		copy(&loss, &d_loss, sizeof(loss), DtoH);
	}
	launch("sgd", 8, 256);
	launch("sgd", 1, 256);
}

__attribute__((noinline)) void query_smi(void)
{
	FILE *p = popen("LD_PRELOAD= nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits "
			"--id=0", "r");
	long mib = -1;
	if (!p || fscanf(p, "%ld", &mib) != 1)
		mib = -1;
	if (p)
		pclose(p);
	printf("nvidia-smi memory.used %ld MiB\n", mib);
}

__attribute__((noinline)) void train_step(int step, int smi_step)
{
	kernels = 0;
	htod = dtoh = 0;
	load_batch(step);
	forward();
	backward();
	sgd_update(step);
	if (step == smi_step)
		query_smi();
	printf("step %d kernels %d htod %zu dtoh %zu\n", step, kernels, htod, dtoh);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 6;
	int smi_step = argc > 2 ? atoi(argv[2]) : 3;

	for (int i = 0; i < steps; i++)
		train_step(i, smi_step);
	return 0;
}
