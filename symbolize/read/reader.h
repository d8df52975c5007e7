/*
 * reader.h - read one raw .sstrace file (see runtime/format.h).
 *
 * The file is mapped read-only and indexed once at open: the chunk list,
 * the blocks of events (version 1: each EVENTS chunk is one; version 2:
 * the blocks of EVENTS and RING chunks), the threads (blocks grouped by
 * serial, ordered by seq, a block found twice kept once) and the
 * tick-to-nanosecond fit.  Iterators then hand out meta records and
 * per-thread events without copying or allocating; version 2's compact
 * words come out as the same events as version 1's records.
 *
 * The reader never trusts the file: every length is bounded and every
 * offset checked; damage is skipped up to the next good chunk header with
 * one warning line naming the file and offsets (docs/trace-format.md,
 * "Damaged files").  It never writes to the file.
 */
#ifndef SS_READER_H
#define SS_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "format.h"

/* One chunk as found in the file; payload is [data, data + len). */
struct ss_rchunk {
	const uint8_t *data;
	uint64_t len;       /* payload bytes usable (bounded by the file) */
	uint64_t offset;    /* of the chunk header in the file */
	uint32_t kind;
	uint64_t tid, seq, serial;
	uint64_t nevents;   /* EVENTS, RING: good events found in it (version
	                     * 2: blocks found twice counted in both) */
};

/* A run of events of one thread: version 1, an EVENTS chunk's records up
 * to the first ts 0; version 2, one block's good words (its BLOCK record
 * first, up to its end, the next block or damage). */
struct ss_rblock {
	const uint8_t *data;
	uint64_t len;       /* bytes */
	uint64_t seq;       /* version 1: the chunk's seq; 2: the block's */
	uint64_t nevents;   /* events handed out (no BLOCK, BASE, PAD) */
	size_t chunk;       /* index into ss_reader.chunks */
};

/* The blocks of one thread, by seq. */
struct ss_rthread {
	uint64_t serial;
	uint64_t tid;
	size_t *blocks;     /* indexes into ss_reader.blocks */
	size_t nblocks;
	uint64_t nevents;
};

struct ss_rpending;

struct ss_reader {
	char *path;
	const uint8_t *map;
	size_t size;
	struct ss_file_header hdr;  /* copy, strings NUL-terminated */
	struct ss_rchunk *chunks;
	size_t nchunks;
	struct ss_rblock *blocks;   /* every block found, duplicates too */
	size_t nblocks;
	struct ss_rthread *threads;
	size_t nthreads;
	uint64_t nevents;           /* all threads (version 2: each block once) */
	uint64_t kinds;             /* bit k: an event of kind k (< 64) is in
	                             * the file (ss_reader_has_kind) */
	/* ns = base_ns + (ticks - base_ticks) * ns_per_tick */
	uint64_t base_ticks, base_ns;
	double ns_per_tick;
	int64_t shift_ns;           /* added to every time: hosts of an MPI run
	                             * on one clock (mpi-clock.c); 0 otherwise */
	uint32_t exit_every;        /* SS_META_EXIT_ORDER: 1 call in this many
	                             * was read in order, its ENTER and EXIT
	                             * of even time; 0: every call was (an
	                             * older trace) */
	int damaged;                /* a chunk was cut short or corrupt */
	uint64_t damage_offset;     /* of the first damage */
	uint64_t more[4];           /* offsets of the next damaged places */
	size_t nmore;               /* damaged places after the first */
	int damage_count;           /* version 2: the first damage's text, which
	                             * counts the events kept, waits for the
	                             * blocks to be grouped (1: truncated, 2:
	                             * corrupt chunk) */
	char warning[768];          /* the one-line warning, "" if none */
	struct ss_rpending *pending; /* blocks made for drops a ring's header
	                              * counts (ss_reader_scan_ring) */
};

/* Open and index `path`.  Returns NULL with a one-line message in err
 * ("FILE: not a stepscope trace (bad magic)", ...).  A damaged but
 * readable file opens fine with r->warning set. */
struct ss_reader *ss_reader_open(const char *path, char *err, size_t errlen);
void ss_reader_free(struct ss_reader *r);

/* From ss_reader_cache_on to ss_reader_cache_off, a freed reader is kept
 * and opening its path again hands it back (reader-cache.c): for the
 * commands that read one run several times and change no file. */
void ss_reader_cache_on(void);
void ss_reader_cache_off(void);

/* Ticks of the file clock to CLOCK_MONOTONIC nanoseconds (plus shift_ns). */
uint64_t ss_reader_ns(const struct ss_reader *r, uint64_t ticks);

/* Whether events of this kind may be in the file: its blocks were
 * scanned at open (a version 1 file: every kind may be), so a reader
 * that wants only some kinds (allocations) can skip a file without them
 * instead of walking all its events. */
static inline int ss_reader_has_kind(const struct ss_reader *r, unsigned kind)
{
	return kind >= 64 || ((r->kinds >> kind) & 1);
}

