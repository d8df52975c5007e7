/*
 * test-advise-judge.c - the omp, blocked and outlier checks of `stepscope
 * advise` (advise-omp.c, advise-blocked.c, advise-outlier.c) and the
 * outlier steps they build on (step-outliers.c), on aggregates fed by hand
 * with slices and off-CPU intervals whose every number is known:
 *   - ss_step_outliers_find: on wall time a step that was preempted is an
 *     outlier; on the CPU it is not, and the function that grew is named
 *     with its exact excess;
 *   - outlier: the process's first step (start-up) is not judged; the
 *     saving is the excess of the outliers the named function grew in over
 *     all steps;
 *   - blocked: the function that blocked is named, not the one that was
 *     only preempted; the saving is the smaller of its blocked time and the
 *     rest of the step; without switch records it does not judge;
 *   - omp: the team's size from the threads that ran the outlined region,
 *     its spinning (the team wait less its time switched out) plus the
 *     preempted time; a team that waits asleep, or sleeps more than it
 *     spins, gets nothing; a run without
 *     a parallel region is not judged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advise.h"
#include "agg.h"
#include "export.h"
#include "format.h"
#include "offcpu.h"
#include "step-outliers.h"

/* the checks under test (advise-checks.c names them the same way) */
extern const struct ss_adv_check ss_adv_check_omp, ss_adv_check_blocked, ss_adv_check_outlier;

#define PID 1
#define TID 7
#define WAIT "omp barrier: wait for the team"

/* One slice on thread tid, begun in step `step`, inside it. */
static void put(struct ss_exporter *ex, uint64_t tid, const char *name, enum ss_slice_cat cat,
		uint64_t b, uint64_t e, unsigned depth, uint64_t step)
{
	struct ss_slice s;

	memset(&s, 0, sizeof(s));
	s.cat = cat;
	s.name = name;
	s.addr = cat == SS_SLICE_FUNCTION ? 0x1000 + (uint64_t)name[0] : 0;
	s.begin_ns = b;
	s.end_ns = e;
	s.depth = depth;
	s.nest = depth;
	s.has_step = 1;
	s.step = step;
	s.in_step = cat != SS_SLICE_STEP;
	ex->slice(ex->ctx, PID, tid, &s);
}

static const char *const step_names[] = { "ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2",
					  "ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5",
					  "ProfilerStep#6", "ProfilerStep#7", "ProfilerStep#8",
					  "ProfilerStep#9" };

/* An aggregate over: off-CPU intervals iv[0..niv) of TID (none: no
 * switch records), the slices fed by fill(), then nsteps steps of TID
 * beginning at begin[k] (begin[nsteps] the last one's end). */
static struct ss_agg *feed(const struct ss_offcpu_iv *iv, size_t niv, int sched,
			   void (*fill)(struct ss_exporter *, const uint64_t *), const uint64_t *begin,
			   size_t nsteps)
{
	struct ss_agg *a = ss_agg_new();
	struct ss_exporter *ex = ss_agg_exporter(a);
	static struct ss_offcpu_iv ivs[16];
	static uint64_t before[17];
	struct ss_offcpu_thread th = { .tid = TID, .iv = ivs, .n = niv, .before = before };
	struct ss_offcpu off = { .th = &th, .n = 1, .ended = 1, .nrecords = 1 };
	char err[256];

	memcpy(ivs, iv, niv * sizeof(*iv));
	before[0] = 0;
	for (size_t i = 0; i < niv; i++)
		before[i + 1] = before[i] + iv[i].end_ns - iv[i].begin_ns;
	assert_int_equal(ex->begin(ex->ctx, 0), 0);
	ex->process(ex->ctx, PID, "p");
	ex->thread(ex->ctx, PID, TID, "main");
	ex->thread(ex->ctx, PID, TID + 1, "worker");
	if (sched)
		ex->offcpu(ex->ctx, PID, &off);
	fill(ex, begin);
	for (size_t k = 0; k < nsteps; k++)
		put(ex, TID, step_names[k], SS_SLICE_STEP, begin[k], begin[k + 1], 0, k);
	assert_int_equal(ex->end(ex->ctx, err, sizeof(err)), 0);
	return a;
}

