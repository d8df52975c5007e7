/*
 * test-advise-peak.c - end to end: the "peak" check of `stepscope advise`
 * on s-advise-peak, a trainer whose only matmul is the textbook i-j-p loop
 * (a dot product down a column: one dependent add after another, 4 KiB
 * apart).  advise must measure the machine's peak once (kept under the
 * test's XDG_CACHE_HOME, read back the next time), rank matmul first as
 * far below it; with the i-p-j loop (`fast`, the advice applied) the step
 * gets faster by the predicted saving within a factor of 2, and the check
 * finds nothing above 5% of the step.  With the bytes: formula the
 * finding says whether matmul is memory- or compute-bound, as the cached
 * peak's GB/s x FLOPs per byte against its GFLOP/s has it.  Built with -O3
 * -march=native.  A cache file that is not a peak (damaged, edited) is
 * said in one line, measured again and rewritten.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "advise-e2e.h"

static const struct ss_e2e_variant gcc_O3 = { "gcc", "-O3 -march=native" };

static const char config[] = "step:\n"
			     "  function: train_step\n"
			     "record:\n"
			     "  args: [matmul]\n"
			     "  sched: true\n"
			     "flops:\n"
			     "  matmul: \"2*m*k*n\"\n"
			     "bytes:\n"
			     "  matmul: \"4*(m*k + k*n + m*n)\"\n";

/* The peak the first advise kept in the test's cache: 0, or -1 */
static int read_peak(struct ss_e2e *t, double *gflops, double *gbs)
{
	SS_E2E_SH_OK(t, "cat cache/stepscope/peak-*-$(getconf _NPROCESSORS_ONLN).txt");
	return sscanf(t->out, "gflops %lf gbs %lf", gflops, gbs) == 2 ? 0 : -1;
}

static void test_below_peak(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	cJSON *bad;
	double before = adv_planted(t, "peak.yaml", config, "naive", "advise-peak", "12", &bad);
	const cJSON *f = adv_top(t, bad, "peak", "matmul");
	const char *ev = cJSON_GetStringValue(adv_get(f, "evidence"));
	SS_E2E_CHECK(t, ev && strstr(ev, "measured now, kept in") && strstr(ev, "/cache/stepscope/peak-"),
		     "the first run did not measure the peak into the cache: %s", ev ? ev : "");
	double predicted = adv_num(t, f, "save_ns");
	double gflops, gbs, flops = 2.0 * 8 * 1024 * 1024,
			    bytes = 4.0 * (8 * 1024 + 1024 * 1024 + 8 * 1024);
	SS_E2E_CHECK(t, !read_peak(t, &gflops, &gbs), "the peak cache is not readable:\n%s", t->out);
	int mem = flops / bytes * gbs < gflops;
	SS_E2E_CHECK(t, strstr(ev, mem ? "1 of its 1 shapes are memory-bound, 0 compute-bound"
				       : "0 of its 1 shapes are memory-bound, 1 compute-bound"),
		     "peak %.3g GFLOP/s, %.3g GB/s: matmul is %s-bound, the evidence says: %s", gflops,
		     gbs, mem ? "memory" : "compute", ev);

	double after = adv_fixed(t, "peak.yaml", "fast", "advise-peak", "12 fast", "peak");
	cJSON_Delete(bad);
	/* the second time the peak comes from the cache */
	bad = adv_json(t, "naive");
	f = adv_top(t, bad, "peak", "matmul");
	ev = cJSON_GetStringValue(adv_get(f, "evidence"));
	SS_E2E_CHECK(t, ev && strstr(ev, "cached in"), "the peak was not read back: %s",
		     ev ? ev : "");
	/* a cache file that is not a peak is measured again and rewritten */
	cJSON_Delete(bad);
	SS_E2E_SH_OK(t, "for f in cache/stepscope/peak-*.txt; do echo 'gflops lots' > \"$f\"; done");
	bad = adv_json(t, "naive");
	SS_E2E_CHECK(t, strstr(t->err, "not a peak this version wrote; measured again") &&
				!strchr(strchr(t->err, '\n') + 1, '\n'),
		     "a damaged peak cache was not said in one line:\n%s", t->err);
	f = adv_top(t, bad, "peak", "matmul");
	ev = cJSON_GetStringValue(adv_get(f, "evidence"));
	SS_E2E_CHECK(t, ev && strstr(ev, "measured now"), "the damaged peak was used: %s",
		     ev ? ev : "");
	SS_E2E_CHECK(t, !read_peak(t, &gflops, &gbs) && gflops > 0 && gbs > 0,
		     "the damaged cache was not rewritten:\n%s", t->out);
	adv_within2(t, predicted, before, after);
	cJSON_Delete(bad);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_below_peak, gcc_O3, "gcc-O3-native"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
