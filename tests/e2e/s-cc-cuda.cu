/*
 * s-cc-cuda.cu - host-only CUDA source (no kernel, no GPU needed): built
 * with stepscope-cc nvcc.  Calls: main 1, twice 3.
 */
#include <stdio.h>

static __attribute__((noinline)) int twice(int x)
{
	return 2 * x;
}

int main(void)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += twice(i);
	printf("sum %d\n", s);
	return 0;
}
