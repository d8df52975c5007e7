/*
 * pool.c - persistent worker threads for the row-parallel kernels.
 *
 * How: the workers live for the whole run and sleep on a condition variable.
 * pool_run() publishes a job under the lock and bumps a generation counter;
 * each worker wakes, runs its own chunk of rows (worker i takes chunk i) and
 * counts itself done.  The caller waits until every worker has seen the
 * generation, so no worker can miss a job or run one twice.
 *
 * Never: create threads per call, or let two threads write the same row.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pool.h"

struct worker {
	struct pool *pool;
	int id;
	pthread_t thread;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a new generation, or stop */
	pthread_cond_t done; /* pending reached 0 */
	unsigned long generation;
	int pending; /* workers that have not finished this generation */
	int stop;

	pool_fn fn;
	void *arg;
	int n;

	int nworkers;
	struct worker *workers;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;
	unsigned long seen = 0;
	char name[16];

	snprintf(name, sizeof(name), "mlp-worker-%d", w->id);
	pthread_setname_np(pthread_self(), name);

	for (;;) {
		pool_fn fn;
		void *fn_arg;
		int n, begin, end;

		pthread_mutex_lock(&p->lock);
		while (!p->stop && p->generation == seen)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		seen = p->generation;
		fn = p->fn;
		fn_arg = p->arg;
		n = p->n;
		pthread_mutex_unlock(&p->lock);

		begin = (int)((long)n * w->id / p->nworkers);
		end = (int)((long)n * (w->id + 1) / p->nworkers);
		if (begin < end)
			fn(fn_arg, begin, end);

		pthread_mutex_lock(&p->lock);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

struct pool *pool_create(int nthreads)
{
	struct pool *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	p->workers = calloc(nthreads, sizeof(*p->workers));
	if (!p->workers) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (i = 0; i < nthreads; i++) {
		p->workers[i].pool = p;
		p->workers[i].id = i;
		if (pthread_create(&p->workers[i].thread, NULL, worker_main,
				   &p->workers[i]) != 0)
			break;
		p->nworkers++;
	}
	if (p->nworkers != nthreads) {
		pool_free(p);
		return NULL;
	}
	return p;
}

void pool_run(struct pool *p, pool_fn fn, void *arg, int n)
{
	if (n <= 0)
		return;
	pthread_mutex_lock(&p->lock);
	p->fn = fn;
	p->arg = arg;
	p->n = n;
	p->pending = p->nworkers;
	p->generation++;
	pthread_cond_broadcast(&p->work);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void pool_free(struct pool *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nworkers; i++)
		pthread_join(p->workers[i].thread, NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->workers);
	free(p);
}
