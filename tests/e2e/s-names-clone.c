/*
 * s-names-clone.c - fixture for the clone tests in test-sym: built with
 * gcc -O2 and no instrumentation, GCC makes use_a.isra.0 (IPA-SRA: only
 * one field of the struct is used) and scale.constprop.0 (every caller
 * passes k = 7).  "L:" markers give the expected lines.
 */
#include <stdio.h>

struct big {
	int a, b, c[16];
};

static __attribute__((noinline)) int use_a(struct big *p) /* L:use_a */
{
	return p->a * 3;
}

static __attribute__((noinline)) int scale(int x, int k) /* L:scale */
{
	int s = 0;

	for (int i = 0; i < k; i++)
		s += x * i + k;
	return s;
}

int main(int argc, char **argv)
{
	struct big b = { argc, 2, { 0 } };
	int s = 0;

	(void)argv;
	for (int i = 0; i < 3; i++)
		s += use_a(&b) + scale(i, 7) + scale(i + 1, 7);
	printf("%d\n", s);
	return 0;
}
