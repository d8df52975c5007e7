/*
 * model.h - a two-layer MLP on the GPU: DATA_DIM -> hidden (ReLU) ->
 * classes, trained with softmax cross-entropy and Adam.
 *
 * All parameters, gradients, Adam moments and activations are cudaMalloc'd
 * once by mlp_init for batches of up to max_batch rows.  The forward,
 * backward and update functions only launch kernels; mlp_loss is the one
 * place that waits for the GPU (it copies the loss back, like .item()).
 */
#ifndef CUDA_EXAMPLE_MODEL_H
#define CUDA_EXAMPLE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A parameter tensor with its gradient and Adam moments (all device). */
struct param {
	float *w, *g, *m, *v;
	int n;
};

struct mlp {
	int in, hidden, classes, max_batch;
	struct param w1, b1, w2, b2; /* w1: in x hidden, w2: hidden x classes */
	float *h;        /* max_batch x hidden, after ReLU */
	float *logits;   /* max_batch x classes */
	float *dlogits;  /* max_batch x classes */
	float *dh;       /* max_batch x hidden */
	float *row_loss; /* max_batch */
	float *loss_sum; /* 1 */
	size_t device_bytes; /* all of the above */
};

struct adam {
	float lr, beta1, beta2, eps;
	int t; /* steps taken */
};

/* He-initialised weights and zero biases from `seed`; exits on a CUDA
 * error. */
void mlp_init(struct mlp *m, int in, int hidden, int classes, int max_batch,
	      uint64_t seed);
void mlp_release(struct mlp *m);
/* Logits for the n rows of x (device, n <= max_batch); returns m->logits. */
const float *mlp_forward(struct mlp *m, const float *x, int n);
/* Mean cross-entropy of the last forward against labels (device), and its
 * gradient into m->dlogits.  Waits for the GPU. */
float mlp_loss(struct mlp *m, const int *labels, int n);
/* Gradients of every parameter from m->dlogits. */
void mlp_backward(struct mlp *m, const float *x, int n);
/* One Adam step on every parameter. */
void mlp_update(struct mlp *m, struct adam *opt);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_EXAMPLE_MODEL_H */
