/*
 * reader.c - map, validate and index one raw .sstrace file.
 *
 * Design: the file is mmap'ed once; ss_reader_open walks the chunk chain by
 * each chunk's `size`, records where every chunk's payload is and where its
 * events are (version 1: the chunk, one block; version 2: each block of an
 * EVENTS or RING chunk, scanned once so that its good length and event
 * count are known), groups the blocks per thread and fits the clock.
 * Records are copied out with memcpy, so no field is ever read unaligned
 * or past the end.
 *
 * Version 2 blocks are ordered by their seq; a block found twice (copied
 * out to an EVENTS chunk and still in its RING chunk, or torn in one of
 * them) is read once, from the longer copy.  A corrupt record ends its
 * block's good data with a warning; the scan goes on at the next block.
 *
 * Damage does not end the walk while a good chunk follows: the walk
 * resyncs at the next plausible chunk header (8-byte aligned) and the
 * warning names the file and the offset of what was skipped (the first
 * damage, then the offsets of later ones).  A file cut exactly between
 * chunks is found through the end record's event count.
 *
 * Files: this one maps, walks and indexes a file; reader-group.c groups
 * the blocks found per thread; compact.c decodes the records of format
 * version 2; reader-iter.c reads meta records and events out of the index
 * and converts time.
 *
 * Must never: read outside the mapping, loop on a zero or huge size,
 * crash on arbitrary bytes, or drop data without a warning.
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
#include "reader-int.h"

#define SS_READER_MAX_HEADER (1u << 20)

uint64_t ss_reader_word(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

void ss_reader_read_event(const uint8_t *p, struct ss_event *ev)
{
	memcpy(ev, p, sizeof(*ev));
}

/* Complete events at the start of a payload, up to the first ts 0. */
static uint64_t ss_reader_count_events(const uint8_t *data, uint64_t len,
				       uint64_t used)
{
	uint64_t n, i;

	if (used && used < len)
		len = used;
	n = len / sizeof(struct ss_event);
	for (i = 0; i < n; i++) {
		uint64_t ts;
		memcpy(&ts, data + i * sizeof(struct ss_event), sizeof(ts));
		if (!ts)
			break;
	}
	return i;
}

static int ss_reader_add_chunk(struct ss_reader *r, size_t *cap,
			       const struct ss_rchunk *c)
{
	if (r->nchunks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct ss_rchunk *n = realloc(r->chunks, ncap * sizeof(*n));
		if (!n)
			return -1;
		r->chunks = n;
		*cap = ncap;
	}
	r->chunks[r->nchunks++] = *c;
	return 0;
}

static int ss_reader_is_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Offsets of the damaged places after the first, for the warning. */
#define SS_READER_MORE_SHOWN 4

/* Damage at off: the first one is the warning (it must name the file and
 * an offset); later ones are listed after it by offset (see ss_reader_open). */
static void ss_reader_warn(struct ss_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ss_reader_warn(struct ss_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (r->damaged) {
		if (r->nmore < SS_READER_MORE_SHOWN)
			r->more[r->nmore] = off;
		r->nmore++;
		return;
	}
	r->damaged = 1;
	r->damage_offset = off;
	va_start(ap, fmt);
	vsnprintf(r->warning, sizeof(r->warning), fmt, ap);
	va_end(ap);
}

static void ss_reader_damage(struct ss_reader *r, uint64_t off, int truncated)
{
	if (SS_READER_V2(r) && !r->damaged) {
		/* the events kept are known once blocks found twice are
		 * counted once: ss_reader_damage_text */
		r->damaged = 1;
		r->damage_offset = off;
		r->damage_count = truncated ? 1 : 2;
		return;
	}
	if (truncated)
		ss_reader_warn(r, off, "%s: truncated at offset %llu: kept %llu events before it",
			       r->path, (unsigned long long)off,
			       (unsigned long long)r->nevents);
	else
		ss_reader_warn(r, off, "%s: corrupt chunk at offset %llu: kept %llu events before it",
			       r->path, (unsigned long long)off,
			       (unsigned long long)r->nevents);
}

/* A chunk's events were all counted or handed out: give its pages back,
 * so resident memory stays one chunk deep however long the trace is.  The mapping is
 * private and never written, so pages read again later come back from
 * the file unchanged. */
void ss_reader_drop_chunk(const struct ss_reader *r, const struct ss_rchunk *c)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)c->data + pg - 1) & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)c->data + c->len) & ~(pg - 1);

	if (hi > lo && c->len >= (1u << 16) &&
	    hi <= (uintptr_t)r->map + r->size)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Bytes of one event record in an EVENTS chunk's `used`: version 1's
 * ss_event, version 2's word. */
