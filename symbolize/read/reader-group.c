/*
 * reader-group.c - the blocks ss_reader_open found, grouped per thread.
 *
 * Design: a thread is its serial (or, in files without one, its tid); its
 * blocks are sorted by seq.  Version 2 keeps one copy of a block found
 * twice (copied out to an EVENTS chunk and still in its RING chunk, torn
 * in one of them, or made by the reader for drops a ring's header counts):
 * the longer, which holds the other.  Version 1 keeps every chunk, in file
 * order.  The thread's and the file's event counts are summed here, each
 * kept block once.
 *
 * Must never: keep two copies of one block, or lose the longer one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader-int.h"

static uint64_t ss_reader_thread_key(const struct ss_rchunk *c)
{
	return c->serial ? c->serial : (c->tid | (UINT64_C(1) << 63));
}

static uint64_t ss_reader_block_key(const struct ss_reader *r, size_t i)
{
	return ss_reader_thread_key(&r->chunks[r->blocks[i].chunk]);
}

/* Blocks by thread, seq, then longest first (the copy a duplicate keeps),
 * then file order. */
static int ss_reader_cmp_block(const void *a, const void *b, void *arg)
{
	const struct ss_reader *r = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct ss_rblock *x = &r->blocks[ia], *y = &r->blocks[ib];
	uint64_t kx = ss_reader_block_key(r, ia), ky = ss_reader_block_key(r, ib);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->len != y->len && SS_READER_V2(r))
		return x->len > y->len ? -1 : 1;
	return x->data < y->data ? -1 : x->data > y->data;
}

/* Version 2 keeps one copy of a block found twice: the first of its
 * (thread, seq) in sort order, the longer.  Version 1 keeps every chunk. */
static size_t ss_reader_dedup(const struct ss_reader *r, size_t *idx, size_t n)
{
	size_t i, m = 0;

	if (!SS_READER_V2(r))
		return n;
	for (i = 0; i < n; i++) {
		if (m && r->blocks[idx[m - 1]].seq == r->blocks[idx[i]].seq &&
		    ss_reader_block_key(r, idx[m - 1]) == ss_reader_block_key(r, idx[i]))
			continue;
		idx[m++] = idx[i];
	}
	return m;
}

int ss_reader_group(struct ss_reader *r)
{
	size_t *idx, n = r->nblocks, i, j;

	idx = malloc((n + 1) * sizeof(*idx));
	if (!idx)
		return -1;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), ss_reader_cmp_block, r);
	n = ss_reader_dedup(r, idx, n);
	r->threads = calloc(n + 1, sizeof(*r->threads));
	if (!r->threads) {
		free(idx);
		return -1;
	}
	if (SS_READER_V2(r))
		r->nevents = 0;  /* each kept block once */
	for (i = 0; i < n; i = j) {
		struct ss_rthread *t = &r->threads[r->nthreads++];
		const struct ss_rchunk *c = &r->chunks[r->blocks[idx[i]].chunk];
		uint64_t key = ss_reader_block_key(r, idx[i]);

		for (j = i; j < n && ss_reader_block_key(r, idx[j]) == key; j++)
			;
		t->serial = c->serial;
		t->tid = c->tid;
		t->blocks = malloc((j - i) * sizeof(size_t));
		if (!t->blocks) {
			free(idx);
			return -1;
		}
		memcpy(t->blocks, idx + i, (j - i) * sizeof(size_t));
		t->nblocks = j - i;
		for (size_t k = i; k < j; k++)
			t->nevents += r->blocks[idx[k]].nevents;
		if (SS_READER_V2(r))
			r->nevents += t->nevents;
	}
	free(idx);
	return 0;
}
