/*
 * b-recurse.c - benchmark workload: deep recursion.  One descent calls
 * down() DEPTH frames deep; the descent is repeated until N calls are made
 * (N rounded down to a multiple of DEPTH), so the hooks see long runs of
 * enters, then long runs of exits, with the stack deep the whole time.
 * Built like b-calls.c; the work after the recursive call keeps it a real
 * call at -O2 (no tail call, no loop made of it) in the plain build too.
 * step_marker() is never called: it is there for a step.function that never
 * fires (the "outside any window" variant), as in b-calls.
 * Usage: b-recurse N [DEPTH]   (DEPTH defaults to 1000; prints the calls)
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long down(unsigned long left)
{
	unsigned long r = left ? down(left - 1) : 0;
	__asm__ volatile("" : "+r"(r) :: "memory");
	sink = r;
	return r + 1;
}

__attribute__((noinline)) void step_marker(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000ul;
	unsigned long depth = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000ul;
	unsigned long calls = 0;
	if (depth == 0)
		depth = 1;
	for (unsigned long i = 0; i < n / depth; i++)
		calls += down(depth - 1);
	printf("%lu\n", calls);
	return 0;
}
