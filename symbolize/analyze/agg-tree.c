/*
 * agg-tree.c - what the aggregate's call trees are made of: the table of
 * interned names (a function, a range or a native frame is a 32-bit id),
 * the pool of tree nodes, and merging sibling lists by name (moving one
 * list into another, or copying it in).  agg.c builds the trees from
 * slices with these; agg-results.c reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "util.h"
#include "agg-state.h"

uint64_t ss_agg_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* Id of a name; insert it when `add`.  UINT32_MAX if absent / no memory. */
uint32_t ss_agg_intern(struct ss_agg *a, const char *s, int add)
{
	size_t i;

	if (a->nhcap) {
		i = ss_hash_str(s) & (a->nhcap - 1);
		while (a->nhash[i]) {
			uint32_t id = a->nhash[i] - 1;
			if (!strcmp(a->names[id], s))
				return id;
			i = (i + 1) & (a->nhcap - 1);
		}
	}
	if (!add)
		return UINT32_MAX;
	if ((a->nnames + 1) * 2 > a->nhcap) {
		size_t nc = a->nhcap ? a->nhcap * 2 : 256, k;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh)
			goto oom;
		for (k = 0; k < a->nnames; k++) {
			size_t j = ss_hash_str(a->names[k]) & (nc - 1);
			while (nh[j])
				j = (j + 1) & (nc - 1);
			nh[j] = (uint32_t)k + 1;
		}
		free(a->nhash);
		a->nhash = nh;
		a->nhcap = nc;
	}
	if (ss_grow((void **)&a->names, &a->capnames, a->nnames, sizeof(char *), 16))
		goto oom;
	a->names[a->nnames] = strdup(s);
	if (!a->names[a->nnames])
		goto oom;
	i = ss_hash_str(s) & (a->nhcap - 1);
	while (a->nhash[i])
		i = (i + 1) & (a->nhcap - 1);
	a->nhash[i] = (uint32_t)a->nnames + 1;
	return (uint32_t)a->nnames++;
oom:
	a->oom = 1;
	return UINT32_MAX;
}

struct ss_agg_node *ss_agg_node_new(struct ss_agg *a, uint32_t name)
{
	struct ss_agg_node *n = a->free_nodes;

	if (n)
		a->free_nodes = n->next;
	else if (!(n = malloc(sizeof(*n)))) {
		a->oom = 1;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->name = name;
	return n;
}

void ss_agg_node_put(struct ss_agg *a, struct ss_agg_node *n)
{
	n->next = a->free_nodes;
	a->free_nodes = n;
}

void ss_agg_tree_free(struct ss_agg_node *n)
{
	while (n) {
		struct ss_agg_node *next = n->next;
		ss_agg_tree_free(n->child);
		free(n);
		n = next;
	}
}

/* Move the sibling list `src` into the sibling list *dst, merging nodes
 * of the same name (and their children, recursively). */
void ss_agg_merge(struct ss_agg *a, struct ss_agg_node **dst,
		  struct ss_agg_node *src)
{
	while (src) {
		struct ss_agg_node *s = src, *d;
		src = src->next;
		for (d = *dst; d && (d->name != s->name || d->native != s->native);
		     d = d->next)
			;
		if (!d) {
			s->next = *dst;
			*dst = s;
			continue;
		}
		d->calls += s->calls;
		d->self_ns += s->self_ns;
		d->total_ns += s->total_ns;
		d->off_ns += s->off_ns;
		d->off_self_ns += s->off_self_ns;
		ss_agg_merge(a, &d->child, s->child);
		ss_agg_node_put(a, s);
	}
}

/* A copy of the sibling list src merged into *dst (src is left alone). */
void ss_agg_merge_copy(struct ss_agg *a, struct ss_agg_node **dst,
		       const struct ss_agg_node *src)
{
	for (; src; src = src->next) {
		struct ss_agg_node *d;
		for (d = *dst; d && (d->name != src->name || d->native != src->native);
		     d = d->next)
			;
		if (!d) {
			d = ss_agg_node_new(a, src->name);
			if (!d)
				return;
			d->native = src->native;
			d->next = *dst;
			*dst = d;
		}
		d->calls += src->calls;
		d->self_ns += src->self_ns;
		d->total_ns += src->total_ns;
		d->off_ns += src->off_ns;
		d->off_self_ns += src->off_self_ns;
		ss_agg_merge_copy(a, &d->child, src->child);
	}
}
