/*
 * s-cc-omp.c - the three ways gcc starts an OpenMP team (libgomp entry
 * point in brackets), each of them a region the test counts per thread:
 *   1. parallel, 4 threads: region_work once per thread [GOMP_parallel]
 *   2. parallel for, 4 threads, schedule(dynamic, 1): loop_work once per
 *      iteration, 8 in all [GOMP_parallel_loop_dynamic]
 *   3. parallel sections, 2 threads: section_work once per section, 2 in
 *      all [GOMP_parallel_sections]
 * Calls: main 1, region_work 4, loop_work 8, section_work 2, and each
 * outlined region once per thread of its team (4, 4, 2).
 */
#include <omp.h>
#include <stdio.h>

#include "fixture.h"

DEFINE_SINK;

static NOINLINE int region_work(int i)
{
	return SINK(i * 2);
}

static NOINLINE int loop_work(int i)
{
	return SINK(i + 1);
}

static NOINLINE int section_work(int i)
{
	return SINK(i * 3);
}

int main(void)
{
	omp_set_dynamic(0);
#pragma omp parallel num_threads(4)
	region_work(omp_get_thread_num());
#pragma omp parallel for num_threads(4) schedule(dynamic, 1)
	for (int i = 0; i < 8; i++)
		loop_work(i);
#pragma omp parallel sections num_threads(2)
	{
#pragma omp section
		section_work(1);
#pragma omp section
		section_work(2);
	}
	printf("threads done\n");
	return 0;
}
