/*
 * test-cuda-fake.c - end to end: GPU kernels, copies and CUDA API calls
 * without a GPU.  The test builds lib-cupti-fake.c as libcudart.so (a
 * stand-in CUDA runtime and CUPTI in one library, no stepscope), links
 * s-cuda-fake against it, names it in STEPSCOPE_CUPTI_LIBRARY and records
 * 5 steps with gpu.enabled and a window of steps 1 to 3.
 *
 * Checks, in trace.json: exactly the recorded steps' kernels (per step:
 * gemm_fwd 1, relu_fwd 1, gemm_bwd 2, sgd_update 1), one 4096-byte
 * "Memcpy HtoD" and one 1024-byte "Memset", each inside its step; a
 * process "GPU 0" with threads "stream 7" and "stream 9" holding them
 * (sgd_update on 9); one CUDA API slice per call on the host thread; and
 * a flow arrow per kernel/copy whose start lies in its cudaLaunchKernel /
 * cudaMemcpy / cudaMemset slice, inside the host function that launched it
 * (forward, backward, load_batch, zero_grad).  Without gpu.enabled nothing
 * GPU is written; a STEPSCOPE_CUPTI_LIBRARY that is not there gives exactly
 * one "gpu: cannot load" line and host functions only.
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

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define SETS "--set step.function=step --set window.start_step=1 " \
	     "--set window.end_step=4"
#define FAKE_ENV "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/libcudart.so\""

enum { STEPS = 5, RECORDED = 3 };

static cJSON *events(struct ss_e2e *t, const char *run)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "%s/trace.json", run);
	return ss_e2e_load_json(t, rel);
}

static const char *str(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static double arg(const cJSON *e, const char *k)
{
	return num(cJSON_GetObjectItemCaseSensitive(e, "args"), k);
}

static int is_gpu_cat(const char *cat)
{
	return !strcmp(cat, "kernel") || !strcmp(cat, "memcpy") || !strcmp(cat, "memset");
}

/* The innermost host function slice (no cat) of (pid, tid) around ts. */
static const cJSON *host_fn_at(const cJSON *evs, double pid, double tid, double ts)
{
	const cJSON *e, *best = NULL;
	cJSON_ArrayForEach(e, evs) {
		if (strcmp(str(e, "ph"), "X") || *str(e, "cat") || num(e, "pid") != pid ||
		    num(e, "tid") != tid)
			continue;
		double s = num(e, "ts"), d = num(e, "dur");
		if (s <= ts && ts <= s + d && (!best || num(best, "dur") > d))
			best = e;
	}
	return best;
}

/* The X event of category cat on (pid, tid) around ts. */
static const cJSON *x_at(const cJSON *evs, const char *cat, double pid, double tid,
			 double ts)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, evs)
		if (!strcmp(str(e, "ph"), "X") && !strcmp(str(e, "cat"), cat) &&
		    num(e, "pid") == pid && num(e, "tid") == tid &&
		    num(e, "ts") <= ts && ts <= num(e, "ts") + num(e, "dur"))
			return e;
	return NULL;
}

static const cJSON *flow(const cJSON *evs, const char *ph, double id)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, evs)
		if (!strcmp(str(e, "ph"), ph) && num(e, "id") == id)
			return e;
	return NULL;
}

static const char *launcher(const char *name)
{
	if (!strcmp(name, "gemm_fwd") || !strcmp(name, "relu_fwd"))
		return "forward";
	if (!strcmp(name, "Memcpy HtoD"))
		return "load_batch";
	if (!strcmp(name, "Memset"))
		return "zero_grad";
	return "backward";
}

