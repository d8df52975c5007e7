/*
 * ring.h - what the two halves of the rings share (runtime only): the
 * ring itself, the list of every ring of the process, and a block's place
 * and state.  ring.c is the owner's side (a thread's blocks, begun and
 * finished, the block switch); ring-copy.c is the copier's side (finished
 * blocks into EVENTS chunks of the file, and the file's tail at exit).
 */
#ifndef SS_RING_H
#define SS_RING_H

#include "internal.h"

#define SS_RING_BLOCKS 16

struct ss_ring {
	struct ss_ring *next;           /* every ring of the process */
	struct ss_chunk_header *c;      /* the RING chunk, mapped */
	struct ss_ring_header *hdr;     /* in the chunk, after its header */
	uint64_t *blocks;               /* block 0 */
	uint64_t size;                  /* of the chunk */
	uint64_t off;                   /* of the chunk in the file */
	uint32_t bw, nb;                /* words per block, blocks */
	pthread_mutex_t mu;             /* held by whoever copies blocks out */
	uint64_t begun;                 /* ring blocks the owner began (its
	                                 * blocks in overflow chunks are not
	                                 * counted: they take no slot) */
	_Atomic uint64_t produced;      /* ring blocks the owner finished */
	_Atomic uint64_t consumed;      /* blocks copied out and cleared */
	_Atomic int closing;            /* the owner is gone: copy, then free */
	int free;                       /* no owner: can be given out again */
	uint32_t len[SS_RING_BLOCKS];   /* words used in each finished block */
	uint64_t tid, serial;           /* the owner */
	/* the owner's EVENTS chunk being filled (under mu), written with
	 * pwrite: no mapping, no page fault, no TLB shootdown */
	uint64_t ev_off;                /* 0: none */
	uint64_t spare_off;             /* a chunk reserved for the next one,
	                                 * outside mu (0: none) */
	uint64_t spare_size;            /* its bytes: a whole chunk, or what a
	                                 * gone owner's chunk had left */
	uint64_t ev_size, ev_used;      /* chunk bytes, payload bytes */
	uint64_t evseq;
	uint64_t hole_seq, hole_ns;     /* block (seq + 1) seen with a hole */
	/* events the owner dropped and had not written as SS_EV_LOST when
	 * it was done with the ring: written in a block of their own */
	uint64_t lost, lost_seq, lost_ts;
};

#define SS_HOLE_NS 200000000ull
#define SS_SPIN_TRIES 64
/* while dropping, one event in SS_DROP_RETRY takes the slow path again */
#define SS_DROP_RETRY 256

/* every ring of the process (ring.c) */
struct ss_rings {
	pthread_mutex_t mu;             /* the list; never held while copying */
	struct ss_ring *all;
};
SS_HIDDEN extern struct ss_rings ss_rings;

/* EVENTS chunks the background thread fills: a few times a ring */
#define SS_EV_CHUNK_RINGS 4

SS_HIDDEN void ss_ring_test_kill(const char *point); /* tests: see ring.c */

static inline uint64_t *ss_ring_block_at(const struct ss_ring *r, uint64_t seq)
{
	return r->blocks + (seq % r->nb) * r->bw;
}

static inline int ss_ring_block_free(struct ss_ring *r, uint64_t seq)
{
	return seq - atomic_load_explicit(&r->consumed, memory_order_acquire) < r->nb;
}

/* ring-copy.c, r->mu held: */
SS_HIDDEN int ss_ring_drain_locked(struct ss_ring *r, int have_lock, uint64_t most);
SS_HIDDEN void ss_ring_write_lost_locked(struct ss_ring *r, int have_lock);
/* ring-copy.c, r->mu not held, ss_rt.lock held: the owner is gone */
SS_HIDDEN void ss_ring_release_gone(struct ss_ring *r);
/* Events in the first n words of a block (ring-copy.c). */
SS_HIDDEN uint64_t ss_ring_block_events(const uint64_t *b, uint64_t n);

#endif /* SS_RING_H */