/* The core's team-wait category, mean per step, for the next judge(). */
static uint64_t cat_omp_wait;

/* A run as the checks see it: the aggregate and whether it has switches. */
static void judge(const struct ss_adv_check *c, struct ss_agg *a, struct ss_adv_list *l,
		  int expect, char *why, size_t len)
{
	struct ss_adv_run run;

	memset(&run, 0, sizeof(run));
	run.agg = a;
	run.cat_mean[SS_ADV_OMP_WAIT] = cat_omp_wait;
	run.have_offcpu = ss_agg_have_offcpu(a, NULL);
	why[0] = 0;
	assert_int_equal(c->judge(&run, NULL, l, why, len), expect);
}

/* ---- outliers: 10 steps; A then B in each.  Step 0 lasts 5000 (A 4200:
 * start-up), step 2 3000 (B 2800, 2000 of it preempted), step 4 3000 (A
 * 2200: A grew by 2000); the others 1000 (A 200, B 800). */
static const uint64_t out_dur[10] = { 5000, 1000, 3000, 1000, 3000, 1000, 1000, 1000, 1000, 1000 };
static const uint64_t out_a[10] = { 4200, 200, 200, 200, 2200, 200, 200, 200, 200, 200 };
static uint64_t out_begin[11];

static void fill_out(struct ss_exporter *ex, const uint64_t *begin)
{
	for (size_t k = 0; k < 10; k++) {
		put(ex, TID, "A", SS_SLICE_FUNCTION, begin[k], begin[k] + out_a[k], 0, k);
		put(ex, TID, "B", SS_SLICE_FUNCTION, begin[k] + out_a[k], begin[k + 1], 0, k);
	}
}

static struct ss_agg *out_agg(void)
{
	struct ss_offcpu_iv iv;

	out_begin[0] = 0;
	for (size_t k = 0; k < 10; k++)
		out_begin[k + 1] = out_begin[k] + out_dur[k];
	iv = (struct ss_offcpu_iv){ out_begin[2] + 500, out_begin[2] + 2500, SS_SWITCH_PREEMPTED };
	return feed(&iv, 1, 1, fill_out, out_begin, 10);
}

static void test_outliers_oncpu(void **state)
{
	struct ss_agg *a = out_agg();
	const struct ss_agg_step *st;
	struct ss_step_outlier *o;
	uint64_t med;

	(void)state;
	assert_int_equal(ss_agg_steps(a, &st), 10);
	/* wall time: steps 0, 2 and 4; in 2, B grew (+2000) */
	assert_int_equal(ss_step_outliers_find(a, 1.5, 0, &o, &med), 3);
	assert_int_equal(med, 1000);
	assert_int_equal(o[1].step, 2);
	assert_int_equal(o[1].ngrew, 1);
	assert_string_equal(o[1].grew[0].name, "B");
	assert_int_equal(o[1].grew[0].excess_ns, 2000);
	free(o);
	/* on the CPU: steps 0 and 4; in 4, A grew by 2000 */
	assert_int_equal(ss_step_outliers_find(a, 1.5, 1, &o, &med), 2);
	assert_int_equal(med, 1000);
	assert_int_equal(o[0].step, 0);
	assert_int_equal(o[0].extra_ns, 4000);
	assert_int_equal(o[1].step, 4);
	assert_int_equal(o[1].dur_ns, 3000);
	assert_int_equal(o[1].extra_ns, 2000);
	assert_int_equal(o[1].ngrew, 1);
	assert_string_equal(o[1].grew[0].name, "A");
	assert_int_equal(o[1].grew[0].excess_ns, 2000);
	free(o);
	ss_agg_free(a);
}