static void check_trace(struct ss_e2e *t, cJSON *root)
{
	const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	const cJSON *e;
	double steps[RECORDED][2];
	int nsteps = 0;
	double host_pid = -1, gpu_pid = -1;

	cJSON_ArrayForEach(e, evs) {
		if (!strcmp(str(e, "cat"), "step")) {
			SS_E2E_CHECK(t, nsteps < RECORDED, "more than %d step slices", RECORDED);
			steps[nsteps][0] = num(e, "ts");
			steps[nsteps][1] = num(e, "ts") + num(e, "dur");
			host_pid = num(e, "pid");
			nsteps++;
		}
		if (!strcmp(str(e, "ph"), "M") && !strcmp(str(e, "name"), "process_name") &&
		    !strcmp(str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name"), "GPU 0")) {
			SS_E2E_CHECK(t, gpu_pid < 0, "two processes named GPU 0");
			gpu_pid = num(e, "pid");
		}
	}
	SS_E2E_CHECK(t, nsteps == RECORDED, "expected %d step slices, got %d", RECORDED, nsteps);
	SS_E2E_CHECK(t, gpu_pid >= 0 && gpu_pid != host_pid, "no process named \"GPU 0\"");
	int streams = 0;
	cJSON_ArrayForEach(e, evs) {
		if (!strcmp(str(e, "ph"), "M") && !strcmp(str(e, "name"), "thread_name") &&
		    num(e, "pid") == gpu_pid) {
			char want[32];
			snprintf(want, sizeof(want), "stream %d", (int)num(e, "tid"));
			SS_E2E_CHECK(t, !strcmp(str(cJSON_GetObjectItemCaseSensitive(e, "args"),
						    "name"), want) &&
					     (num(e, "tid") == 7 || num(e, "tid") == 9),
				     "GPU 0: unexpected track %s", want);
			streams++;
		}
	}
	SS_E2E_CHECK(t, streams == 2, "GPU 0: expected tracks stream 7 and stream 9, got %d",
		     streams);

	static const char *const names[] = { "gemm_fwd", "relu_fwd", "gemm_bwd",
					     "sgd_update", "Memcpy HtoD", "Memset" };
	static const int per_step[] = { 1, 1, 2, 1, 1, 1 };
	int count[RECORDED][6] = { { 0 } };
	int api = 0, flows = 0;
	cJSON_ArrayForEach(e, evs) {
		const char *cat = str(e, "cat");
		if (!strcmp(cat, "cuda_runtime")) {
			SS_E2E_CHECK(t, num(e, "pid") == host_pid && num(e, "tid") == host_pid,
				     "API slice %s not on the main thread", str(e, "name"));
			api++;
		}
		if (!is_gpu_cat(cat))
			continue;
		const char *name = str(e, "name");
		int k = 0;
		while (k < 6 && strcmp(names[k], name))
			k++;
		SS_E2E_CHECK(t, k < 6, "unexpected GPU slice %s", name);
		SS_E2E_CHECK(t, num(e, "pid") == gpu_pid &&
				     num(e, "tid") == (k == 3 ? 9 : 7),
			     "%s: on pid %.0f tid %.0f", name, num(e, "pid"), num(e, "tid"));
		if (k == 4 || k == 5)
			SS_E2E_CHECK(t, arg(e, "bytes") == (k == 4 ? 4096 : 1024),
				     "%s: bytes %.0f", name, arg(e, "bytes"));
		double ts = num(e, "ts");
		int s = 0;
		while (s < RECORDED && !(steps[s][0] <= ts && ts + num(e, "dur") <= steps[s][1]))
			s++;
		SS_E2E_CHECK(t, s < RECORDED, "%s at %.3f us is in no recorded step", name, ts);
		count[s][k]++;
		/* the flow arrow back to the launch */
		const cJSON *f = NULL, *st = NULL;
		const cJSON *fe;
		cJSON_ArrayForEach(fe, evs)
			if (!strcmp(str(fe, "ph"), "f") && num(fe, "pid") == gpu_pid &&
			    num(fe, "ts") == ts && num(fe, "tid") == num(e, "tid"))
				f = fe;
		SS_E2E_CHECK(t, f != NULL, "%s at %.3f: no flow end", name, ts);
		st = flow(evs, "s", num(f, "id"));
		SS_E2E_CHECK(t, st != NULL && num(st, "id") == num(f, "bind_id"),
			     "%s: flow %.0f has no start", name, num(f, "id"));
		const char *want_api = k < 4 ? "cudaLaunchKernel"
					     : k == 4 ? "cudaMemcpy" : "cudaMemset";
		const cJSON *a = x_at(evs, "cuda_runtime", host_pid, num(st, "tid"), num(st, "ts"));
		SS_E2E_CHECK(t, a && !strcmp(str(a, "name"), want_api) &&
				     arg(a, "correlation") == arg(e, "correlation"),
			     "%s: flow start not in its %s slice", name, want_api);
		const cJSON *h = host_fn_at(evs, host_pid, num(st, "tid"), num(st, "ts"));
		SS_E2E_CHECK(t, h && !strcmp(str(h, "name"), launcher(name)),
			     "%s: launched in %s, expected %s", name, h ? str(h, "name") : "nothing",
			     launcher(name));
		flows++;
	}
	for (int s = 0; s < RECORDED; s++)
		for (int k = 0; k < 6; k++)
			SS_E2E_CHECK(t, count[s][k] == per_step[k],
				     "recorded step %d: %d %s, expected %d", s + 1, count[s][k],
				     names[k], per_step[k]);
	/* 5 launches, a copy, a set and a synchronize per step */
	SS_E2E_CHECK(t, api == RECORDED * 8, "expected %d CUDA API slices, got %d",
		     RECORDED * 8, api);
	SS_E2E_CHECK(t, flows == RECORDED * 7, "expected %d flows, got %d", RECORDED * 7, flows);
}

static int gpu_events(cJSON *root)
{
	const cJSON *e;
	int n = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
		n += is_gpu_cat(str(e, "cat")) || !strcmp(str(e, "cat"), "cuda_runtime") ||
		     !strcmp(str(e, "cat"), "cuda_flow");
	return n;
}

static void test_fake_cupti(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,-soname,libcudart.so "
			"-o libcudart.so \"$SS_E2E_SRC/tests/e2e/lib-cupti-fake.c\"");
	ss_e2e_build(t, "cuda-fake", "-L. -lcudart -Wl,-rpath,\"$PWD\"");
	SS_E2E_SH_OK(t, FAKE_ENV " " SS " record " SETS " --set gpu.enabled=true "
			"-o run -- ./s-cuda-fake %d", STEPS);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "gpu:") == 0,
		     "record with the fake CUPTI: expected no gpu line, got: %s", t->err);
	ss_e2e_symbolize(t, "run");
	cJSON *root = events(t, "run");
	check_trace(t, root);
	cJSON_Delete(root);
	/* Perfetto: the tracks, the slices by name, a flow start per launch
	 * of device work and an end per kernel or copy */
	SS_E2E_SH_OK(t, SS " symbolize --format perfetto run");
	if (ss_e2e_sh(t, "command -v protoc") == 0) {
		SS_E2E_SH_OK(t, "protoc --decode_raw < run/trace.perfetto-trace > pf.txt && "
				"for s in '2: \"GPU 0\"' '2: \"stream 7\"' '2: \"stream 9\"' "
				"'2: \"CUDA API, thread ' '23: \"gemm_fwd\"' '23: \"gemm_bwd\"' "
				"'23: \"sgd_update\"' '23: \"Memcpy HtoD\"' "
				"'23: \"cudaLaunchKernel\"' '^ *47: 0x' '^ *48: 0x'; do "
				"grep -c \"$s\" pf.txt | tr '\\n' ' '; done");
		SS_E2E_CHECK(t, !strcmp(t->out, "1 1 1 1 3 6 3 3 15 21 21 "),
			     "perfetto: expected tracks GPU 0, stream 7, stream 9, CUDA API "
			     "once each, 3 gemm_fwd, 6 gemm_bwd, 3 sgd_update, 3 Memcpy "
			     "HtoD, 15 cudaLaunchKernel, 21 flow starts and ends; got %s",
			     t->out);
	} else {
		printf("note: no protoc: the Perfetto GPU tracks are not checked\n");
	}

	/* report: device time per launching function (3 steps: 5 kernels of
	 * 200 us, a 4096-byte copy and a 1024-byte set of 1 ns a byte each)
	 * and the GPU share of each recorded step */
	SS_E2E_SH_OK(t, SS " report run | awk '/^CUDA time by/ {on = 1} "
			"on && ($1 == \"forward\" || $1 == \"backward\" || $1 == \"step\" || "
			"$1 == \"load_batch\" || $1 == \"zero_grad\") {print $1, $2, $3, $4} "
			"/^ *Step +Host +GPU/ {st = 1; next} st && NF == 5 {print \"step\", $1, $3}'");
	SS_E2E_CHECK(t, !strcmp(t->out, "step 0ns 3.015ms 0\n"
					"backward 1.800ms 1.800ms 9\n"
					"forward 1.200ms 1.200ms 6\n"
					"load_batch 12.288us 12.288us 3\n"
					"zero_grad 3.072us 3.072us 3\n"
					"step 1 1.005ms\nstep 2 1.005ms\nstep 3 1.005ms\n"),
		     "report: CUDA self/total and per-step GPU time: got\n%s", t->out);

	/* gpu.enabled off (the default): no GPU records */
	SS_E2E_SH_OK(t, FAKE_ENV " " SS " record " SETS " -o run2 -- ./s-cuda-fake %d",
		     STEPS);
	ss_e2e_symbolize(t, "run2");
	root = events(t, "run2");
	SS_E2E_CHECK(t, gpu_events(root) == 0, "gpu.enabled false: GPU events written");
	cJSON_Delete(root);

	/* CUPTI not there: one line, host functions only */
	SS_E2E_SH_OK(t, "STEPSCOPE_CUPTI_LIBRARY=\"$PWD/no-such-cupti.so\" " SS " record "
			SETS " --set gpu.enabled=true -o run3 -- ./s-cuda-fake %d", STEPS);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "gpu:") == 1 &&
			     ss_e2e_lines_with(t->err, "stepscope: gpu: cannot load ") == 1 &&
			     ss_e2e_lines_with(t->err, "no-such-cupti.so") == 1,
		     "missing CUPTI: expected one 'gpu: cannot load' line, got: %s", t->err);
	ss_e2e_symbolize(t, "run3");
	root = events(t, "run3");
	SS_E2E_CHECK(t, gpu_events(root) == 0, "missing CUPTI: GPU events written");
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_fake_cupti),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
