/*
 * model.c - kernels, the MLP's forward and backward passes, Adam.
 *
 * How: plain C loops written so that gcc -O2 can vectorize the inner ones.
 * The matmuls, where nearly all the time goes, split their output rows
 * across the thread pool; the cheap elementwise kernels run on the calling
 * thread.  Every output element is written by one thread with a fixed order
 * of additions, so results are the same for any --threads.
 *
 * Never: allocate in the training loop (all buffers are sized for
 * max_batch in mlp_init), or make a result depend on thread timing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rng.h"

/* ---------------------------------------------------------------- matmul */

struct matmul_job {
	float *out;
	const float *a, *b, *dc;
	int m, k, n;
};

/* rows [begin, end) of c = a * b */
static void matmul_rows(void *arg, int begin, int end)
{
	const struct matmul_job *j = arg;
	int i, kk, jj;

	for (i = begin; i < end; i++) {
		float *restrict c = j->out + (long)i * j->n;
		const float *a = j->a + (long)i * j->k;

		memset(c, 0, sizeof(float) * j->n);
		for (kk = 0; kk < j->k; kk++) {
			const float *restrict b = j->b + (long)kk * j->n;
			float av = a[kk];

			for (jj = 0; jj < j->n; jj++)
				c[jj] += av * b[jj];
		}
	}
}

/* Kept out of line: gcc -O2 inlines it into linear_forward, where its k
 * lives only in a register the enter hook's call clobbers, so record.args
 * (examples/mlp/demo.yaml) would show k=<optimized out> and no
 * GFLOP/s for the inlined calls (docs/shapes.md). */
__attribute__((noinline)) void matmul(struct pool *p, float *c, const float *a,
				      const float *b, int m, int k, int n)
{
	struct matmul_job j = {
		.out = c, .a = a, .b = b, .m = m, .k = k, .n = n
	};

	pool_run(p, matmul_rows, &j, m);
}

/* rows [begin, end) of da = dc * b^T: da[i][kk] = dc[i] . b[kk] */
static void matmul_backward_input_rows(void *arg, int begin, int end)
{
	const struct matmul_job *j = arg;
	int i, kk, jj;

	for (i = begin; i < end; i++) {
		const float *dc = j->dc + (long)i * j->n;
		float *da = j->out + (long)i * j->k;

		for (kk = 0; kk < j->k; kk++) {
			const float *b = j->b + (long)kk * j->n;
			float s = 0.0f;

			for (jj = 0; jj < j->n; jj++)
				s += dc[jj] * b[jj];
			da[kk] = s;
		}
	}
}

/* rows [begin, end) of db = a^T * dc: db[kk] = sum_i a[i][kk] * dc[i] */
static void matmul_backward_weight_rows(void *arg, int begin, int end)
{
	const struct matmul_job *j = arg;
	int i, kk, jj;

	for (kk = begin; kk < end; kk++) {
		float *restrict db = j->out + (long)kk * j->n;

		memset(db, 0, sizeof(float) * j->n);
		for (i = 0; i < j->m; i++) {
			const float *restrict dc = j->dc + (long)i * j->n;
			float av = j->a[(long)i * j->k + kk];

			for (jj = 0; jj < j->n; jj++)
				db[jj] += av * dc[jj];
		}
	}
}

void matmul_backward(struct pool *p, float *da, float *db, const float *dc,
		     const float *a, const float *b, int m, int k, int n)
{
	struct matmul_job j = {
		.a = a, .b = b, .dc = dc, .m = m, .k = k, .n = n
	};

	if (da) {
		j.out = da;
		pool_run(p, matmul_backward_input_rows, &j, m);
	}
	j.out = db;
	pool_run(p, matmul_backward_weight_rows, &j, k);
}

/* ---------------------------------------------------------------- elementwise */

void add_bias(float *x, const float *bias, int m, int n)
{
	int i, jj;

	for (i = 0; i < m; i++)
		for (jj = 0; jj < n; jj++)
			x[(long)i * n + jj] += bias[jj];
}

void add_bias_backward(float *dbias, const float *dx, int m, int n)
{
	int i, jj;

	memset(dbias, 0, sizeof(float) * n);
	for (i = 0; i < m; i++)
		for (jj = 0; jj < n; jj++)
			dbias[jj] += dx[(long)i * n + jj];
}

