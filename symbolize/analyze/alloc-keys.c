/*
 * alloc-keys.c - the (pid, tid, name) table of the allocation sums
 * (alloc-keys.h), shared by report's memory columns (alloc-report.c) and
 * its per-device section (alloc-device.c).
 *
 * How: records in one growing array, found through an open-addressing
 * index of their positions (kept at most half full, rebuilt twice as
 * large); names are copied, so the table outlives the walk's names.  A
 * path is summed on the thread's records and on the merged ones, each
 * distinct name once (the first 256 are remembered; a deeper recursion
 * may count a name again).
 *
 * Never: hand out a record that moves while the caller holds it across a
 * get (pointers stay valid only until the next ss_alloc_keys_get).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc-keys.h"

static uint64_t key_hash(uint64_t pid, uint64_t tid, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ pid * 31 ^ tid * 1099511628211ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h;
}

void ss_alloc_keys_init(struct ss_alloc_keys *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
}

void ss_alloc_keys_release(struct ss_alloc_keys *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(((struct ss_alloc_key *)ss_alloc_keys_at(t, i))->name);
	free(t->v);
	free(t->index);
	ss_alloc_keys_init(t, t->size);
}

static int index_grow(struct ss_alloc_keys *t)
{
	size_t cap = t->capindex ? t->capindex * 2 : 1024;
	uint32_t *ix = calloc(cap, sizeof(*ix));
	if (!ix)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		const struct ss_alloc_key *k = ss_alloc_keys_at(t, i);
		size_t j = key_hash(k->pid, k->tid, k->name) & (cap - 1);
		while (ix[j])
			j = (j + 1) & (cap - 1);
		ix[j] = (uint32_t)(i + 1);
	}
	free(t->index);
	t->index = ix;
	t->capindex = cap;
	return 0;
}

void *ss_alloc_keys_find(const struct ss_alloc_keys *t, uint64_t pid, uint64_t tid,
			 const char *name)
{
	if (!t->capindex)
		return NULL;
	size_t mask = t->capindex - 1;
	for (size_t j = key_hash(pid, tid, name) & mask;; j = (j + 1) & mask) {
		uint32_t v = t->index[j];
		if (!v)
			return NULL;
		struct ss_alloc_key *k = ss_alloc_keys_at(t, v - 1);
		if (k->pid == pid && k->tid == tid && !strcmp(k->name, name))
			return k;
	}
}

void *ss_alloc_keys_get(struct ss_alloc_keys *t, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_alloc_key *k = ss_alloc_keys_find(t, pid, tid, name);
	if (k)
		return k;
	if ((t->n + 1) * 2 > t->capindex && index_grow(t))
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		void *p = realloc(t->v, cap * t->size);
		if (!p)
			return NULL;
		t->v = p;
		t->cap = cap;
	}
	k = ss_alloc_keys_at(t, t->n);
	memset(k, 0, t->size);
	k->pid = pid;
	k->tid = tid;
	if (!(k->name = strdup(name)))
		return NULL;
	size_t j = key_hash(pid, tid, name) & (t->capindex - 1);
	while (t->index[j])
		j = (j + 1) & (t->capindex - 1);
	t->index[j] = (uint32_t)++t->n;
	return k;
}

int ss_alloc_keys_path(struct ss_alloc_keys *t, uint64_t pid, uint64_t tid,
		       const struct ss_alloc_node *nodes, uint32_t node,
		       void (*add)(void *rec, int self, const void *arg), const void *arg)
{
	const char *seen[256];
	for (int merged = 0; merged < 2; merged++) {
		uint64_t p = merged ? 0 : pid, th = merged ? 0 : tid;
		void *k = ss_alloc_keys_get(t, p, th, nodes[node - 1].name);
		if (!k)
			return -1;
		add(k, 1, arg);
		size_t nseen = 0;
		for (uint32_t n = node; n; n = nodes[n - 1].parent) {
			const char *name = nodes[n - 1].name;
			size_t i;
			for (i = 0; i < nseen && strcmp(seen[i], name); i++)
				;
			if (i < nseen)
				continue; /* recursive: once */
			if (nseen < sizeof(seen) / sizeof(seen[0]))
				seen[nseen++] = name;
			if (!(k = ss_alloc_keys_get(t, p, th, name)))
				return -1;
			add(k, 0, arg);
		}
	}
	return 0;
}
