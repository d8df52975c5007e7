/*
 * s-threads.c - fixture: main and three named threads call work() a known
 * number of times; work() calls the static helper() twice per call.
 *
 *   main:      work x5
 *   worker-i:  work x (10, 20, 30)[i], i = 0..2, all three alive at once
 *
 * Prints "pid P", "tid main T" and "tid worker-i T" (real OS ids) so the test
 * can match them to the trace.  Functions: main, worker, work, helper.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static const int calls_per_thread[3] = {10, 20, 30};
static pthread_barrier_t all_started;

NOINLINE static void helper(int x)
{
	SINK(x);
}

NOINLINE void work(int i)
{
	helper(i);
	helper(i + 1);
}

NOINLINE static void *worker(void *arg)
{
	int i = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%d", i);
	pthread_setname_np(pthread_self(), name);
	/* All three threads are alive together: distinct tids, real overlap. */
	pthread_barrier_wait(&all_started);
	for (int k = 0; k < calls_per_thread[i]; k++)
		work(k);
	printf("tid %s %ld\n", name, (long)gettid());
	return NULL;
}

int main(void)
{
	pthread_t th[3];
	pthread_barrier_init(&all_started, NULL, 3);
	for (long i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (int k = 0; k < 5; k++)
		work(k);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("pid %ld\ntid main %ld\n", (long)getpid(), (long)gettid());
	return 0;
}
