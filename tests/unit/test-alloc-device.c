/*
 * test-alloc-device.c - analyze/alloc-device.c on hand-made records
 * (struct ss_alloc_data as read/alloc-read.c hands them to the exporters):
 * Self CUDA Mem and CUDA Mem per device against sums done here, record by
 * record.
 *
 *   test_sums       a call tree main > step > {fwd > gemm, bwd} on two
 *                   devices: device, managed memory counted, heap and
 *                   pinned not, a free of unknown size 0 bytes, a record
 *                   outside any call in no row; per thread and merged
 *   test_recursion  a > a > a allocating at the bottom: a's total counts
 *                   each byte once, its self only the innermost's
 *   test_devices    devices listed ascending whatever order they came in,
 *                   processes added together, an ordinal past the last
 *                   slot shares it
 *   test_output     json keys always, csv columns and the text section
 *                   only with two devices or more; one device: nothing
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc-device.h"
#include "alloc-read.h"

enum { MAIN = 1, STEP, FWD, GEMM, BWD }; /* node ids: nodes[id - 1] */

static struct ss_alloc_node tree[] = {
	{ 0, 0x10, "main" }, { MAIN, 0x20, "step" }, { STEP, 0x30, "fwd" },
	{ FWD, 0x40, "gemm" }, { STEP, 0x50, "bwd" },
};

static struct ss_alloc_ev ev(uint32_t node, uint64_t tid, uint64_t space, int64_t delta)
{
	struct ss_alloc_ev e;
	memset(&e, 0, sizeof(e));
	e.node = node;
	e.tid = tid;
	e.space = space;
	e.delta = delta;
	e.is_free = delta < 0;
	e.size = (uint64_t)(delta < 0 ? -delta : delta);
	e.known = 1;
	return e;
}

static void feed(struct ss_exporter *x, uint64_t pid, struct ss_alloc_ev *evs, size_t n,
		 struct ss_alloc_node *nodes, size_t nn)
{
	struct ss_alloc_data d;
	memset(&d, 0, sizeof(d));
	d.ev = evs;
	d.nev = n;
	d.nodes = nodes;
	d.nnodes = nn;
	for (size_t i = 0; i < n; i++)
		if (ss_alloc_space_index(&d, evs[i].space) < 0 && d.nspaces < SS_ALLOC_SPACES)
			d.spaces[d.nspaces++] = evs[i].space;
	x->alloc(x->ctx, pid, &d);
}

static struct ss_agg_row row(const char *name, uint64_t pid, uint64_t tid)
{
	struct ss_agg_row r;
	memset(&r, 0, sizeof(r));
	r.name = name;
	r.kind = SS_AGG_FUNCTION;
	r.pid = pid;
	r.tid = tid;
	return r;
}

/* Self and total of name (merged) on the i-th listed device */
static void got(const struct ss_alloc_device *m, const char *name, size_t i, int64_t *s,
		int64_t *t)
{
	struct ss_agg_row r = row(name, 0, 0);
	ss_alloc_device_row(m, &r, i, s, t);
}

#define D0 SS_SPACE(SS_SPACE_CUDA_DEVICE, 0)
#define D1 SS_SPACE(SS_SPACE_CUDA_DEVICE, 1)
#define M1 SS_SPACE(SS_SPACE_CUDA_MANAGED, 1)
#define P0 SS_SPACE(SS_SPACE_CUDA_PINNED, 0)
#define HEAP SS_SPACE(SS_SPACE_HEAP, 0)

