/*
 * reader-iter.c - read out of an indexed trace (reader.c): the meta
 * records in file order, one thread's events in time order (version 1
 * events as they are, version 2 compact records decoded block by block),
 * and file ticks as nanoseconds through the clock fitted from the
 * calibration pairs.
 *
 * Design: iterators are small structs on the caller's stack that point
 * into the mapping; nothing is copied or allocated per record.  The clock
 * is fitted once, at open, from the pairs with the smallest and largest
 * ticks.
 *
 * Must never: read past a block's good length, or hand out an event the
 * index did not count.
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

/* Calibration: pick the pairs with the smallest and largest ticks. */
struct ss_reader_fit {
	int have;
	uint64_t lo_t, lo_ns, hi_t, hi_ns;
};

static void ss_reader_fit_add(struct ss_reader_fit *f, uint64_t t, uint64_t ns)
{
	if (!t || !ns)
		return;
	if (!f->have) {
		f->lo_t = f->hi_t = t;
		f->lo_ns = f->hi_ns = ns;
		f->have = 1;
		return;
	}
	if (t < f->lo_t) {
		f->lo_t = t;
		f->lo_ns = ns;
	}
	if (t > f->hi_t) {
		f->hi_t = t;
		f->hi_ns = ns;
	}
}

/* The file clock's fit to ns, and how its EXITs were read
 * (SS_META_EXIT_ORDER: r->exit_every). */
void ss_reader_fit_clock(struct ss_reader *r)
{
	struct ss_reader_fit f = { 0 };
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	double tps = (double)r->hdr.ticks_per_sec;
	size_t i;

	r->base_ticks = 0;
	r->base_ns = 0;
	r->ns_per_tick = 1.0;
	r->exit_every = 0;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_exit_order eo;
		if (m.type != SS_META_EXIT_ORDER || m.len < sizeof(eo))
			continue;
		memcpy(&eo, m.data, sizeof(eo));
		r->exit_every = eo.every > 1 ? eo.every : 0;
	}
	if (r->hdr.clock != SS_CLOCK_TSC)
		return;
	ss_reader_fit_add(&f, r->hdr.calib_ticks, r->hdr.calib_ns);
	for (i = 0; i < r->nchunks; i++) {
		struct ss_chunk_header ch;
		memcpy(&ch, r->chunks[i].data - sizeof(ch), sizeof(ch));
		ss_reader_fit_add(&f, ch.calib_ticks, ch.calib_ns);
	}
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_calib c;
		if (m.type != SS_META_CALIB || m.len < sizeof(c))
			continue;
		memcpy(&c, m.data, sizeof(c));
		ss_reader_fit_add(&f, c.ticks, c.ns);
	}
	if (tps <= 0)
		tps = 1e9;
	if (f.have && f.hi_ns > f.lo_ns &&
	    (double)(f.hi_t - f.lo_t) >= tps / 1000.0) {
		r->ns_per_tick = (double)(f.hi_ns - f.lo_ns) / (double)(f.hi_t - f.lo_t);
		r->base_ticks = f.lo_t;
		r->base_ns = f.lo_ns;
		return;
	}
	r->ns_per_tick = 1e9 / tps;
	if (r->hdr.calib_ticks && r->hdr.calib_ns) {
		r->base_ticks = r->hdr.calib_ticks;
		r->base_ns = r->hdr.calib_ns;
	} else if (f.have) {
		r->base_ticks = f.lo_t;
		r->base_ns = f.lo_ns;
	}
}

uint64_t ss_reader_ns(const struct ss_reader *r, uint64_t ticks)
{
	return ss_reader_ns_inline(r, ticks);
}

void ss_reader_meta_begin(const struct ss_reader *r, struct ss_meta_iter *it)
{
	memset(it, 0, sizeof(*it));
	it->r = r;
}

/* A header at pos of c that can start a record: a type (0 ends the
 * records), reserved 0, a size inside the chunk. */