/* Meta records in file order. */
struct ss_meta_rec {
	uint16_t type;
	uint64_t ts;            /* file clock */
	const uint8_t *data;    /* payload after struct ss_meta */
	size_t len;
};
struct ss_meta_iter {
	const struct ss_reader *r;
	size_t chunk;
	uint64_t pos;
	/* damaged headers passed so far (each loses its own record; the
	 * next one found is read), the last one's file offset and the bytes
	 * skipped there (ss_reader_open warns of them) */
	size_t nbad;
	uint64_t bad_off, bad_skip;
};
void ss_reader_meta_begin(const struct ss_reader *r, struct ss_meta_iter *it);
/* 1 and *out filled, or 0 at the end.  A damaged header (a size past
 * its chunk, reserved bits set, a type past SS_META_TYPE_MAX) is passed:
 * the iterator goes on at the next 8-byte boundary where a record starts
 * whose successor does too. */
int ss_reader_meta_next(struct ss_meta_iter *it, struct ss_meta_rec *out);

/* Each module the trace names with its build-id (len 0: none): its MODULE
 * records, then the executable from the header; a record whose build-id
 * length is out of range is passed over. */
void ss_reader_each_module(const struct ss_reader *r,
			   void (*fn)(void *ctx, const char *path, const uint8_t *id, size_t len),
			   void *ctx);

/* Events of one thread, in order, timestamps in ns clamped to never
 * decrease. */
struct ss_revent {
	uint64_t ns;
	unsigned kind;          /* enum ss_event_kind */
	uint64_t arg;
	/* version 2 long records with more than one payload word
	 * (SS_EV_ARGS): n words at payload, valid until the iterator moves
	 * to another block; n is 0 for every other event */
	unsigned n;
	const uint8_t *payload;
	/* an ENTER or EXIT read unfenced, when issued (SS_META_EXIT_ORDER):
	 * an EXIT may come before the call's last instructions ran, an ENTER
	 * before the previous call's; 0 for every other event */
	unsigned unordered;
};
struct ss_event_iter {
	const struct ss_reader *r;
	const struct ss_rthread *t;
	size_t ci;              /* index into t->blocks */
	uint64_t ei;            /* version 1: event index in that block;
	                         * version 2: byte offset in it */
	uint64_t tbase, abase;  /* version 2: the block's bases */
	uint64_t last_ns;
	/* version 2, past the block's bases: the block (its len bytes
	 * checked at open), for the inline path; NULL otherwise */
	const uint8_t *bdata;
	uint64_t blen;
};
void ss_reader_events_begin(const struct ss_reader *r, size_t thread,
			    struct ss_event_iter *it);
int ss_reader_events_next(struct ss_event_iter *it, struct ss_revent *out);

/* The file clock in ns (ss_reader_ns), inline. */
static inline uint64_t ss_reader_ns_inline(const struct ss_reader *r, uint64_t ticks)
{
	uint64_t ns = ticks;
	double d;

	if (r->hdr.clock == SS_CLOCK_TSC) {
		if (ticks >= r->base_ticks)
			d = (double)(ticks - r->base_ticks) * r->ns_per_tick;
		else
			d = -(double)(r->base_ticks - ticks) * r->ns_per_tick;
		d += (double)r->base_ns;
		ns = d <= 0 ? 0 : d >= 1.8e19 ? UINT64_MAX : (uint64_t)(d + 0.5);
	}
	/* in integers: wall-clock ns do not fit a double's mantissa */
	if (r->shift_ns > 0)
		return ns > UINT64_MAX - (uint64_t)r->shift_ns ? UINT64_MAX
							       : ns + (uint64_t)r->shift_ns;
	if (r->shift_ns < 0)
		return ns < (uint64_t)-r->shift_ns ? 0 : ns - (uint64_t)-r->shift_ns;
	return ns;
}

/* The bulk of a version 2 block, a short ENTER/EXIT record, decoded as
 * ss_reader_events_next would: 1, or 0 for anything else (the call). */
static inline int ss_reader_events_short(struct ss_event_iter *it, struct ss_revent *out)
{
	uint64_t w, ts, ns;
	unsigned k;

	if (!it->bdata || it->ei >= it->blen || it->blen - it->ei < 8)
		return 0;
	memcpy(&w, it->bdata + it->ei, sizeof(w));
	k = SS_CW_K(w);
	if (k != 1 && k != 2)
		return 0;
	it->ei += 8;
	ts = it->tbase > UINT64_MAX - SS_CW_DT(w) ? UINT64_MAX : it->tbase + SS_CW_DT(w);
	ns = ss_reader_ns_inline(it->r, ts);
	if (ns < it->last_ns)
		ns = it->last_ns;
	it->last_ns = ns;
	out->ns = ns;
	out->kind = k == 1 ? SS_EV_ENTER : SS_EV_EXIT;
	out->arg = (it->abase + SS_CW_ADDR(w)) & SS_EV_ARG_MASK;
	out->n = 0;
	out->unordered = it->r->exit_every && (ts & 1);
	return 1;
}

/* ss_reader_events_next with its common case inline: for the loops that
 * read every event (slices-walk.c). */
static inline int ss_reader_events_get(struct ss_event_iter *it, struct ss_revent *out)
{
	return ss_reader_events_short(it, out) || ss_reader_events_next(it, out);
}

/* First and last event time of a thread in ns; 0 if it has none. */
uint64_t ss_reader_thread_first_ns(const struct ss_reader *r, size_t thread);

/* Program name: basename of exe_path, or "?" when unknown. */
const char *ss_reader_prog(const struct ss_reader *r);

#endif /* SS_READER_H */
