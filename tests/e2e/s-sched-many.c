/*
 * s-sched-many.c - fixture for threads the switch recording cannot watch:
 * THREADS threads, all alive at once (a barrier), each calling sleeper()
 * once (usleep 3 ms), then joined.  Usage: s-sched-many THREADS.  Prints
 * "done".  Functions: main, sleeper, worker.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static pthread_barrier_t all;

NOINLINE void sleeper(void)
{
	usleep(3000);
	SINK(1);
}

NOINLINE void *worker(void *arg)
{
	pthread_barrier_wait(&all); /* every thread registered first */
	sleeper();
	pthread_barrier_wait(&all);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int n = atoi(argv[1]);
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	if (!th || pthread_barrier_init(&all, NULL, (unsigned)n))
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("done\n");
	free(th);
	return 0;
}
