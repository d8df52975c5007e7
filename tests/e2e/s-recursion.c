/*
 * s-recursion.c - fixture: plain and mutual recursion.
 *
 *   s-recursion FIB EVEN DEEP
 *     fib(FIB)       naive: fib(n) = n < 2 ? n : fib(n-1) + fib(n-2)
 *     is_even(EVEN)  is_even(0) = 1, is_odd(0) = 0, each calls the other on n-1
 *     down(DEEP)     down(0) returns, down(n) calls down(n-1): DEEP+1 frames
 *
 * Arguments come from argv so -O2 cannot fold anything.  Functions: main,
 * fib, is_even, is_odd, down.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE long fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

NOINLINE int is_odd(unsigned n);

NOINLINE int is_even(unsigned n)
{
	SINK(n);
	return n == 0 ? 1 : is_odd(n - 1);
}

NOINLINE int is_odd(unsigned n)
{
	SINK(n);
	return n == 0 ? 0 : is_even(n - 1);
}

NOINLINE void down(int n)
{
	SINK(n);
	if (n > 0)
		down(n - 1);
	SINK(1);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: s-recursion FIB EVEN DEEP\n");
		return 2;
	}
		/* strtol, not atoi: glibc's atoi is an inline function in stdlib.h
	 * that clang instruments, which would add calls to the trace. */
	int f = (int)strtol(argv[1], NULL, 10);
	int e = (int)strtol(argv[2], NULL, 10);
	int d = (int)strtol(argv[3], NULL, 10);
	printf("fib(%d) = %ld\n", f, fib(f));
	printf("is_even(%d) = %d\n", e, is_even((unsigned)e));
	down(d);
	return 0;
}
