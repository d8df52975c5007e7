/*
 * s-uselib.c - fixture: a program linked against libssfix.so (lib-shared.c).
 *
 *   main: lib_outer(3) x4 (lib_inner x3 in each), lib_apply(cb_square) x5
 *         (cb_square, in this program, x1 inside each lib_apply)
 */
#include <stdio.h>

#include "fixture.h"

DEFINE_SINK;

int lib_outer(int n);
int lib_apply(int (*cb)(int), int x);

NOINLINE static int cb_square(int x)
{
	SINK(x);
	return x * x;
}

int main(void)
{
	long acc = 0;
	for (int i = 0; i < 4; i++)
		acc += lib_outer(3);
	for (int i = 0; i < 5; i++)
		acc += lib_apply(cb_square, i);
	printf("acc %ld\n", acc);
	return 0;
}
