/*
 * s-worker-names.c - fixture for thread names: main starts two threads it
 * does not name (they inherit main's comm from the kernel) and one it
 * names "loader"; each runs job() once, then main joins them.
 * Prints "worker TID" for the unnamed ones and "loader TID".
 * Functions: main, thread_main, job.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void job(long i)
{
	SINK(i);
}

NOINLINE void *thread_main(void *arg)
{
	long named = (long)arg;
	if (named)
		pthread_setname_np(pthread_self(), "loader");
	printf("%s %ld\n", named ? "loader" : "worker", (long)syscall(SYS_gettid));
	fflush(stdout);
	job(named);
	return NULL;
}

int main(void)
{
	pthread_t th[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)(i == 2));
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 0;
}