static void test_sums(void **state)
{
	(void)state;
	struct ss_exporter *x = ss_alloc_device_new();
	assert_non_null(x);
	struct ss_alloc_ev evs[] = {
		ev(GEMM, 7, D0, 4096),  ev(GEMM, 7, D1, 1000), ev(FWD, 7, D0, 512),
		ev(BWD, 7, D0, -4096),  ev(BWD, 8, M1, 300),   ev(STEP, 7, D1, -1000),
		ev(STEP, 7, HEAP, 77),  ev(STEP, 7, P0, 88),   ev(0, 7, D0, 999),
		ev(BWD, 7, D0, 0), /* a free of unknown size */
	};
	evs[9].is_free = 1;
	evs[9].known = 0;
	feed(x, 42, evs, sizeof(evs) / sizeof(evs[0]), tree, 5);
	const struct ss_alloc_device *m = ss_alloc_device_of(x);
	const uint32_t *devs;
	assert_int_equal(ss_alloc_device_list(m, &devs), 2);
	assert_int_equal(devs[0], 0);
	assert_int_equal(devs[1], 1);
	static const struct {
		const char *name;
		int64_t self0, total0, self1, total1;
	} want[] = {
		{ "main", 0, 512, 0, 300 },  { "step", 0, 512, -1000, 300 },
		{ "fwd", 512, 4608, 0, 1000 }, { "gemm", 4096, 4096, 1000, 1000 },
		{ "bwd", -4096, -4096, 300, 300 },
	};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		int64_t s, t;
		got(m, want[k].name, 0, &s, &t);
		if (s != want[k].self0 || t != want[k].total0)
			fail_msg("%s on cuda:0: self %lld total %lld, expected %lld %lld",
				 want[k].name, (long long)s, (long long)t,
				 (long long)want[k].self0, (long long)want[k].total0);
		got(m, want[k].name, 1, &s, &t);
		if (s != want[k].self1 || t != want[k].total1)
			fail_msg("%s on cuda:1: self %lld total %lld, expected %lld %lld",
				 want[k].name, (long long)s, (long long)t,
				 (long long)want[k].self1, (long long)want[k].total1);
	}
	/* per thread: bwd's managed block is thread 8's, its free thread 7's */
	int64_t s, t;
	struct ss_agg_row r = row("bwd", 42, 8);
	ss_alloc_device_row(m, &r, 1, &s, &t);
	assert_int_equal(s, 300);
	r = row("bwd", 42, 7);
	ss_alloc_device_row(m, &r, 1, &s, &t);
	assert_int_equal(s, 0);
	ss_alloc_device_row(m, &r, 0, &s, &t);
	assert_int_equal(s, -4096);
	/* a range row or an unknown name: nothing */
	r = row("step", 0, 0);
	r.kind = SS_AGG_RANGE;
	ss_alloc_device_row(m, &r, 0, &s, &t);
	assert_true(s == 0 && t == 0);
	got(m, "nobody", 0, &s, &t);
	assert_true(s == 0 && t == 0);
	ss_exporter_free(x);
}

static void test_recursion(void **state)
{
	(void)state;
	struct ss_alloc_node rec[] = { { 0, 0xa, "a" }, { 1, 0xa, "a" }, { 2, 0xa, "a" } };
	struct ss_alloc_ev evs[] = { ev(3, 1, D0, 100), ev(2, 1, D0, 10), ev(1, 1, D0, -30) };
	struct ss_exporter *x = ss_alloc_device_new();
	feed(x, 1, evs, 3, rec, 3);
	int64_t s, t;
	got(ss_alloc_device_of(x), "a", 0, &s, &t);
	assert_int_equal(s, 80); /* every call is a's own */
	assert_int_equal(t, 80); /* each byte once, not once per frame */
	ss_exporter_free(x);
}

static void test_devices(void **state)
{
	(void)state;
	struct ss_exporter *x = ss_alloc_device_new();
	struct ss_alloc_ev a[] = { ev(GEMM, 1, SS_SPACE(SS_SPACE_CUDA_DEVICE, 3), 30) };
	struct ss_alloc_ev b[] = { ev(GEMM, 2, D1, 10), ev(GEMM, 2, SS_SPACE(SS_SPACE_CUDA_DEVICE, 40), 4),
				   ev(GEMM, 2, SS_SPACE(SS_SPACE_CUDA_DEVICE, 99), 5),
				   ev(GEMM, 2, SS_SPACE(SS_SPACE_CUDA_DEVICE, 3), 7) };
	feed(x, 1, a, 1, tree, 5);
	feed(x, 2, b, 4, tree, 5); /* a second process */
	const struct ss_alloc_device *m = ss_alloc_device_of(x);
	const uint32_t *devs;
	assert_int_equal(ss_alloc_device_list(m, &devs), 3);
	assert_int_equal(devs[0], 1);
	assert_int_equal(devs[1], 3);
	assert_int_equal(devs[2], SS_ALLOC_DEVICES - 1); /* 40 and 99 share it */
	int64_t s, t;
	got(m, "gemm", 1, &s, &t);
	assert_int_equal(s, 37); /* both processes' device 3 */
	got(m, "gemm", 2, &s, &t);
	assert_int_equal(s, 9);
	ss_exporter_free(x);
}

