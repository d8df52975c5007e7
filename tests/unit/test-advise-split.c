/*
 * test-advise-split.c - advise-split.c splits a step into its categories
 * (docs/advise.md, "The categories"), fed by hand: one step [1000, 11000)
 * on thread 10 of process 1, and in it
 *   - an OpenMP team wait [2000, 5000);
 *   - off the CPU: preempted [3000, 4000) (inside the team wait: it stays
 *     preempted), blocked [4500, 5500) (its part in the team wait is the
 *     team's, the rest blocked), blocked [6000, 7000), preempted
 *     [9000, 9200) (inside a synchronize: preempted still);
 *   - CUDA API: cudaLaunchKernel [8000, 8500), cudaDeviceSynchronize
 *     [8500, 10000) (GPU wait);
 *   - calls: train_step (the step function) with forward and backward,
 *     forward calling helper: 4 calls x pair_ns 10 of hooks;
 *   - two allocation records of 64 bytes.
 * Expected to the nanosecond: preempted 1200, GPU wait 1300, team wait
 * 2000, blocked 1500, CUDA API 500, hooks 40, allocation calls 2 x
 * ss_adv_alloc_call_ns(64), operators the rest of 10000; the operators
 * list is the step function's callees, backward and forward.  A second
 * step without any of it is all operators but its hooks.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advise-split.h"
#include "format.h"

static void slice(struct ss_exporter *ex, uint64_t tid, enum ss_slice_cat cat, const char *name,
		  uint64_t b, uint64_t e, unsigned depth, uint64_t step, int in_step)
{
	struct ss_slice s;

	memset(&s, 0, sizeof(s));
	s.cat = cat;
	s.name = name;
	s.begin_ns = b;
	s.end_ns = e;
	s.depth = depth;
	s.has_step = 1;
	s.step = step;
	s.in_step = in_step;
	ex->slice(ex->ctx, 1, tid, &s);
}

static void test_split(void **state)
{
	struct ss_adv_split *sp;
	struct ss_exporter *ex = ss_adv_split_new(&sp);
	struct ss_offcpu_iv iv[] = {
		{ 3000, 4000, SS_SWITCH_PREEMPTED }, { 4500, 5500, 0 }, { 6000, 7000, 0 },
		{ 9000, 9200, SS_SWITCH_PREEMPTED },
	};
	uint64_t before[5] = { 0, 1000, 2000, 3000, 3200 };
	struct ss_offcpu_thread th = { 10, iv, 4, before, 0, 0 };
	struct ss_offcpu off;
	struct ss_gpu_op ops[2];
	struct ss_gpu_data g;
	struct ss_alloc_ev ev[2];
	struct ss_alloc_data al;
	struct ss_adv_step *st;
	size_t n;
	char err[128];
	(void)state;

	assert_non_null(ex);
	memset(&off, 0, sizeof(off));
	off.th = &th;
	off.n = 1;
	off.nrecords = 4;
	memset(ops, 0, sizeof(ops));
	ops[0] = (struct ss_gpu_op){ .type = SS_GPU_API, .start_ns = 8000, .end_ns = 8500,
				     .tid = 10, .name = "cudaLaunchKernel" };
	ops[1] = (struct ss_gpu_op){ .type = SS_GPU_API, .start_ns = 8500, .end_ns = 10000,
				     .tid = 10, .name = "cudaDeviceSynchronize" };
	memset(&g, 0, sizeof(g));
	g.ops = ops;
	g.n = 2;
	memset(ev, 0, sizeof(ev));
	ev[0] = (struct ss_alloc_ev){ .ns = 1500, .tid = 10, .size = 64, .delta = 64 };
	ev[1] = (struct ss_alloc_ev){ .ns = 6500, .tid = 10, .size = 64, .delta = -64, .is_free = 1 };
	memset(&al, 0, sizeof(al));
	al.ev = ev;
	al.nev = 2;

	assert_int_equal(ex->begin(ex->ctx, 0), 0);
	ex->process(ex->ctx, 1, "p");
	ex->thread(ex->ctx, 1, 10, "main");
	ex->gpu(ex->ctx, 1, &g);
	ex->offcpu(ex->ctx, 1, &off);
	ex->alloc(ex->ctx, 1, &al);
	/* post-order, as the slicer hands them out */
	slice(ex, 10, SS_SLICE_FUNCTION, "helper", 1200, 1300, 2, 1, 1);
	slice(ex, 10, SS_SLICE_RANGE, "omp barrier: wait for the team", 2000, 5000, 2, 1, 1);
	slice(ex, 10, SS_SLICE_FUNCTION, "forward", 1100, 6000, 1, 1, 1);
	slice(ex, 10, SS_SLICE_FUNCTION, "backward", 6000, 10900, 1, 1, 1);
	slice(ex, 10, SS_SLICE_FUNCTION, "train_step", 1000, 10990, 0, 1, 1);
	slice(ex, 10, SS_SLICE_FUNCTION, "train_step", 11000, 11500, 0, 2, 1);
	slice(ex, 10, SS_SLICE_STEP, "ProfilerStep#1", 1000, 11000, 0, 1, 0);
	slice(ex, 10, SS_SLICE_STEP, "ProfilerStep#2", 11000, 12000, 0, 2, 0);
	assert_int_equal(ex->end(ex->ctx, err, sizeof(err)), 0);
	assert_true(ss_adv_split_have_gpu(sp));

	assert_int_equal(ss_adv_split_steps(sp, 10, &st, &n), 0);
	assert_int_equal(n, 2);
	uint64_t alloc = (uint64_t)llround(2 * ss_adv_alloc_call_ns(64));
	assert_int_equal(st[0].step, 1);
	assert_int_equal(st[0].cat[SS_ADV_PREEMPTED], 1200);
	assert_int_equal(st[0].cat[SS_ADV_GPU_WAIT], 1300);
	assert_int_equal(st[0].cat[SS_ADV_OMP_WAIT], 2000);
	assert_int_equal(st[0].cat[SS_ADV_BLOCKED], 1500);
	assert_int_equal(st[0].cat[SS_ADV_GPU_API], 500);
	assert_int_equal(st[0].cat[SS_ADV_HOOKS], 40);
	assert_int_equal(st[0].cat[SS_ADV_ALLOC], alloc);
	assert_int_equal(st[0].cat[SS_ADV_OPS], 10000 - 6500 - 40 - alloc);
	assert_int_equal(st[0].nop, 2);
	assert_string_equal(st[0].op[0].name, "backward");
	assert_int_equal(st[0].op[0].ns, 4900);
	assert_string_equal(st[0].op[1].name, "forward");
	assert_int_equal(st[0].op[1].ns, 4900);
	uint64_t all;
	assert_int_equal(ss_adv_split_calls(sp, &st[0], &all), 4);
	assert_int_equal(all, 4);
	/* step 2: the step function alone, 1 call */
	assert_int_equal(st[1].step, 2);
	assert_int_equal(st[1].cat[SS_ADV_HOOKS], 10);
	assert_int_equal(st[1].cat[SS_ADV_OPS], 990);
	for (int c = 1; c < SS_ADV_NCAT; c++)
		if (c != SS_ADV_HOOKS)
			assert_int_equal(st[1].cat[c], 0);
	assert_int_equal(st[1].nop, 1);
	assert_string_equal(st[1].op[0].name, "train_step");
	for (size_t k = 0; k < n; k++)
		free(st[k].op);
	free(st);
	ss_adv_split_free(sp);
}

