/*
 * test-alloc-read.c - the reader and the report of recorded allocations
 * (read/alloc-read.c, analyze/alloc-report.c) on a hand-made trace whose
 * every figure is worked out below by hand: attribution to the innermost
 * open call, a free of a block allocated in another function, a free of a
 * block allocated before recording (0 bytes, counted), a realloc (FREE
 * then ALLOC), a second window that forgets the first's blocks, a thread
 * with no call open, a CUDA space, the steps' peaks, the exit list of
 * live blocks.
 *
 * The trace (clock: CLOCK_MONOTONIC ns; steps 0 and 1 recorded from 100
 * and 200, step 2 at 300 not, step 3 at 400 recorded, step 4 at 500 not):
 *   thread 10:  110 ENTER f
 *               120 ALLOC 0x1000 100           f +100
 *               130 ENTER g
 *               140 ALLOC 0x2000 50            g +50
 *               150 FREE 0x1000                g -100 (f's block)
 *               160 EXIT g
 *               170 FREE 0x9999                unknown: 0 bytes
 *               180 EXIT f
 *               210 ENTER f
 *               220 ALLOC 0x3000 1000          f +1000
 *               230 FREE 0x2000, ALLOC 0x2000 200 (a realloc in place)
 *                                              f -50 +200
 *               240 EXIT f
 *               410 ENTER f
 *               420 FREE 0x3000                window 2: unknown, 0
 *               430 EXIT f
 *   thread 11:  125 ALLOC 0x5000 7 cuda:1      no call open
 *               135 FREE 0x5000
 * f: self 100 + 1000 - 50 + 200 = 1250, with g's -50: total 1200, 3
 * allocs; g: -50, -50, 1.  Heap live: 100, 150, 50 | 50, 1050, 1000, 1200
 * | 0: peaks step 0 150, step 1 1200, step 3 0; cuda:1 7 in step 0.  At
 * exit 0x2000 (heap) and 0x1234 are live: one leak, the 200 bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc-read.h"
#include "alloc-report.h"
#include "reader.h"
#include "slices.h"
#include "trace-writer.h"
#include "unit-util.h"

#define A0 UINT64_C(0x400000)
#define F (A0 + 0x10)
#define G (A0 + 0x20)

static char tmpdir[] = "/tmp/ss-test-alloc-read-XXXXXX";
static char tpath[300];

static void call(struct ss_tw_enc *e, unsigned k, uint64_t t, uint64_t fn)
{
	ss_tw_put(e, SS_CW_SHORT(k, t - 50, fn - A0));
}

static void alloc(struct ss_tw_enc *e, uint64_t t, uint64_t addr, uint64_t size, uint64_t space)
{
	ss_tw_put(e, SS_CW_LONG(SS_EV_ALLOC, 3, t - 50));
	ss_tw_put(e, addr);
	ss_tw_put(e, size);
	ss_tw_put(e, space);
}

static void release(struct ss_tw_enc *e, uint64_t t, uint64_t addr, uint64_t space)
{
	ss_tw_put(e, SS_CW_LONG(SS_EV_FREE, 2, t - 50));
	ss_tw_put(e, addr);
	ss_tw_put(e, space);
}

static void block(struct ss_tw_enc *e)
{
	ss_tw_put(e, SS_CW_LONG(SS_EV_BLOCK, 3, 0));
	ss_tw_put(e, 0);
	ss_tw_put(e, 50);
	ss_tw_put(e, A0);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/prog.7.sstrace", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(tmpdir);
}

static struct ss_tw *image(int config)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc a = { .n = 0 }, b = { .n = 0 };
	static const char cfg[] = "step.function=f\nmemory.allocations=true\n";

	if (config)
		ss_tw_meta(w, SS_META_CONFIG, 1, cfg, sizeof(cfg));
	for (unsigned s = 0; s < 5; s++)
		ss_tw_meta_step(w, 100 * (s + 1), s, 10, 1,
				s == 2 || s == 4 ? SS_STEP_NONE : SS_STEP_RECORD, 0);
	struct {
		struct ss_meta_alloc_live h;
		struct ss_alloc_block b[2];
	} live = { { 2, 0, { 0, 0 } }, { { 0x2000, 0 }, { 0x1234, 0 } } };
	ss_tw_meta(w, SS_META_ALLOC_LIVE, 600, &live, sizeof(live));

	block(&a);
	call(&a, 1, 110, F);
	alloc(&a, 120, 0x1000, 100, 0);
	call(&a, 1, 130, G);
	alloc(&a, 140, 0x2000, 50, 0);
	release(&a, 150, 0x1000, 0);
	call(&a, 2, 160, G);
	release(&a, 170, 0x9999, 0);
	call(&a, 2, 180, F);
	call(&a, 1, 210, F);
	alloc(&a, 220, 0x3000, 1000, 0);
	release(&a, 230, 0x2000, 0);
	alloc(&a, 230, 0x2000, 200, 0);
	call(&a, 2, 240, F);
	call(&a, 1, 410, F);
	release(&a, 420, 0x3000, 0);
	call(&a, 2, 430, F);
	ss_tw_words(w, 10, 1, 0, a.w, a.n, a.n, a.n * 8);

	block(&b);
	alloc(&b, 125, 0x5000, 7, SS_SPACE(SS_SPACE_CUDA_DEVICE, 1));
	release(&b, 135, 0x5000, SS_SPACE(SS_SPACE_CUDA_DEVICE, 1));
	ss_tw_words(w, 11, 2, 0, b.w, b.n, b.n, b.n * 8);
	return w;
}

static struct ss_reader *open_image(struct ss_tw *w)
{
	char err[512];
	assert_int_equal(ss_tw_write(w, tpath, SIZE_MAX), 0);
	struct ss_reader *r = ss_reader_open(tpath, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	return r;
}

static const struct ss_alloc_ev *ev_at(const struct ss_alloc_data *d, uint64_t ns, int is_free)
{
	for (size_t i = 0; i < d->nev; i++)
		if (d->ev[i].ns == ns && d->ev[i].is_free == is_free)
			return &d->ev[i];
	fail_msg("no record at %llu", (unsigned long long)ns);
	return NULL;
}

static void test_read(void **state)
{
	(void)state;
	struct ss_tw *w = image(1);
	struct ss_reader *r = open_image(w);
	struct ss_slicer *sl = ss_slicer_new(r, NULL);
	struct ss_alloc_data d;

	assert_non_null(sl);
	assert_int_equal(ss_alloc_read(r, sl, &d), 0);
	assert_int_equal(d.nev, 10);
	assert_int_equal(d.allocs, 5);
	assert_int_equal(d.frees, 5);
	assert_int_equal(d.unknown_frees, 2);
	assert_int_equal(d.outside, 2);
	/* sizes of frees, and the realloc's two halves in stream order */
	assert_int_equal(ev_at(&d, 150, 1)->delta, -100);
	assert_int_equal(ev_at(&d, 170, 1)->delta, 0);
	assert_false(ev_at(&d, 170, 1)->known);
	assert_int_equal(ev_at(&d, 230, 1)->delta, -50);
	assert_int_equal(ev_at(&d, 230, 0)->live, 1200);
	assert_int_equal(ev_at(&d, 420, 1)->delta, 0); /* window 2 forgot it */
	assert_int_equal(ev_at(&d, 135, 1)->delta, -7);
	/* attribution: the innermost open call */
	const struct ss_alloc_ev *e = ev_at(&d, 150, 1);
	assert_int_equal(d.nodes[e->node - 1].fn, G);
	assert_int_equal(d.nodes[d.nodes[e->node - 1].parent - 1].fn, F);
	assert_int_equal(ev_at(&d, 125, 0)->node, 0);
	/* steps: 0, 1 and 3 recorded; peaks per space */
	assert_int_equal(d.nsteps, 3);
	int heap = ss_alloc_space_index(&d, 0);
	int cuda = ss_alloc_space_index(&d, SS_SPACE(SS_SPACE_CUDA_DEVICE, 1));
	assert_true(heap >= 0 && cuda >= 0);
	assert_int_equal(d.steps[0].step, 0);
	assert_int_equal(d.steps[0].peak[heap], 150);
	assert_int_equal(d.steps[0].peak[cuda], 7);
	assert_int_equal(d.steps[1].peak[heap], 1200);
	assert_int_equal(d.steps[1].peak[cuda], 0);
	assert_int_equal(d.steps[2].step, 3);
	assert_int_equal(d.steps[2].peak[heap], 0);
	/* the exit list: 0x2000's last ALLOC leaked, 0x1234 was never seen */
	assert_true(d.have_live);
	assert_int_equal(d.nleaked, 1);
	assert_true(ev_at(&d, 230, 0)->leaked);
	assert_false(ev_at(&d, 140, 0)->leaked);

	/* the report's columns from the same data */
	struct ss_exporter *ex = ss_alloc_report_new();
	const struct ss_alloc_report *m = ss_alloc_report_of(ex);
	ex->alloc(ex->ctx, 7, &d);
	char fname[32], gname[32];
	snprintf(fname, sizeof(fname), "0x%llx", (unsigned long long)F);
	snprintf(gname, sizeof(gname), "0x%llx", (unsigned long long)G);
	struct ss_agg_row row = { .name = fname, .kind = SS_AGG_FUNCTION };
	const struct ss_alloc_fstat *st = ss_alloc_report_row(m, &row);
	assert_non_null(st);
	assert_int_equal(st->self[0], 1250);
	assert_int_equal(st->total[0], 1200);
	assert_int_equal(st->allocs[0], 3);
	row.name = gname;
	st = ss_alloc_report_row(m, &row);
	assert_non_null(st);
	assert_int_equal(st->self[0], -50);
	assert_int_equal(st->total[0], -50);
	assert_int_equal(st->allocs[0], 1);
	row.pid = 7; /* the per-thread row of thread 10 */
	row.tid = 10;
	st = ss_alloc_report_row(m, &row);
	assert_non_null(st);
	assert_int_equal(st->self[0], -50);
	assert_true(ss_alloc_report_have(m, 0) && ss_alloc_report_have(m, 1));
	int found;
	assert_int_equal(ss_alloc_report_step_peak(m, 7, 1, 0, &found), 1200);
	assert_true(found);
	ss_exporter_free(ex);

	ss_alloc_release(&d);
	ss_slicer_free(sl);
	ss_reader_free(r);
	ss_tw_free(w);
}

