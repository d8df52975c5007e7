/*
 * trace-writer.h - build synthetic raw traces in memory for unit tests:
 * a file header, META chunks (maps, threads, steps, strings, any record)
 * and EVENTS chunks of version 1 records, or (which makes the image
 * version 2) EVENTS chunks of compact words and RING chunks, laid out
 * exactly as runtime/format.h says.
 *
 * Tests then write the whole image, or a prefix of it (truncation), or a
 * damaged copy, to a file and read it back with symbolize/read/reader.c.
 * Not for production use: it aborts on out of memory.
 */
#ifndef SS_TRACE_WRITER_H
#define SS_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct ss_tw;

struct ss_tw *ss_tw_new(enum ss_clock clock, uint64_t pid);
void ss_tw_free(struct ss_tw *w);

/* The header at the start of the image, to adjust before writing. */
struct ss_file_header *ss_tw_header(struct ss_tw *w);

/* Meta records are collected and written as one META chunk by
 * ss_tw_meta_flush (called by ss_tw_events and ss_tw_write too). */
void ss_tw_meta(struct ss_tw *w, uint16_t type, uint64_t ts, const void *payload,
		size_t len);
void ss_tw_meta_maps(struct ss_tw *w, uint64_t ts, const char *text);
void ss_tw_meta_thread(struct ss_tw *w, uint64_t tid, const char *name);
void ss_tw_meta_string(struct ss_tw *w, uint64_t id, const char *text);
void ss_tw_meta_step(struct ss_tw *w, uint64_t ts, uint64_t step, uint64_t tid,
		     uint64_t serial, uint32_t action, uint32_t cycle);
void ss_tw_meta_calib(struct ss_tw *w, uint64_t ticks, uint64_t ns);
void ss_tw_meta_flush(struct ss_tw *w);

/* One EVENTS chunk holding n events and room for cap (>= n) events; the
 * rest stays zero.  Returns the chunk's offset in the image. */
size_t ss_tw_events(struct ss_tw *w, uint64_t tid, uint64_t serial, uint64_t seq,
		    const struct ss_event *ev, size_t n, size_t cap);

/* Version 2: an EVENTS chunk holding n 64-bit words (whole blocks, as the
 * test encodes them) and room for cap (>= n); `used` as given. */
size_t ss_tw_words(struct ss_tw *w, uint64_t tid, uint64_t serial, uint64_t seq,
		   const uint64_t *words, size_t n, size_t cap, uint64_t used);
/* Version 2 words as a test encodes them, one at a time (format.h's
 * SS_CW_* heads and their args), for ss_tw_words or ss_tw_ring; put
 * aborts when the words are full. */
struct ss_tw_enc {
	uint64_t w[128];
	size_t n;
};
void ss_tw_put(struct ss_tw_enc *e, uint64_t word);
/* Version 2: a RING chunk of nblocks blocks of block_bytes; block i holds
 * nwords[i] words of blocks[i] (blocks[i] NULL: empty), the rest zero. */
size_t ss_tw_ring(struct ss_tw *w, uint64_t tid, uint64_t serial,
		  uint32_t block_bytes, uint32_t nblocks,
		  const uint64_t *const *blocks, const size_t *nwords);

/* Raw bytes appended as they are (to plant garbage). */
void ss_tw_raw(struct ss_tw *w, const void *p, size_t n);

const uint8_t *ss_tw_data(struct ss_tw *w, size_t *len);
uint8_t *ss_tw_data_mut(struct ss_tw *w, size_t *len);

/* Write the first `len` bytes (SIZE_MAX: all) to path; 0 or -1. */
int ss_tw_write(struct ss_tw *w, const char *path, size_t len);

#endif /* SS_TRACE_WRITER_H */
