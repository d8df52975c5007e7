/* calls-lib.c - second file of s-cc-calls: lib_fn, called 4 times. */
#include "fixture.h"

int lib_fn(int x);

NOINLINE int lib_fn(int x)
{
	return SINK(x * 3);
}
