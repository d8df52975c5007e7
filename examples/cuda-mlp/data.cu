/*
 * data.cu - spirals generation, the train/eval split and the loader: host
 * code only, plus the cudaMemcpy of each batch.
 *
 * Design: everything is generated from a seed with rng.h, so a run is the
 * same every time.  The loader shuffles an index array each epoch
 * (Fisher-Yates), gathers a batch into plain (pageable) host buffers and
 * copies it with cudaMemcpy, as a simple PyTorch-style loader would.
 * Never: allocate per batch (all buffers are made by loader_init).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data.h"
#include "rng.h"

extern "C" {

int spirals_generate(struct dataset *d, int per_class, int classes,
		     uint64_t seed)
{
	uint64_t rng = seed;
	int c, i;

	d->n = per_class * classes;
	d->classes = classes;
	d->x = (float *)malloc(sizeof(float) * DATA_DIM * (size_t)d->n);
	d->y = (int *)malloc(sizeof(int) * (size_t)d->n);
	if (!d->x || !d->y) {
		dataset_release(d);
		return -1;
	}
	for (c = 0; c < classes; c++) {
		for (i = 0; i < per_class; i++) {
			int k = c * per_class + i;
			float r = (float)i / (float)per_class;
			float t = 4.0f * (float)c + 4.0f * r +
				  0.2f * rng_normal(&rng);

			d->x[k * DATA_DIM] = r * sinf(t);
			d->x[k * DATA_DIM + 1] = r * cosf(t);
			d->y[k] = c;
		}
	}
	return 0;
}

static void copy_point(struct dataset *to, int i, const struct dataset *from,
		       int j)
{
	memcpy(to->x + i * DATA_DIM, from->x + j * DATA_DIM,
	       sizeof(float) * DATA_DIM);
	to->y[i] = from->y[j];
}

static int dataset_alloc(struct dataset *d, int n, int classes)
{
	d->n = n;
	d->classes = classes;
	d->x = (float *)malloc(sizeof(float) * DATA_DIM * (size_t)(n ? n : 1));
	d->y = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
	if (!d->x || !d->y) {
		dataset_release(d);
		return -1;
	}
	return 0;
}

int dataset_split(const struct dataset *all, int n_eval, uint64_t seed,
		  struct dataset *train, struct dataset *eval)
{
	uint64_t rng = seed;
	int *perm, i;

	perm = (int *)malloc(sizeof(int) * (size_t)all->n);
	if (!perm || dataset_alloc(train, all->n - n_eval, all->classes) ||
	    dataset_alloc(eval, n_eval, all->classes)) {
		free(perm);
		dataset_release(train);
		return -1;
	}
	for (i = 0; i < all->n; i++)
		perm[i] = i;
	for (i = all->n - 1; i > 0; i--) {
		int j = rng_below(&rng, i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < n_eval; i++)
		copy_point(eval, i, all, perm[i]);
	for (i = n_eval; i < all->n; i++)
		copy_point(train, i - n_eval, all, perm[i]);
	free(perm);
	return 0;
}

void dataset_release(struct dataset *d)
{
	free(d->x);
	free(d->y);
	d->x = NULL;
	d->y = NULL;
	d->n = 0;
}

void device_set_init(struct device_set *s, const struct dataset *d)
{
	size_t bytes = sizeof(float) * DATA_DIM * (size_t)d->n;

	s->n = d->n;
	s->y = d->y;
	CUDA_CHECK(cudaMalloc((void **)&s->x, bytes ? bytes : 1));
	CUDA_CHECK(cudaMemcpy(s->x, d->x, bytes, cudaMemcpyHostToDevice));
}

void device_set_release(struct device_set *s)
{
	cudaFree(s->x);
	s->x = NULL;
}

static void loader_shuffle(struct loader *l)
{
	int i;

	for (i = l->d->n - 1; i > 0; i--) {
		int j = rng_below(&l->rng, i + 1), t = l->order[i];

		l->order[i] = l->order[j];
		l->order[j] = t;
	}
	l->pos = 0;
	l->epoch++;
}

int loader_init(struct loader *l, const struct dataset *d, int batch,
		uint64_t seed)
{
	int i;

	memset(l, 0, sizeof(*l));
	l->d = d;
	l->batch = batch;
	l->rng = seed;
	l->order = (int *)malloc(sizeof(int) * (size_t)d->n);
	l->stage_x = (float *)malloc(sizeof(float) * DATA_DIM * (size_t)batch);
	l->stage_y = (int *)malloc(sizeof(int) * (size_t)batch);
	if (!l->order || !l->stage_x || !l->stage_y) {
		loader_release(l);
		return -1;
	}
	CUDA_CHECK(cudaMalloc((void **)&l->dev_x,
			      sizeof(float) * DATA_DIM * (size_t)batch));
	CUDA_CHECK(cudaMalloc((void **)&l->dev_y, sizeof(int) * (size_t)batch));
	for (i = 0; i < d->n; i++)
		l->order[i] = i;
	loader_shuffle(l);
	return 0;
}

const struct batch *loader_next_batch(struct loader *l)
{
	int i;

	if (l->pos + l->batch > l->d->n)
		loader_shuffle(l);
	for (i = 0; i < l->batch; i++) {
		int k = l->order[l->pos + i];

		memcpy(l->stage_x + i * DATA_DIM, l->d->x + k * DATA_DIM,
		       sizeof(float) * DATA_DIM);
		l->stage_y[i] = l->d->y[k];
	}
	l->pos += l->batch;
	CUDA_CHECK(cudaMemcpy(l->dev_x, l->stage_x,
			      sizeof(float) * DATA_DIM * (size_t)l->batch,
			      cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(l->dev_y, l->stage_y,
			      sizeof(int) * (size_t)l->batch,
			      cudaMemcpyHostToDevice));
	l->cur.x = l->dev_x;
	l->cur.y = l->dev_y;
	l->cur.n = l->batch;
	return &l->cur;
}

void loader_release(struct loader *l)
{
	free(l->order);
	free(l->stage_x);
	free(l->stage_y);
	cudaFree(l->dev_x);
	cudaFree(l->dev_y);
	memset(l, 0, sizeof(*l));
}

} /* extern "C" */
