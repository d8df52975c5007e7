/*
 * test-advise.c - end to end: `stepscope advise` splits every recorded
 * step into categories that add up to it exactly (issue 47), on runs of
 * several kinds, and says so in text, CSV and JSON of a fixed shape;
 * input it cannot use is refused with one line and status 2.
 *
 *   test_plain: s-filter (3 calls + NTINY tiny calls a step, spinning
 *     on the clock): each step's hooks category is exactly its recorded
 *     calls x the calibration's pair_ns (the overhead line's), its
 *     operators are op_long and helper_caller (the step function's
 *     callees), off the CPU is said to be unknown (no record.sched);
 *     CSV has one row per step, its header fixed, its cells adding up;
 *     --steps prints a row per step; -o writes the file.
 *   test_omp: s-trainer-omp, 4 threads, record.sched: the team waits and
 *     the off-CPU time have their categories, which add up.
 *   test_alloc: s-alloc with memory.allocations: allocation calls have
 *     time in every recorded step, and the sums hold.
 *   test_gpu: the CUDA stand-in (lib-cupti-fake): the GPU wait and CUDA
 *     API categories have time in every recorded step, and the sums hold.
 *   test_bad_input: no such directory, no traces, a cut trace, a run
 *     without steps, a run whose window never opened, an unknown format, a second directory: one line on
 *     stderr naming what is wrong, exit 2, nothing on stdout.
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

#include "e2e.h"
#include "e2e-advise.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define INC "-fopenmp -I\"$SS_E2E_SRC/tests/e2e\""
#define NTINY 1000

static const char *const keys[] = { "ops", "omp_wait", "preempted", "blocked",
				    "alloc", "hooks", "gpu_wait", "gpu_api" };
#define NKEYS 8

static double cat(const cJSON *step, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(step, "ns"), key));
}

/* the json's fixed shape: every category in order, steps with them */
static void check_shape(struct ss_e2e *t, const cJSON *adv, int nsteps)
{
	const cJSON *c, *s, *cats = cJSON_GetObjectItem(adv, "categories");
	int i = 0;
	cJSON_ArrayForEach(c, cats) {
		SS_E2E_CHECK(t, i < NKEYS && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "key")),
						      keys[i]),
			     "category %d: expected key %s", i, i < NKEYS ? keys[i] : "none");
		i++;
	}
	SS_E2E_CHECK(t, i == NKEYS, "expected %d categories, got %d", NKEYS, i);
	s = cJSON_GetObjectItem(adv, "per_step");
	SS_E2E_CHECK(t, cJSON_GetArraySize(s) == nsteps, "expected %d steps, got %d", nsteps,
		     cJSON_GetArraySize(s));
	SS_E2E_CHECK(t, cJSON_GetNumberValue(cJSON_GetObjectItem(adv, "steps")) == nsteps,
		     "\"steps\": expected %d", nsteps);
	cJSON_ArrayForEach(c, s) {
		const cJSON *ns = cJSON_GetObjectItem(c, "ns"), *k;
		i = 0;
		cJSON_ArrayForEach(k, ns) {
			SS_E2E_CHECK(t, i < NKEYS && !strcmp(k->string, keys[i]),
				     "a step's category %d is %s, expected %s", i, k->string,
				     i < NKEYS ? keys[i] : "none");
			i++;
		}
		SS_E2E_CHECK(t, i == NKEYS, "a step has %d categories", i);
	}
	SS_E2E_CHECK(t, cJSON_IsArray(cJSON_GetObjectItem(adv, "findings")) &&
				cJSON_IsArray(cJSON_GetObjectItem(adv, "checks")),
		     "json: no findings or checks array");
}

