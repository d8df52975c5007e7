/*
 * mpi.c - libstepscope-mpi: records MPI calls through the standard PMPI
 * profiling interface, without rebuilding MPI.  `stepscope record` preloads
 * it next to libstepscope when the program links libmpi (or is mpirun); each
 * wrapper opens a user range named after the call, with its arguments after
 * a TAB ("MPI_Allreduce\tbytes=4096 comm_size=4"), calls PMPI_*, and closes
 * the range, so the calls show as slices in every export and report.
 *
 * MPI_Init also tells libstepscope the rank (MPI_Comm_rank of the world) and
 * runs a few clock-sync barriers, as does MPI_Finalize: the times every rank
 * left them are what `stepscope merge` aligns hosts on (docs/mpi.md).
 *
 * Built against the MPI headers found at build time, but linked without
 * libmpi and with every MPI symbol weak: preloaded into a program without
 * MPI (mpirun itself) it loads and does nothing; into a program of another
 * MPI library (detected by the OpenMPI world communicator missing) it only
 * forwards.  libstepscope's entry points are looked up with dlsym, so
 * without it every wrapper only forwards too.  Never changes an MPI result.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/auxv.h>

#pragma weak PMPI_Init
#pragma weak PMPI_Init_thread
#pragma weak PMPI_Finalize
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Type_size
#pragma weak PMPI_Allreduce
#pragma weak PMPI_Reduce
#pragma weak PMPI_Bcast
#pragma weak PMPI_Barrier
#pragma weak PMPI_Send
#pragma weak PMPI_Recv
#pragma weak PMPI_Isend
#pragma weak PMPI_Irecv
#pragma weak PMPI_Wait
#pragma weak PMPI_Waitall
#pragma weak PMPI_Allgather
#pragma weak PMPI_Alltoall
#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#endif

#define SS_MPI_EXPORT __attribute__((visibility("default")))
#define SS_MPI_SYNC_ROUNDS 5

static void (*ss_mpi_push)(const char *);
static void (*ss_mpi_pop)(void);
static int (*ss_mpi_recording)(void);
static void (*ss_mpi_rank_fn)(int, int);
static void (*ss_mpi_sync_fn)(unsigned long long);
static int ss_mpi_ready; /* 1: libstepscope found and this MPI is ours */

/* Called once from MPI_Init*, after PMPI_Init returned. */
static void ss_mpi_setup(void)
{
	int rank = -1, size = 0;
	if (getauxval(AT_SECURE))
		return; /* a setuid program: forward only, as libstepscope
			 * records nothing there (docs/robustness.md) */
#ifdef OPEN_MPI
	if (!&ompi_mpi_comm_world)
		return; /* another MPI library: forward only */
#endif
	ss_mpi_push = (void (*)(const char *))dlsym(RTLD_DEFAULT, "stepscope_range_push");
	ss_mpi_pop = (void (*)(void))dlsym(RTLD_DEFAULT, "stepscope_range_pop");
	ss_mpi_recording = (int (*)(void))dlsym(RTLD_DEFAULT, "stepscope_recording");
	ss_mpi_rank_fn = (void (*)(int, int))dlsym(RTLD_DEFAULT, "stepscope__mpi_rank");
	ss_mpi_sync_fn = (void (*)(unsigned long long))dlsym(RTLD_DEFAULT,
							      "stepscope__mpi_sync");
	if (!ss_mpi_push || !ss_mpi_pop || !ss_mpi_recording)
		return;
	ss_mpi_ready = 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (ss_mpi_rank_fn)
		ss_mpi_rank_fn(rank, size);
}

/* Clock-sync points: rounds base .. base + SS_MPI_SYNC_ROUNDS - 1. */
static void ss_mpi_sync(unsigned long long base)
{
	if (!ss_mpi_ready || !ss_mpi_sync_fn)
		return;
	for (int i = 0; i < SS_MPI_SYNC_ROUNDS; i++) {
		PMPI_Barrier(MPI_COMM_WORLD);
		ss_mpi_sync_fn(base + (unsigned long long)i);
	}
}

