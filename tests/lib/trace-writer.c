/*
 * trace-writer.c - in-memory builder of raw .sstrace images for tests.
 *
 * Design: one growing byte array; the header occupies the first
 * SS_HEADER_SIZE bytes, pending meta records sit in a side buffer until
 * they are flushed as one chunk.  Everything is little-endian host order,
 * like the runtime writes it.
 *
 * Must never: be linked into the stepscope command or the runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-writer.h"

struct ss_tw {
	uint8_t *buf;
	size_t len, cap;
	uint8_t *meta;
	size_t mlen, mcap;
};

static void ss_tw_reserve(uint8_t **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	while (*cap < need)
		*cap = *cap ? *cap * 2 : 8192;
	*b = realloc(*b, *cap);
	if (!*b)
		abort();
}

static void ss_tw_append(struct ss_tw *w, const void *p, size_t n)
{
	ss_tw_reserve(&w->buf, &w->cap, w->len + n);
	if (p)
		memcpy(w->buf + w->len, p, n);
	else
		memset(w->buf + w->len, 0, n);
	w->len += n;
}

/* The image holds version 2 events from now on. */
static void ss_tw_v2(struct ss_tw *w)
{
	ss_tw_header(w)->version = 2;
	ss_tw_header(w)->min_read_version = 2;
}

struct ss_tw *ss_tw_new(enum ss_clock clock, uint64_t pid)
{
	struct ss_tw *w = calloc(1, sizeof(*w));
	struct ss_file_header *h;

	if (!w)
		abort();
	ss_tw_append(w, NULL, SS_HEADER_SIZE);
	h = ss_tw_header(w);
	memcpy(h->magic, SS_MAGIC, SS_MAGIC_LEN);
	/* ss_tw_events writes version 1 records; ss_tw_words and ss_tw_ring
	 * set version 2 */
	h->version = 1;
	h->min_read_version = 1;
	h->header_size = SS_HEADER_SIZE;
	h->pid = pid;
	h->ppid = 1;
	h->clock = clock;
	h->ticks_per_sec = clock == SS_CLOCK_TSC ? 1000000000 : 0;
	snprintf(h->exe_path, sizeof(h->exe_path), "/usr/bin/synthetic");
	snprintf(h->hostname, sizeof(h->hostname), "testhost");
	return w;
}

void ss_tw_free(struct ss_tw *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w->meta);
	free(w);
}

struct ss_file_header *ss_tw_header(struct ss_tw *w)
{
	return (struct ss_file_header *)w->buf;
}

void ss_tw_meta(struct ss_tw *w, uint16_t type, uint64_t ts, const void *payload,
		size_t len)
{
	struct ss_meta m;
	size_t total = sizeof(m) + len, padded = (total + 7) & ~(size_t)7;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.size = (uint32_t)total;
	m.ts = ts;
	ss_tw_reserve(&w->meta, &w->mcap, w->mlen + padded);
	memcpy(w->meta + w->mlen, &m, sizeof(m));
	if (len)
		memcpy(w->meta + w->mlen + sizeof(m), payload, len);
	memset(w->meta + w->mlen + total, 0, padded - total);
	w->mlen += padded;
}

void ss_tw_meta_maps(struct ss_tw *w, uint64_t ts, const char *text)
{
	ss_tw_meta(w, SS_META_MAPS, ts, text, strlen(text) + 1);
}

void ss_tw_meta_thread(struct ss_tw *w, uint64_t tid, const char *name)
{
	struct ss_meta_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	memcpy(t.name, name, strnlen(name, sizeof(t.name)));
	ss_tw_meta(w, SS_META_THREAD, 1, &t, sizeof(t));
}

void ss_tw_meta_string(struct ss_tw *w, uint64_t id, const char *text)
{
	size_t n = strlen(text) + 1;
	uint8_t *p = malloc(sizeof(id) + n);

	if (!p)
		abort();
	memcpy(p, &id, sizeof(id));
	memcpy(p + sizeof(id), text, n);
	ss_tw_meta(w, SS_META_STRING, 1, p, sizeof(id) + n);
	free(p);
}

void ss_tw_meta_step(struct ss_tw *w, uint64_t ts, uint64_t step, uint64_t tid,
		     uint64_t serial, uint32_t action, uint32_t cycle)
{
	struct ss_meta_step s;

	memset(&s, 0, sizeof(s));
	s.step = step;
	s.tid = tid;
	s.serial = serial;
	s.action = action;
	s.cycle = cycle;
	ss_tw_meta(w, SS_META_STEP, ts, &s, sizeof(s));
}

void ss_tw_meta_calib(struct ss_tw *w, uint64_t ticks, uint64_t ns)
{
	struct ss_meta_calib c = { ticks, ns };

	ss_tw_meta(w, SS_META_CALIB, ticks, &c, sizeof(c));
}

