/*
 * lib-shared.c - shared library fixture (libssfix.so) used by s-uselib.
 *
 *   lib_outer(n): calls the static lib_inner() n times
 *   lib_apply(cb, x): calls cb(x) once (a call back into the program)
 */
#include "fixture.h"

NOINLINE static int lib_inner(int x)
{
	SINK(x);
	return x + 1;
}

NOINLINE int lib_outer(int n)
{
	int acc = 0;
	for (int i = 0; i < n; i++)
		acc += lib_inner(i);
	return acc;
}

NOINLINE int lib_apply(int (*cb)(int), int x)
{
	return cb(x) + 1;
}
