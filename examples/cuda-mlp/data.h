/*
 * data.h - the spirals dataset, its split, and the batch loader that feeds
 * the GPU.
 *
 * Points live in host memory; the loader gathers each shuffled batch into a
 * host staging buffer and copies it to device buffers it owns, so a batch
 * is always device pointers.  Never: keep more than one batch on the device
 * (the next call overwrites it).
 */
#ifndef CUDA_EXAMPLE_DATA_H
#define CUDA_EXAMPLE_DATA_H

#include <stdint.h>

#define DATA_DIM 2

#ifdef __cplusplus
extern "C" {
#endif

/* n points in host memory: x is n x DATA_DIM, y holds labels 0..classes-1. */
struct dataset {
	float *x;
	int *y;
	int n;
	int classes;
};

/* A dataset copied to the device once (for evaluation). */
struct device_set {
	float *x; /* device, n x DATA_DIM */
	int *y;   /* host labels, to score predictions */
	int n;
};

/* One batch on the device. */
struct batch {
	const float *x; /* n x DATA_DIM */
	const int *y;   /* n labels */
	int n;
};

struct loader {
	const struct dataset *d;
	int batch;
	int *order;  /* a permutation of 0..n-1, reshuffled each epoch */
	int pos;     /* next index into order */
	int epoch;   /* 1 for the first pass */
	uint64_t rng;
	float *stage_x; /* host staging buffers */
	int *stage_y;
	float *dev_x;   /* device buffers handed out */
	int *dev_y;
	struct batch cur;
};

/* per_class points on each of `classes` spiral arms, with noise.
 * 0, or -1 when out of memory. */
int spirals_generate(struct dataset *d, int per_class, int classes,
		     uint64_t seed);
/* A random split of `all`: n_eval points into eval, the rest into train. */
int dataset_split(const struct dataset *all, int n_eval, uint64_t seed,
		  struct dataset *train, struct dataset *eval);
void dataset_release(struct dataset *d);

void device_set_init(struct device_set *s, const struct dataset *d);
void device_set_release(struct device_set *s);

int loader_init(struct loader *l, const struct dataset *d, int batch,
		uint64_t seed);
/* The next batch of l->batch points, copied to the device; a new epoch
 * (and a new shuffle) starts when fewer than l->batch points are left. */
const struct batch *loader_next_batch(struct loader *l);
void loader_release(struct loader *l);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_EXAMPLE_DATA_H */
