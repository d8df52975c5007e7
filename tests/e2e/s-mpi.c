/*
 * s-mpi.c - fixture for test-mpi: a data-parallel loop of STEPS train_step
 * calls, each some compute then an MPI_Allreduce of "gradients"; rank
 * SS_DELAY_RANK (env) sleeps SS_DELAY_MS more per step, the straggler.
 * Also one Bcast, Barrier and a Send/Recv ring before the loop.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEPS 5
#define N 1024

static float grad[N], sum[N];

static void compute(int rank, int delay_ms)
{
	for (int i = 0; i < N; i++)
		grad[i] = (float)(rank + i) * 0.5f;
	if (delay_ms > 0) {
		struct timespec ts = { 0, (long)delay_ms * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static void train_step(int rank, int delay_ms)
{
	compute(rank, delay_ms);
	MPI_Allreduce(grad, sum, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int rank, size, token = 0;
	const char *dr = getenv("SS_DELAY_RANK"), *dm = getenv("SS_DELAY_MS");
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int delay = dr && dm && atoi(dr) == rank ? atoi(dm) : 0;
	MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (size > 1) { /* a ring: 0 -> 1 -> ... -> 0 */
		if (rank == 0) {
			MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token++;
			MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
		}
	}
	/* warm-up, as DDP's first broadcast: OpenMPI connects lazily (before
	 * the first step, so not recorded) */
	MPI_Allreduce(grad, sum, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int s = 0; s < STEPS; s++)
		train_step(rank, delay);
	if (rank == 0)
		printf("token %d sum[1] %.1f\n", token, sum[1]);
	MPI_Finalize();
	return 0;
}