static void test_plain(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	unsigned long long calls, pair;
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, "printf 'step: {function: train_step}\\nwindow: {start_step: 1, "
			"end_step: 7}\\n' > c.yaml");
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-filter 8 1 %d", NTINY);
	SS_E2E_SH_OK(t, SS " report -q run");
	const char *l = strstr(t->out, "stepscope overhead: ");
	SS_E2E_CHECK(t, l && sscanf(l, "stepscope overhead: %*f%% of recorded time (%llu calls x %llu ns",
				    &calls, &pair) == 2,
		     "no overhead line with the calibration:\n%s", t->out);
	cJSON *adv = ss_e2e_advise(t, "run");
	check_shape(t, adv, 6);
	const cJSON *s;
	int n = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(adv, "per_step")) {
		SS_E2E_CHECK(t, cat(s, "hooks") == (double)(NTINY + 3) * (double)pair,
			     "step %d: hooks %.0f ns, expected %d calls x %llu ns", n, cat(s, "hooks"),
			     NTINY + 3, pair);
		for (int k = 1; k < NKEYS; k++)
			SS_E2E_CHECK(t, k == 5 || cat(s, keys[k]) == 0,
				     "step %d: %s %.0f ns in a run without it", n, keys[k],
				     cat(s, keys[k]));
		const cJSON *ops = cJSON_GetObjectItem(s, "ops");
		SS_E2E_CHECK(t, cJSON_GetArraySize(ops) == 2, "step %d: expected 2 operators", n);
		const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ops, 0), "name"));
		const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ops, 1), "name"));
		SS_E2E_CHECK(t, a && b && ((!strcmp(a, "op_long") && !strcmp(b, "helper_caller")) ||
					   (!strcmp(b, "op_long") && !strcmp(a, "helper_caller"))),
			     "step %d: expected operators op_long and helper_caller, got %s, %s", n,
			     a ? a : "?", b ? b : "?");
		SS_E2E_CHECK(t, cJSON_IsFalse(cJSON_GetObjectItem(s, "off_cpu_known")),
			     "step %d: off-CPU known without record.sched", n);
		n++;
	}
	/* csv: the per-step table */
	SS_E2E_SH_OK(t, SS " advise -q --format csv run");
	static const char head[] = "step,pid,tid,begin_ns,step_ns,ops_ns,omp_wait_ns,preempted_ns,"
				   "blocked_ns,alloc_ns,hooks_ns,gpu_wait_ns,gpu_api_ns,off_cpu_known,"
				   "top_op,top_op_ns\n";
	SS_E2E_CHECK(t, !strncmp(t->out, head, sizeof(head) - 1),
		     "csv header:\n%s", t->out);
	SS_E2E_EXPECT_LINES(t, "advise csv", t->out, 7);
	n = 0;
	for (const char *p = strchr(t->out, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
		unsigned long long v[13];
		SS_E2E_CHECK(t, sscanf(p, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu",
				       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
				       &v[9], &v[10], &v[11], &v[12]) == 13,
			     "csv row %d unreadable", n);
		unsigned long long sum = 0;
		for (int k = 5; k < 13; k++)
			sum += v[k];
		SS_E2E_CHECK(t, v[0] == (unsigned long long)(n + 1) && sum == v[4],
			     "csv row %d: step %llu, categories %llu ns, step %llu ns", n, v[0], sum,
			     v[4]);
		n++;
	}
	/* text: the table, per-step rows with --steps, -o */
	SS_E2E_SH_OK(t, SS " advise -q --steps -o adv.txt run");
	SS_E2E_CHECK(t, !t->out[0], "-o: stdout should be empty:\n%s", t->out);
	SS_E2E_SH_OK(t, "cat adv.txt");
	SS_E2E_CHECK(t, strstr(t->out, "stepscope advise: run: 6 recorded steps on 1 thread, median step ") &&
				strstr(t->out, "\n  operators  ") && strstr(t->out, "\n  stepscope hooks  ") &&
				strstr(t->out, "(off the CPU: not known, the run has no record.sched"),
		     "text: expected the header, operators and hooks rows:\n%s", t->out);
	/* --steps: a head line and one row per step, steps 1 .. 6 */
	const char *ps = strstr(t->out, "\nPer step\n");
	SS_E2E_CHECK(t, ps, "--steps: no per-step table:\n%s", t->out);
	ps = strchr(ps + 10, '\n') + 1;
	for (int k = 1; k <= 6; k++) {
		unsigned long step = 0;
		SS_E2E_CHECK(t, sscanf(ps, " %lu ", &step) == 1 && step == (unsigned long)k,
			     "--steps: row %d should be step %d:\n%s", k, k, t->out);
		ps = strchr(ps, '\n') + 1;
	}
	SS_E2E_CHECK(t, *ps == '\n', "--steps: more than 6 rows:\n%s", t->out);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

static void test_omp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp -o p p.c",
		    "gcc's OpenMP (libgomp)", "gcc");
	ss_e2e_build(t, "trainer-omp", INC);
	SS_E2E_SH_OK(t, "OMP_NUM_THREADS=4 " SS " record -o run --set step.function=train_step "
			"--set record.sched=true --set schedule.wait=1 --set schedule.active=6 "
			"-- ./s-trainer-omp 8");
	cJSON *adv = ss_e2e_advise(t, "run");
	check_shape(t, adv, 6);
	double omp = 0, off = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(adv, "per_step")) {
		omp += cat(s, "omp_wait");
		off += cat(s, "preempted") + cat(s, "blocked");
		SS_E2E_CHECK(t, cJSON_IsTrue(cJSON_GetObjectItem(s, "off_cpu_known")),
			     "record.sched: off-CPU should be known");
	}
	SS_E2E_CHECK(t, omp > 0, "4 threads: no time waiting for the team in 6 steps");
	SS_E2E_CHECK(t, cJSON_IsTrue(cJSON_GetObjectItem(adv, "off_cpu_known")), "off_cpu_known");
	print_message("omp: team wait %.0f ns, off the CPU %.0f ns over 6 steps\n", omp, off);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

