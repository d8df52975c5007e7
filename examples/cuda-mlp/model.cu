/*
 * model.cu - the MLP's buffers and its forward, loss, backward and update,
 * as sequences of kernel launches (kernels.h).
 *
 * Design: one forward is matmul, add_bias, relu, matmul, add_bias; the
 * backward mirrors it with transposed matmuls; Adam runs once per
 * parameter tensor.  Weights are drawn on the host and copied once.
 * Never: synchronize outside mlp_loss, or allocate after mlp_init.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels.h"
#include "model.h"
#include "rng.h"

extern "C" {

static float *device_alloc(struct mlp *m, size_t count)
{
	float *p;

	CUDA_CHECK(cudaMalloc((void **)&p, sizeof(float) * count));
	CUDA_CHECK(cudaMemset(p, 0, sizeof(float) * count));
	m->device_bytes += sizeof(float) * count;
	return p;
}

/* Weights from N(0, scale^2) when scale > 0, zeros otherwise; gradient and
 * moments zeroed. */
static void param_init(struct mlp *m, struct param *p, int n, float scale,
		       uint64_t *rng)
{
	p->n = n;
	p->w = device_alloc(m, (size_t)n);
	p->g = device_alloc(m, (size_t)n);
	p->m = device_alloc(m, (size_t)n);
	p->v = device_alloc(m, (size_t)n);
	if (scale > 0.0f) {
		float *host = (float *)malloc(sizeof(float) * (size_t)n);

		if (!host) {
			fprintf(stderr, "train: out of memory initialising "
					"the weights\n");
			exit(1);
		}
		for (int i = 0; i < n; i++)
			host[i] = scale * rng_normal(rng);
		CUDA_CHECK(cudaMemcpy(p->w, host, sizeof(float) * (size_t)n,
				      cudaMemcpyHostToDevice));
		free(host);
	}
}

static void param_release(struct param *p)
{
	cudaFree(p->w);
	cudaFree(p->g);
	cudaFree(p->m);
	cudaFree(p->v);
	memset(p, 0, sizeof(*p));
}

void mlp_init(struct mlp *m, int in, int hidden, int classes, int max_batch,
	      uint64_t seed)
{
	uint64_t rng = seed;

	memset(m, 0, sizeof(*m));
	m->in = in;
	m->hidden = hidden;
	m->classes = classes;
	m->max_batch = max_batch;
	param_init(m, &m->w1, in * hidden, sqrtf(2.0f / (float)in), &rng);
	param_init(m, &m->b1, hidden, 0.0f, &rng);
	param_init(m, &m->w2, hidden * classes, sqrtf(2.0f / (float)hidden),
		   &rng);
	param_init(m, &m->b2, classes, 0.0f, &rng);
	m->h = device_alloc(m, (size_t)max_batch * hidden);
	m->dh = device_alloc(m, (size_t)max_batch * hidden);
	m->logits = device_alloc(m, (size_t)max_batch * classes);
	m->dlogits = device_alloc(m, (size_t)max_batch * classes);
	m->row_loss = device_alloc(m, (size_t)max_batch);
	m->loss_sum = device_alloc(m, 1);
}

void mlp_release(struct mlp *m)
{
	param_release(&m->w1);
	param_release(&m->b1);
	param_release(&m->w2);
	param_release(&m->b2);
	cudaFree(m->h);
	cudaFree(m->dh);
	cudaFree(m->logits);
	cudaFree(m->dlogits);
	cudaFree(m->row_loss);
	cudaFree(m->loss_sum);
	memset(m, 0, sizeof(*m));
}

const float *mlp_forward(struct mlp *m, const float *x, int n)
{
	launch_matmul(m->h, x, m->w1.w, n, m->hidden, m->in, 0, 0);
	launch_add_bias(m->h, m->b1.w, n, m->hidden);
	launch_relu(m->h, n * m->hidden);
	launch_matmul(m->logits, m->h, m->w2.w, n, m->classes, m->hidden, 0,
		      0);
	launch_add_bias(m->logits, m->b2.w, n, m->classes);
	return m->logits;
}

float mlp_loss(struct mlp *m, const int *labels, int n)
{
	float sum;

	launch_softmax_xent(m->dlogits, m->row_loss, m->logits, labels, n,
			    m->classes);
	launch_sum(m->loss_sum, m->row_loss, n);
	CUDA_CHECK(cudaMemcpy(&sum, m->loss_sum, sizeof(sum),
			      cudaMemcpyDeviceToHost));
	return sum / (float)n;
}

void mlp_backward(struct mlp *m, const float *x, int n)
{
	/* layer 2: dW2 = h^T dlogits, db2 = column sums, dh = dlogits W2^T */
	launch_matmul(m->w2.g, m->h, m->dlogits, m->hidden, m->classes, n, 1,
		      0);
	launch_bias_backward(m->b2.g, m->dlogits, n, m->classes);
	launch_matmul(m->dh, m->dlogits, m->w2.w, n, m->hidden, m->classes, 0,
		      1);
	/* ReLU, then layer 1: dW1 = x^T dh, db1 = column sums */
	launch_relu_backward(m->dh, m->h, n * m->hidden);
	launch_matmul(m->w1.g, x, m->dh, m->in, m->hidden, n, 1, 0);
	launch_bias_backward(m->b1.g, m->dh, n, m->hidden);
}

static void adam_param(struct param *p, const struct adam *opt, float c1,
		       float c2)
{
	launch_adam(p->w, p->g, p->m, p->v, p->n, opt->lr, opt->beta1,
		    opt->beta2, opt->eps, c1, c2);
}

void mlp_update(struct mlp *m, struct adam *opt)
{
	float c1, c2;

	opt->t++;
	c1 = 1.0f - powf(opt->beta1, (float)opt->t);
	c2 = 1.0f - powf(opt->beta2, (float)opt->t);
	adam_param(&m->w1, opt, c1, c2);
	adam_param(&m->b1, opt, c1, c2);
	adam_param(&m->w2, opt, c1, c2);
	adam_param(&m->b2, opt, c1, c2);
}

} /* extern "C" */
