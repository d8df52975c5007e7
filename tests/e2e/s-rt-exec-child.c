/*
 * s-rt-exec-child.c - fixture: the program s-rt-fork starts with vfork +
 * exec and with posix_spawn.  `s-rt-exec-child N`: main -> exec_step() N
 * times, each one exec_leaf(); prints "exec-child PID" and exits 40 + N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void exec_leaf(int i)
{
	SINK(i);
}

NOINLINE void exec_step(int i)
{
	exec_leaf(i);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 1;
	printf("exec-child %d\n", (int)getpid());
	for (int i = 0; i < n; i++)
		exec_step(i);
	return 40 + n;
}
