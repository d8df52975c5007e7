/*
 * b-calls.c - benchmark workload: N calls of a tiny instrumented leaf from an
 * instrumented loop, so the time per call is dominated by the hooks.  Built
 * with -finstrument-functions and linked against the hook variant under test.
 * Usage: b-calls N [steps]   (steps > 0: call step_marker() every N/steps)
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void step_marker(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000ul;
	unsigned long steps = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	unsigned long every = steps ? n / steps : 0;
	for (unsigned long i = 0; i < n; i++) {
		if (every && i % every == 0)
			step_marker();
		leaf(i);
	}
	printf("%lu\n", sink);
	return 0;
}
