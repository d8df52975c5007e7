/*
 * test-args-report.c - GFLOP/s of `report --group-by args` and of the
 * report's FLOPs columns (analyze/args-report.c): over the calls' wall
 * time when the run has no switch records, over their wall time less the
 * time they were preempted when it has (record.sched), and the output
 * says which.  Time a call was blocked (waiting for its worker threads)
 * stays in.
 *
 * The exporter is fed by hand, as the walk would: a process, its off-CPU
 * intervals (or none), then the slices.  matmul(n=4) is called once on
 * thread 10 from 1 s to 3 s with 4e9 FLOPs: 2 s of wall time, so 2.000
 * GFLOP/s over wall time; thread 10 is preempted from 1.5 s to 2 s and
 * blocked from 2 s to 2.5 s: 1.5 s count.  A second call on thread 11
 * (no intervals of its own) of 1e9 FLOPs over 1 s counts its whole
 * second: 5e9 FLOPs over 2.5 s, 2.000 GFLOP/s (1.667 over wall time; 2.500
 * if the blocked half second were left out too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "args-report.h"
#include "export.h"
#include "names/args.h"
#include "offcpu.h"
#include "slices.h"

#define S 1000000000ull

static const struct ss_argv argv4[] = { { "n", SS_ARGV_INT, 4, 0, 0 } };

static struct ss_slice call(uint64_t begin, uint64_t end, double flops)
{
	struct ss_slice s;

	memset(&s, 0, sizeof(s));
	s.cat = SS_SLICE_FUNCTION;
	s.name = "matmul";
	s.begin_ns = begin;
	s.end_ns = end;
	s.argv = argv4;
	s.nargv = 1;
	s.has_flops = 1;
	s.flops = flops;
	return s;
}

/* Feed the two calls; with off, thread 10's off-CPU second first. */
static struct ss_args_report *feed(int off)
{
	static struct ss_offcpu_iv iv[2] = { { 3 * S / 2, 2 * S, SS_SWITCH_PREEMPTED },
					     { 2 * S, 5 * S / 2, 0 } };
	static uint64_t before[3] = { 0, S / 2, S };
	static struct ss_offcpu_thread th[1] = { { 10, iv, 2, before, 0 } };
	static struct ss_offcpu d = { th, 1, 0, 2 };
	struct ss_args_report *r = NULL;
	struct ss_exporter *ex = ss_args_report_new(&r);
	struct ss_slice a = call(S, 3 * S, 4e9), b = call(4 * S, 5 * S, 1e9);

	assert_non_null(ex);
	assert_non_null(ex->offcpu); /* the walk feeds switches only to who takes them */
	ex->process(ex->ctx, 7, "prog");
	if (off)
		ex->offcpu(ex->ctx, 7, &d);
	ex->slice(ex->ctx, 7, 10, &a);
	ex->slice(ex->ctx, 7, 11, &b);
	return r;
}

static char *print(struct ss_args_report *r, const char *format)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ss_args_report_print(f, r, format, 0);
	fclose(f);
	return buf;
}

static void expect_in(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("expected '%s' in:\n%s", want, text);
}

static void test_wall(void **state)
{
	(void)state;
	struct ss_args_report *r = feed(0);
	char flops[32], gf[32];
	char *t = print(r, "table");

	/* 5e9 FLOPs over 3 s of calls */
	expect_in(t, "\nmatmul                    n=4               2       3.000s ");
	expect_in(t, "    5e+09      1.667\n");
	expect_in(t, "GFLOP/s = FLOPs / Total (wall time) of the calls that have them");
	assert_null(strstr(t, "on-CPU"));
	free(t);
	t = print(r, "json");
	expect_in(t, "\"gflops_per_s\":1.666667");
	expect_in(t, "\"gflops_time\":\"wall\"");
	free(t);
	ss_args_report_cells(r, "matmul", flops, gf, sizeof(gf));
	assert_string_equal(gf, "1.667");
	ss_args_report_free(r);
}

static void test_less_preempted(void **state)
{
	(void)state;
	struct ss_args_report *r = feed(1);
	char flops[32], gf[32];
	char *t = print(r, "table");

	/* 5e9 FLOPs over 2.5 s not preempted: thread 10's 1.5 s, thread 11's 1 s */
	expect_in(t, "    5e+09      2.000\n");
	expect_in(t, "GFLOP/s = FLOPs / Total of the calls that have them less the time they were "
		     "preempted (record.sched: runnable but switched out for other work; time they "
		     "waited, for their worker threads or a device, stays in)");
	free(t);
	t = print(r, "json");
	expect_in(t, "\"gflops_per_s\":2.000000");
	expect_in(t, "\"gflops_time\":\"wall_less_preempted\"");
	free(t);
	t = print(r, "csv");
	expect_in(t, "\nmatmul,n=4,2,3000000000,1500000000,1000000000,2000000000,5000000000,"
		     "2.000000,0\n");
	free(t);
	ss_args_report_cells(r, "matmul", flops, gf, sizeof(gf));
	assert_string_equal(gf, "2.000");
	ss_args_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wall),
		cmocka_unit_test(test_less_preempted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
