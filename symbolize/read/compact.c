/*
 * compact.c - decode the compact records of trace format version 2: a
 * record's head word gives its kind, the time since the block's time base
 * and its length; a long record carries its payload words after it.
 *
 * Design: pure functions over a byte range and a position; the bases
 * (time, address) live in a small state the caller keeps per block.
 * Words are read with memcpy, never unaligned or past the end.
 *
 * Must never: read past `len`, loop on a zero length, or hand out an
 * event before the block's first time base.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"
#include "compact.h"

static uint64_t ss_cw_ts(uint64_t tbase, uint32_t dt)
{
	return tbase > UINT64_MAX - dt ? UINT64_MAX : tbase + dt;
}

/* Payload words a long record of this kind has. */
static unsigned ss_cw_payload(unsigned kind)
{
	switch (kind) {
	case SS_EV_BLOCK:
		return 3;
	case SS_EV_BASE:
		return 2;
	case SS_EV_PAD:
		return 0;
	case SS_EV_ALLOC:       /* addr, size, space */
		return 3;
	case SS_EV_FREE:        /* addr, space */
		return 2;
	default:
		return 1;
	}
}

/* Long record at data + *pos, head word w: bounds and length checked here. */
static enum ss_cw_res ss_cw_long(const uint8_t *data, uint64_t len, uint64_t *pos,
				 uint64_t w, struct ss_cw_state *st,
				 struct ss_cw_rec *out, const char **why)
{
	unsigned kind = SS_CW_KIND(w), n = SS_CW_N(w), i;
	uint64_t p[3] = { 0, 0, 0 };

	/* a long payload (bits 44..63) only where its kind has one */
	if (kind == SS_EV_ARGS ? n < 1 :
	    kind == SS_EV_PAD ? 0 : n != ss_cw_payload(kind)) {
		*why = n > 3 ? "a long record with bits 44-63 set" :
			       "a long record of the wrong length for its kind";
		return SS_CW_BAD;
	}
	if ((len - *pos) / 8 < (uint64_t)n + 1) {
		*why = "a record that runs past the end of its block";
		return SS_CW_CUT;
	}
	for (i = 0; i < n && i < 3; i++)
		p[i] = ss_reader_word(data + *pos + 8 * (i + 1));
	out->kind = kind;
	out->arg = p[0];
	out->payload = data + *pos + 8;
	out->n = n;
	if (kind == SS_EV_BLOCK || kind == SS_EV_BASE) {
		uint64_t tb = kind == SS_EV_BLOCK ? p[1] : p[0];
		if (!tb || (kind == SS_EV_BLOCK && SS_CW_DT(w))) {
			*why = "a block or base record with a bad time";
			return SS_CW_BAD;
		}
		st->tbase = tb;
		st->abase = kind == SS_EV_BLOCK ? p[2] : p[1];
		st->based = 1;
	} else if (kind != SS_EV_PAD && !st->based) {
		*why = "an event before any block record";
		return SS_CW_BAD;
	}
	*pos += 8 * (uint64_t)(n + 1);
	if (kind == SS_EV_BLOCK || kind == SS_EV_BASE || kind == SS_EV_PAD)
		return SS_CW_SKIP;
	out->ts = ss_cw_ts(st->tbase, SS_CW_DT(w));
	out->arg &= SS_EV_ARG_MASK;  /* what a version 1 arg can hold */
	return SS_CW_EVENT;
}

/* Decode the record at data + *pos (a multiple of 8; [data, data + len)
 * readable) and step over it, except at the end or on damage. */
enum ss_cw_res ss_cw_decode(const uint8_t *data, uint64_t len, uint64_t *pos,
			    struct ss_cw_state *st, struct ss_cw_rec *out,
			    const char **why)
{
	uint64_t w;
	unsigned k;

	if (*pos >= len)
		return SS_CW_END;
	if (len - *pos < 8) {
		/* blocks are whole words: the file was cut in this one */
		*why = "a record that runs past the end of its block";
		return SS_CW_CUT;
	}
	w = ss_reader_word(data + *pos);
	if (!w)
		return SS_CW_END;
	k = SS_CW_K(w);
	if (k == 3)
		return ss_cw_long(data, len, pos, w, st, out, why);
	if (!k) {
		*why = "a word of no kind";
		return SS_CW_BAD;
	}
	if (!st->based) {
		*why = "an event before any block record";
		return SS_CW_BAD;
	}
	out->ts = ss_cw_ts(st->tbase, SS_CW_DT(w));
	out->kind = k == 1 ? SS_EV_ENTER : SS_EV_EXIT;
	out->arg = (st->abase + SS_CW_ADDR(w)) & SS_EV_ARG_MASK;
	out->n = 0;
	*pos += 8;
	return SS_CW_EVENT;
}

/* Scan the block at [data, data + len).  In an EVENTS chunk (packed) the
 * next BLOCK record ends it; in a RING block it is corrupt. */
void ss_cw_scan_block(const uint8_t *data, uint64_t len, int packed,
		      struct ss_cw_scan *s)
{
	struct ss_cw_state st = { 0, 0, 0 };
	struct ss_cw_rec rec;
	uint64_t pos = 0, w;

	memset(s, 0, sizeof(*s));
	w = len >= 8 ? ss_reader_word(data) : 0;
	if (SS_CW_K(w) != 3 || SS_CW_KIND(w) != SS_EV_BLOCK) {
		s->end = SS_CW_BAD;
		s->why = "no block record where a block begins";
		return;
	}
	for (;;) {
		uint64_t at;
		enum ss_cw_res res;

		/* the bulk: short ENTER/EXIT records after the bases, which
		 * ss_cw_decode would take one by one */
		while (st.based && len - pos >= 8 && pos < len) {
			unsigned k;
			memcpy(&w, data + pos, sizeof(w));
			k = SS_CW_K(w);
			if (k != 1 && k != 2)
				break;
			s->nevents++;
			pos += 8;
		}
		at = pos;
		if (at && packed && len - at >= 8 &&
		    ss_reader_word(data + at) == SS_CW_BLOCK_HEAD) {
			s->end = SS_CW_SKIP;
			break;
		}
		res = ss_cw_decode(data, len, &pos, &st, &rec, &s->why);
		if (res == SS_CW_SKIP && rec.kind == SS_EV_BLOCK && at) {
			res = SS_CW_BAD;
			s->why = "a block record inside a block";
			pos = at;
		}
		if (res == SS_CW_EVENT) {
			s->nevents++;
			if (rec.kind < 64)
				s->kinds |= UINT64_C(1) << rec.kind;
		} else if (res == SS_CW_SKIP) {
			if (!at)
				s->seq = rec.arg;
		} else {
			s->end = res;
			break;
		}
	}
	s->len = pos;
}

/* Room for one more block: the array doubles from 64 as it fills. */
