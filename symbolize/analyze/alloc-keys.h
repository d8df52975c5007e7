/*
 * alloc-keys.h - the per-function sums of recorded allocations, keyed by
 * (pid, tid, function name), with (0, 0, name) for the rows merged over
 * threads: the table that alloc-report.c (bytes and blocks per kind) and
 * alloc-device.c (bytes per device) both keep.  Each entry is a record of
 * the caller's size that opens with struct ss_alloc_key; records stay in
 * the order they were made.
 */
#ifndef SS_ALLOC_KEYS_H
#define SS_ALLOC_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "alloc-read.h"

struct ss_alloc_key {
	uint64_t pid, tid;          /* 0, 0: merged over threads */
	char *name;
};

struct ss_alloc_keys {
	char *v;                    /* n records of `size` bytes */
	size_t size, n, cap;
	uint32_t *index;            /* open addressing: 0 empty, else record i + 1 */
	size_t capindex;
};

/* An empty table of records of `size` bytes (>= sizeof(struct ss_alloc_key)). */
void ss_alloc_keys_init(struct ss_alloc_keys *t, size_t size);
void ss_alloc_keys_release(struct ss_alloc_keys *t);
/* The i-th record made (i < t->n). */
static inline void *ss_alloc_keys_at(const struct ss_alloc_keys *t, size_t i)
{
	return t->v + i * t->size;
}
/* The record of (pid, tid, name), or NULL. */
void *ss_alloc_keys_find(const struct ss_alloc_keys *t, uint64_t pid, uint64_t tid,
			 const char *name);
/* The same, made (zeroed but for its key) when missing; NULL: out of memory. */
void *ss_alloc_keys_get(struct ss_alloc_keys *t, uint64_t pid, uint64_t tid, const char *name);
/* Sums one record's bytes along its call path nodes[node - 1]: add(rec, 1,
 * arg) on the record of the function it was made in, then add(rec, 0, arg)
 * on that of each distinct function on the path (that one included, a
 * recursive one once), on the thread's records (pid, tid) and on the
 * merged ones.  -1: out of memory (part was added). */
int ss_alloc_keys_path(struct ss_alloc_keys *t, uint64_t pid, uint64_t tid,
		       const struct ss_alloc_node *nodes, uint32_t node,
		       void (*add)(void *rec, int self, const void *arg), const void *arg);

#endif /* SS_ALLOC_KEYS_H */
