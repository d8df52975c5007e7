/*
 * s-advise-blocked.c - fixture for `stepscope advise`'s blocked check
 * (test-advise-blocked): a training loop whose step loads its batch itself
 * and blocks while it does, and the same loop with a loader thread that
 * prefetches the next batch (the advice applied).
 *
 *   s-advise-blocked STEPS [prefetch]
 *       main calls train_step STEPS times (default 30), then
 *       stepscope_step().  train_step gets a batch, then compute() (10 ms
 *       of work, fixture.h SPIN_US: the clock fixes it).
 *       Without `prefetch`, train_step calls load_batch() itself: it reads
 *       the file batch.bin (written at start, 64 KiB) and sleeps 6 ms, the
 *       wait of a slow disk or network.  With `prefetch`, a loader thread
 *       (loader) calls load_batch() for the next batch while the step
 *       computes; the step takes it with next_batch(), which waits only
 *       when the loader is late.
 *
 * Prints "median_step_ns N": the median wall time of train_step, measured
 * by the fixture, steps 2 on (the loader's first batch is not in them).
 * Functions: main, train_step, load_batch, compute, next_batch, loader.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stepscope.h"
#include "fixture.h"

DEFINE_SINK;

#define BATCH 65536
#define WAIT_US 6000
#define COMPUTE_US 10000
#define MAXSTEPS 1000

static char batch[2][BATCH];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready, taken = 1, stop;

NOINLINE void load_batch(char *buf)
{
	int fd = open("batch.bin", O_RDONLY);
	struct timespec w = { 0, WAIT_US * 1000L };
	ssize_t n = fd >= 0 ? read(fd, buf, BATCH) : -1;

	if (fd >= 0)
		close(fd);
	nanosleep(&w, NULL);
	SINK(n);
}

NOINLINE void compute(const char *buf)
{
	SPIN_US(COMPUTE_US);
	SINK(buf[0]);
}

/* The loader thread: fills batch[k & 1] whenever the step took the last. */
NOINLINE void *loader(void *arg)
{
	(void)arg;
	for (unsigned k = 0;; k++) {
		pthread_mutex_lock(&mu);
		while (!taken && !stop)
			pthread_cond_wait(&cv, &mu);
		if (stop) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		taken = 0;
		pthread_mutex_unlock(&mu);
		load_batch(batch[k & 1]);
		pthread_mutex_lock(&mu);
		ready = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}

/* The next prefetched batch: waits while the loader is late. */
NOINLINE const char *next_batch(unsigned step)
{
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	ready = 0;
	taken = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return batch[step & 1];
}

NOINLINE void train_step(unsigned step, int prefetch)
{
	const char *b;

	if (prefetch) {
		b = next_batch(step);
	} else {
		load_batch(batch[0]);
		b = batch[0];
	}
	compute(b);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 30;
	int prefetch = argc > 2 && !strcmp(argv[2], "prefetch");
	static long long t[MAXSTEPS];
	int n = 0, fd = open("batch.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct timespec a, b;
	pthread_t th;

	if (fd < 0 || write(fd, batch[1], BATCH) != BATCH) {
		perror("batch.bin");
		return 1;
	}
	close(fd);
	if (prefetch && pthread_create(&th, NULL, loader, NULL)) {
		perror("pthread_create");
		return 1;
	}
	for (int i = 0; i < steps; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		train_step((unsigned)i, prefetch);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (i >= 2 && n < MAXSTEPS)
			t[n++] = (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec;
		stepscope_step();
	}
	if (prefetch) {
		pthread_mutex_lock(&mu);
		stop = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		pthread_join(th, NULL);
	}
	/* insertion sort: no function the test does not count */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			long long v = t[j];
			t[j] = t[j - 1];
			t[j - 1] = v;
		}
	printf("median_step_ns %lld\n", n ? t[n / 2] : 0);
	return 0;
}
