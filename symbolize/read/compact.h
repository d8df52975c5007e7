/*
 * compact.h - the compact event records of trace format version 2
 * (runtime/format.h, "Compact events") as the reader decodes them:
 * one record at a time (ss_cw_decode) or a whole block (ss_cw_scan_block).
 * Shared by reader.c (which scans every block once when it indexes a
 * file) and reader-iter.c (which hands the events out).
 */
#ifndef SS_COMPACT_H
#define SS_COMPACT_H

#include <stdint.h>

#include "format.h"

/* The head word of a BLOCK record, where a version 2 block begins. */
#define SS_CW_BLOCK_HEAD SS_CW_LONG(SS_EV_BLOCK, 3, 0)

/* What one record turned out to be (ss_cw_decode). */
enum ss_cw_res {
	SS_CW_EVENT,    /* an event to hand out */
	SS_CW_SKIP,     /* BLOCK, BASE or PAD: bases set, nothing to hand out */
	SS_CW_END,      /* a zero head word, or the end of the data */
	SS_CW_CUT,      /* the record runs past the end of the data */
	SS_CW_BAD,      /* corrupt, said why */
};

struct ss_cw_state {
	uint64_t tbase, abase;
	int based;      /* a BLOCK or BASE record was read */
};

/* A decoded record: an event, or for SS_EV_BLOCK its seq in arg. */
struct ss_cw_rec {
	uint64_t ts;
	unsigned kind;
	uint64_t arg;
	/* a long record's payload words (n of them; little-endian, read
	 * with ss_reader_word), valid while its block is */
	const uint8_t *payload;
	unsigned n;
};

/* One block scanned: its good bytes and events, and why it ended. */
struct ss_cw_scan {
	uint64_t len, nevents, seq;
	uint64_t kinds;         /* bit k: an event of kind k (< 64) in it */
	enum ss_cw_res end;     /* END; BAD or CUT (why); SKIP: the next
	                         * block of an EVENTS chunk begins at len */
	const char *why;
};

/* reader.c: a little-endian word at p, read with memcpy */
uint64_t ss_reader_word(const uint8_t *p);
enum ss_cw_res ss_cw_decode(const uint8_t *data, uint64_t len, uint64_t *pos,
			    struct ss_cw_state *st, struct ss_cw_rec *out,
			    const char **why);
void ss_cw_scan_block(const uint8_t *data, uint64_t len, int packed,
		      struct ss_cw_scan *s);

#endif /* SS_COMPACT_H */
