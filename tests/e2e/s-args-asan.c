/*
 * s-args-asan.c - fixture: record.args in a program built with
 * -fsanitize=address (issue 44, test-args-asan.c).  Both listed functions
 * keep a local array, so AddressSanitizer poisons red zones in their
 * frames, which the capture copies at the hook.
 *
 *   s-args-asan N
 *     frame(i) for i in 0..N-1, which calls pick(i, 2 * i + 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE long pick(long n, long k)
{
	char buf[64];
	memset(buf, (int)k, sizeof(buf));
	SINK(buf[n & 63]);
	return n + buf[3];
}

NOINLINE long frame(long n)
{
	char big[128];
	memset(big, (int)n, sizeof(big));
	SINK(big[n & 127]);
	return pick(n, 2 * n + 1) + big[5];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, s = 0;
	for (long i = 0; i < n; i++)
		s += frame(i);
	printf("sum %ld\n", s);
	return 0;
}
