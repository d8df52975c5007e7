/*
 * test-meta-damage.c - a damaged META record loses only itself (issue 45):
 * the reader passes a header whose size runs past its chunk, whose
 * reserved bits are set or whose size is below a header's, says which
 * offset in one warning, and hands out every record after it (steps, the
 * end record, the leak list) in order.  Synthetic traces from
 * tests/lib/trace-writer.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "reader.h"
#include "trace-writer.h"

static char tmpdir[] = "/tmp/ss-test-meta-damage-XXXXXX";
static char tpath[256];

enum { NREC = 6 };
static const uint16_t types[NREC] = { SS_META_THREAD, SS_META_STEP, SS_META_STRING,
				      SS_META_STEP, SS_META_END, SS_META_ALLOC_LIVE };

/* Six records; off[i]: each one's offset in the image. */
static struct ss_tw *six_records(size_t off[NREC])
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 9);
	struct ss_meta_end end;
	uint8_t live[40];
	const uint8_t *d;
	size_t len, pos;

	memset(&end, 0, sizeof(end));
	end.events = 0;
	end.last_step = 1;
	memset(live, 0x5a, sizeof(live));
	ss_tw_meta_thread(w, 1, "main");
	ss_tw_meta_step(w, 10, 0, 1, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_string(w, 3, "a string of some length");
	ss_tw_meta_step(w, 20, 1, 1, 1, SS_STEP_RECORD, 0);
	ss_tw_meta(w, SS_META_END, 30, &end, sizeof(end));
	ss_tw_meta(w, SS_META_ALLOC_LIVE, 31, live, sizeof(live));
	ss_tw_meta_flush(w);
	d = ss_tw_data(w, &len);
	pos = ss_tw_header(w)->header_size + sizeof(struct ss_chunk_header);
	for (int i = 0; i < NREC; i++) {
		struct ss_meta m;
		memcpy(&m, d + pos, sizeof(m));
		assert_int_equal(m.type, types[i]);
		off[i] = pos;
		pos += (m.size + 7) & ~7u;
	}
	return w;
}

/* Damage record `bad` with fn, open, and check what comes back. */
static void check(struct ss_tw *w, const size_t off[NREC], int bad, uint64_t skipped)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	struct ss_reader *r;
	char err[512], want[1024];
	int n = 0;

	assert_int_equal(ss_tw_write(w, tpath, SIZE_MAX), 0);
	r = ss_reader_open(tpath, err, sizeof(err));
	assert_non_null(r);
	if (bad < 0) {
		assert_string_equal(r->warning, "");
	} else {
		snprintf(want, sizeof(want), "%s: damaged meta record at offset %zu: skipped %llu "
			 "bytes to the next record, and read the metadata after it",
			 tpath, off[bad], (unsigned long long)skipped);
		assert_string_equal(r->warning, want);
		assert_int_equal(r->damage_offset, off[bad]);
	}
	ss_reader_meta_begin(r, &it);
	for (int i = 0; i < NREC; i++) {
		if (i == bad)
			continue;
		assert_true(ss_reader_meta_next(&it, &m));
		assert_int_equal(m.type, types[i]);
		assert_ptr_equal(m.data, r->map + off[i] + sizeof(struct ss_meta));
		n++;
	}
	assert_false(ss_reader_meta_next(&it, &m));
	assert_int_equal(n, bad < 0 ? NREC : NREC - 1);
	ss_reader_free(r);
}

static void set_field(struct ss_tw *w, size_t at, const void *v, size_t n)
{
	size_t len;
	memcpy(ss_tw_data_mut(w, &len) + at, v, n);
}

static void test_intact(void **state)
{
	size_t off[NREC];
	struct ss_tw *w = six_records(off);
	(void)state;
	check(w, off, -1, 0);
	ss_tw_free(w);
}

/* the case: the first step's size 0xfffffff0 dropped the second
 * step, the end record and the leak list without a word */
static void test_size_past_chunk(void **state)
{
	size_t off[NREC];
	struct ss_tw *w = six_records(off);
	uint32_t size = 0xfffffff0u;
	(void)state;
	set_field(w, off[1] + offsetof(struct ss_meta, size), &size, 4);
	check(w, off, 1, off[2] - off[1]);
	ss_tw_free(w);
}

/* the last record: nothing to resync to, but the file is whole, so it is
 * damage, not a truncated file */
static void test_last_record(void **state)
{
	size_t off[NREC];
	struct ss_tw *w = six_records(off);
	uint32_t size = 0xfffffff0u;
	(void)state;
	set_field(w, off[5] + offsetof(struct ss_meta, size), &size, 4);
	check(w, off, 5, sizeof(struct ss_meta) + 40 + 16);
	ss_tw_free(w);
}

static void test_size_small(void **state)
{
	size_t off[NREC];
	struct ss_tw *w = six_records(off);
	uint32_t size = 8;
	(void)state;
	set_field(w, off[3] + offsetof(struct ss_meta, size), &size, 4);
	check(w, off, 3, off[4] - off[3]);
	ss_tw_free(w);
}

static void test_reserved_set(void **state)
{
	size_t off[NREC];
	struct ss_tw *w = six_records(off);
	uint16_t junk = 0xbeef;
	(void)state;
	set_field(w, off[2] + offsetof(struct ss_meta, reserved), &junk, 2);
	check(w, off, 2, off[3] - off[2]);
	ss_tw_free(w);
}

/* the text of the string looks like no header: the resync passes it */
static void test_type_past_max(void **state)
{
	size_t off[NREC];
	struct ss_tw *w = six_records(off);
	uint16_t type = SS_META_TYPE_MAX + 1;
	(void)state;
	set_field(w, off[2] + offsetof(struct ss_meta, type), &type, 2);
	check(w, off, 2, off[3] - off[2]);
	ss_tw_free(w);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/t.sstrace", tmpdir);
	ss_reader_cache_off();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(tpath);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_size_past_chunk),
		cmocka_unit_test(test_last_record),
		cmocka_unit_test(test_size_small),
		cmocka_unit_test(test_reserved_set),
		cmocka_unit_test(test_type_past_max),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
