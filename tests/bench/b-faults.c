/*
 * b-faults.c - benchmark workload: N calls of a tiny instrumented leaf, and
 * what the loop cost the calling thread itself: page faults taken in this
 * thread (getrusage RUSAGE_THREAD, so the runtime's own background thread
 * is not counted) and ns per call, timed around the loop only: wall time,
 * and the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID: on a shared
 * machine, not the time others held the CPU).
 * Usage: b-faults N   ->  "calls N minflt X majflt Y ns_per_call Z cpu_ns_per_call C"
 * Built with -DSS_BENCH_LIB_LEAF, each iteration also calls lib_leaf() of a
 * shared library (b-faults-lib.c): the calls go back and forth between the
 * program and the library, whose addresses are far apart.
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

#ifdef SS_BENCH_LIB_LEAF
void lib_leaf(unsigned long i);
#define CALL(i) (leaf(i), lib_leaf(i))
#else
#define CALL(i) leaf(i)
#endif

static double now_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
#define now() now_of(CLOCK_MONOTONIC)

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000ul;
	leaf(0); /* the runtime's first-event work (file, maps) is not timed */
	struct rusage a, b;
	getrusage(RUSAGE_THREAD, &a);
	double c0 = now_of(CLOCK_THREAD_CPUTIME_ID);
	double t0 = now();
	for (unsigned long i = 0; i < n; i++)
		CALL(i);
	double t1 = now();
	double c1 = now_of(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &b);
	printf("calls %lu minflt %ld majflt %ld ns_per_call %.2f cpu_ns_per_call %.2f\n", n,
	       b.ru_minflt - a.ru_minflt, b.ru_majflt - a.ru_majflt,
	       (t1 - t0) * 1e9 / (double)n, (c1 - c0) * 1e9 / (double)n);
	return 0;
}