/* hooks and allocations never take more than what is left: a step of
 * 100 ns with 50 calls at 10 ns is 100 ns of hooks, 0 of operators */
static void test_clamped(void **state)
{
	struct ss_adv_split *sp;
	struct ss_exporter *ex = ss_adv_split_new(&sp);
	struct ss_adv_step *st;
	size_t n;
	char err[128];
	(void)state;

	assert_int_equal(ex->begin(ex->ctx, 0), 0);
	for (int k = 0; k < 50; k++)
		slice(ex, 7, SS_SLICE_FUNCTION, "tiny", 100 + (uint64_t)k, 101 + (uint64_t)k, 1, 3, 1);
	slice(ex, 7, SS_SLICE_STEP, "ProfilerStep#3", 100, 200, 0, 3, 0);
	assert_int_equal(ex->end(ex->ctx, err, sizeof(err)), 0);
	assert_int_equal(ss_adv_split_steps(sp, 10, &st, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(st[0].cat[SS_ADV_HOOKS], 100);
	assert_int_equal(st[0].cat[SS_ADV_OPS], 0);
	assert_int_equal(st[0].nop, 1);
	assert_string_equal(st[0].op[0].name, "tiny");
	assert_int_equal(st[0].op[0].ns, 50);
	free(st[0].op);
	free(st);
	ss_adv_split_free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_clamped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
