/*
 * s-ring.c - fixture: THREADS threads each call leaf() N times, far more
 * events than a thread's ring holds, so blocks are copied out (and the ring
 * reused) many times while they run.  Usage: s-ring MODE THREADS N
 *   exit   the threads are joined, main returns
 *   kill   the threads are joined, then SIGKILL: what was not copied out
 *          yet is only in the rings of the trace file
 * With THREADS 0, main calls leaf() N times itself.
 * Prints "tid TID" per thread that calls leaf(), then "done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static long calls;
static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void leaf(long i)
{
	SINK(i);
}

NOINLINE void *worker(void *arg)
{
	pthread_mutex_lock(&out);
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_mutex_unlock(&out);
	for (long i = 0; i < calls; i++)
		leaf(i);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int n = atoi(argv[2]);
	pthread_t th[16];
	calls = atol(argv[3]);
	if (n > 16)
		n = 16;
	if (!n)
		worker(NULL);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("done\n");
	fflush(stdout);
	if (!strcmp(argv[1], "kill"))
		raise(SIGKILL);
	return 0;
}
