/*
 * s-churn.c - fixture: THREADS threads created and joined one at a time,
 * each calling leaf() CALLS times, so every thread's ring and EVENTS chunk
 * is given back before the next thread starts.  Usage: s-churn THREADS
 * CALLS.  Prints "done" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

DEFINE_SINK;

static long calls;

NOINLINE void leaf(long i)
{
	SINK(i);
}

NOINLINE void *worker(void *arg)
{
	for (long i = 0; i < calls; i++)
		leaf(i);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[1]);
	calls = atol(argv[2]);
	for (int i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL))
			return 1;
		pthread_join(th, NULL);
	}
	printf("done\n");
	return 0;
}
