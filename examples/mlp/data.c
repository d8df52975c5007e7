/*
 * data.c - spirals dataset, train/eval split and the batch loader.
 *
 * The dataset is generated in memory from a seed (no files to download), in
 * the classic "spirals" layout: each class is one arm winding out from the
 * origin, hard to separate with a line, easy for a small MLP.  The loader
 * shuffles an index array each epoch (Fisher-Yates) and copies each batch
 * into its own buffer, like a real loader handing out a fresh tensor.
 *
 * Never: hand out a partial batch (the tail of an epoch is dropped), or use
 * any randomness that does not come from the seed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* 1.25 turns per arm and this much angle noise make a problem that takes a
 * few hundred steps: the loss falls visibly before accuracy tops out */
#define SPIRAL_TURNS 1.25f
#define SPIRAL_NOISE 0.15f

int spirals_generate(struct dataset *d, int n_per_class, int nclasses,
		     uint64_t seed)
{
	struct rng rng;
	int c, i;

	rng_seed(&rng, seed);
	d->n = n_per_class * nclasses;
	d->nclasses = nclasses;
	d->x = malloc(sizeof(float) * d->n * DATA_DIM);
	d->y = malloc(sizeof(int) * d->n);
	if (!d->x || !d->y) {
		dataset_release(d);
		return -1;
	}
	for (c = 0; c < nclasses; c++) {
		for (i = 0; i < n_per_class; i++) {
			int k = c * n_per_class + i;
			float r = (float)i / (float)n_per_class;
			/* arm c starts at angle 2*pi*c/nclasses and winds
			 * SPIRAL_TURNS times round the origin */
			float t = 6.2831853f * ((float)c / (float)nclasses +
						SPIRAL_TURNS * r) +
				  SPIRAL_NOISE * rng_normal(&rng);

			d->x[k * DATA_DIM + 0] = r * sinf(t);
			d->x[k * DATA_DIM + 1] = r * cosf(t);
			d->y[k] = c;
		}
	}
	return 0;
}

static void shuffle(int *a, int n, struct rng *rng)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int j = rng_below(rng, i + 1);
		int tmp = a[i];

		a[i] = a[j];
		a[j] = tmp;
	}
}

static int dataset_take(struct dataset *d, const struct dataset *from,
			const int *idx, int n)
{
	int i;

	d->n = n;
	d->nclasses = from->nclasses;
	d->x = malloc(sizeof(float) * n * DATA_DIM);
	d->y = malloc(sizeof(int) * n);
	if (!d->x || !d->y) {
		dataset_release(d);
		return -1;
	}
	for (i = 0; i < n; i++) {
		memcpy(d->x + i * DATA_DIM, from->x + idx[i] * DATA_DIM,
		       sizeof(float) * DATA_DIM);
		d->y[i] = from->y[idx[i]];
	}
	return 0;
}

int dataset_split(const struct dataset *all, int n_eval, uint64_t seed,
		  struct dataset *train, struct dataset *eval)
{
	struct rng rng;
	int *idx = malloc(sizeof(int) * all->n);
	int i, n_train = all->n - n_eval, ret = -1;

	if (!idx)
		return -1;
	for (i = 0; i < all->n; i++)
		idx[i] = i;
	rng_seed(&rng, seed);
	shuffle(idx, all->n, &rng);
	if (dataset_take(train, all, idx, n_train) == 0 &&
	    dataset_take(eval, all, idx + n_train, n_eval) == 0)
		ret = 0;
	free(idx);
	return ret;
}

void dataset_release(struct dataset *d)
{
	free(d->x);
	free(d->y);
	d->x = NULL;
	d->y = NULL;
	d->n = 0;
}

int loader_init(struct loader *l, const struct dataset *d, int batch_size,
		uint64_t seed)
{
	int i;

	memset(l, 0, sizeof(*l));
	l->data = d;
	l->batch_size = batch_size;
	l->order = malloc(sizeof(int) * d->n);
	l->batch.x = malloc(sizeof(float) * batch_size * DATA_DIM);
	l->batch.y = malloc(sizeof(int) * batch_size);
	if (!l->order || !l->batch.x || !l->batch.y) {
		loader_release(l);
		return -1;
	}
	for (i = 0; i < d->n; i++)
		l->order[i] = i;
	rng_seed(&l->rng, seed);
	shuffle(l->order, d->n, &l->rng);
	return 0;
}

const struct batch *loader_next_batch(struct loader *l)
{
	const struct dataset *d = l->data;
	int i;

	if (l->pos + l->batch_size > d->n) {
		shuffle(l->order, d->n, &l->rng);
		l->pos = 0;
		l->epoch++;
	}
	for (i = 0; i < l->batch_size; i++) {
		int k = l->order[l->pos + i];

		memcpy(l->batch.x + i * DATA_DIM, d->x + k * DATA_DIM,
		       sizeof(float) * DATA_DIM);
		l->batch.y[i] = d->y[k];
	}
	l->pos += l->batch_size;
	l->batch.n = l->batch_size;
	return &l->batch;
}

void loader_release(struct loader *l)
{
	free(l->order);
	free(l->batch.x);
	free(l->batch.y);
	l->order = NULL;
	l->batch.x = NULL;
	l->batch.y = NULL;
}
