/*
 * s-cc-omp.c - one OpenMP parallel region of 4 threads; each thread calls
 * region_work once.  Calls: main 1, the outlined region 4 (one per thread),
 * region_work 4.
 */
#include <omp.h>
#include <stdio.h>

#include "fixture.h"

DEFINE_SINK;

static NOINLINE int region_work(int i)
{
	return SINK(i * 2);
}

int main(void)
{
	omp_set_dynamic(0);
#pragma omp parallel num_threads(4)
	region_work(omp_get_thread_num());
	printf("threads done\n");
	return 0;
}
