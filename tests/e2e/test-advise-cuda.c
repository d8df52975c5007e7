/*
 * test-advise-cuda.c - the "cuda" check of `stepscope advise` end to end,
 * without a GPU: tests/e2e/s-advise-cuda.c against the stand-in CUDA
 * runtime and CUPTI of lib-cupti-fake.c (test-cuda-fake.c builds it the
 * same way).  Each step launches two 1 ms gemms, then optimizer_step
 * launches 160 kernels of 5 us and waits for the GPU after each: the GPU
 * busy 2.8 ms of a step of 20-40 ms (each wait a 50 us nap or more).
 *
 * Checks: the first finding of advise is the cuda check's, naming
 * optimizer_step and cudaDeviceSynchronize; the advice applied (the
 * launches queued, one synchronize per step) makes the median step faster
 * by the predicted saving within a factor of 2 (medians of 16 steps; the
 * planted waits are 90% of the step); the batched run has no cuda finding
 * above 5% of its step; a run without gpu.enabled is not judged.
 * Launch overhead: 2000 kernels of 200 ns queued per step (each launch
 * costs the host more than that): the first finding is the launch
 * overhead in optimizer_step, one fused kernel saves what it predicted
 * within 2x, and the fused run has no cuda finding above 5%.
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
#include "e2e.h"

#define STEPS 16

/* a strong reference: the check's object is taken from the archive */
extern const struct ss_adv_check ss_adv_check_cuda;

/* Record `s-advise-cuda STEPS args` into run. */
static void record(struct ss_e2e *t, const char *run, const char *args)
{
	SS_E2E_SH_OK(t, "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/libcudart.so\" "
		     "\"$SS_E2E_BUILD/bin/stepscope\" record -o %s --set step.function=step "
		     "--set gpu.enabled=true -- ./s-advise-cuda %d %s", run, STEPS, args);
}

/* The stand-in CUDA runtime and the fixture, built. */
static void build(struct ss_e2e *t)
{
	SS_E2E_CHECK(t, ss_adv_check_cuda.judge != NULL, "the cuda check is not built in");
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,-soname,libcudart.so "
			"-o libcudart.so \"$SS_E2E_SRC/tests/e2e/lib-cupti-fake.c\"");
	ss_e2e_build(t, "advise-cuda", "-L. -lcudart -Wl,-rpath,\"$PWD\"");
}


/* advise on run, in this process: 0 or fails the test */
static void advise(struct ss_e2e *t, const char *run, struct ss_adv_result *r)
{
	char dir[4200], err[2048] = "";
	snprintf(dir, sizeof(dir), "%s/%s", t->dir, run);
	int rc = ss_adv_build(dir, NULL, 1, r, err, sizeof(err));
	SS_E2E_CHECK(t, rc == 0, "advise %s: status %d: %s", run, rc, err);
	for (size_t i = 0; i < r->found.n; i++)
		fprintf(stderr, "  %s: [%s] saves %.3f ms: %s\n", run, r->found.v[i].check,
			r->found.v[i].save_ns / 1e6, r->found.v[i].title);
}

/* The largest saving of check's findings in r (0: none). */
static double biggest(const struct ss_adv_result *r, const char *check)
{
	double best = 0;
	for (size_t i = 0; i < r->found.n; i++)
		if (!strcmp(r->found.v[i].check, check) && r->found.v[i].save_ns > best)
			best = r->found.v[i].save_ns;
	return best;
}

/* The advice applied: good's median step is faster than bad's by the
 * predicted saving within 2x, and good has no cuda finding above 5%. */
static void check_saved(struct ss_e2e *t, const struct ss_adv_result *bad,
			const struct ss_adv_result *good, double predicted)
{
	double left = biggest(good, "cuda");
	SS_E2E_CHECK(t, left <= 0.05 * (double)good->run.median_step_ns,
		     "advice applied: a cuda finding of %.3f ms, median step %.3f ms", left / 1e6,
		     (double)good->run.median_step_ns / 1e6);
	double measured = (double)bad->run.median_step_ns - (double)good->run.median_step_ns;
	fprintf(stderr, "  median step %.3f ms -> %.3f ms: saved %.3f ms, predicted %.3f ms\n",
		(double)bad->run.median_step_ns / 1e6, (double)good->run.median_step_ns / 1e6,
		measured / 1e6, predicted / 1e6);
	SS_E2E_CHECK(t, measured > 0 && predicted <= 2 * measured && measured <= 2 * predicted,
		     "saved %.3f ms, predicted %.3f ms: not within a factor of 2", measured / 1e6,
		     predicted / 1e6);
}

