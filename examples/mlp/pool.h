/*
 * pool.h - a small persistent thread pool that splits a range of rows.
 *
 * pool_run(p, fn, arg, n) cuts [0, n) into one contiguous chunk per worker,
 * runs fn(arg, begin, end) on the workers and returns when all are done.
 * Each row is computed by exactly one thread, so results do not depend on
 * the number of threads.
 */
#ifndef MLP_POOL_H
#define MLP_POOL_H

typedef void (*pool_fn)(void *arg, int begin, int end);

struct pool;

/* Start nthreads workers, named "mlp-worker-0" ...; NULL on failure. */
struct pool *pool_create(int nthreads);

/* Run fn over [0, n) on the workers and wait for them; n may be 0. */
void pool_run(struct pool *p, pool_fn fn, void *arg, int n);

/* Stop and join the workers, then free the pool. */
void pool_free(struct pool *p);

#endif /* MLP_POOL_H */
