/*
 * s-args-clone.c - fixture: the shapes gcc gives listed functions in the
 * builds people ship (issue 44, test-args-clone.c).  Each call's own
 * values are printed by its caller, one line per call, the oracle beside
 * gdb's:
 *
 *   s-args-clone [STEPS [B [T]]]
 *   main: STEPS x (forward(m, B, T, 1); sgemm(0, 1, 64, 64, 2 + s, m)),
 *         then forward(m, B + 1, T, 1)
 *
 *   forward   a clone: static, mode 1 at every call site, so gcc -O3
 *             calls forward.constprop.N (the hook still gets forward's
 *             address; mode is a DW_AT_const_value of the clone)
 *   matmul    inlined twice into that clone, around a call of sgemm (at
 *             gcc -O3 gdb reads the copies' B as 256, B*T: a register
 *             the location names holds the product by then)
 *   sgemm     split hot/cold: its error path calls a cold function, so gcc
 *             -O2 moves it to sgemm.cold (DW_AT_ranges, no low_pc)
 *
 * forward(m, B, T, mode) runs matmul, sgemm(0, 1, 64, 64, T, m), matmul.
 * Lines: "forward model B T", "matmul out B T C OC",
 * "sgemm trans_A trans_B M N K c": pointers %p, integers decimal.
 */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

static inline void matmul(float *out, int B, int T, int C, int OC)
{
	for (int i = 0; i < B * T * C; i++)
		out[i % 16] += (float)OC;
}

void sgemm(int trans_A, int trans_B, int M, int N, int K, float *c);

static __attribute__((noinline)) void forward(float *model, int B, int T, int mode)
{
	matmul(model, B, T, 64, 192 * mode);
	sgemm(0, 1, 64, 64, T, model);
	matmul(model, B, T, 64, 192 * mode);
	for (int i = 0; i < B * T; i++)
		sink += (long)(model[i % 8] * mode) + i;
}

__attribute__((cold, noinline)) void complain(int M, int N, int K)
{
	fprintf(stderr, "s-args-clone: bad shape %d %d %d\n", M, N, K);
}

__attribute__((noinline)) void sgemm(int trans_A, int trans_B, int M, int N, int K, float *c)
{
	if (M < 0 || N < 0 || K < 0) {
		complain(M, N, K);
		for (int i = 0; i < 16; i++)
			c[i] = 0;
		fprintf(stderr, "s-args-clone: reset\n");
		return;
	}
	for (int i = 0; i < M * N; i++)
		c[i % 16] += (float)(trans_A + trans_B * K);
}

int main(int argc, char **argv)
{
	float m[16] = { 1 };
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int B = argc > 2 ? atoi(argv[2]) : 4, T = argc > 3 ? atoi(argv[3]) : 64;

	for (int s = 0; s < n; s++) {
		forward(m, B, T, 1);
		printf("forward %p %d %d\n", (void *)m, B, T);
		printf("matmul %p %d %d 64 192\n", (void *)m, B, T);
		printf("sgemm 0 1 64 64 %d %p\n", T, (void *)m);
		printf("matmul %p %d %d 64 192\n", (void *)m, B, T);
		sgemm(0, 1, 64, 64, 2 + s, m);
		printf("sgemm 0 1 64 64 %d %p\n", 2 + s, (void *)m);
	}
	forward(m, B + 1, T, 1);
	printf("forward %p %d %d\n", (void *)m, B + 1, T);
	printf("matmul %p %d %d 64 192\n", (void *)m, B + 1, T);
	printf("sgemm 0 1 64 64 %d %p\n", T, (void *)m);
	printf("matmul %p %d %d 64 192\n", (void *)m, B + 1, T);
	printf("sink %ld\n", sink);
	return 0;
}
