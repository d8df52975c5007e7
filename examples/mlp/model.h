/*
 * model.h - the MLP, its kernels and the Adam optimizer.
 *
 * The network is DATA_DIM -> hidden -> hidden -> classes with ReLU between
 * the layers: three linear layers, two hidden ones.  Matrices are row-major
 * float arrays; a weight matrix of a layer with `in` inputs and `out`
 * outputs is in x out.
 */
#ifndef MLP_MODEL_H
#define MLP_MODEL_H

#include <stdint.h>

#include "pool.h"

/* ---------------------------------------------------------------- kernels */

/* c[m x n] = a[m x k] * b[k x n]; rows of c are split across the pool. */
void matmul(struct pool *p, float *c, const float *a, const float *b, int m,
	    int k, int n);

/* Given dc = dL/dc for c = a * b: da = dc * b^T (skipped when da is NULL)
 * and db = a^T * dc, each split by rows across the pool. */
void matmul_backward(struct pool *p, float *da, float *db, const float *dc,
		     const float *a, const float *b, int m, int k, int n);

/* x[m x n] += bias[n] on every row */
void add_bias(float *x, const float *bias, int m, int n);

/* dbias[n] = column sums of dx[m x n] */
void add_bias_backward(float *dbias, const float *dx, int m, int n);

/* y = max(x, 0), elementwise over n values */
void relu(float *y, const float *x, int n);

/* dx = dy where x > 0, else 0 */
void relu_backward(float *dx, const float *dy, const float *x, int n);

/* Mean cross-entropy of softmax(logits[m x n]) against labels; writes
 * dlogits = dL/dlogits (may be NULL to skip). */
float softmax_cross_entropy(float *dlogits, const float *logits,
			    const int *labels, int m, int n);

/* ---------------------------------------------------------------- model */

/* a tensor the optimizer updates: values, gradient, Adam moments */
struct param {
	int n;
	float *val, *grad, *m, *v;
};

struct adam {
	float lr, beta1, beta2, eps;
	int t; /* steps taken */
};

struct linear {
	int in, out;
	struct param w, b;
};

struct mlp {
	int in, hidden, classes, max_batch;
	struct linear l1, l2, l3;
	struct pool *pool;
	/* activations and their gradients for one batch */
	float *z1, *a1, *z2, *a2, *logits;
	float *dz1, *da1, *dz2, *da2, *dlogits;
};

int mlp_init(struct mlp *m, int in, int hidden, int classes, int max_batch,
	     struct pool *pool, uint64_t seed);
void mlp_release(struct mlp *m);

/* Forward pass of n <= max_batch rows of x; returns the logits. */
const float *mlp_forward(struct mlp *m, const float *x, int n);

/* Backward pass after mlp_forward on the same x, from m->dlogits. */
void mlp_backward(struct mlp *m, const float *x, int n);

/* One Adam update of p from p->grad. */
void adam_step(struct param *p, const struct adam *opt);

/* adam_step on every parameter of the model. */
void mlp_update(struct mlp *m, struct adam *opt);

#endif /* MLP_MODEL_H */
