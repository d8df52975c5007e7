/*
 * s-rt-crash.c - fixture: the ways a process ends, each after the same
 * calls.  main -> outer() -> middle(), which calls work() 100 times, then
 * die(MODE) ends the process from three frames deep:
 *
 *   exit    exit(0)             _exit    _exit(0)
 *   return  die returns, main returns 0
 *   abort   abort()             segv     store through a null pointer
 *   bus     touch a mapping past the end of an empty file (SIGBUS)
 *   kill    SIGKILL to itself   oom      allocate and touch memory until
 *                                        the kernel kills it (run it in a
 *                                        memory-limited cgroup)
 *   cap     no death: calls work() N times (argv[2]) and prints "done",
 *           for the size cap and full-disk tests
 * A second thread, "bystander", is inside spinner() -> idle() the whole
 * time (prints "bystander TID" once it is).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static volatile int started;

NOINLINE void work(long i)
{
	SINK(i);
}

NOINLINE void idle(void)
{
	started = 1;
	for (;;)
		pause();
}

NOINLINE void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "bystander");
	printf("bystander %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	idle();
	return arg;
}

NOINLINE void die(const char *mode)
{
	if (!strcmp(mode, "exit")) {
		exit(0);
	} else if (!strcmp(mode, "_exit")) {
		_exit(0);
	} else if (!strcmp(mode, "abort")) {
		abort();
	} else if (!strcmp(mode, "segv")) {
		volatile int *volatile np = NULL;
		*np = 1;
	} else if (!strcmp(mode, "bus")) {
		char path[] = "/tmp/ss-bus-XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		SINK(p[0]);
	} else if (!strcmp(mode, "kill")) {
		kill(getpid(), SIGKILL);
	} else if (!strcmp(mode, "oom")) {
		for (;;) {
			char *p = malloc(1 << 20);
			if (p)
				memset(p, 1, 1 << 20);
		}
	}
}

NOINLINE void middle(const char *mode, long n)
{
	for (long i = 0; i < n; i++)
		work(i);
	if (strcmp(mode, "cap"))
		die(mode);
}

NOINLINE void outer(const char *mode, long n)
{
	middle(mode, n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "return";
	long n = argc > 2 ? atol(argv[2]) : 100;
	pthread_t th;
	if (strcmp(mode, "cap")) {
		pthread_create(&th, NULL, spinner, NULL);
		while (!started)
			usleep(1000);
	}
	outer(mode, n);
	printf("done\n");
	return 0;
}