static uint64_t ss_reader_unit(const struct ss_reader *r)
{
	return SS_READER_V2(r) ? sizeof(uint64_t) : sizeof(struct ss_event);
}

static int ss_reader_kind_ok(const struct ss_reader *r, uint32_t kind)
{
	return kind == SS_CHUNK_EVENTS || kind == SS_CHUNK_META ||
	       (kind == SS_CHUNK_RING && SS_READER_V2(r));
}

/* Whether ch, read at some offset, looks like a chunk header the runtime
 * wrote: the magic, a known kind, a size of whole 8-byte words covering
 * its own header, and for EVENTS a `used` of whole events that fits. */
static int ss_reader_header_ok(const struct ss_reader *r, const struct ss_chunk_header *ch)
{
	if (ch->magic != SS_CHUNK_MAGIC || ch->size < sizeof(*ch) || ch->size % 8 ||
	    !ss_reader_kind_ok(r, ch->kind))
		return 0;
	if (ch->kind == SS_CHUNK_EVENTS &&
	    (ch->used % ss_reader_unit(r) || ch->used > ch->size - sizeof(*ch)))
		return 0;
	return 1;
}

/* Offset of the first plausible chunk header starting in [from, to) on an
 * 8-byte boundary (chunks start on one: the header size and every chunk
 * size are multiples of 8), or 0 if none.  The resync point after damage. */
static uint64_t ss_reader_next_chunk(const struct ss_reader *r, uint64_t from, uint64_t to)
{
	struct ss_chunk_header ch;
	uint64_t off;

	for (off = (from + 7) & ~UINT64_C(7); off < to && off + sizeof(ch) <= r->size; off += 8) {
		uint32_t magic;
		memcpy(&magic, r->map + off, sizeof(magic));
		if (magic != SS_CHUNK_MAGIC)
			continue;
		memcpy(&ch, r->map + off, sizeof(ch));
		if (ss_reader_header_ok(r, &ch))
			return off;
	}
	return 0;
}

/* Whether a chunk may follow at off: the end of the file, a chunk header,
 * or space reserved and never written (a zero header). */
static int ss_reader_boundary_ok(const struct ss_reader *r, uint64_t off)
{
	struct ss_chunk_header ch;

	if (off >= r->size)
		return 1;
	if (r->size - off < sizeof(ch))
		return ss_reader_is_zero(r->map + off, r->size - off);
	memcpy(&ch, r->map + off, sizeof(ch));
	return ss_reader_header_ok(r, &ch) || (!ch.magic && !ch.kind && !ch.size);
}

static int ss_reader_block_room(struct ss_reader *r)
{
	size_t n = r->nblocks, ncap;
	struct ss_rblock *b;

	if (n && (n < 64 || (n & (n - 1))))
		return 0;
	ncap = n ? n * 2 : 64;
	b = realloc(r->blocks, ncap * sizeof(*b));
	if (!b)
		return -1;
	r->blocks = b;
	return 0;
}

/* A block of the chunk about to be added (index r->nchunks). */
static int ss_reader_add_block(struct ss_reader *r, const uint8_t *data, uint64_t len,
			       uint64_t seq, uint64_t nevents)
{
	struct ss_rblock *b;

	if (ss_reader_block_room(r))
		return -1;
	b = &r->blocks[r->nblocks++];
	b->data = data;
	b->len = len;
	b->seq = seq;
	b->nevents = nevents;
	b->chunk = r->nchunks;
	return 0;
}

