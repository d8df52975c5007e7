/*
 * rank.c - which MPI rank this process is: read from the launcher's
 * environment at start (OpenMPI, MPICH/PMI, Slurm) and told again by
 * libstepscope-mpi once MPI_Init returned.  Each answer goes into the trace
 * as an SS_META_RANK record with a (ticks, CLOCK_MONOTONIC, CLOCK_REALTIME)
 * triple, the host's wall-clock mapping that `stepscope merge` and the
 * multi-host timeline use; the symbolizer names the process "rank N".
 *
 * Also the two entry points libstepscope-mpi calls (found with dlsym, so
 * neither library links the other): stepscope__mpi_rank after MPI_Init and
 * stepscope__mpi_sync after each clock-sync barrier.  MPI calls themselves
 * are recorded as ordinary user ranges whose name carries a TAB and their
 * arguments ("MPI_Allreduce\tbytes=4096 comm_size=4"; docs/mpi.md).
 * Never: block, or write anything when no rank is known.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int ss_rank_env(const char *rk, const char *sz, uint64_t *rank, uint64_t *size)
{
	const char *r = secure_getenv(rk), *s = secure_getenv(sz);
	char *end;
	if (!r || !*r)
		return 0;
	*rank = strtoull(r, &end, 10);
	if (*end)
		return 0;
	*size = s && *s ? strtoull(s, NULL, 10) : 0;
	return 1;
}

/* Write one SS_META_RANK record (lock taken here). */
static void ss_rank_write(uint64_t rank, uint64_t size, uint32_t source)
{
	struct ss_meta_rank m;
	struct ss_thread *self = &ss_tls;
	int was = self->in_slow;
	if (ss_rt.dormant || ss_rt.disabled || !ss_rt.initialized)
		return;
	memset(&m, 0, sizeof(m));
	m.rank = rank;
	m.size = size;
	m.source = source;
	self->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	ss_clock_pair(&m.ticks, &m.mono_ns);
	m.real_ns = ss_clock_realtime_ns() - (ss_clock_mono_ns() - m.mono_ns);
	ss_meta_write(SS_META_RANK, &m, sizeof(m), NULL, 0);
	pthread_mutex_unlock(&ss_rt.lock);
	self->in_slow = was;
}

/* 1 in an MPI launcher (mpirun, its daemons, srun): it runs no training
 * code, and a step.function of the ranks' program is not in it, so the
 * runtime stays out of it (`stepscope record -- mpirun ...`). */
int ss_rank_launcher(const char *exe)
{
	static const char *const names[] = { "mpirun", "mpiexec", "orterun", "orted",
					     "prterun", "prted", "prte", "hydra_pmi_proxy",
					     "mpiexec.hydra", "srun", "slurmstepd" };
	const char *slash = strrchr(exe, '/'), *base = slash ? slash + 1 : exe;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i]))
			return 1;
	return 0;
}

/* Called once from the runtime's start, after the run directory is known. */
void ss_rank_init(void)
{
	uint64_t rank, size;
	if (ss_rank_env("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", &rank, &size))
		ss_rank_write(rank, size, SS_RANK_ENV_OMPI);
	else if (ss_rank_env("PMI_RANK", "PMI_SIZE", &rank, &size))
		ss_rank_write(rank, size, SS_RANK_ENV_PMI);
	else if (ss_rank_env("SLURM_PROCID", "SLURM_NTASKS", &rank, &size))
		ss_rank_write(rank, size, SS_RANK_ENV_SLURM);
}

SS_EXPORT void stepscope__mpi_rank(int rank, int size)
{
	if (rank >= 0)
		ss_rank_write((uint64_t)rank, size > 0 ? (uint64_t)size : 0, SS_RANK_MPI);
}

/* Right after a barrier every rank left: ts now, and the wall clock. */
SS_EXPORT void stepscope__mpi_sync(unsigned long long round)
{
	struct ss_meta_sync m;
	struct ss_thread *self = &ss_tls;
	int was = self->in_slow;
	if (ss_rt.dormant || ss_rt.disabled || !ss_rt.initialized)
		return;
	uint64_t ts = ss_clock_now();
	m.round = round;
	m.real_ns = ss_clock_realtime_ns();
	self->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	ss_meta_write_ts(SS_META_SYNC, ts, &m, sizeof(m), NULL, 0);
	pthread_mutex_unlock(&ss_rt.lock);
	self->in_slow = was;
}