static int ss_meta_plausible(const struct ss_rchunk *c, uint64_t pos)
{
	struct ss_meta m;

	if (pos + sizeof(m) > c->len)
		return 0;
	memcpy(&m, c->data + pos, sizeof(m));
	return m.type && m.type <= SS_META_TYPE_MAX && !m.reserved && m.size >= sizeof(m) &&
	       m.size <= c->len - pos;
}

/* Past a damaged header at pos: the next 8-byte boundary where a record
 * starts whose successor is one too (or the end), else the chunk's end. */
static uint64_t ss_meta_resync(const struct ss_rchunk *c, uint64_t pos)
{
	for (uint64_t q = pos + 8; q + sizeof(struct ss_meta) <= c->len; q += 8) {
		struct ss_meta m;
		uint64_t after;

		if (!ss_meta_plausible(c, q))
			continue;
		memcpy(&m, c->data + q, sizeof(m));
		after = q + (((uint64_t)m.size + 7) & ~UINT64_C(7));
		if (after + sizeof(m) > c->len || (!c->data[after] && !c->data[after + 1]) ||
		    ss_meta_plausible(c, after))
			return q;
	}
	return c->len;
}

int ss_reader_meta_next(struct ss_meta_iter *it, struct ss_meta_rec *out)
{
	const struct ss_reader *r = it->r;

	while (it->chunk < r->nchunks) {
		const struct ss_rchunk *c = &r->chunks[it->chunk];
		struct ss_meta m;
		uint64_t step;

		if (c->kind != SS_CHUNK_META || it->pos + sizeof(m) > c->len) {
			it->chunk++;
			it->pos = 0;
			continue;
		}
		memcpy(&m, c->data + it->pos, sizeof(m));
		if (!m.type) {
			it->chunk++;  /* the end of the records */
			it->pos = 0;
			continue;
		}
		if (!ss_meta_plausible(c, it->pos)) {
			/* a damaged header loses its own record only: go on
			 * at the next place a record starts */
			struct ss_chunk_header ch;

			memcpy(&ch, c->data - sizeof(ch), sizeof(ch));
			step = ss_meta_resync(c, it->pos);
			if (step == c->len && ch.size > r->size - c->offset &&
			    m.size > c->len - it->pos && !m.reserved && m.type <= SS_META_TYPE_MAX) {
				it->chunk++;  /* cut off by a truncated file: */
				it->pos = 0;  /* the truncation says so */
				continue;
			}
			it->nbad++;
			it->bad_off = (uint64_t)(c->data - r->map) + it->pos;
			it->bad_skip = step - it->pos;
			it->pos = step;
			continue;
		}
		out->type = m.type;
		out->ts = m.ts;
		out->data = c->data + it->pos + sizeof(m);
		out->len = m.size - sizeof(m);
		step = ((uint64_t)m.size + 7) & ~UINT64_C(7);
		it->pos += step;
		return 1;
	}
	return 0;
}

void ss_reader_events_begin(const struct ss_reader *r, size_t thread,
			    struct ss_event_iter *it)
{
	memset(it, 0, sizeof(*it));
	it->r = r;
	it->t = thread < r->nthreads ? &r->threads[thread] : NULL;
}

/* Past block ci of the thread: its chunk's pages go back unless the next
 * block lies in the same chunk. */
static void ss_reader_next_of(struct ss_event_iter *it)
{
	const struct ss_reader *r = it->r;
	const struct ss_rthread *t = it->t;
	size_t c = r->blocks[t->blocks[it->ci]].chunk;

	if (it->ci + 1 >= t->nblocks || r->blocks[t->blocks[it->ci + 1]].chunk != c)
		ss_reader_drop_chunk(r, &r->chunks[c]);
	it->ci++;
	it->ei = 0;
}