static void test_outlier_check(void **state)
{
	struct ss_agg *a = out_agg();
	struct ss_adv_list l = { 0 };
	char why[200];

	(void)state;
	judge(&ss_adv_check_outlier, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].check, "outlier");
	/* step 4's 2000 over 10 steps; step 0 (start-up) not judged */
	assert_true(l.v[0].save_ns == 200.0 && l.v[0].save_lo == 200.0);
	assert_string_equal(l.v[0].title, "1 of 10 steps are outliers (over 1.5x the median "
					  "step, 1.000us): A grew in 1 of them");
	assert_int_equal(l.v[0].nfuncs, 1);
	assert_string_equal(l.v[0].funcs[0], "A");
	assert_non_null(strstr(l.v[0].evidence, "; 1 process's first step (start-up) not judged"));
	free(l.v);
	ss_agg_free(a);
}

/* ---- blocked: 5 steps of 1000: load [0, 400) blocked in [50, 350),
 * compute [400, 1000) preempted in [500, 600). */
static uint64_t blk_begin[6];

static void fill_blk(struct ss_exporter *ex, const uint64_t *begin)
{
	for (size_t k = 0; k < 5; k++) {
		put(ex, TID, "load", SS_SLICE_FUNCTION, begin[k], begin[k] + 400, 0, k);
		put(ex, TID, "compute", SS_SLICE_FUNCTION, begin[k] + 400, begin[k] + 1000, 0, k);
	}
}

static void test_blocked_check(void **state)
{
	struct ss_offcpu_iv iv[10];
	struct ss_adv_list l = { 0 };
	struct ss_agg *a;
	char why[200];

	(void)state;
	for (size_t k = 0; k <= 5; k++)
		blk_begin[k] = 1000 * k;
	for (size_t k = 0; k < 5; k++) {
		iv[2 * k] = (struct ss_offcpu_iv){ blk_begin[k] + 50, blk_begin[k] + 350, 0 };
		iv[2 * k + 1] = (struct ss_offcpu_iv){ blk_begin[k] + 500, blk_begin[k] + 600,
						       SS_SWITCH_PREEMPTED };
	}
	a = feed(iv, 10, 1, fill_blk, blk_begin, 5);
	judge(&ss_adv_check_blocked, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 1);
	assert_true(l.v[0].save_ns == 300.0);
	assert_string_equal(l.v[0].title, "steps block off the CPU in load: 300ns of a 1.000us "
					  "step (30%)");
	/* compute was only preempted: not named */
	assert_int_equal(l.v[0].nfuncs, 1);
	assert_string_equal(l.v[0].funcs[0], "load");
	free(l.v);
	ss_agg_free(a);
	/* no switch records: not judged */
	memset(&l, 0, sizeof(l));
	a = feed(iv, 0, 0, fill_blk, blk_begin, 5);
	judge(&ss_adv_check_blocked, a, &l, 1, why, sizeof(why));
	assert_int_equal(l.n, 0);
	assert_string_equal(why, "the run has no record.sched (set record.sched: true to see "
				 "the time steps spend off the CPU)");
	ss_agg_free(a);
}

/* ---- omp: 4 steps of 1000 in f: the main thread runs f._omp_fn.0
 * [100, 600), then waits for the team [600, 1000), switched out in
 * [700, 800) (preempted, or asleep when `asleep`); a worker runs
 * f._omp_fn.0 [100, 900). */
static uint64_t omp_begin[5];

static void fill_omp(struct ss_exporter *ex, const uint64_t *begin)
{
	for (size_t k = 0; k < 4; k++) {
		uint64_t t = begin[k];
		put(ex, TID, "f._omp_fn.0", SS_SLICE_FUNCTION, t + 100, t + 600, 1, k);
		put(ex, TID, WAIT, SS_SLICE_RANGE, t + 600, t + 1000, 1, k);
		put(ex, TID, "f", SS_SLICE_FUNCTION, t, t + 1000, 0, k);
		put(ex, TID + 1, "f._omp_fn.0", SS_SLICE_FUNCTION, t + 100, t + 900, 0, k);
	}
}

