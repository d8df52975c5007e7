/*
 * s-cc-missing.c - calls a function that is declared but defined nowhere:
 * the link must fail with the linker's own undefined reference.
 */
#include "fixture.h"

DEFINE_SINK;

int ss_cc_missing_fn(int x);

int main(void)
{
	return SINK(ss_cc_missing_fn(3)) == 0;
}
