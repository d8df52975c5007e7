/*
 * s-rt-omp.c - fixture: an OpenMP parallel region of 4 threads, run twice;
 * thread k calls omp_work() k + 1 times per region.  Prints "omp K TID"
 * for each thread of the first region (the pool is reused).
 */
#include <omp.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void omp_work(int k)
{
	SINK(k);
}

int main(void)
{
	for (int r = 0; r < 2; r++) {
#pragma omp parallel num_threads(4)
		{
			int k = omp_get_thread_num();
			for (int i = 0; i <= k; i++)
				omp_work(k);
			if (r == 0) {
#pragma omp critical
				printf("omp %d %ld\n", k, (long)syscall(SYS_gettid));
			}
		}
	}
	return 0;
}
