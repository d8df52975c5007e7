/*
 * test-corrupt.c - the symbolizer's reader and slicer on damaged real
 * traces: the fuzz seed corpus (tests/fuzz/corpus, recordings of the e2e
 * fixtures shrunk by compact-trace.py) replayed as it is, each seed cut at
 * every byte offset, and 1000 randomly corrupted copies of each.
 *
 * A cut trace must open or be refused with a message naming the file;
 * when it opens, every thread's events are a prefix of that thread's
 * events in the whole trace, and a warning names the file and an offset.
 * A corrupted trace must not crash anything, and every events chunk that
 * lies wholly before the first changed byte is kept as it was.  Damage to
 * one chunk header (a cut between chunks, a flipped byte, a zeroed header,
 * a bad `used`) is warned about with the file and offset, and every other
 * chunk is still read: the reader resyncs at the next chunk header.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "reader.h"
#include "slices.h"

static char tmpdir[] = "/tmp/ss-test-corrupt-XXXXXX";
static char tpath[300];

struct seed {
	char name[256];
	uint8_t *data;
	size_t size;
};

static struct seed seeds[16];
static size_t nseeds;

/* One thread's events, for prefix checks. */
struct tev {
	uint64_t serial, tid;
	struct ss_revent *ev;
	size_t n;
};