static char *print(void (*fn)(FILE *, const struct ss_alloc_device *, const struct ss_agg_row *),
		   const struct ss_alloc_device *m, const struct ss_agg_row *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, m, r);
	fclose(f);
	return buf;
}

static void csv_header(FILE *f, const struct ss_alloc_device *m, const struct ss_agg_row *r)
{
	(void)r;
	ss_alloc_device_csv_header(f, m);
}

static void section(FILE *f, const struct ss_alloc_device *m, const struct ss_agg_row *r)
{
	ss_alloc_device_section(f, m, r, 1);
}

static void test_output(void **state)
{
	(void)state;
	struct ss_exporter *x = ss_alloc_device_new();
	struct ss_alloc_ev one[] = { ev(GEMM, 1, D0, 2048) };
	feed(x, 1, one, 1, tree, 5);
	const struct ss_alloc_device *m = ss_alloc_device_of(x);
	struct ss_agg_row r = row("fwd", 0, 0);
	char *s = print(ss_alloc_device_json_row, m, &r);
	assert_string_equal(s, ",\"cuda_mem_by_device\":{\"0\":2048},"
			       "\"self_cuda_mem_by_device\":{\"0\":0}");
	free(s);
	s = print(csv_header, m, &r);
	assert_string_equal(s, "");
	free(s);
	s = print(ss_alloc_device_csv_row, m, &r);
	assert_string_equal(s, "");
	free(s);
	s = print(section, m, &r);
	assert_string_equal(s, "");
	free(s);

	struct ss_alloc_ev two[] = { ev(FWD, 1, D1, -1536) };
	feed(x, 1, two, 1, tree, 5);
	s = print(ss_alloc_device_json_row, m, &r);
	assert_string_equal(s, ",\"cuda_mem_by_device\":{\"0\":2048,\"1\":-1536},"
			       "\"self_cuda_mem_by_device\":{\"0\":0,\"1\":-1536}");
	free(s);
	s = print(csv_header, m, &r);
	assert_string_equal(s, ",self_cuda_mem_dev0,cuda_mem_dev0,self_cuda_mem_dev1,cuda_mem_dev1");
	free(s);
	s = print(ss_alloc_device_csv_row, m, &r);
	assert_string_equal(s, ",0,2048,-1536,-1536");
	free(s);
	s = print(section, m, &r);
	assert_non_null(strstr(s, "CUDA memory by device"));
	assert_non_null(strstr(s, "Self cuda:0"));
	assert_non_null(strstr(s, "Self cuda:1"));
	char want[256];
	snprintf(want, sizeof(want), "\n  fwd   %14s  %14s  %14s  %14s\n", "0 B", "2.00 KiB",
		 "-1.50 KiB", "-1.50 KiB");
	if (!strstr(s, want))
		fail_msg("section: no line\n%swithin\n%s", want + 1, s);
	free(s);
	/* no CUDA memory at all: no keys */
	struct ss_exporter *y = ss_alloc_device_new();
	struct ss_alloc_ev heap[] = { ev(GEMM, 1, HEAP, 64), ev(GEMM, 1, P0, 64) };
	feed(y, 1, heap, 2, tree, 5);
	s = print(ss_alloc_device_json_row, ss_alloc_device_of(y), &r);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(ss_alloc_device_list(ss_alloc_device_of(y), NULL), 0);
	ss_exporter_free(y);
	ss_exporter_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