/*
 * A step's peak is its own: steps 0, 1, 2 recorded (from 100, 200, 300),
 * one thread:
 *   110 ALLOC 0x1000 500     step 0 keeps it: own 500
 *   210 ENTER f, 220 EXIT f  step 1 allocates nothing: own 0
 *   310 ALLOC 0x2000 30      own 30 (live 530)
 *   320 FREE 0x1000          step 0's block: own stays 30 (live 30)
 *   330 ALLOC 0x3000 40      own 70
 *   340 FREE 0x3000          own 30
 * Peaks: 500, 0, 70 (live bytes since the window opened would say 500,
 * 500, 530).
 */
static void test_own_peaks(void **state)
{
	(void)state;
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	struct ss_tw_enc a = { .n = 0 };
	static const char cfg[] = "step.function=f\nmemory.allocations=true\n";
	struct ss_alloc_data d;

	ss_tw_meta(w, SS_META_CONFIG, 1, cfg, sizeof(cfg));
	for (unsigned s = 0; s < 4; s++)
		ss_tw_meta_step(w, 100 * (s + 1), s, 10, 1,
				s == 3 ? SS_STEP_NONE : SS_STEP_RECORD, 0);
	block(&a);
	call(&a, 1, 105, F);
	alloc(&a, 110, 0x1000, 500, 0);
	call(&a, 2, 190, F);
	call(&a, 1, 210, F);
	call(&a, 2, 220, F);
	call(&a, 1, 305, F);
	alloc(&a, 310, 0x2000, 30, 0);
	release(&a, 320, 0x1000, 0);
	alloc(&a, 330, 0x3000, 40, 0);
	release(&a, 340, 0x3000, 0);
	call(&a, 2, 350, F);
	ss_tw_words(w, 10, 1, 0, a.w, a.n, a.n, a.n * 8);

	struct ss_reader *r = open_image(w);
	struct ss_slicer *sl = ss_slicer_new(r, NULL);
	assert_non_null(sl);
	assert_int_equal(ss_alloc_read(r, sl, &d), 0);
	assert_int_equal(d.nsteps, 3);
	int heap = ss_alloc_space_index(&d, 0);
	assert_true(heap >= 0);
	assert_int_equal(d.steps[0].peak[heap], 500);
	assert_int_equal(d.steps[1].peak[heap], 0);
	assert_int_equal(d.steps[2].peak[heap], 70);
	assert_int_equal(ev_at(&d, 310, 0)->live, 530); /* live bytes are still the window's */

	/* the report gives the same per step */
	struct ss_exporter *ex = ss_alloc_report_new();
	const struct ss_alloc_report *m = ss_alloc_report_of(ex);
	ex->alloc(ex->ctx, 7, &d);
	int found;
	assert_int_equal(ss_alloc_report_step_peak(m, 7, 1, 0, &found), 0);
	assert_true(found);
	assert_int_equal(ss_alloc_report_step_peak(m, 7, 2, 0, &found), 70);
	ss_exporter_free(ex);

	ss_alloc_release(&d);
	ss_slicer_free(sl);
	ss_reader_free(r);
	ss_tw_free(w);
}

/* Without memory.allocations in its config a process is not read at all */
static void test_not_recorded(void **state)
{
	(void)state;
	struct ss_tw *w = image(0);
	struct ss_reader *r = open_image(w);
	struct ss_slicer *sl = ss_slicer_new(r, NULL);
	struct ss_alloc_data d;

	assert_int_equal(ss_alloc_read(r, sl, &d), 0);
	assert_int_equal(d.nev, 0);
	assert_false(d.have_live);
	ss_alloc_release(&d);
	ss_slicer_free(sl);
	ss_reader_free(r);
	ss_tw_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_own_peaks),
		cmocka_unit_test(test_not_recorded),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