/* A corrupt record s->len bytes into the block at `block` of chunk c. */
static void ss_reader_warn_record(struct ss_reader *r, const struct ss_rchunk *c,
				  const uint8_t *block, const struct ss_cw_scan *s)
{
	uint64_t at = (uint64_t)(block - r->map) + s->len;

	ss_reader_warn(r, at, "%s: corrupt event record at offset %llu (%s) in the chunk at offset %llu: kept the %llu events of its block before it",
		       r->path, (unsigned long long)at, s->why,
		       (unsigned long long)c->offset, (unsigned long long)s->nevents);
}

/* Offset of the next BLOCK record's head in data from pos, or len. */
static uint64_t ss_reader_next_block(const uint8_t *data, uint64_t pos, uint64_t len)
{
	for (; pos < len && len - pos >= 8; pos += 8)
		if (ss_reader_word(data + pos) == SS_CW_BLOCK_HEAD)
			return pos;
	return len;
}

/* The blocks of a version 2 EVENTS chunk, packed in [data, data + limit);
 * cut: the file ends at limit, which was already said.  A block that
 * begins at `quiet` or later is a copy the process died writing: damage
 * in it ends the scan without a word (the block is whole in the ring).
 * *end: where a zero word or the limit ended them. */
static int ss_reader_scan_events(struct ss_reader *r, struct ss_rchunk *c,
				 uint64_t limit, int cut, uint64_t quiet, uint64_t *end)
{
	uint64_t pos = 0;

	while (pos < limit) {
		const uint8_t *b = c->data + pos;
		struct ss_cw_scan s;

		if (limit - pos < 8) {
			pos = limit;  /* a word cut by the file's end */
			break;
		}
		if (!ss_reader_word(b))
			break;

		ss_cw_scan_block(b, limit - pos, 1, &s);
		if (s.len && ss_reader_add_block(r, b, s.len, s.seq, s.nevents))
			return -1;
		c->nevents += s.nevents;
		r->kinds |= s.kinds;
		pos += s.len;
		if (s.end == SS_CW_SKIP)
			continue;
		if (s.end == SS_CW_END)
			break;
		if (s.end == SS_CW_CUT && cut) {
			pos = limit;  /* the file's end, not an empty word */
			break;
		}
		if ((uint64_t)(b - c->data) >= quiet)
			break;
		ss_reader_warn_record(r, c, b, &s);
		pos = ss_reader_next_block(c->data, pos + 8, limit);
	}
	*end = pos;
	return 0;
}

/* A version 2 EVENTS chunk whose header is ch, cut short by the end of the
 * file unless its payload c->len is all of `room` bytes. */
static int ss_reader_events_v2(struct ss_reader *r, struct ss_rchunk *c,
			       const struct ss_chunk_header *ch, uint64_t room)
{
	uint64_t used = ch->used, limit, end, quiet = UINT64_MAX;

	/* a block after `used`: the runtime copied it and died before it
	 * wrote the new `used` (two writes, runtime/ring-copy.c copy_out),
	 * or while it wrote the copy (a write a kill cuts at a page) - a
	 * crash leftover, not damage: read on, quietly */
	if (used && used % 8 == 0 && used < c->len && c->len - used >= 8 &&
	    ss_reader_word(c->data + used) == SS_CW_BLOCK_HEAD) {
		quiet = used;
		used = 0;
	}
	if (used % 8 || used > ch->size - sizeof(*ch) ||
	    (used && used < c->len && c->len - used >= 8 &&
	     ss_reader_word(c->data + used))) {
		/* past the chunk, or words follow where it says it ends */
		ss_reader_warn(r, c->offset, "%s: chunk at offset %llu has a bad used field (%llu bytes; the chunk holds %llu): read its events up to the first empty one",
			       r->path, (unsigned long long)c->offset,
			       (unsigned long long)used,
			       (unsigned long long)(ch->size - sizeof(*ch)));
		used = 0;
	}
	limit = used && used < c->len ? used : c->len;
	if (ss_reader_scan_events(r, c, limit, limit == c->len && c->len < room, quiet, &end))
		return -1;
	if (used && end < used && end < c->len)
		ss_reader_warn(r, c->offset + sizeof(*ch) + end,
			       "%s: empty word at offset %llu in the chunk at offset %llu, whose used field says %llu bytes: kept the %llu events before it",
			       r->path,
			       (unsigned long long)(c->offset + sizeof(*ch) + end),
			       (unsigned long long)c->offset, (unsigned long long)used,
			       (unsigned long long)c->nevents);
	return 0;
}

