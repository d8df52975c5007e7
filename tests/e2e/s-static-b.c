/*
 * s-static-b.c - second translation unit of s-static: its own static twin(),
 * called three times by b_entry().
 */
#include "fixture.h"

NOINLINE static int twin(int x) { /* @twin-b */
	SINK(-x);
	return x - 1;
}

NOINLINE int b_entry(int x) { /* @b_entry */
	return twin(x) + twin(x + 1) + twin(x + 2);
}
