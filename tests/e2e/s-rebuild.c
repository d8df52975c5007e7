/*
 * s-rebuild.c - a trainer that is rebuilt after its run (test-rebuild.c).
 *
 *   main: 10 x train_step
 *   train_step: 3 x work, 2 x lib_op (libssrb.so, lib-rebuild.c), one
 *               malloc that is never freed (memory --leaks)
 *
 * Built again with -DSS_REBUILT (and another -O level): extra comes first
 * and work calls it, so the addresses of the run name other functions in
 * the new build (work's address, extra; train_step's, work).
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

int lib_op(int x);

#ifdef SS_REBUILT
NOINLINE int extra(int x)
{
	SINK(x);
	return x * 3 + 1;
}
#endif

NOINLINE int work(int x)
{
	volatile int acc = x;
	for (int i = 0; i < 2000; i++)
		acc += i;
#ifdef SS_REBUILT
	acc = extra(acc);
#endif
	return acc;
}

NOINLINE int train_step(int s)
{
	int acc = 0;
	for (int i = 0; i < 3; i++)
		acc += work(s + i);
	for (int i = 0; i < 2; i++)
		acc += lib_op(acc);
	SINK(malloc(100 + (size_t)s)); /* kept: a leak per step */
	return acc;
}

int main(void)
{
	int acc = 0;
	for (int s = 0; s < 10; s++)
		acc += train_step(s);
	printf("%d\n", acc != 0);
	return 0;
}
