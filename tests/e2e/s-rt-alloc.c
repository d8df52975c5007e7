/*
 * s-rt-alloc.c - fixture: a program with an allocator of its own, as
 * arena allocators and leak checkers have: malloc, free, calloc and
 * realloc defined after <stdlib.h> (so their first declaration is in a
 * system header), forwarding to glibc's __libc_* functions and counting
 * their calls (alloc-own.h, shared with lib-alloc-own.c).  main makes
 * 10 allocations around train_step() and prints "malloc M calloc C
 * realloc R free F": the counts the test compares with the plain build's
 * and with the trace.
 *   s-rt-alloc fork: then forks; the child calls train_step() (10 more
 *                    mallocs), frees them and exits; the parent waits
 *   s-rt-alloc tsd:  then a thread keeps a malloc'ed block in a pthread
 *                    key whose destructor frees it at the thread's exit
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc-own.h"
#include "fixture.h"

DEFINE_SINK;

NOINLINE void train_step(char **bufs, int n)
{
	for (int i = 0; i < n; i++) {
		bufs[i] = malloc(64 + (size_t)i);
		memset(bufs[i], i, 64);
		SINK(bufs[i][0]);
	}
}

NOINLINE void release_slot(void *p)
{
	free(p);
}

static pthread_key_t slot;

static void *worker(void *arg)
{
	pthread_setspecific(slot, malloc(32));
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char *bufs[10];
	long m0 = n_malloc, c0 = n_calloc, r0 = n_realloc, f0 = n_free;
	train_step(bufs, 10);
	for (int i = 0; i < 10; i++)
		free(bufs[i]);
	if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			train_step(bufs, 10);
			for (int i = 0; i < 10; i++)
				free(bufs[i]);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
	} else if (!strcmp(mode, "tsd")) {
		pthread_t th;
		pthread_key_create(&slot, release_slot);
		pthread_create(&th, NULL, worker, NULL);
		pthread_join(th, NULL);
	}
	/* what main did, and what happened before main (counted apart: the
	 * loader and libc allocate too) */
	printf("malloc %ld calloc %ld realloc %ld free %ld\n", (long)n_malloc - m0,
	       (long)n_calloc - c0, (long)n_realloc - r0, (long)n_free - f0);
	printf("before main: malloc %ld calloc %ld realloc %ld free %ld\n", m0, c0, r0, f0);
	fflush(stdout);
	return 0;
}
