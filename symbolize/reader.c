/*
 * reader.c - map, validate and index one raw .sstrace file.
 *
 * Design: the file is mmap'ed once; ss_reader_open walks the chunk chain by
 * each chunk's `size`, records where every chunk's payload is, groups
 * EVENTS chunks per thread and fits the clock.  Records are copied out with
 * memcpy, so no field is ever read unaligned or past the end.
 *
 * Damage does not end the walk while a good chunk follows: the walk
 * resyncs at the next plausible chunk header (8-byte aligned) and the
 * warning names the file and the offset of what was skipped (the first
 * damage, then the offsets of later ones).  A file cut exactly between
 * chunks is found through the end record's event count.
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

#define SS_READER_MAX_HEADER (1u << 20)

static void ss_reader_read_event(const uint8_t *p, struct ss_event *ev)
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
static void ss_reader_drop_chunk(const struct ss_reader *r, const struct ss_rchunk *c)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)c->data + pg - 1) & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)c->data + c->len) & ~(pg - 1);

	if (hi > lo && c->len >= (1u << 16) &&
	    hi <= (uintptr_t)r->map + r->size)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Whether ch, read at some offset, looks like a chunk header the runtime
 * wrote: the magic, a known kind, a size of whole 8-byte words covering
 * its own header, and for EVENTS a `used` of whole events that fits. */
static int ss_reader_header_ok(const struct ss_chunk_header *ch)
{
	if (ch->magic != SS_CHUNK_MAGIC || ch->size < sizeof(*ch) || ch->size % 8 ||
	    (ch->kind != SS_CHUNK_EVENTS && ch->kind != SS_CHUNK_META))
		return 0;
	if (ch->kind == SS_CHUNK_EVENTS &&
	    (ch->used % sizeof(struct ss_event) || ch->used > ch->size - sizeof(*ch)))
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
		if (ss_reader_header_ok(&ch))
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
	return ss_reader_header_ok(&ch) || (!ch.magic && !ch.kind && !ch.size);
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
		    (ch.kind != SS_CHUNK_EVENTS && ch.kind != SS_CHUNK_META)) {
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
		if (ch.kind == SS_CHUNK_EVENTS) {
			uint64_t used = ch.used;
			c.tid = ch.tid;
			c.seq = ch.seq;
			c.serial = ch.serial;
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

static uint64_t ss_reader_thread_key(const struct ss_rchunk *c)
{
	return c->serial ? c->serial : (c->tid | (UINT64_C(1) << 63));
}

static int ss_reader_cmp_chunk(const void *a, const void *b, void *arg)
{
	const struct ss_reader *r = arg;
	const struct ss_rchunk *x = &r->chunks[*(const size_t *)a];
	const struct ss_rchunk *y = &r->chunks[*(const size_t *)b];
	uint64_t kx = ss_reader_thread_key(x), ky = ss_reader_thread_key(y);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int ss_reader_group(struct ss_reader *r)
{
	size_t *idx, n = 0, i, j;

	idx = malloc((r->nchunks + 1) * sizeof(*idx));
	if (!idx)
		return -1;
	for (i = 0; i < r->nchunks; i++)
		if (r->chunks[i].kind == SS_CHUNK_EVENTS)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), ss_reader_cmp_chunk, r);
	r->threads = calloc(n + 1, sizeof(*r->threads));
	if (!r->threads) {
		free(idx);
		return -1;
	}
	for (i = 0; i < n; i = j) {
		struct ss_rthread *t = &r->threads[r->nthreads++];
		uint64_t key = ss_reader_thread_key(&r->chunks[idx[i]]);

		for (j = i; j < n && ss_reader_thread_key(&r->chunks[idx[j]]) == key; j++)
			;
		t->serial = r->chunks[idx[i]].serial;
		t->tid = r->chunks[idx[i]].tid;
		t->chunks = malloc((j - i) * sizeof(size_t));
		if (!t->chunks) {
			free(idx);
			return -1;
		}
		memcpy(t->chunks, idx + i, (j - i) * sizeof(size_t));
		t->nchunks = j - i;
		for (size_t k = i; k < j; k++)
			t->nevents += r->chunks[idx[k]].nevents;
	}
	free(idx);
	return 0;
}

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

static void ss_reader_fit_clock(struct ss_reader *r)
{
	struct ss_reader_fit f = { 0 };
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	double tps = (double)r->hdr.ticks_per_sec;
	size_t i;

	r->base_ticks = 0;
	r->base_ns = 0;
	r->ns_per_tick = 1.0;
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

/* The file clock in ns, before shift_ns. */
static uint64_t ss_reader_ns_local(const struct ss_reader *r, uint64_t ticks)
{
	double d;

	if (r->hdr.clock != SS_CLOCK_TSC)
		return ticks;
	if (ticks >= r->base_ticks)
		d = (double)(ticks - r->base_ticks) * r->ns_per_tick;
	else
		d = -(double)(r->base_ticks - ticks) * r->ns_per_tick;
	d += (double)r->base_ns;
	if (d <= 0)
		return 0;
	if (d >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)(d + 0.5);
}

uint64_t ss_reader_ns(const struct ss_reader *r, uint64_t ticks)
{
	uint64_t ns = ss_reader_ns_local(r, ticks);

	/* in integers: wall-clock ns do not fit a double's mantissa */
	if (r->shift_ns > 0)
		return ns > UINT64_MAX - (uint64_t)r->shift_ns ? UINT64_MAX
							       : ns + (uint64_t)r->shift_ns;
	if (r->shift_ns < 0)
		return ns < (uint64_t)-r->shift_ns ? 0 : ns - (uint64_t)-r->shift_ns;
	return ns;
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
	ss_reader_check_end(r);
	ss_reader_warn_more(r);
	ss_reader_fit_clock(r);
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

	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->size);
	for (i = 0; i < r->nthreads; i++)
		free(r->threads[i].chunks);
	free(r->threads);
	free(r->chunks);
	free(r->path);
	free(r);
}

void ss_reader_meta_begin(const struct ss_reader *r, struct ss_meta_iter *it)
{
	it->r = r;
	it->chunk = 0;
	it->pos = 0;
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
		if (!m.type || m.size < sizeof(m) || m.size > c->len - it->pos) {
			it->chunk++;  /* end of records, or a bad size */
			it->pos = 0;
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

int ss_reader_events_next(struct ss_event_iter *it, struct ss_revent *out)
{
	const struct ss_rthread *t = it->t;
	struct ss_event ev;

	if (!t)
		return 0;
	while (it->ci < t->nchunks) {
		const struct ss_rchunk *c = &it->r->chunks[t->chunks[it->ci]];
		uint64_t ns;

		if (it->ei >= c->nevents) {
			ss_reader_drop_chunk(it->r, c);
			it->ci++;
			it->ei = 0;
			continue;
		}
		ss_reader_read_event(c->data + it->ei * sizeof(ev), &ev);
		it->ei++;
		ns = ss_reader_ns(it->r, ev.ts);
		if (ns < it->last_ns)
			ns = it->last_ns;
		it->last_ns = ns;
		out->ns = ns;
		out->kind = SS_EV_KIND(ev.word);
		out->arg = SS_EV_ARG(ev.word);
		return 1;
	}
	return 0;
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
