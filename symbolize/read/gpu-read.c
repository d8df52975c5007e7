/*
 * gpu-read.c - read the SS_META_GPU_* records of a trace (runtime/gpu.c)
 * into plain ops on the host timeline.
 *
 * Design: GPU times are CUPTI's clock; the latest SS_META_GPU_CLOCK record
 * before an op pairs one reading of it with the file clock, so an op's
 * host time is the pair's host time plus its distance from the pair's GPU
 * time.  Records before any clock pair, or too short, are skipped.  Names
 * are used in place when NUL-terminated inside their record.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static const char *rec_name(const struct ss_meta_rec *m, size_t off)
{
	if (m->len <= off || !memchr(m->data + off, 0, m->len - off))
		return "?";
	return (const char *)m->data + off;
}

static uint64_t host_ns(uint64_t base, uint64_t gpu0, uint64_t gpu)
{
	int64_t d = (int64_t)(gpu - gpu0);
	return d < 0 && (uint64_t)-d > base ? 0 : base + (uint64_t)d;
}

static const struct ss_gpu_data *sort_g;

static int by_corr(const void *a, const void *b)
{
	uint32_t x = sort_g->ops[*(const size_t *)a].correlation;
	uint32_t y = sort_g->ops[*(const size_t *)b].correlation;
	return x < y ? -1 : x > y;
}

static int index_apis(struct ss_gpu_data *g)
{
	size_t k = 0;
	g->apis = malloc((g->n ? g->n : 1) * sizeof(*g->apis));
	if (!g->apis) {
		ss_gpu_release(g);
		return -1;
	}
	for (size_t i = 0; i < g->n; i++)
		if (g->ops[i].type == SS_GPU_API)
			g->apis[k++] = i;
	g->napis = k;
	sort_g = g;
	qsort(g->apis, k, sizeof(*g->apis), by_corr);
	return 0;
}

int ss_gpu_read(const struct ss_reader *r, struct ss_gpu_data *g)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	size_t cap = 0;
	int have = 0;
	uint64_t base = 0, gpu0 = 0;

	memset(g, 0, sizeof(*g));
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_gpu_op op;
		memset(&op, 0, sizeof(op));
		if (m.type == SS_META_GPU_CLOCK && m.len >= sizeof(struct ss_meta_gpu_clock)) {
			struct ss_meta_gpu_clock c;
			memcpy(&c, m.data, sizeof(c));
			base = ss_reader_ns(r, c.ticks);
			gpu0 = c.gpu_ns;
			have = 1;
			continue;
		} else if (m.type == SS_META_GPU_KERNEL &&
			   m.len >= sizeof(struct ss_meta_gpu_kernel)) {
			struct ss_meta_gpu_kernel k;
			memcpy(&k, m.data, sizeof(k));
			op.type = SS_GPU_KERNEL;
			op.start_ns = k.start;
			op.end_ns = k.end;
			op.correlation = k.correlation;
			op.device = k.device;
			op.stream = k.stream;
			memcpy(op.grid, k.grid, sizeof(op.grid));
			memcpy(op.block, k.block, sizeof(op.block));
			op.name = rec_name(&m, sizeof(k));
		} else if (m.type == SS_META_GPU_COPY &&
			   m.len >= sizeof(struct ss_meta_gpu_copy)) {
			struct ss_meta_gpu_copy c;
			memcpy(&c, m.data, sizeof(c));
			op.type = SS_GPU_COPY;
			op.start_ns = c.start;
			op.end_ns = c.end;
			op.bytes = c.bytes;
			op.correlation = c.correlation;
			op.device = c.device;
			op.stream = c.stream;
			op.kind = c.kind;
			op.name = ss_gpu_copy_name(c.kind);
		} else if (m.type == SS_META_GPU_API &&
			   m.len >= sizeof(struct ss_meta_gpu_api)) {
			struct ss_meta_gpu_api a;
			memcpy(&a, m.data, sizeof(a));
			op.type = SS_GPU_API;
			op.start_ns = a.start;
			op.end_ns = a.end;
			op.correlation = a.correlation;
			op.cbid = a.cbid;
			op.tid = a.tid;
			op.kind = a.driver;
			op.name = rec_name(&m, sizeof(a));
		} else {
			continue;
		}
		if (!have)
			continue;
		op.start_ns = host_ns(base, gpu0, op.start_ns);
		op.end_ns = host_ns(base, gpu0, op.end_ns);
		if (op.end_ns < op.start_ns)
			op.end_ns = op.start_ns;
		if (g->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct ss_gpu_op *p = realloc(g->ops, nc * sizeof(*p));
			if (!p) {
				ss_gpu_release(g);
				return -1;
			}
			g->ops = p;
			cap = nc;
		}
		g->ops[g->n++] = op;
	}
	return index_apis(g);
}

void ss_gpu_release(struct ss_gpu_data *g)
{
	free(g->ops);
	free(g->apis);
	g->ops = NULL;
	g->apis = NULL;
	g->n = g->napis = 0;
}

const struct ss_gpu_op *ss_gpu_launch(const struct ss_gpu_data *g, uint32_t c)
{
	size_t lo = 0, hi = g->napis;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t v = g->ops[g->apis[mid]].correlation;
		if (v == c)
			return &g->ops[g->apis[mid]];
		if (v < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *ss_gpu_copy_name(uint32_t kind)
{
	switch (kind) {
	case SS_GPU_MEMSET: return "Memset";
	case SS_GPU_HTOD: return "Memcpy HtoD";
	case SS_GPU_DTOH: return "Memcpy DtoH";
	case SS_GPU_DTOD: return "Memcpy DtoD";
	}
	return "Memcpy";
}
