/*
 * s-exit.c - fixture: ends with status 3.
 *
 *   s-exit return: main calls run() x7, then returns 3 from main
 *   s-exit exit:   main calls run() x7, then finish() calls exit(3), so
 *                  main and finish never return
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void run(int i)
{
	SINK(i);
}

NOINLINE void finish(int status)
{
	SINK(status);
	exit(status);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 7; i++)
		run(i);
	if (argc > 1 && !strcmp(argv[1], "exit"))
		finish(3);
	return 3;
}