static int load_seeds(void **state)
{
	(void)state;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus", SS_SOURCE_DIR);
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d || !mkdtemp(tmpdir))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/cut.sstrace", tmpdir);
	while ((de = readdir(d)) && nseeds < 16) {
		char p[4400];
		struct stat st;
		if (!strstr(de->d_name, ".seed"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		FILE *f = fopen(p, "rb");
		if (!f || fstat(fileno(f), &st))
			return -1;
		struct seed *s = &seeds[nseeds++];
		snprintf(s->name, sizeof(s->name), "%s", de->d_name);
		s->size = (size_t)st.st_size;
		s->data = malloc(s->size + 1);
		if (!s->data || fread(s->data, 1, s->size, f) != s->size)
			return -1;
		fclose(f);
	}
	closedir(d);
	return nseeds ? 0 : -1;
}

static int drop_seeds(void **state)
{
	(void)state;
	for (size_t i = 0; i < nseeds; i++)
		free(seeds[i].data);
	unlink(tpath);
	rmdir(tmpdir);
	return 0;
}

static void put_file(const uint8_t *data, size_t len)
{
	int fd = open(tpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void slice_check(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	(void)tid;
	assert_true(s->end_ns >= s->begin_ns);
	assert_non_null(s->name);
	(*(size_t *)ctx)++;
}

/* Read all events of every thread; slice every thread. */
static size_t read_all(struct ss_reader *r, struct tev *out, size_t max)
{
	size_t n = 0, slices = 0;
	for (size_t i = 0; i < r->nthreads && n < max; i++) {
		struct ss_event_iter it;
		struct ss_revent e;
		struct tev *t = &out[n++];
		t->serial = r->threads[i].serial;
		t->tid = r->threads[i].tid;
		t->n = 0;
		t->ev = malloc((r->threads[i].nevents + 1) * sizeof(*t->ev));
		assert_non_null(t->ev);
		ss_reader_events_begin(r, i, &it);
		while (ss_reader_events_next(&it, &e)) {
			assert_true(t->n < r->threads[i].nevents + 1);
			t->ev[t->n++] = e;
		}
	}
	struct ss_slicer *sl = ss_slicer_new(r, NULL);
	assert_non_null(sl);
	for (size_t i = 0; i < r->nthreads; i++)
		ss_slicer_thread(sl, i, slice_check, &slices);
	ss_slicer_free(sl);
	return n;
}

static void free_tev(struct tev *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].ev);
}

static void test_corpus_replays(void **state)
{
	(void)state;
	for (size_t i = 0; i < nseeds; i++) {
		char err[1024];
		struct tev tv[64];
		put_file(seeds[i].data, seeds[i].size);
		struct ss_reader *r = ss_reader_open(tpath, err, sizeof(err));
		if (!r)
			fail_msg("seed %s: %s", seeds[i].name, err);
		if (r->warning[0])
			fail_msg("seed %s: %s", seeds[i].name, r->warning);
		assert_true(r->nevents > 0);
		size_t n = read_all(r, tv, 64);
		assert_true(n > 0);
		free_tev(tv, n);
		ss_reader_free(r);
	}
}

static void test_cut_at_every_byte(void **state)
{
	(void)state;
	for (size_t si = 0; si < nseeds; si++) {
		const struct seed *s = &seeds[si];
		char err[1024];
		struct tev full[64], cut[64];
		put_file(s->data, s->size);
		struct ss_reader *r = ss_reader_open(tpath, err, sizeof(err));
		assert_non_null(r);
		size_t nfull = read_all(r, full, 64);
		ss_reader_free(r);
		int fd = open(tpath, O_WRONLY);
		assert_true(fd >= 0);
		for (size_t len = s->size; len-- > 0;) {
			assert_int_equal(ftruncate(fd, (off_t)len), 0);
			r = ss_reader_open(tpath, err, sizeof(err));
			if (!r) {
				if (strncmp(err, tpath, strlen(tpath)))
					fail_msg("%s cut at %zu: refusal names no file: %s",
						 s->name, len, err);
				continue;
			}
			if (r->warning[0] && (strncmp(r->warning, tpath, strlen(tpath)) ||
					      !strstr(r->warning, "offset")))
				fail_msg("%s cut at %zu: warning without file and offset: %s",
					 s->name, len, r->warning);
			size_t ncut = read_all(r, cut, 64);
			for (size_t k = 0; k < ncut; k++) {
				const struct tev *f = NULL;
				for (size_t j = 0; j < nfull && !f; j++)
					if (full[j].serial == cut[k].serial &&
					    full[j].tid == cut[k].tid)
						f = &full[j];
				if (!f)
					fail_msg("%s cut at %zu: thread %llu not in the whole trace",
						 s->name, len, (unsigned long long)cut[k].tid);
				if (cut[k].n > f->n)
					fail_msg("%s cut at %zu: %zu events, whole trace has %zu",
						 s->name, len, cut[k].n, f->n);
				for (size_t e = 0; e < cut[k].n; e++)
					if (cut[k].ev[e].kind != f->ev[e].kind ||
					    cut[k].ev[e].arg != f->ev[e].arg)
						fail_msg("%s cut at %zu: thread %llu event %zu differs",
							 s->name, len,
							 (unsigned long long)cut[k].tid, e);
			}
			free_tev(cut, ncut);
			ss_reader_free(r);
		}
		close(fd);
		free_tev(full, nfull);
	}
}

static void test_random_corruption(void **state)
{
	(void)state;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (size_t si = 0; si < nseeds; si++) {
		const struct seed *s = &seeds[si];
		uint8_t *copy = malloc(s->size);
		char err[1024];
		assert_non_null(copy);
		put_file(s->data, s->size);
		struct ss_reader *orig = ss_reader_open(tpath, err, sizeof(err));
		assert_non_null(orig);
		for (int round = 0; round < 1000; round++) {
			memcpy(copy, s->data, s->size);
			size_t first = s->size;
			int nflip = 1 + (int)(rng % 8);
			for (int k = 0; k < nflip; k++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				size_t at = (size_t)(rng >> 17) % s->size;
				uint8_t v = (uint8_t)(rng >> 9);
				if (v == copy[at])
					v ^= 0x5a;
				copy[at] = v;
				if (at < first)
					first = at;
			}
			put_file(copy, s->size);
			struct ss_reader *r = ss_reader_open(tpath, err, sizeof(err));
			if (!r) {
				assert_true(strncmp(err, tpath, strlen(tpath)) == 0);
				continue;
			}
			struct tev tv[64];
			free_tev(tv, read_all(r, tv, 64));
			/* chunks wholly before the first change are kept as they were */
			for (size_t c = 0; c < orig->nchunks; c++) {
				const struct ss_rchunk *oc = &orig->chunks[c];
				uint64_t end = oc->offset + 64 + oc->len;
				if (oc->kind != SS_CHUNK_EVENTS || end > first ||
				    first < orig->hdr.header_size)
					continue;
				size_t k;
				for (k = 0; k < r->nchunks; k++)
					if (r->chunks[k].offset == oc->offset)
						break;
				if (k == r->nchunks || r->chunks[k].nevents != oc->nevents)
					fail_msg("%s round %d: chunk at %llu before the damage "
						 "at %zu was not kept", s->name, round,
						 (unsigned long long)oc->offset, first);
			}
			ss_reader_free(r);
		}
		ss_reader_free(orig);
		free(copy);
	}
}

/* ---------------------------------------------------------------- damage
 * at chunk headers: the reader must say what it skipped (file and offset)
 * and keep every chunk it did not have to skip. */

static const struct seed *seed_named(const char *name)
{
	for (size_t i = 0; i < nseeds; i++)
		if (!strcmp(seeds[i].name, name))
			return &seeds[i];
	fail_msg("no seed %s in tests/fuzz/corpus", name);
	return NULL;
}

static struct ss_reader *open_copy(const uint8_t *data, size_t len)
{
	char err[1024];
	struct ss_reader *r;

	put_file(data, len);
	r = ss_reader_open(tpath, err, sizeof(err));
	if (!r)
		fail_msg("refused: %s", err);
	return r;
}

/* Events the reader kept in the chunk at `offset`, or -1 if it has none. */
static long long chunk_events(const struct ss_reader *r, uint64_t offset)
{
	for (size_t k = 0; k < r->nchunks; k++)
		if (r->chunks[k].offset == offset)
			return (long long)r->chunks[k].nevents;
	return -1;
}

static void expect_warning(const struct ss_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void expect_warning(const struct ss_reader *r, const char *fmt, ...)
{
	char want[1024], msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(want, sizeof(want), "%s: %s", tpath, msg);
	if (strcmp(r->warning, want))
		fail_msg("warning\n  got:  %s\n  want: %s", r->warning, want);
}

/* A trace cut exactly between two chunks: the end record (in the first
 * chunk) says how many events were written, so the cut is seen. */
static void test_cut_at_chunk_boundary(void **state)
{
	(void)state;
	const struct seed *s = seed_named("threads.seed");
	struct ss_reader *whole = open_copy(s->data, s->size), *r;
	uint64_t kept = 0;

	assert_int_equal(whole->nchunks, 5);
	assert_int_equal(whole->nevents, 152);
	for (size_t k = 1; k < whole->nchunks; k++) {
		uint64_t cut = whole->chunks[k].offset;
		r = open_copy(s->data, cut);
		assert_int_equal(r->nevents, kept);
		expect_warning(r, "ends at offset %llu with %llu of the 152 events written: "
			       "the rest of the file is missing",
			       (unsigned long long)cut, (unsigned long long)kept);
		assert_int_equal(r->damage_offset, cut);
		ss_reader_free(r);
		kept += whole->chunks[k].nevents;
	}
	/* the whole file: no warning */
	r = open_copy(s->data, s->size);
	assert_string_equal(r->warning, "");
	ss_reader_free(r);
	ss_reader_free(whole);
}

/* Every byte of every chunk header flipped, one at a time, two ways: no
 * other chunk is lost, and damage to magic, kind, size or used is
 * warned about with the file and the chunk's offset. */
static void test_flipped_header_byte(void **state)
{
	(void)state;
	static const uint8_t masks[] = { 0xff, 0x01, 0x08, 0x80 };
	const struct seed *s = seed_named("threads.seed");
	struct ss_reader *whole = open_copy(s->data, s->size);
	uint8_t *copy = malloc(s->size);

	assert_non_null(copy);
	for (size_t k = 0; k < whole->nchunks; k++) {
		uint64_t at = whole->chunks[k].offset;
		for (size_t b = 0; b < sizeof(struct ss_chunk_header); b++) {
			for (size_t m = 0; m < sizeof(masks); m++) {
				memcpy(copy, s->data, s->size);
				copy[at + b] ^= masks[m];
				struct ss_reader *r = open_copy(copy, s->size);
				for (size_t j = 0; j < whole->nchunks; j++) {
					if (j == k || whole->chunks[j].kind != SS_CHUNK_EVENTS)
						continue;
					if (chunk_events(r, whole->chunks[j].offset) !=
					    (long long)whole->chunks[j].nevents)
						fail_msg("byte %zu of the chunk at %llu ^ 0x%02x: the chunk at %llu "
							 "lost events (%lld of %llu): %s", b,
							 (unsigned long long)at, masks[m],
							 (unsigned long long)whole->chunks[j].offset,
							 chunk_events(r, whole->chunks[j].offset),
							 (unsigned long long)whole->chunks[j].nevents,
							 r->warning);
				}
				/* magic, kind, size; used of an events chunk */
				int vital = b < 16 || (b >= 48 && b < 56 &&
						       whole->chunks[k].kind == SS_CHUNK_EVENTS);
				/* the warning points into this chunk: at its header, its end,
				 * or where a size made too small says it ends */
				uint64_t end = at + 64 + whole->chunks[k].len;
				char off[32];
				snprintf(off, sizeof(off), "offset %llu",
					 (unsigned long long)r->damage_offset);
				if (vital && (strncmp(r->warning, tpath, strlen(tpath)) ||
					      !strstr(r->warning, off) || r->damage_offset < at ||
					      r->damage_offset > end))
					fail_msg("byte %zu of the chunk at %llu ^ 0x%02x: want a warning "
						 "naming the file and an offset in [%llu, %llu], got '%s'",
						 b, (unsigned long long)at, masks[m],
						 (unsigned long long)at, (unsigned long long)end,
						 r->warning);
				ss_reader_free(r);
			}
		}
	}
	free(copy);
	ss_reader_free(whole);
}

/* The exact warnings for the damage the issue names. */
static void test_header_damage_messages(void **state)
{
	(void)state;
	const struct seed *s = seed_named("threads.seed");
	struct ss_reader *whole = open_copy(s->data, s->size), *r;
	uint8_t *copy = malloc(s->size);
	struct ss_chunk_header ch;
	/* the second events chunk (0-based chunk 2) and the one after it */
	uint64_t at = whole->chunks[2].offset, next = whole->chunks[3].offset;
	uint64_t n2 = whole->chunks[2].nevents;

	assert_non_null(copy);
	/* magic flipped: skipped up to the next chunk, the rest kept */
	memcpy(copy, s->data, s->size);
	copy[at] ^= 0x01;
	r = open_copy(copy, s->size);
	expect_warning(r, "corrupt chunk header at offset %llu: skipped %llu bytes up to the "
		       "next chunk at offset %llu", (unsigned long long)at,
		       (unsigned long long)(next - at), (unsigned long long)next);
	assert_int_equal(r->nevents, 152 - n2);
	ss_reader_free(r);

	/* a zeroed header: its data is not reserved space, so it is damage */
	memcpy(copy, s->data, s->size);
	memset(copy + at, 0, sizeof(ch));
	r = open_copy(copy, s->size);
	expect_warning(r, "zeroed chunk header at offset %llu: skipped %llu bytes of data up to "
		       "the next chunk at offset %llu", (unsigned long long)at,
		       (unsigned long long)(next - at), (unsigned long long)next);
	assert_int_equal(r->nevents, 152 - n2);
	ss_reader_free(r);

	/* used past the chunk: every event read, the field named */
	memcpy(copy, s->data, s->size);
	memcpy(&ch, copy + at, sizeof(ch));
	ch.used = 4096;
	memcpy(copy + at, &ch, sizeof(ch));
	r = open_copy(copy, s->size);
	expect_warning(r, "chunk at offset %llu has a bad used field (4096 bytes; the chunk holds "
		       "%llu): read its events up to the first empty one", (unsigned long long)at,
		       (unsigned long long)(ch.size - sizeof(ch)));
	assert_int_equal(r->nevents, 152);
	ss_reader_free(r);

	/* used too small (a whole number of events): events follow it */
	memcpy(copy, s->data, s->size);
	memcpy(&ch, copy + at, sizeof(ch));
	ch.used = 16 * 3;
	memcpy(copy + at, &ch, sizeof(ch));
	r = open_copy(copy, s->size);
	expect_warning(r, "chunk at offset %llu has a bad used field (48 bytes; the chunk holds "
		       "%llu): read its events up to the first empty one", (unsigned long long)at,
		       (unsigned long long)(ch.size - sizeof(ch)));
	assert_int_equal(r->nevents, 152);
	ss_reader_free(r);

	/* size 8 bytes too long: read up to the next chunk, nothing lost */
	memcpy(copy, s->data, s->size);
	memcpy(&ch, copy + at, sizeof(ch));
	ch.size += 8;
	memcpy(copy + at, &ch, sizeof(ch));
	r = open_copy(copy, s->size);
	expect_warning(r, "chunk at offset %llu says it is %llu bytes long, but the next chunk "
		       "starts at offset %llu: read it up to there", (unsigned long long)at,
		       (unsigned long long)ch.size, (unsigned long long)next);
	assert_int_equal(r->nevents, 152);
	ss_reader_free(r);

	/* two headers in a row: one skip over both */
	memcpy(copy, s->data, s->size);
	copy[at] ^= 0x01;
	copy[next + 4] ^= 0x01;
	r = open_copy(copy, s->size);
	expect_warning(r, "corrupt chunk header at offset %llu: skipped %llu bytes up to the "
		       "next chunk at offset %llu", (unsigned long long)at,
		       (unsigned long long)(whole->chunks[4].offset - at),
		       (unsigned long long)whole->chunks[4].offset);
	assert_int_equal(r->nevents, 152 - n2 - whole->chunks[3].nevents);
	ss_reader_free(r);

	/* two damaged places apart: the first is the warning, the next listed */
	memcpy(copy, s->data, s->size);
	copy[whole->chunks[1].offset] ^= 0x01;
	copy[next] ^= 0x01;
	r = open_copy(copy, s->size);
	expect_warning(r, "corrupt chunk header at offset %llu: skipped %llu bytes up to the "
		       "next chunk at offset %llu; also damaged at offset %llu",
		       (unsigned long long)whole->chunks[1].offset,
		       (unsigned long long)(at - whole->chunks[1].offset),
		       (unsigned long long)at, (unsigned long long)next);
	assert_int_equal(r->nevents, 152 - whole->chunks[1].nevents - whole->chunks[3].nevents);
	ss_reader_free(r);

	free(copy);
	ss_reader_free(whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_replays),
		cmocka_unit_test(test_cut_at_every_byte),
		cmocka_unit_test(test_random_corruption),
		cmocka_unit_test(test_cut_at_chunk_boundary),
		cmocka_unit_test(test_flipped_header_byte),
		cmocka_unit_test(test_header_damage_messages),
	};
	return cmocka_run_group_tests(tests, load_seeds, drop_seeds);
}