static void test_alloc(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "alloc", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set window.start_step=2 "
			"--set window.end_step=6 --set memory.allocations=true -- ./s-alloc 8 2 6");
	cJSON *adv = ss_e2e_advise(t, "run");
	check_shape(t, adv, 4);
	const cJSON *s;
	int n = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(adv, "per_step")) {
		SS_E2E_CHECK(t, cat(s, "alloc") > 0, "step %d: no time in allocation calls", n);
		n++;
	}
	SS_E2E_SH_OK(t, SS " advise -q run");
	SS_E2E_CHECK(t, strstr(t->out, "\n  allocation calls  "), "text: no allocation calls row:\n%s",
		     t->out);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

/* the CUDA stand-in (lib-cupti-fake as libcudart.so, test-cuda-fake):
 * the host waits in cudaDeviceSynchronize and cudaMemcpy (GPU wait) and
 * launches (CUDA API) in every recorded step, and the sums hold */
static void test_gpu(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wl,-soname,libcudart.so -o libcudart.so "
			"\"$SS_E2E_SRC/tests/e2e/lib-cupti-fake.c\"");
	ss_e2e_build(t, "cuda-fake", "-L. -lcudart -Wl,-rpath,\"$PWD\"");
	SS_E2E_SH_OK(t, "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/libcudart.so\" " SS " record "
			"--set step.function=step --set window.start_step=1 --set window.end_step=4 "
			"--set gpu.enabled=true -o run -- ./s-cuda-fake 5");
	cJSON *adv = ss_e2e_advise(t, "run");
	check_shape(t, adv, 3);
	SS_E2E_CHECK(t, cJSON_IsTrue(cJSON_GetObjectItem(adv, "gpu")), "json: gpu should be true");
	const cJSON *s;
	int n = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(adv, "per_step")) {
		SS_E2E_CHECK(t, cat(s, "gpu_wait") > 0 && cat(s, "gpu_api") > 0,
			     "step %d: GPU wait %.0f ns, CUDA API %.0f ns: expected both", n,
			     cat(s, "gpu_wait"), cat(s, "gpu_api"));
		n++;
	}
	SS_E2E_SH_OK(t, SS " advise -q run");
	SS_E2E_CHECK(t, strstr(t->out, "\n  GPU wait  ") && strstr(t->out, "\n  CUDA API  "),
		     "text: expected the GPU wait and CUDA API rows:\n%s", t->out);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

/* one line on stderr holding `what`, nothing on stdout, status 2 */
static void refused(struct ss_e2e *t, int st, const char *what)
{
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, what), "stderr should say '%s':\n%s", what, t->err);
	SS_E2E_CHECK(t, !t->out[0], "stdout should be empty:\n%s", t->out);
}

static void test_bad_input(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	refused(t, ss_e2e_sh(t, SS " advise nodir"), "stepscope: advise: nodir: no such directory");
	SS_E2E_SH_OK(t, "mkdir empty");
	refused(t, ss_e2e_sh(t, SS " advise empty"), "empty: no stepscope traces here");
	ss_e2e_build(t, "filter", NULL);
	SS_E2E_SH_OK(t, SS " record -o nosteps -- ./s-filter 3 1 10");
	refused(t, ss_e2e_sh(t, SS " advise nosteps"), "nosteps: no recorded step");
	SS_E2E_SH_OK(t, SS " record -o nowin --set step.function=train_step --set window.start_step=100 "
			"--set window.end_step=101 -- ./s-filter 3 1 10");
	refused(t, ss_e2e_sh(t, SS " advise nowin"), "nowin: nothing was recorded: the program ran 3 step(s)");
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step -- ./s-filter 3 1 10");
	SS_E2E_SH_OK(t, "mkdir cut && head -c 3000 run/*.sstrace > cut/s.sstrace");
	refused(t, ss_e2e_sh(t, SS " advise cut"), "cut/s.sstrace: truncated header");
	refused(t, ss_e2e_sh(t, SS " advise --format xml run"), "unknown format 'xml'");
	refused(t, ss_e2e_sh(t, SS " advise run empty"), "advise");
	refused(t, ss_e2e_sh(t, SS " advise --bogus run"), "--bogus");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_plain),
		SS_E2E__ONE(test_plain, ss_e2e_clang_O2, "clang-O2"),
		SS_E2E_TEST(test_omp),
		SS_E2E_TEST(test_alloc),
		SS_E2E_TEST(test_gpu),
		SS_E2E_TEST(test_bad_input),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
