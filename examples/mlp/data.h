/*
 * data.h - the spirals dataset and a shuffling batch loader.
 */
#ifndef MLP_DATA_H
#define MLP_DATA_H

#include <stdint.h>

#include "rng.h"

#define DATA_DIM 2

/* n points of DATA_DIM floats each, with a class label per point */
struct dataset {
	int n;
	int nclasses;
	float *x; /* n * DATA_DIM */
	int *y;	  /* n */
};

/* Interleaved spirals, one arm per class, with noise; seeded.  0 on success. */
int spirals_generate(struct dataset *d, int n_per_class, int nclasses,
		     uint64_t seed);

/* Split all at random into train and the last n_eval points as eval. */
int dataset_split(const struct dataset *all, int n_eval, uint64_t seed,
		  struct dataset *train, struct dataset *eval);

void dataset_release(struct dataset *d);

/* one batch, copied out of the dataset */
struct batch {
	int n;
	float *x;
	int *y;
};

/* Walks the dataset in a new random order each epoch, batch by batch. */
struct loader {
	const struct dataset *data;
	int batch_size;
	int *order;
	int pos;
	int epoch;
	struct rng rng;
	struct batch batch;
};

int loader_init(struct loader *l, const struct dataset *d, int batch_size,
		uint64_t seed);

/* The next full batch; reshuffles when an epoch runs out.  The batch lives
 * in the loader until the next call. */
const struct batch *loader_next_batch(struct loader *l);

void loader_release(struct loader *l);

#endif /* MLP_DATA_H */
