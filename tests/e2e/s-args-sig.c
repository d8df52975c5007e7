/*
 * s-args-sig.c - fixture: record.args against signal handlers that call a
 * listed function at any instant (issue 44, test-args-sig.c).
 *
 *   s-args-sig LEDGER THREADS CALLS PERIOD_US [nodefer]
 *
 * Each thread (the main thread first, then THREADS - 1 others, one after
 * the other) arms a timer of PERIOD_US (20 us) aimed at itself, then makes
 * CALLS calls
 * f(1000 + i, k) with k a check word of the first; the timer's handler,
 * with 300 bytes of locals, calls f(-1, k(-1)).  With `nodefer` the
 * handler is installed with SA_NODEFER (handlers nest).  A thread's first
 * listed call is interrupted as often as its others.  The program counts
 * its own calls and the malloc calls made while it runs (it interposes
 * malloc): the ledger line is
 *   calls N handler H mallocs M
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

static volatile long handler_calls, main_calls, mallocs;
static int ncalls, period_us;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* every allocation of the process, the runtime's included */
void *malloc(size_t n)
{
	__atomic_fetch_add(&mallocs, 1, __ATOMIC_RELAXED);
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	__atomic_fetch_add(&mallocs, 1, __ATOMIC_RELAXED);
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	__atomic_fetch_add(&mallocs, 1, __ATOMIC_RELAXED);
	return __libc_realloc(p, n);
}

#define CHECK(x) ((x) * 7919 + 17)

NOINLINE long f(long x, long k)
{
	SINK(x + k);
	return x ^ k;
}

static void on_timer(int sig)
{
	volatile char pad[300];
	(void)sig;
	pad[0] = 1;
	pad[299] = 2;
	f(-1, CHECK(-1));
	SINK(pad[0] + pad[299]);
	__atomic_fetch_add(&handler_calls, 1, __ATOMIC_RELAXED);
}

static void *run(void *arg)
{
	timer_t tm;
	struct sigevent ev;
	struct itimerspec it = { { 0, period_us * 1000L }, { 0, period_us * 1000L } };
	(void)arg;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = gettid(); /* sigev_notify_thread_id */
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm)) {
		perror("timer_create");
		exit(1);
	}
	timer_settime(tm, 0, &it, NULL);
	for (int i = 0; i < ncalls; i++) {
		f(1000 + i, CHECK(1000 + i));
		__atomic_fetch_add(&main_calls, 1, __ATOMIC_RELAXED);
	}
	timer_delete(tm);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	if (argc < 5)
		return 2;
	int threads = atoi(argv[2]);
	ncalls = atoi(argv[3]);
	period_us = atoi(argv[4]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_timer;
	sa.sa_flags = SA_RESTART | (argc > 5 && !strcmp(argv[5], "nodefer") ? SA_NODEFER : 0);
	sigaction(SIGUSR1, &sa, NULL);
	long before = mallocs;
	run(NULL);
	for (int i = 1; i < threads; i++) {
		pthread_t th;
		pthread_create(&th, NULL, run, NULL);
		pthread_join(th, NULL);
	}
	long made = mallocs - before;
	signal(SIGUSR1, SIG_IGN);
	FILE *l = fopen(argv[1], "w");
	if (!l)
		return 1;
	fprintf(l, "calls %ld handler %ld mallocs %ld\n", main_calls, handler_calls, made);
	fclose(l);
	return 0;
}
