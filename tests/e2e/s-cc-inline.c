/*
 * s-cc-inline.c - C99 inline functions without an external definition,
 * used from two translation units (this one and cc/inline-b.c).
 * Calls: main 1, use_b 2, sq 3 + 2 * 2 = 7, cube 2.
 */
#include <stdio.h>

#include "fixture.h"
#include "inline.h"

DEFINE_SINK;

int use_b(int x);

int main(void)
{
	for (int i = 1; i <= 3; i++)
		SINK(sq(i));
	for (int i = 1; i <= 2; i++)
		SINK(use_b(i));
	printf("sink %ld\n", (long)fixture_sink);
	return 0;
}