static void fill_noomp(struct ss_exporter *ex, const uint64_t *begin)
{
	for (size_t k = 0; k < 4; k++)
		put(ex, TID, "f", SS_SLICE_FUNCTION, begin[k], begin[k] + 1000, 0, k);
}

/* switched out in [b, e) of each step */
static struct ss_agg *omp_agg(uint64_t b, uint64_t e, uint32_t flags,
			      void (*fill)(struct ss_exporter *, const uint64_t *))
{
	struct ss_offcpu_iv iv[4];

	for (size_t k = 0; k <= 4; k++)
		omp_begin[k] = 1000 * k;
	for (size_t k = 0; k < 4; k++)
		iv[k] = (struct ss_offcpu_iv){ omp_begin[k] + b, omp_begin[k] + e, flags };
	return feed(iv, 4, 1, fill, omp_begin, 4);
}

static void test_omp_check(void **state)
{
	struct ss_adv_list l = { 0 };
	struct ss_agg *a = omp_agg(700, 800, SS_SWITCH_PREEMPTED, fill_omp);
	char why[200];

	(void)state;
	judge(&ss_adv_check_omp, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 1);
	/* spinning 300 (the wait's 400 less its 100 switched out) + 100
	 * preempted; low end the larger, 300 */
	assert_true(l.v[0].save_ns == 400.0 && l.v[0].save_lo == 300.0 && l.v[0].save_hi == 400.0);
	assert_string_equal(l.v[0].title, "the OpenMP team of 2 threads spins or is preempted "
					  "while it waits: 400ns of a 1.000us step (40%)");
	assert_int_equal(l.v[0].nfuncs, 1);
	assert_string_equal(l.v[0].funcs[0], "f._omp_fn.0");
	assert_non_null(strstr(l.v[0].advice, "OMP_WAIT_POLICY=passive"));
	free(l.v);
	ss_agg_free(a);
	/* the 100 asleep, not preempted: the spinning alone */
	memset(&l, 0, sizeof(l));
	a = omp_agg(700, 800, 0, fill_omp);
	judge(&ss_adv_check_omp, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 1);
	assert_true(l.v[0].save_ns == 300.0 && l.v[0].save_lo == 300.0);
	free(l.v);
	ss_agg_free(a);
	/* asleep 350 of the wait's 400 (the core's team-wait category: 400,
	 * the wait not preempted), spinning 50: it sleeps more than it spins,
	 * nothing; the same wait counted by no category would be spinning */
	memset(&l, 0, sizeof(l));
	a = omp_agg(650, 1000, 0, fill_omp);
	cat_omp_wait = 400;
	judge(&ss_adv_check_omp, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 0);
	cat_omp_wait = 0;
	judge(&ss_adv_check_omp, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 1);
	assert_true(l.v[0].save_ns == 50.0);
	free(l.v);
	ss_agg_free(a);
	/* the whole wait asleep (OMP_WAIT_POLICY=passive): judged, nothing */
	memset(&l, 0, sizeof(l));
	a = omp_agg(600, 1000, 0, fill_omp);
	judge(&ss_adv_check_omp, a, &l, 0, why, sizeof(why));
	assert_int_equal(l.n, 0);
	ss_agg_free(a);
}

/* A run with no wait range and no outlined region: not judged. */
static void test_omp_not_judged(void **state)
{
	struct ss_adv_list l = { 0 };
	struct ss_agg *a = omp_agg(700, 800, 0, fill_noomp);
	char why[200];

	(void)state;
	judge(&ss_adv_check_omp, a, &l, 1, why, sizeof(why));
	assert_int_equal(l.n, 0);
	assert_string_equal(why, "the run has no OpenMP parallel region in its steps");
	ss_agg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outliers_oncpu),
		cmocka_unit_test(test_outlier_check),
		cmocka_unit_test(test_blocked_check),
		cmocka_unit_test(test_omp_check),
		cmocka_unit_test(test_omp_not_judged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
