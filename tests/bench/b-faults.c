/*
 * b-faults.c - benchmark workload: N calls of a tiny instrumented leaf, and
 * what the loop cost the calling thread itself: page faults taken in this
 * thread (getrusage RUSAGE_THREAD, so the runtime's own background thread
 * is not counted) and ns per call, timed around the loop only.
 * Usage: b-faults N   ->  "calls N minflt X majflt Y ns_per_call Z"
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000ul;
	leaf(0); /* the runtime's first-event work (file, maps) is not timed */
	struct rusage a, b;
	getrusage(RUSAGE_THREAD, &a);
	double t0 = now();
	for (unsigned long i = 0; i < n; i++)
		leaf(i);
	double t1 = now();
	getrusage(RUSAGE_THREAD, &b);
	printf("calls %lu minflt %ld majflt %ld ns_per_call %.2f\n", n,
	       b.ru_minflt - a.ru_minflt, b.ru_majflt - a.ru_majflt,
	       (t1 - t0) * 1e9 / (double)n);
	return 0;
}