/* The blocks of a RING chunk whose payload holds `room` bytes (c->len of
 * them in the file): ss_ring_header, then nblocks blocks. */
/* A block the reader makes: the LOST record for events a thread dropped
 * that its ring's header counts and no block of its stream says (the
 * process died before it wrote one). */
struct ss_rpending {
	struct ss_rpending *next;
	uint64_t w[6];
};

/* Add that block to the ring chunk c as block number `seq`.  If the
 * runtime wrote the block after all (it may have, just before dying), the
 * two share `seq` and the longer, the runtime's, is kept. */
static int ss_reader_pending_lost(struct ss_reader *r, struct ss_rchunk *c, uint64_t lost,
				  uint64_t seq)
{
	struct ss_rpending *p = calloc(1, sizeof(*p));
	struct ss_chunk_header ch;

	if (!p)
		return -1;
	memcpy(&ch, c->data - sizeof(ch), sizeof(ch));
	p->next = r->pending;
	r->pending = p;
	p->w[0] = SS_CW_LONG(SS_EV_BLOCK, 3, 0);
	p->w[1] = seq;
	p->w[2] = ch.calib_ticks; /* when the ring was taken: a reader moves
				    * it up to the thread's last time */
	p->w[4] = SS_CW_LONG(SS_EV_LOST, 1, 0);
	p->w[5] = lost & SS_EV_ARG_MASK;
	c->nevents++;
	return ss_reader_add_block(r, (const uint8_t *)p->w, sizeof(p->w), seq, 1);
}

static int ss_reader_scan_ring(struct ss_reader *r, struct ss_rchunk *c, uint64_t room)
{
	struct ss_ring_header rh;
	uint64_t i, bb;

	if (c->len < sizeof(rh))
		return 0;  /* cut by the end of the file: already said */
	memcpy(&rh, c->data, sizeof(rh));
	bb = rh.block_bytes;
	if (!bb || bb % 64 || (uint64_t)rh.nblocks * bb > room - sizeof(rh)) {
		ss_reader_warn(r, c->offset, "%s: ring chunk at offset %llu has a bad ring header (%u blocks of %u bytes; the chunk holds %llu): skipped it",
			       r->path, (unsigned long long)c->offset, rh.nblocks,
			       rh.block_bytes, (unsigned long long)room);
		return 0;
	}
	for (i = 0; i < rh.nblocks; i++) {
		uint64_t at = sizeof(rh) + i * bb, avail;
		const uint8_t *b = c->data + at;
		struct ss_cw_scan s;

		if (at >= c->len)
			break;
		avail = c->len - at < bb ? c->len - at : bb;
		if (avail < 8 || !ss_reader_word(b))
			continue;  /* empty, or cut before its first word */
		ss_cw_scan_block(b, avail, 0, &s);
		if (s.len && ss_reader_add_block(r, b, s.len, s.seq, s.nevents))
			return -1;
		c->nevents += s.nevents;
		r->kinds |= s.kinds;
		if (s.end == SS_CW_END || (s.end == SS_CW_CUT && avail < bb))
			continue;
		ss_reader_warn_record(r, c, b, &s);
	}
	if (rh.lost && ss_reader_pending_lost(r, c, rh.lost, rh.lost_seq))
		return -1;
	return 0;
}

