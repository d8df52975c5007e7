/*
 * lib-rebuild.c - shared library fixture (libssrb.so) of s-rebuild, built
 * again after the run with -DSS_REBUILT: lib_extra comes first and
 * lib_op calls it, so every address of the library names something else.
 *
 *   lib_op(x): one call per use (2 a step in s-rebuild)
 *
 * With -DSS_BIG it carries 65 MiB of data, over what record copies.
 */
#include "fixture.h"

#ifdef SS_BIG
char lib_big[65 << 20] = { 1 };
#endif

#ifdef SS_REBUILT
NOINLINE int lib_extra(int x)
{
	SINK(x);
	return x * 7 + 3;
}
#endif

NOINLINE int lib_op(int x)
{
#ifdef SS_REBUILT
	x = lib_extra(x);
#endif
	SINK(x);
	return x * 2 + 1;
}
