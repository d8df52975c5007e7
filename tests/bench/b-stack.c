/*
 * b-stack.c - benchmark workload for record.stack: recurse LEVELS frames
 * deep, then call a tiny instrumented leaf N times, timing the loop itself
 * (startup and exit are not the cost of a stack).  Built with
 * -finstrument-functions -fno-omit-frame-pointer, as stepscope-cc builds.
 * Usage: b-stack LEVELS N     prints "NS ns/call" on stdout
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noinline)) double level(int left, unsigned long n)
{
	double t0, t1;

	if (left > 1) {
		double r = level(left - 1, n);
		__asm__ volatile("" ::: "memory"); /* no tail call */
		return r;
	}
	t0 = now_ns();
	for (unsigned long i = 0; i < n; i++)
		leaf(i);
	t1 = now_ns();
	return (t1 - t0) / (double)n;
}

int main(int argc, char **argv)
{
	int levels = argc > 1 ? atoi(argv[1]) : 8;
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000ul;
	printf("%.2f ns/call\n", level(levels, n));
	return (int)(sink & 0);
}
