/*
 * b-args.c - benchmark workload for record.args (tests/bench/args.sh):
 * call `listed` N times and time the loop itself (start-up and exit are
 * not the cost of a call).  `never` is never called: listing it sets
 * record.args up without a call that keeps arguments.
 * Usage: b-args N     prints "NS ns/call" on stdout
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static float buf[16];

__attribute__((noinline)) void listed(float *p, int b, int t, int c, float lr)
{
	sink += (unsigned long)(b + t + c);
	p[c & 15] += lr;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void never(int x)
{
	sink += (unsigned long)x;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000ul;
	double t0 = now_ns();
	for (unsigned long i = 0; i < n; i++)
		listed(buf, 4, 64, (int)(i & 1023), 0.5f);
	double t1 = now_ns();
	if (argc > 2)
		never(1);
	printf("%.2f ns/call\n", (t1 - t0) / (double)n);
	return 0;
}