void relu(float *y, const float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward(float *dx, const float *dy, const float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

float softmax_cross_entropy(float *dlogits, const float *logits,
			    const int *labels, int m, int n)
{
	double loss = 0.0;
	int i, jj;

	for (i = 0; i < m; i++) {
		const float *z = logits + (long)i * n;
		float max = z[0], sum = 0.0f;

		for (jj = 1; jj < n; jj++)
			if (z[jj] > max)
				max = z[jj];
		for (jj = 0; jj < n; jj++)
			sum += expf(z[jj] - max);
		loss += logf(sum) - (z[labels[i]] - max);
		if (dlogits) {
			float *dz = dlogits + (long)i * n;

			for (jj = 0; jj < n; jj++) {
				float prob = expf(z[jj] - max) / sum;

				dz[jj] = (prob - (jj == labels[i])) / (float)m;
			}
		}
	}
	return (float)(loss / m);
}

/* ---------------------------------------------------------------- model */

static int param_init(struct param *p, int n)
{
	p->n = n;
	p->val = calloc(n, sizeof(float));
	p->grad = calloc(n, sizeof(float));
	p->m = calloc(n, sizeof(float));
	p->v = calloc(n, sizeof(float));
	return p->val && p->grad && p->m && p->v ? 0 : -1;
}

static void param_release(struct param *p)
{
	free(p->val);
	free(p->grad);
	free(p->m);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* He initialisation for a layer followed by ReLU; biases start at 0. */
static int linear_init(struct linear *l, int in, int out, struct rng *rng)
{
	float scale = sqrtf(2.0f / (float)in);
	int i;

	l->in = in;
	l->out = out;
	if (param_init(&l->w, in * out) || param_init(&l->b, out))
		return -1;
	for (i = 0; i < in * out; i++)
		l->w.val[i] = scale * rng_normal(rng);
	return 0;
}

static void linear_release(struct linear *l)
{
	param_release(&l->w);
	param_release(&l->b);
}

/* y[n x out] = x[n x in] * w + b */
static void linear_forward(struct pool *p, const struct linear *l, float *y,
			   const float *x, int n)
{
	matmul(p, y, x, l->w.val, n, l->in, l->out);
	add_bias(y, l->b.val, n, l->out);
}

/* gradients of w and b, and dx unless it is NULL */
static void linear_backward(struct pool *p, struct linear *l, float *dx,
			    const float *dy, const float *x, int n)
{
	matmul_backward(p, dx, l->w.grad, dy, x, l->w.val, n, l->in, l->out);
	add_bias_backward(l->b.grad, dy, n, l->out);
}

int mlp_init(struct mlp *m, int in, int hidden, int classes, int max_batch,
	     struct pool *pool, uint64_t seed)
{
	struct rng rng;
	float **bufs[] = { &m->z1,  &m->a1,  &m->z2,  &m->a2,
			   &m->dz1, &m->da1, &m->dz2, &m->da2 };
	size_t i;

	memset(m, 0, sizeof(*m));
	m->in = in;
	m->hidden = hidden;
	m->classes = classes;
	m->max_batch = max_batch;
	m->pool = pool;
	rng_seed(&rng, seed);
	if (linear_init(&m->l1, in, hidden, &rng) ||
	    linear_init(&m->l2, hidden, hidden, &rng) ||
	    linear_init(&m->l3, hidden, classes, &rng))
		goto fail;
	for (i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
		*bufs[i] = calloc((size_t)max_batch * hidden, sizeof(float));
		if (!*bufs[i])
			goto fail;
	}
	m->logits = calloc((size_t)max_batch * classes, sizeof(float));
	m->dlogits = calloc((size_t)max_batch * classes, sizeof(float));
	if (!m->logits || !m->dlogits)
		goto fail;
	return 0;
fail:
	mlp_release(m);
	return -1;
}

void mlp_release(struct mlp *m)
{
	linear_release(&m->l1);
	linear_release(&m->l2);
	linear_release(&m->l3);
	free(m->z1);
	free(m->a1);
	free(m->z2);
	free(m->a2);
	free(m->logits);
	free(m->dz1);
	free(m->da1);
	free(m->dz2);
	free(m->da2);
	free(m->dlogits);
	memset(m, 0, sizeof(*m));
}

const float *mlp_forward(struct mlp *m, const float *x, int n)
{
	linear_forward(m->pool, &m->l1, m->z1, x, n);
	relu(m->a1, m->z1, n * m->hidden);
	linear_forward(m->pool, &m->l2, m->z2, m->a1, n);
	relu(m->a2, m->z2, n * m->hidden);
	linear_forward(m->pool, &m->l3, m->logits, m->a2, n);
	return m->logits;
}

void mlp_backward(struct mlp *m, const float *x, int n)
{
	linear_backward(m->pool, &m->l3, m->da2, m->dlogits, m->a2, n);
	relu_backward(m->dz2, m->da2, m->z2, n * m->hidden);
	linear_backward(m->pool, &m->l2, m->da1, m->dz2, m->a1, n);
	relu_backward(m->dz1, m->da1, m->z1, n * m->hidden);
	/* the input needs no gradient */
	linear_backward(m->pool, &m->l1, NULL, m->dz1, x, n);
}

/* ---------------------------------------------------------------- Adam */

void adam_step(struct param *p, const struct adam *opt)
{
	float c1 = 1.0f - powf(opt->beta1, (float)opt->t);
	float c2 = 1.0f - powf(opt->beta2, (float)opt->t);
	float step = opt->lr * sqrtf(c2) / c1;
	int i;

	for (i = 0; i < p->n; i++) {
		float g = p->grad[i];

		p->m[i] = opt->beta1 * p->m[i] + (1.0f - opt->beta1) * g;
		p->v[i] = opt->beta2 * p->v[i] + (1.0f - opt->beta2) * g * g;
		p->val[i] -= step * p->m[i] / (sqrtf(p->v[i]) + opt->eps);
	}
}

void mlp_update(struct mlp *m, struct adam *opt)
{
	opt->t++;
	adam_step(&m->l1.w, opt);
	adam_step(&m->l1.b, opt);
	adam_step(&m->l2.w, opt);
	adam_step(&m->l2.b, opt);
	adam_step(&m->l3.w, opt);
	adam_step(&m->l3.b, opt);
}
