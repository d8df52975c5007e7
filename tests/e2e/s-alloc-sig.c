/*
 * s-alloc-sig.c - fixture: allocations interrupted by allocating signal
 * handlers at random instants (test-alloc.c test_signals; linked with
 * lib-alloc-bump.c, whose malloc a handler may call anywhere).
 *   s-alloc-sig STEPS FIRST END PAIRS
 * Each of STEPS steps (train_step; FIRST..END-1 recorded) makes PAIRS
 * malloc(24)/free pairs in churn() while a 20 us interval timer's SIGALRM
 * handler, on_alarm, makes a malloc(8)/free pair; SIGALRM is unblocked
 * only inside churn() of a recorded step, so every handler call falls in
 * a recorded call.  Prints "allocs A frees F handler H": what the
 * recorded steps did, H of it the handler's pairs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "fixture.h"

DEFINE_SINK;

/* counted with one instruction each (lock add): a `++` is a load and a
 * store, and a handler that ran between them lost its count (the ledger
 * said 27502 frees where the program made, and stepscope recorded, 27504) */
static long n_alloc, n_free, n_handler;
#define COUNT(n) __atomic_fetch_add(&(n), 1, __ATOMIC_RELAXED)

NOINLINE void on_alarm(int sig)
{
	void *p = malloc(8);
	SINK(sig);
	COUNT(n_alloc);
	COUNT(n_handler);
	free(p);
	COUNT(n_free);
}

NOINLINE void churn(long pairs, int rec)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	if (rec)
		sigprocmask(SIG_UNBLOCK, &s, NULL);
	for (long i = 0; i < pairs; i++) {
		void *p = malloc(24);
		SINK(p);
		free(p);
		if (rec) {
			COUNT(n_alloc);
			COUNT(n_free);
		}
	}
	sigprocmask(SIG_BLOCK, &s, NULL);
}

NOINLINE void train_step(long pairs, int rec)
{
	churn(pairs, rec);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 6, first = argc > 2 ? atoi(argv[2]) : 1;
	int end = argc > 3 ? atoi(argv[3]) : 5;
	long pairs = argc > 4 ? atol(argv[4]) : 20000;
	struct sigaction sa;
	sigset_t s;
	struct itimerval it = { { 0, 20 }, { 0, 20 } };

	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	sigprocmask(SIG_BLOCK, &s, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < steps; i++)
		train_step(pairs, i >= first && i < end);
	printf("allocs %ld frees %ld handler %ld\n", __atomic_load_n(&n_alloc, __ATOMIC_RELAXED),
	       __atomic_load_n(&n_free, __ATOMIC_RELAXED),
	       __atomic_load_n(&n_handler, __ATOMIC_RELAXED));
	return 0;
}
