/* inline-b.c - second translation unit of s-cc-inline: uses sq and cube. */
#include "fixture.h"
#include "inline.h"

int use_b(int x);

NOINLINE int use_b(int x)
{
	return SINK(sq(x) + cube(x));
}
