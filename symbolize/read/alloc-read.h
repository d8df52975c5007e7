/*
 * alloc-read.h - the recorded allocations of one process (memory.allocations:
 * SS_EV_ALLOC and SS_EV_FREE, SS_META_ALLOC_LIVE; runtime/format.h), as
 * read by alloc-read.c: every record in time order with its size resolved
 * and the recorded call it happened in, the live bytes of each space per
 * step, and the blocks never freed.  Generic over spaces: the heap and
 * CUDA's (device, pinned, managed) are read alike.
 *
 * Rules (docs/memory.md):
 *   - a record belongs to the innermost recorded call open on its thread
 *     at its place in the thread's stream (node 0: none was open);
 *   - live bytes count blocks allocated since the current window opened;
 *     a FREE of a block not allocated so (before recording started, or in
 *     an earlier window) has no known size: it counts 0 bytes and is
 *     counted in unknown_frees;
 *   - a realloc is a FREE then an ALLOC (the runtime writes it so).
 */
#ifndef SS_ALLOC_READ_H
#define SS_ALLOC_READ_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "reader.h"

struct ss_slicer;

/* One ALLOC or FREE. */
struct ss_alloc_ev {
	uint64_t ns;
	uint64_t tid;
	uint64_t addr, size;        /* size: ALLOC's; a FREE's resolved one */
	uint64_t space;             /* as recorded (SS_SPACE_KIND, _DEVICE) */
	int64_t delta;              /* +size, -size, 0 for an unknown free */
	uint64_t live;              /* live bytes of its space after it */
	uint32_t node;              /* its call path (nodes[node - 1]), 0 none */
	uint8_t is_free;
	uint8_t known;              /* FREE: its block was allocated in the
	                             * window (size known) */
	uint8_t leaked;             /* ALLOC: still live at exit */
};

/* A call path: the innermost function and its caller's node. */
struct ss_alloc_node {
	uint32_t parent;            /* from 1; 0 outermost */
	uint64_t fn;
	const char *name;           /* resolved: as the slices name it */
};

#define SS_ALLOC_SPACES 8
/* Per recorded step: the most bytes of each space that the step's own
 * blocks (allocated in it, not yet freed) held at once; a step that
 * allocates nothing has 0, whatever earlier steps left live. */
struct ss_alloc_step {
	uint64_t step;
	uint64_t begin_ns, end_ns;
	uint64_t peak[SS_ALLOC_SPACES];  /* by index into spaces[] */
};

struct ss_alloc_data {
	struct ss_alloc_ev *ev;     /* time order */
	size_t nev;
	struct ss_alloc_node *nodes;
	size_t nnodes;
	uint64_t spaces[SS_ALLOC_SPACES]; /* spaces seen, first seen first */
	size_t nspaces;
	struct ss_alloc_step *steps;
	size_t nsteps;
	uint64_t unknown_frees;     /* FREEs of blocks of no known size */
	uint64_t outside;           /* records with no recorded call open */
	uint64_t allocs, frees;
	/* SS_META_ALLOC_LIVE: have_live when the process wrote it (it exited
	 * through exit()); nleaked ALLOCs of ev are marked leaked */
	int have_live;
	uint64_t nleaked, untracked;
	char **names_made;          /* node names of no symbol ("0x...") */
	size_t nnames_made;
};

/* Read process r's allocations (sl: its slicer, for windows, steps and
 * names).  0, with d->nev 0 when it recorded none; -1 out of memory. */
int ss_alloc_read(const struct ss_reader *r, struct ss_slicer *sl, struct ss_alloc_data *d);
void ss_alloc_release(struct ss_alloc_data *d);
/* Index of space in d->spaces, or -1. */
int ss_alloc_space_index(const struct ss_alloc_data *d, uint64_t space);
/* "heap", "cuda:0", "cuda:0 pinned", "cuda:0 managed" into buf */
const char *ss_alloc_space_name(uint64_t space, char *buf, size_t len);
/* The space counts as CUDA memory (CUDA Mem columns) rather than CPU:
 * device and managed memory; the heap and pinned host memory are CPU's. */
int ss_alloc_space_cuda(uint64_t space);

#endif /* SS_ALLOC_READ_H */
