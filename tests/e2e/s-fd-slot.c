/*
 * s-fd-slot.c - fixture for test-fd-slot: a program that starts a thread
 * before its first step, so the trace file is created while the fd table
 * is shared.  It prints its descriptors numbered 1000 and up (where the runtime keeps its own) (number and
 * target) at the top of main and again in its last step:
 *   start FD TARGET        (main, before any step)
 *   step FD TARGET         (in the last of STEPS train_step calls)
 *   s-fd-slot STEPS
 * Functions: main, train_step, leaf.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static void high_fds(const char *tag)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);
		char link[64], to[4096];
		if (fd < 1000 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = 0;
		printf("%s %d %s\n", tag, fd, to);
	}
	if (d)
		closedir(d);
}

NOINLINE static void leaf(int i)
{
	SINK(i);
}

NOINLINE void train_step(int i, int last)
{
	leaf(i);
	if (i == last)
		high_fds("step");
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;

static void *idle_thread(void *arg)
{
	pthread_mutex_lock(&mu);
	while (!done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 6;
	pthread_t th;
	high_fds("start");
	if (pthread_create(&th, NULL, idle_thread, NULL))
		return 1;
	for (int i = 0; i < steps; i++)
		train_step(i, steps - 1);
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	return 0;
}