static int ss_reader_walk(struct ss_reader *r)
{
	uint64_t off = r->hdr.header_size;
	size_t cap = 0;

	while (off < r->size) {
		uint64_t remain = r->size - off, size, next;
		struct ss_chunk_header ch;
		struct ss_rchunk c;

		if (remain < sizeof(ch)) {
			if (!ss_reader_is_zero(r->map + off, remain))
				ss_reader_damage(r, r->size, 1);
			break;
		}
		memcpy(&ch, r->map + off, sizeof(ch));
		if (!ch.magic && !ch.kind && !ch.size) {
			/* reserved but never written (the process died while
			 * it was set up): go on at the next chunk.  Data under
			 * a zeroed header is damage, and said so. */
			next = ss_reader_next_chunk(r, off + 8, r->size);
			if (!ss_reader_is_zero(r->map + off, (next ? next : r->size) - off)) {
				if (next)
					ss_reader_warn(r, off, "%s: zeroed chunk header at offset %llu: skipped %llu bytes of data up to the next chunk at offset %llu",
						       r->path, (unsigned long long)off,
						       (unsigned long long)(next - off),
						       (unsigned long long)next);
				else
					ss_reader_warn(r, off, "%s: zeroed chunk header at offset %llu: skipped the %llu bytes of data after it (no chunk follows)",
						       r->path, (unsigned long long)off,
						       (unsigned long long)remain);
			}
			if (!next)
				break;
			off = next;
			continue;
		}
		if (ch.magic != SS_CHUNK_MAGIC || ch.size < sizeof(ch) || ch.size % 8 ||
		    !ss_reader_kind_ok(r, ch.kind)) {
			/* resync: the next plausible header on an 8-byte boundary */
			next = ss_reader_next_chunk(r, off + 8, r->size);
			if (!next) {
				ss_reader_damage(r, off, 0);
				break;
			}
			ss_reader_warn(r, off, "%s: corrupt chunk header at offset %llu: skipped %llu bytes up to the next chunk at offset %llu",
				       r->path, (unsigned long long)off,
				       (unsigned long long)(next - off), (unsigned long long)next);
			off = next;
			continue;
		}
		/* a size that runs past the file, or does not end where a chunk
		 * can follow, is wrong when a chunk header lies inside it: the
		 * chunk ends there */
		size = ch.size;
		if (size > remain || !ss_reader_boundary_ok(r, off + size)) {
			next = ss_reader_next_chunk(r, off + sizeof(ch),
						    size > remain ? r->size : off + size);
			if (next) {
				ss_reader_warn(r, off, "%s: chunk at offset %llu says it is %llu bytes long, but the next chunk starts at offset %llu: read it up to there",
					       r->path, (unsigned long long)off,
					       (unsigned long long)ch.size, (unsigned long long)next);
				size = next - off;
			}
		}
		memset(&c, 0, sizeof(c));
		c.offset = off;
		c.kind = ch.kind;
		c.data = r->map + off + sizeof(ch);
		c.len = (size > remain ? remain : size) - sizeof(ch);
		if (ch.kind == SS_CHUNK_EVENTS && !ch.serial && !ch.tid) {
			/* prepared ahead by the runtime, never handed out */
			if (size > remain)
				break;
			off += size;
			continue;
		}
		if (ch.kind == SS_CHUNK_RING && !ch.serial) {
			/* a free ring: no thread's data */
			if (size > remain)
				break;
			off += size;
			continue;
		}
		c.tid = ch.tid;
		c.seq = ch.seq;
		c.serial = ch.serial;
		if (ch.kind == SS_CHUNK_RING) {
			if (ss_reader_scan_ring(r, &c, size - sizeof(ch)))
				return -1;
			ss_reader_drop_chunk(r, &c);
		} else if (ch.kind == SS_CHUNK_EVENTS && SS_READER_V2(r)) {
			if (ss_reader_events_v2(r, &c, &ch, size - sizeof(ch)))
				return -1;
			ss_reader_drop_chunk(r, &c);
		} else if (ch.kind == SS_CHUNK_EVENTS) {
			uint64_t used = ch.used;
			if (used % sizeof(struct ss_event) || used > ch.size - sizeof(ch) ||
			    (used && used + sizeof(struct ss_event) <= c.len &&
			     ss_reader_count_events(c.data + used, sizeof(struct ss_event), 0))) {
				/* past the chunk, or events follow where it says
				 * the chunk ends */
				ss_reader_warn(r, off, "%s: chunk at offset %llu has a bad used field (%llu bytes; the chunk holds %llu): read its events up to the first empty one",
					       r->path, (unsigned long long)off,
					       (unsigned long long)used,
					       (unsigned long long)(ch.size - sizeof(ch)));
				used = 0;
			}
			c.nevents = ss_reader_count_events(c.data, c.len, used);
			if (used && used <= c.len &&
			    c.nevents < used / sizeof(struct ss_event))
				ss_reader_warn(r, off + sizeof(ch) + c.nevents * sizeof(struct ss_event),
					       "%s: empty event at offset %llu in the chunk at offset %llu, whose used field says %llu events: kept the %llu before it",
					       r->path,
					       (unsigned long long)(off + sizeof(ch) +
								    c.nevents * sizeof(struct ss_event)),
					       (unsigned long long)off,
					       (unsigned long long)(used / sizeof(struct ss_event)),
					       (unsigned long long)c.nevents);
			r->nevents += c.nevents;
			/* the chunk is one block; an empty one still names
			 * its thread */
			if (ss_reader_add_block(r, c.data, c.nevents * sizeof(struct ss_event),
						c.seq, c.nevents))
				return -1;
			ss_reader_drop_chunk(r, &c);
		} else if (ch.used % 8 || ch.used > ch.size - sizeof(ch)) {
			ss_reader_warn(r, off, "%s: chunk at offset %llu has a bad used field (%llu bytes; the chunk holds %llu): read its records up to the end marker",
				       r->path, (unsigned long long)off,
				       (unsigned long long)ch.used,
				       (unsigned long long)(ch.size - sizeof(ch)));
		} else if (ch.used && ch.used < c.len) {
			c.len = ch.used;
		}
		if (ss_reader_add_chunk(r, &cap, &c))
			return -1;
		if (size > remain) {
			ss_reader_damage(r, r->size, 1);
			break;
		}
		off += size;
	}
	return 0;
}

