/*
 * reader-int.h - what the parts of the reader share beyond reader.h:
 * reader.c indexes a file, reader-group.c groups its blocks per thread,
 * reader-iter.c reads records out of the index.
 * Not for use outside symbolize/read/reader*.c.
 */
#ifndef SS_READER_INT_H
#define SS_READER_INT_H

#include <stdint.h>

#include "reader.h"

#define SS_READER_V2(r) ((r)->hdr.version >= 2)

void ss_reader_read_event(const uint8_t *p, struct ss_event *ev);
void ss_reader_drop_chunk(const struct ss_reader *r, const struct ss_rchunk *c);
void ss_reader_fit_clock(struct ss_reader *r);
/* reader-group.c: r->threads from r->blocks; 0, or -1 out of memory */
int ss_reader_group(struct ss_reader *r);
/* reader-cache.c: a kept reader of path, or NULL; note a reader opened
 * whole; 1 when r is kept instead of freed */
struct ss_reader *ss_reader_cache_take(const char *path);
void ss_reader_cache_note(struct ss_reader *r);
int ss_reader_cache_put(struct ss_reader *r);

#endif /* SS_READER_INT_H */
