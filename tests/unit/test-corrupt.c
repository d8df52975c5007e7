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
 * lies wholly before the first changed byte is kept as it was.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_replays),
		cmocka_unit_test(test_cut_at_every_byte),
		cmocka_unit_test(test_random_corruption),
	};
	return cmocka_run_group_tests(tests, load_seeds, drop_seeds);
}
