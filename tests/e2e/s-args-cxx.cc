/*
 * s-args-cxx.cc - fixture: record.args on C++ (issue 33): a method (its
 * `this` and scalar parameters) and a function in a namespace, each called
 * with values that change per call, which the callers log to a ledger
 * before the call: "forward THIS b t scale(%a)" and "gemm m n alpha(%a)".
 *   s-args-cxx LEDGER
 */
#include <cstdio>
#include <cstdlib>

struct Layer {
	float w[64];
	__attribute__((noinline)) float forward(int b, int t, float scale)
	{
		float s = 0;
		for (int i = 0; i < b * t; i++)
			s += w[i & 63] * scale + (float)(b - t);
		return s;
	}
};

namespace nn {
__attribute__((noinline)) double gemm(long m, long n, double alpha)
{
	double s = 0;
	for (long i = 0; i < m; i++)
		for (long j = 0; j < n; j++)
			s += alpha * (double)(i ^ j);
	return s;
}
} // namespace nn

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (!f)
		return 2;
	static Layer l;
	double acc = 0;
	for (int i = 0; i < 4; i++) {
		float scale = 0.1f * (float)(i + 1);
		double alpha = 1.0 / (i + 3);
		fprintf(f, "forward %p %d %d %a\n", (void *)&l, i + 1, 16 + i, scale);
		acc += l.forward(i + 1, 16 + i, scale);
		fprintf(f, "gemm %ld %ld %a\n", (long)(i + 2), (long)(8 * i + 3), alpha);
		acc += nn::gemm(i + 2, 8 * i + 3, alpha);
	}
	fclose(f);
	printf("acc %g\n", acc);
	return 0;
}