/* The end-of-run record counts the events written in closed chunks: a
 * file with fewer lost the rest (cut at a chunk boundary, say).  Only
 * said when no damage was seen, which already says what was lost. */
static void ss_reader_check_end(struct ss_reader *r)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	struct ss_meta_end e;
	int have = 0;

	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m))
		if (m.type == SS_META_END && m.len >= sizeof(e)) {
			memcpy(&e, m.data, sizeof(e));
			have = 1;
		}
	if (!have || r->damaged || e.events <= r->nevents)
		return;
	ss_reader_warn(r, r->size, "%s: ends at offset %zu with %llu of the %llu events written: the rest of the file is missing",
		       r->path, r->size, (unsigned long long)r->nevents,
		       (unsigned long long)e.events);
}

/* Damaged meta headers (reader-iter.c passes each): one warning each,
 * with the offset; the records after them are read. */
static void ss_reader_check_meta(struct ss_reader *r)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	size_t seen = 0;
	int more = 1;

	ss_reader_meta_begin(r, &it);
	while (more) {
		more = ss_reader_meta_next(&it, &m);
		if (it.nbad == seen)
			continue;
		seen = it.nbad;
		ss_reader_warn(r, it.bad_off, "%s: damaged meta record at offset %llu: skipped %llu bytes to the next record, and read the metadata after it",
			       r->path, (unsigned long long)it.bad_off,
			       (unsigned long long)it.bad_skip);
	}
}

/* "; also damaged at offsets A, B (and N more)" after the first warning. */
static void ss_reader_warn_more(struct ss_reader *r)
{
	size_t n = strlen(r->warning), i;

	if (!r->nmore)
		return;
	for (i = 0; i < r->nmore && i < SS_READER_MORE_SHOWN && n < sizeof(r->warning); i++) {
		n += (size_t)snprintf(r->warning + n, sizeof(r->warning) - n, "%s%llu",
				      i ? ", " : "; also damaged at offset ",
				      (unsigned long long)r->more[i]);
	}
	if (r->nmore > SS_READER_MORE_SHOWN && n < sizeof(r->warning))
		snprintf(r->warning + n, sizeof(r->warning) - n, " and %zu more places",
			 r->nmore - SS_READER_MORE_SHOWN);
}

/* Version 2: the first damage's text, now that the events kept before it
 * are known (each block once, ss_reader_group). */