/* Open the range of one call; 1 if it was opened (close it with end). */
static int ss_mpi_begin(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int ss_mpi_begin(const char *name, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int n;
	if (!ss_mpi_ready || !ss_mpi_recording())
		return 0;
	n = snprintf(text, sizeof(text), "%s\t", name);
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	ss_mpi_push(text);
	return 1;
}

static void ss_mpi_end(int on)
{
	if (on)
		ss_mpi_pop();
}

static long long ss_mpi_bytes(int count, MPI_Datatype t)
{
	int sz = 0;
	if (PMPI_Type_size(t, &sz) != MPI_SUCCESS)
		return -1;
	return (long long)count * sz;
}

static int ss_mpi_csize(MPI_Comm c)
{
	int n = 0;
	if (PMPI_Comm_size(c, &n) != MPI_SUCCESS)
		return -1;
	return n;
}

SS_MPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS) {
		ss_mpi_setup();
		ss_mpi_sync(0);
	}
	return rc;
}

SS_MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS) {
		ss_mpi_setup();
		ss_mpi_sync(0);
	}
	return rc;
}

SS_MPI_EXPORT int MPI_Finalize(void)
{
	ss_mpi_sync(1000);
	int on = ss_mpi_begin("MPI_Finalize", "comm_size=%d", ss_mpi_csize(MPI_COMM_WORLD));
	int rc = PMPI_Finalize();
	ss_mpi_end(on);
	ss_mpi_ready = 0; /* no PMPI call after this */
	return rc;
}

SS_MPI_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t,
				MPI_Op op, MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Allreduce", "bytes=%lld comm_size=%d",
			      ss_mpi_bytes(count, t), ss_mpi_csize(comm));
	int rc = PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t,
			     MPI_Op op, int root, MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Reduce", "bytes=%lld root=%d comm_size=%d",
			      ss_mpi_bytes(count, t), root, ss_mpi_csize(comm));
	int rc = PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Bcast", "bytes=%lld root=%d comm_size=%d",
			      ss_mpi_bytes(count, t), root, ss_mpi_csize(comm));
	int rc = PMPI_Bcast(buf, count, t, root, comm);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Barrier(MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Barrier", "comm_size=%d", ss_mpi_csize(comm));
	int rc = PMPI_Barrier(comm);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag,
			   MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Send", "bytes=%lld peer=%d tag=%d comm_size=%d",
			      ss_mpi_bytes(count, t), dest, tag, ss_mpi_csize(comm));
	int rc = PMPI_Send(buf, count, t, dest, tag, comm);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag,
			   MPI_Comm comm, MPI_Status *st)
{
	int on = ss_mpi_begin("MPI_Recv", "bytes=%lld peer=%d tag=%d comm_size=%d",
			      ss_mpi_bytes(count, t), src, tag, ss_mpi_csize(comm));
	int rc = PMPI_Recv(buf, count, t, src, tag, comm, st);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag,
			    MPI_Comm comm, MPI_Request *req)
{
	int on = ss_mpi_begin("MPI_Isend", "bytes=%lld peer=%d tag=%d comm_size=%d",
			      ss_mpi_bytes(count, t), dest, tag, ss_mpi_csize(comm));
	int rc = PMPI_Isend(buf, count, t, dest, tag, comm, req);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag,
			    MPI_Comm comm, MPI_Request *req)
{
	int on = ss_mpi_begin("MPI_Irecv", "bytes=%lld peer=%d tag=%d comm_size=%d",
			      ss_mpi_bytes(count, t), src, tag, ss_mpi_csize(comm));
	int rc = PMPI_Irecv(buf, count, t, src, tag, comm, req);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
	int on = ss_mpi_begin("MPI_Wait", "count=1");
	int rc = PMPI_Wait(req, st);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
	int on = ss_mpi_begin("MPI_Waitall", "count=%d", n);
	int rc = PMPI_Waitall(n, reqs, sts);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
				int rcount, MPI_Datatype rt, MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Allgather", "bytes=%lld comm_size=%d",
			      ss_mpi_bytes(scount, st), ss_mpi_csize(comm));
	int rc = PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
	ss_mpi_end(on);
	return rc;
}

SS_MPI_EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
			       int rcount, MPI_Datatype rt, MPI_Comm comm)
{
	int on = ss_mpi_begin("MPI_Alltoall", "bytes=%lld comm_size=%d",
			      ss_mpi_bytes(scount, st), ss_mpi_csize(comm));
	int rc = PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm);
	ss_mpi_end(on);
	return rc;
}
