/*
 * s-uselib.c - fixture: a program linked against libssfix.so (lib-shared.c).
 *
 *   s-uselib [ROUNDS [SLEEP_MS]]   ROUNDS times (default 1), then main
 *   sleeps SLEEP_MS (default 0):
 *   main: lib_outer(3) x4 (lib_inner x3 in each), lib_apply(cb_square) x5
 *         (cb_square, in this program, x1 inside each lib_apply)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

int lib_outer(int n);
int lib_apply(int (*cb)(int), int x);

NOINLINE static int cb_square(int x)
{
	SINK(x);
	return x * x;
}

int main(int argc, char **argv)
{
	long acc = 0, rounds = argc > 1 ? atol(argv[1]) : 1;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 4; i++)
			acc += lib_outer(3);
		for (int i = 0; i < 5; i++)
			acc += lib_apply(cb_square, i);
	}
	long ms = argc > 2 ? atol(argv[2]) : 0;
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	nanosleep(&ts, NULL);
	printf("acc %ld\n", acc);
	return 0;
}