static void ss_reader_damage_text(struct ss_reader *r)
{
	uint64_t off = r->damage_offset, kept = 0;
	size_t i, k;

	if (!r->damage_count)
		return;
	for (i = 0; i < r->nthreads; i++)
		for (k = 0; k < r->threads[i].nblocks; k++) {
			const struct ss_rblock *b = &r->blocks[r->threads[i].blocks[k]];
			if ((uint64_t)(b->data - r->map) < off)
				kept += b->nevents;
		}
	snprintf(r->warning, sizeof(r->warning),
		 r->damage_count == 1 ? "%s: truncated at offset %llu: kept %llu events before it"
				      : "%s: corrupt chunk at offset %llu: kept %llu events before it",
		 r->path, (unsigned long long)off, (unsigned long long)kept);
}

static int ss_reader_check_header(struct ss_reader *r, char *err, size_t errlen)
{
	if (r->size < SS_MAGIC_LEN || memcmp(r->map, SS_MAGIC, SS_MAGIC_LEN)) {
		snprintf(err, errlen, "%s: not a stepscope trace (bad magic)", r->path);
		return -1;
	}
	if (r->size < sizeof(r->hdr)) {
		snprintf(err, errlen, "%s: truncated header (%zu bytes)", r->path,
			 r->size);
		return -1;
	}
	memcpy(&r->hdr, r->map, sizeof(r->hdr));
	r->hdr.hostname[sizeof(r->hdr.hostname) - 1] = 0;
	r->hdr.exe_path[sizeof(r->hdr.exe_path) - 1] = 0;
	r->hdr.cmdline[sizeof(r->hdr.cmdline) - 1] = 0;
	if (r->hdr.min_read_version > SS_VERSION) {
		snprintf(err, errlen,
			 "%s: trace format version %u is newer than this stepscope (reads up to %d); upgrade stepscope",
			 r->path, r->hdr.version, SS_VERSION);
		return -1;
	}
	if (r->hdr.header_size < sizeof(r->hdr) ||
	    r->hdr.header_size > SS_READER_MAX_HEADER || r->hdr.header_size % 8) {
		snprintf(err, errlen, "%s: bad header size %u", r->path,
			 r->hdr.header_size);
		return -1;
	}
	if (r->hdr.header_size > r->size) {
		snprintf(err, errlen, "%s: truncated header (%zu of %u bytes)",
			 r->path, r->size, r->hdr.header_size);
		return -1;
	}
	return 0;
}

struct ss_reader *ss_reader_open(const char *path, char *err, size_t errlen)
{
	struct ss_reader *r;
	struct stat st;
	int fd;

	if ((r = ss_reader_cache_take(path)))  /* reader-cache.c */
		return r;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(r);
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	r->size = (size_t)st.st_size;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			snprintf(err, errlen, "%s: cannot map: %s", path,
				 strerror(errno));
			goto fail;
		}
		r->map = m;
		madvise(m, r->size, MADV_SEQUENTIAL);
	}
	close(fd);
	fd = -1;
	if (ss_reader_check_header(r, err, errlen))
		goto fail;
	if (ss_reader_walk(r) || ss_reader_group(r)) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (!SS_READER_V2(r))
		r->kinds = ~UINT64_C(0);  /* not scanned record by record */
	ss_reader_damage_text(r);
	ss_reader_check_meta(r);
	ss_reader_check_end(r);
	ss_reader_warn_more(r);
	ss_reader_fit_clock(r);
	ss_reader_cache_note(r);
	return r;
fail:
	if (fd >= 0)
		close(fd);
	ss_reader_free(r);
	return NULL;
}

void ss_reader_free(struct ss_reader *r)
{
	size_t i;

	if (!r || ss_reader_cache_put(r))
		return;
	if (r->map)
		munmap((void *)r->map, r->size);
	while (r->pending) {
		struct ss_rpending *p = r->pending;
		r->pending = p->next;
		free(p);
	}
	for (i = 0; i < r->nthreads; i++)
		free(r->threads[i].blocks);
	free(r->threads);
	free(r->blocks);
	free(r->chunks);
	free(r->path);
	free(r);
}
