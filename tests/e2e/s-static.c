/*
 * s-static.c - fixture: a static function named twin() here and in
 * s-static-b.c, plus calls through function pointers.
 *
 *   main: twin (this file) x2, b_entry x1 (twin of s-static-b.c x3 inside),
 *         by_pointer x4 through a volatile pointer,
 *         op_add x3 and op_mul x3 through a table.
 *
 * Each counted function's definition opens on the line marked "@NAME" so the
 * test can check args.file to the line.
 */
#include <stdio.h>

#include "fixture.h"

DEFINE_SINK;

int b_entry(int x);

NOINLINE static int twin(int x) { /* @twin-a */
	SINK(x);
	return x + 1;
}

NOINLINE int by_pointer(int x) { /* @by_pointer */
	SINK(x);
	return x * 2;
}

NOINLINE static int op_add(int a) { /* @op_add */
	return a + 10;
}

NOINLINE static int op_mul(int a) { /* @op_mul */
	return a * 10;
}

static int (*const table[2])(int) = {op_add, op_mul};

int main(void)
{
	int (*volatile fp)(int) = by_pointer;
	long acc = 0;
	acc += twin(1);
	acc += twin(2);
	acc += b_entry(3);
	for (int i = 0; i < 4; i++)
		acc += fp(i);
	for (int i = 0; i < 6; i++)
		acc += table[i % 2](i);
	printf("acc %ld\n", acc);
	return 0;
}