static void test_advise_cuda(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_adv_result bad, good;

	build(t);
	record(t, "bad", "0");
	advise(t, "bad", &bad);
	SS_E2E_CHECK(t, bad.found.n > 0, "planted round trips: advise found nothing");
	const struct ss_adv_finding *f = &bad.found.v[0];
	SS_E2E_CHECK(t, !strcmp(f->check, "cuda"), "planted round trips: first finding is "
		     "%s's (%s), expected cuda's", f->check, f->title);
	SS_E2E_CHECK(t, strstr(f->title, "times per step (cudaDeviceSynchronize) in "
				 "optimizer_step") != NULL,
		     "title '%s': expected the waits in optimizer_step", f->title);
	SS_E2E_CHECK(t, f->nfuncs == 1 && !strcmp(f->funcs[0], "optimizer_step"),
		     "expected optimizer_step named, got '%s'", f->nfuncs ? f->funcs[0] : "");
	SS_E2E_CHECK(t, strstr(f->evidence, " 161 cudaDeviceSynchronize calls ") &&
			     strstr(f->evidence, " 162 launch calls ") &&
			     strstr(f->evidence, "most launched: sgd_param, 2560 times"),
		     "evidence: expected 161 waits, 162 launches and sgd_param 2560 times: %s",
		     f->evidence);
	double predicted = f->save_ns;

	/* the advice applied: queue the launches, one synchronize a step */
	record(t, "good", "1");
	advise(t, "good", &good);
	check_saved(t, &bad, &good, predicted);

	/* a run without GPU activity: the check says why it cannot judge */
	SS_E2E_SH_OK(t, "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/libcudart.so\" "
		     "\"$SS_E2E_BUILD/bin/stepscope\" record -o host --set step.function=step "
		     "-- ./s-advise-cuda 4 0");
	struct ss_adv_result host;
	advise(t, "host", &host);
	size_t k = 0;
	while (k < host.nchecks && ss_adv_checks[k] != &ss_adv_check_cuda)
		k++;
	SS_E2E_CHECK(t, k < host.nchecks && host.status[k] == 1 &&
			     strstr(host.why[k], "no GPU activity") && biggest(&host, "cuda") == 0,
		     "no gpu.enabled: expected the cuda check to say it cannot judge");
	ss_adv_release(&bad);
	ss_adv_release(&good);
	ss_adv_release(&host);
	ss_e2e_pass(t);
}

static void test_advise_cuda_launch(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_adv_result bad, good;

	build(t);
	record(t, "bad", "1 200 2000");
	advise(t, "bad", &bad);
	SS_E2E_CHECK(t, bad.found.n > 0, "planted launch overhead: advise found nothing");
	const struct ss_adv_finding *f = &bad.found.v[0];
	SS_E2E_CHECK(t, !strcmp(f->check, "cuda") &&
			     strstr(f->title, "host-side launch overhead: 2002 kernel launches "
						"per step") &&
			     strstr(f->title, "(optimizer_step)"),
		     "planted launch overhead: first finding [%s] %s", f->check, f->title);
	SS_E2E_CHECK(t, f->nfuncs == 1 && !strcmp(f->funcs[0], "optimizer_step") &&
			     strstr(f->evidence, "most launched: sgd_param") &&
			     strstr(f->evidence, "made 32000 launches in all"),
		     "expected optimizer_step, sgd_param and 32000 launches: %s", f->evidence);
	double predicted = f->save_ns;

	/* the advice applied: one fused kernel */
	record(t, "good", "2 200 2000");
	advise(t, "good", &good);
	check_saved(t, &bad, &good, predicted);
	ss_adv_release(&bad);
	ss_adv_release(&good);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_advise_cuda),
		SS_E2E_TEST(test_advise_cuda_launch),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
