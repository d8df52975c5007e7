/*
 * s-rt-threads.c - fixture: threads that end every way a thread can.
 *
 *   s-rt-threads many: 4 waves of 12 short-lived threads; thread i names
 *                      itself "w-i" (pthread_setname_np, after its first
 *                      call) and calls work() i % 5 + 1 times; prints
 *                      "w-i TID N" per thread
 *   s-rt-threads exit: thread "t-return" runs ret_body() -> leaf() and
 *                      returns; thread "t-pexit" runs pexit_body() ->
 *                      go_down() -> pthread_exit, so both never return;
 *                      each sets a thread-specific value whose destructor
 *                      tsd_dtor() calls leaf() after the thread function
 *                      is gone; prints "t-return TID" and "t-pexit TID"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static pthread_key_t key;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void work(long i)
{
	SINK(i);
}

NOINLINE void leaf(long i)
{
	SINK(i);
}

NOINLINE void tsd_dtor(void *p)
{
	leaf((long)p);
}

NOINLINE void *wave_body(void *arg)
{
	long i = (long)arg;
	char name[16];
	work(i);
	snprintf(name, sizeof(name), "w-%ld", i);
	pthread_setname_np(pthread_self(), name);
	for (long k = 1; k < i % 5 + 1; k++)
		work(i);
	pthread_mutex_lock(&out_mu);
	printf("w-%ld %ld %ld\n", i, (long)syscall(SYS_gettid), i % 5 + 1);
	pthread_mutex_unlock(&out_mu);
	return NULL;
}

NOINLINE void *ret_body(void *arg)
{
	pthread_setname_np(pthread_self(), "t-return");
	pthread_setspecific(key, arg);
	leaf(1);
	printf("t-return %ld\n", (long)syscall(SYS_gettid));
	return NULL;
}

NOINLINE void go_down(void)
{
	SINK(2);
	pthread_exit(NULL);
}

NOINLINE void *pexit_body(void *arg)
{
	pthread_setname_np(pthread_self(), "t-pexit");
	pthread_setspecific(key, arg);
	printf("t-pexit %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	go_down();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exit")) {
		pthread_t a, b;
		pthread_key_create(&key, tsd_dtor);
		pthread_create(&a, NULL, ret_body, (void *)1);
		pthread_join(a, NULL);
		pthread_create(&b, NULL, pexit_body, (void *)2);
		pthread_join(b, NULL);
		return 0;
	}
	for (long w = 0; w < 4; w++) {
		pthread_t th[12];
		for (long i = 0; i < 12; i++)
			pthread_create(&th[i], NULL, wave_body, (void *)(w * 12 + i));
		for (long i = 0; i < 12; i++)
			pthread_join(th[i], NULL);
	}
	return 0;
}
