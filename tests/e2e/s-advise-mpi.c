/*
 * s-advise-mpi.c - fixture for test-advise-mpi: a data-parallel step with
 * one rank late.  Each step: forward_shard() and backward_shard() work on
 * the rank's shard (UNIT_US of spinning per unit, in one spin per call: a
 * preemption across a spin's end lengthens it, once per call), then the
 * gradients are averaged with MPI_Allreduce, where the other ranks wait
 * for the last.
 *
 *   s-advise-mpi STEPS SKEW
 *
 * Rank 1's forward_shard does SKEW units (the planted straggler: 3), every
 * other rank's 1; backward_shard is 1 unit everywhere.  SKEW 1 is the
 * balanced run (the advice applied).  Functions: main, train_step,
 * forward_shard, backward_shard.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

#define N 1024
#define UNIT_US 25000

DEFINE_SINK;

static float grad[N], sum[N];

NOINLINE static void forward_shard(int rank, int units)
{
	SPIN_US((long)units * UNIT_US);
	for (int i = 0; i < N; i++)
		grad[i] = (float)(rank + i) * 0.5f;
}

NOINLINE static void backward_shard(void)
{
	SPIN_US(UNIT_US);
	SINK(grad[1]);
}

NOINLINE static void train_step(int rank, int units)
{
	forward_shard(rank, units);
	backward_shard();
	MPI_Allreduce(grad, sum, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int rank, size;
	int steps = argc > 1 ? atoi(argv[1]) : 12;
	int skew = argc > 2 ? atoi(argv[2]) : 3;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* warm-up: OpenMPI connects lazily (before the first step) */
	MPI_Allreduce(grad, sum, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int s = 0; s < steps; s++)
		train_step(rank, rank == 1 ? skew : 1);
	if (rank == 0)
		printf("ranks %d sum[1] %.1f\n", size, sum[1]);
	MPI_Finalize();
	return 0;
}