/* The next raw event of the thread (file clock): 1, or 0 at the end. */
static int ss_reader_next_raw(struct ss_event_iter *it, struct ss_cw_rec *rec)
{
	const struct ss_rthread *t = it->t;

	while (it->ci < t->nblocks) {
		const struct ss_rblock *b = &it->r->blocks[t->blocks[it->ci]];
		struct ss_cw_state st = { it->tbase, it->abase, it->ei > 0 };
		const char *why = NULL;
		enum ss_cw_res res;
		struct ss_event ev;

		if (!SS_READER_V2(it->r)) {
			if (it->ei >= b->nevents) {
				ss_reader_next_of(it);
				continue;
			}
			ss_reader_read_event(b->data + it->ei * sizeof(ev), &ev);
			it->ei++;
			rec->ts = ev.ts;
			rec->kind = SS_EV_KIND(ev.word);
			rec->arg = SS_EV_ARG(ev.word);
			return 1;
		}
		/* the walk checked the block's len bytes: nothing but
		 * events and bases before its end */
		res = ss_cw_decode(b->data, b->len, &it->ei, &st, rec, &why);
		it->tbase = st.tbase;
		it->abase = st.abase;
		if (res == SS_CW_EVENT)
			return 1;
		if (res != SS_CW_SKIP)
			ss_reader_next_of(it);
	}
	return 0;
}

int ss_reader_events_next(struct ss_event_iter *it, struct ss_revent *out)
{
	const struct ss_reader *r = it->r;
	struct ss_cw_rec rec;
	uint64_t ns;

	/* the bulk of a version 2 block (reader.h) */
	if (ss_reader_events_short(it, out))
		return 1;
	out->n = 0;
	it->bdata = NULL;
	if (!it->t || !ss_reader_next_raw(it, &rec))
		return 0;
	out->n = SS_READER_V2(r) && rec.n > 1 ? rec.n : 0;
	out->payload = rec.payload;
	/* past the bases of a version 2 block: the inline path takes the
	 * records that follow */
	if (SS_READER_V2(r) && it->ei && it->ci < it->t->nblocks) {
		const struct ss_rblock *b = &r->blocks[it->t->blocks[it->ci]];
		it->bdata = b->data;
		it->blen = b->len;
	}
	ns = ss_reader_ns_inline(r, rec.ts);
	if (ns < it->last_ns)
		ns = it->last_ns;
	it->last_ns = ns;
	out->ns = ns;
	out->kind = rec.kind;
	out->arg = rec.arg;
	out->unordered = (rec.kind == SS_EV_ENTER || rec.kind == SS_EV_EXIT) &&
			 r->exit_every && (rec.ts & 1);
	return 1;
}

uint64_t ss_reader_thread_first_ns(const struct ss_reader *r, size_t thread)
{
	struct ss_event_iter it;
	struct ss_revent ev;

	ss_reader_events_begin(r, thread, &it);
	return ss_reader_events_next(&it, &ev) ? ev.ns : 0;
}

const char *ss_reader_prog(const struct ss_reader *r)
{
	const char *s = strrchr(r->hdr.exe_path, '/');

	s = s ? s + 1 : r->hdr.exe_path;
	return *s ? s : "?";
}

void ss_reader_each_module(const struct ss_reader *r,
			   void (*fn)(void *ctx, const char *path, const uint8_t *id, size_t len),
			   void *ctx)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;

	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_module mod;
		char *path;
		if (m.type != SS_META_MODULE || m.len <= sizeof(mod))
			continue;
		memcpy(&mod, m.data, sizeof(mod));
		path = strndup((const char *)m.data + sizeof(mod), m.len - sizeof(mod));
		if (!path)
			continue;
		if (mod.build_id_len <= sizeof(mod.build_id))
			fn(ctx, path, mod.build_id, mod.build_id_len);
		free(path);
	}
	if (r->hdr.exe_path[0] && r->hdr.build_id_len <= sizeof(r->hdr.build_id))
		fn(ctx, r->hdr.exe_path, r->hdr.build_id, r->hdr.build_id_len);
}