void ss_tw_meta_flush(struct ss_tw *w)
{
	struct ss_chunk_header ch;

	if (!w->mlen)
		return;
	memset(&ch, 0, sizeof(ch));
	ch.magic = SS_CHUNK_MAGIC;
	ch.kind = SS_CHUNK_META;
	ch.size = sizeof(ch) + w->mlen + 16;  /* a zero record ends it */
	ss_tw_append(w, &ch, sizeof(ch));
	ss_tw_append(w, w->meta, w->mlen);
	ss_tw_append(w, NULL, 16);
	w->mlen = 0;
}

/* One EVENTS chunk: n items of `item` bytes, zero-filled up to cap. */
static size_t tw_chunk(struct ss_tw *w, uint64_t tid, uint64_t serial, uint64_t seq,
		       const void *items, size_t item, size_t n, size_t cap, uint64_t used)
{
	struct ss_chunk_header ch;
	size_t off;

	if (cap < n)
		cap = n;
	off = w->len;
	memset(&ch, 0, sizeof(ch));
	ch.magic = SS_CHUNK_MAGIC;
	ch.kind = SS_CHUNK_EVENTS;
	ch.size = sizeof(ch) + cap * item;
	ch.tid = tid;
	ch.seq = seq;
	ch.serial = serial;
	ch.used = used;
	ss_tw_append(w, &ch, sizeof(ch));
	ss_tw_append(w, items, n * item);
	ss_tw_append(w, NULL, (cap - n) * item);
	return off;
}

size_t ss_tw_events(struct ss_tw *w, uint64_t tid, uint64_t serial, uint64_t seq,
		    const struct ss_event *ev, size_t n, size_t cap)
{
	ss_tw_meta_flush(w);
	return tw_chunk(w, tid, serial, seq, ev, sizeof(*ev), n, cap, 0);
}

void ss_tw_put(struct ss_tw_enc *e, uint64_t word)
{
	if (e->n >= sizeof(e->w) / sizeof(e->w[0]))
		abort();
	e->w[e->n++] = word;
}

size_t ss_tw_words(struct ss_tw *w, uint64_t tid, uint64_t serial, uint64_t seq,
		   const uint64_t *words, size_t n, size_t cap, uint64_t used)
{
	ss_tw_meta_flush(w);
	ss_tw_v2(w);
	return tw_chunk(w, tid, serial, seq, words, sizeof(*words), n, cap, used);
}

size_t ss_tw_ring(struct ss_tw *w, uint64_t tid, uint64_t serial,
		  uint32_t block_bytes, uint32_t nblocks,
		  const uint64_t *const *blocks, const size_t *nwords)
{
	struct ss_chunk_header ch;
	struct ss_ring_header rh;
	size_t off, i;

	ss_tw_meta_flush(w);
	ss_tw_v2(w);
	off = w->len;
	memset(&ch, 0, sizeof(ch));
	ch.magic = SS_CHUNK_MAGIC;
	ch.kind = SS_CHUNK_RING;
	ch.size = sizeof(ch) + sizeof(rh) + (uint64_t)block_bytes * nblocks;
	ch.tid = tid;
	ch.serial = serial;
	memset(&rh, 0, sizeof(rh));
	rh.block_bytes = block_bytes;
	rh.nblocks = nblocks;
	ss_tw_append(w, &ch, sizeof(ch));
	ss_tw_append(w, &rh, sizeof(rh));
	for (i = 0; i < nblocks; i++) {
		size_t nb = blocks && blocks[i] ? nwords[i] * sizeof(uint64_t) : 0;

		if (nb > block_bytes)
			abort();
		ss_tw_append(w, nb ? blocks[i] : NULL, nb);
		ss_tw_append(w, NULL, block_bytes - nb);
	}
	return off;
}

void ss_tw_raw(struct ss_tw *w, const void *p, size_t n)
{
	ss_tw_meta_flush(w);
	ss_tw_append(w, p, n);
}

const uint8_t *ss_tw_data(struct ss_tw *w, size_t *len)
{
	ss_tw_meta_flush(w);
	*len = w->len;
	return w->buf;
}

uint8_t *ss_tw_data_mut(struct ss_tw *w, size_t *len)
{
	ss_tw_meta_flush(w);
	*len = w->len;
	return w->buf;
}

int ss_tw_write(struct ss_tw *w, const char *path, size_t len)
{
	FILE *f;
	size_t n;

	ss_tw_meta_flush(w);
	n = len < w->len ? len : w->len;
	f = fopen(path, "wb");
	if (!f)
		return -1;
	if (n && fwrite(w->buf, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}
