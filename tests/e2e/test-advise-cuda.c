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
 * within 2x, and the fused run has no cuda finding above 5%.  A clean
 * run (test-cuda-fake's trainer: one wait per step, copies that do not
 * wait) has no cuda finding above 5%.  All through
 * `stepscope advise --format json` (tests/lib/e2e-advise.c: every step's
 * categories add up to it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e-advise.h"

#define STEPS 16

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
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,-soname,libcudart.so "
			"-o libcudart.so \"$SS_E2E_SRC/tests/e2e/lib-cupti-fake.c\"");
	ss_e2e_build(t, "advise-cuda", "-L. -lcudart -Wl,-rpath,\"$PWD\"");
}

static void test_advise_cuda(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	record(t, "bad", "0");
	cJSON *bad = ss_e2e_advise_show(t, "bad");
	const cJSON *f = ss_e2e_advise_first(t, bad, "planted round trips", "cuda");
	const char *title = ss_e2e_advise_str(f, "title");
	const char *ev = ss_e2e_advise_str(f, "evidence");
	SS_E2E_CHECK(t, strstr(title, "times per step (cudaDeviceSynchronize) in "
				      "optimizer_step") != NULL,
		     "title '%s': expected the waits in optimizer_step", title);
	SS_E2E_CHECK(t, ss_e2e_advise_names(f, "optimizer_step"),
		     "expected optimizer_step among the finding's functions");
	SS_E2E_CHECK(t, strstr(ev, " 161 cudaDeviceSynchronize calls ") &&
			     strstr(ev, " 162 launch calls ") &&
			     strstr(ev, "most launched: sgd_param, 2560 times"),
		     "evidence: expected 161 waits, 162 launches and sgd_param 2560 times: %s", ev);
	double predicted = ss_e2e_advise_num(f, "save_ns");

	/* the advice applied: queue the launches, one synchronize a step */
	record(t, "good", "1");
	cJSON *good = ss_e2e_advise_show(t, "good");
	ss_e2e_advise_saved(t, bad, good, "cuda", "advice applied", predicted);

	/* a run without GPU activity: the check says why it cannot judge */
	SS_E2E_SH_OK(t, "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/libcudart.so\" "
		     "\"$SS_E2E_BUILD/bin/stepscope\" record -o host --set step.function=step "
		     "-- ./s-advise-cuda 4 0");
	cJSON *host = ss_e2e_advise_show(t, "host");
	const cJSON *cuda = ss_e2e_advise_check(host, "cuda");
	SS_E2E_CHECK(t, cuda && cJSON_IsFalse(cJSON_GetObjectItem(cuda, "judged")) &&
			     strstr(ss_e2e_advise_str(cuda, "why"), "no GPU activity") &&
			     ss_e2e_advise_biggest(host, "cuda") == 0,
		     "no gpu.enabled: expected the cuda check to say it cannot judge");
	cJSON_Delete(bad);
	cJSON_Delete(good);
	cJSON_Delete(host);
	ss_e2e_pass(t);
}

static void test_advise_cuda_launch(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	record(t, "bad", "1 200 2000");
	cJSON *bad = ss_e2e_advise_show(t, "bad");
	const cJSON *f = ss_e2e_advise_first(t, bad, "planted launch overhead", "cuda");
	const char *title = ss_e2e_advise_str(f, "title");
	const char *ev = ss_e2e_advise_str(f, "evidence");
	SS_E2E_CHECK(t, strstr(title, "host-side launch overhead: 2002 kernel launches "
				      "per step") &&
			     strstr(title, "(optimizer_step)"),
		     "planted launch overhead: first finding [%s] %s",
		     ss_e2e_advise_str(f, "check"), title);
	SS_E2E_CHECK(t, ss_e2e_advise_names(f, "optimizer_step") &&
			     strstr(ev, "most launched: sgd_param") &&
			     strstr(ev, "made 32000 launches in all"),
		     "expected optimizer_step, sgd_param and 32000 launches: %s", ev);
	double predicted = ss_e2e_advise_num(f, "save_ns");

	/* the advice applied: one fused kernel */
	record(t, "good", "2 200 2000");
	cJSON *good = ss_e2e_advise_show(t, "good");
	ss_e2e_advise_saved(t, bad, good, "cuda", "advice applied", predicted);
	cJSON_Delete(bad);
	cJSON_Delete(good);
	ss_e2e_pass(t);
}

/* test-cuda-fake's trainer: a copy and a memset (which in the stand-in
 * do not wait), 5 kernels of 200 us and one synchronize per step, the GPU
 * busy most of it: the check judges it and finds nothing above 5%. */
static void test_advise_cuda_clean(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	ss_e2e_build(t, "cuda-fake", "-L. -lcudart -Wl,-rpath,\"$PWD\"");
	SS_E2E_SH_OK(t, "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/libcudart.so\" "
		     "\"$SS_E2E_BUILD/bin/stepscope\" record -o clean --set step.function=step "
		     "--set gpu.enabled=true -- ./s-cuda-fake %d", STEPS);
	cJSON *adv = ss_e2e_advise_show(t, "clean");
	const cJSON *cuda = ss_e2e_advise_check(adv, "cuda");
	SS_E2E_CHECK(t, cuda && cJSON_IsTrue(cJSON_GetObjectItem(cuda, "judged")),
		     "s-cuda-fake: expected the cuda check to judge the run");
	double left = ss_e2e_advise_biggest(adv, "cuda"), step = ss_e2e_advise_median(adv);
	SS_E2E_CHECK(t, left <= 0.05 * step, "s-cuda-fake: a cuda finding of %.3f ms, median "
		     "step %.3f ms", left / 1e6, step / 1e6);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_advise_cuda),
		SS_E2E_TEST(test_advise_cuda_launch),
		SS_E2E_TEST(test_advise_cuda_clean),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
