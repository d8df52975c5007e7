/*
 * test-cuda-mem.c - end to end: CUDA allocations recorded through CUPTI's
 * callback API (memory.allocations with gpu.enabled, runtime/gpu-alloc.c)
 * without a GPU.  lib-cupti-fake.c is built as libcudart.so (the stand-in
 * CUDA runtime and CUPTI, two devices used), s-cuda-mem links against it
 * and prints its own ledger of every CUDA memory call; 6 steps run,
 * steps 1 to 3 are recorded.
 *
 * Checks, all against the ledger (tests/gpu/mem-check.c, the proof kit's
 * checker, built here and run with --exact):
 *   - Self CUDA Mem, CUDA Mem and CUDA Allocs of every function, in
 *     total and per device, to the byte (a batch allocated in load_batch
 *     and freed by its caller, activations allocated in forward and freed
 *     in backward, a block a worker thread allocates and the main thread
 *     frees, cudaMallocAsync/cudaFreeAsync, a device-1 block freed
 *     while device 0 is current, managed memory freed by cudaFree, a
 *     failed cudaMalloc and cudaFree(NULL) that count nothing, blocks
 *     main allocated before the recording freed in the steps: 0 bytes);
 *     pinned memory (cudaMallocHost) in Self CPU Mem / CPU Mem;
 *   - the count of frees of unknown size;
 *   - the peak live bytes of each step in each CUDA space;
 *   - `stepscope memory --leaks`: leak_dev1 on cuda:1 and cache_dev0 on
 *     cuda:0, 3 blocks each, and nothing else in a CUDA space.
 * And: report's text has the CUDA Mem columns and the per-device
 * section; the HTML memory view a line per device; trace.json and Perfetto have one CUDA memory counter track per
 * device whose last value is the ledger's live bytes at the end of the
 * recording; without memory.allocations (gpu.enabled alone) or without
 * gpu.enabled there is no CUDA memory; with another tool holding CUPTI's
 * subscription (the stand-in's FAKE_CUPTI_BUSY) one line says CUDA
 * allocations are not recorded and the kernels still are.
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

enum { STEPS = 6 };

static void build(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,-soname,libcudart.so "
			"-o libcudart.so \"$SS_E2E_SRC/tests/e2e/lib-cupti-fake.c\"");
	ss_e2e_build(t, "cuda-mem", "-L. -lcudart -Wl,-rpath,\"$PWD\"");
}

/* Rows of report --format json of run that carry key */
static int rows_with(struct ss_e2e *t, const char *run, const char *key)
{
	SS_E2E_SH_OK(t, SS " report --format json %s > rep-%s.json", run, run);
	char rel[64];
	snprintf(rel, sizeof(rel), "rep-%s.json", run);
	cJSON *j = ss_e2e_load_json(t, rel);
	const cJSON *r;
	int n = 0;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
		n += cJSON_GetObjectItemCaseSensitive(r, key) != NULL;
	cJSON_Delete(j);
	return n;
}

/* The ledger's live bytes of device dev at the end of step `last`,
 * counting the blocks allocated in steps first..last (the recording). */
static long live_at_end(struct ss_e2e *t, int dev, int first, int last)
{
	SS_E2E_SH_OK(t, "awk -v d=%d -v a=%d -v b=%d '"
			"($1 == \"A\" || $1 == \"F\") && ($5 == 1 || $5 == 3) {"
			" if ($1 == \"A\") { st[$8] = $2; dv[$8] = $6 }"
			" else if ($2 > b) next;"
			" s = st[$8]; if (s < a || s > b || dv[$8] != d || $2 > b) next;"
			" live += $1 == \"A\" ? $7 : -$7 } END { print live + 0 }' ledger.txt",
		     dev, first, last);
	return atol(t->out);
}

static void test_cuda_mem(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	SS_E2E_SH_OK(t, FAKE_ENV " " SS " record " SETS " --set gpu.enabled=true "
			"--set memory.allocations=true -o run -- ./s-cuda-mem %d > ledger.txt",
		     STEPS);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "stepscope: gpu:") == 0 &&
			     ss_e2e_lines_with(t->err, "stepscope: memory.allocations:") == 0,
		     "record: expected no gpu or memory.allocations line, got: %s", t->err);
	SS_E2E_SH_OK(t, "grep -c '^[AF] ' ledger.txt");
	SS_E2E_CHECK(t, atoi(t->out) > 100, "the fixture's ledger has %s lines", t->out);

	/* the checker the GPU proof kit runs, against the ledger */
	SS_E2E_SH_OK(t, "gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o mem-check "
			"\"$SS_E2E_SRC/tests/gpu/mem-check.c\" -lcjson");
	SS_E2E_SH_OK(t, SS " report --steps --format json run > report.json");
	SS_E2E_SH_OK(t, SS " memory --leaks run > leaks.txt");
	int rc = ss_e2e_sh(t, "./mem-check --label stand-in --exact --ledger ledger.txt "
			      "--report report.json --leaks leaks.txt");
	SS_E2E_CHECK(t, rc == 0 && ss_e2e_lines_with(t->out, "ok   ") == 5 &&
			     ss_e2e_lines_with(t->out, "FAIL") == 0,
		     "mem-check: status %d, expected 5 ok lines and no FAIL:\n%s", rc, t->out);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, "ok   stand-in: recorded steps: 1 2 3\n") == 1,
		     "mem-check: expected recorded steps 1 2 3:\n%s", t->out);
	/* the checker is no rubber stamp: a ledger that says one byte more
	 * in leak_dev1, or in the gradient (the largest block of step 2 on
	 * device 1: its peak there), or one block fewer freed, fails it */
	SS_E2E_SH_OK(t, "awk '$3 == \"leak_dev1\" && $2 == 2 {$7 = $7 + 1} {print}' ledger.txt "
			"> lie1.txt && awk '!($1 == \"F\" && $3 == \"attention\" && $2 == 3)' "
			"ledger.txt > lie2.txt && awk '$2 == 2 && ($3 == \"backward\" || "
			"$3 == \"reduce_grads\") {$7 = $7 + 1} {print}' ledger.txt > lie3.txt");
	rc = ss_e2e_sh(t, "./mem-check --exact --ledger lie1.txt --report report.json "
			  "--leaks leaks.txt");
	SS_E2E_CHECK(t, rc == 2 && ss_e2e_lines_with(t->out, "FAIL") == 2 &&
			     ss_e2e_lines_with(t->out, "FAIL run: leaks per device") == 1,
		     "mem-check on a ledger with 1 byte more in leak_dev1: status %d, expected 2 "
		     "FAIL (rows, leaks):\n%s", rc, t->out);
	rc = ss_e2e_sh(t, "./mem-check --exact --ledger lie3.txt --report report.json "
			  "--leaks leaks.txt");
	SS_E2E_CHECK(t, rc >= 1 && ss_e2e_lines_with(t->out, "FAIL run: peak") == 1 &&
			     strstr(t->out, "step 2 cuda:1: peak 8192, ledger 8193"),
		     "mem-check on a ledger with 1 byte more in the gradient: status %d, expected "
		     "step 2's cuda:1 peak to FAIL:\n%s", rc, t->out);
	rc = ss_e2e_sh(t, "./mem-check --exact --ledger lie2.txt --report report.json "
			  "--leaks leaks.txt");
	SS_E2E_CHECK(t, rc >= 2 && ss_e2e_lines_with(t->out, "FAIL") == rc,
		     "mem-check on a ledger missing a free: status %d, expected FAIL lines:\n%s",
		     rc, t->out);

	/* the text report: the columns, the per-device section with both */
	SS_E2E_SH_OK(t, SS " report run");
	SS_E2E_CHECK(t, strstr(t->out, "Self CUDA Mem") && strstr(t->out, "CUDA Mem") &&
			     strstr(t->out, "CUDA memory by device") &&
			     strstr(t->out, "Self cuda:0") && strstr(t->out, "Self cuda:1"),
		     "report: expected the CUDA Mem columns and the per-device section:\n%s",
		     t->out);

	/* the HTML memory view: a line per device */
	SS_E2E_SH_OK(t, SS " html run -o report.html && for d in 0 1; do "
			"grep -c \"</span> CUDA memory cuda:$d, pid \" report.html | tr '\\n' ' '; done");
	SS_E2E_CHECK(t, !strcmp(t->out, "1 1 "),
		     "report.html: expected one CUDA memory line per device in the legend, got %s",
		     t->out);

	/* trace.json: a CUDA memory counter per device, whose last value is
	 * what the recorded steps left live on it */
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	const cJSON *e;
	double last[2] = { -1, -1 }, last_ts[2] = { -1, -1 };
	int tracks[2] = { 0, 0 }, instants[2] = { 0, 0 };
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (cJSON_IsString(ph) && !strcmp(ph->valuestring, "i") && cJSON_IsString(name) &&
		    !strcmp(name->valuestring, "[memory]")) {
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
			const cJSON *ty = cJSON_GetObjectItemCaseSensitive(args, "Device Type");
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(args, "Device Id");
			if (cJSON_IsNumber(ty) && ty->valueint == 1 && cJSON_IsNumber(id) &&
			    id->valueint >= 0 && id->valueint < 2)
				instants[id->valueint]++;
			continue;
		}
		if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "C") || !cJSON_IsString(name))
			continue;
		for (int d = 0; d < 2; d++) {
			char want[32];
			snprintf(want, sizeof(want), "CUDA memory cuda:%d", d);
			if (strcmp(name->valuestring, want))
				continue;
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
			const cJSON *v = args ? args->child : NULL;
			double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
			tracks[d]++;
			if (cJSON_IsNumber(v) && ts >= last_ts[d]) {
				last[d] = v->valuedouble;
				last_ts[d] = ts;
			}
		}
	}
	cJSON_Delete(root);
	for (int d = 0; d < 2; d++) {
		/* a [memory] instant per CUDA call of the steps on the device */
		SS_E2E_SH_OK(t, "awk '($1 == \"A\" || $1 == \"F\") && $2 >= 1 && $2 <= 3 && "
				"($5 == 1 || $5 == 3) && $6 == %d' ledger.txt | wc -l", d);
		SS_E2E_CHECK(t, instants[d] == atoi(t->out),
			     "trace.json: %d [memory] instants with Device Id %d, the ledger has %d "
			     "calls", instants[d], d, atoi(t->out));
		long want = live_at_end(t, d, 1, 3);
		SS_E2E_CHECK(t, tracks[d] > 0 && (long)last[d] == want,
			     "trace.json: counter \"CUDA memory cuda:%d\": %d samples, last %.0f, "
			     "the ledger leaves %ld bytes live", d, tracks[d], last[d], want);
	}
	/* Perfetto: the same tracks */
	SS_E2E_SH_OK(t, SS " symbolize --format perfetto run");
	if (ss_e2e_sh(t, "command -v protoc") == 0) {
		SS_E2E_SH_OK(t, "protoc --decode_raw < run/trace.perfetto-trace > pf.txt && "
				"for d in 0 1; do grep -c \"\\\"CUDA memory cuda:$d\\\"\" pf.txt | "
				"tr '\\n' ' '; done");
		SS_E2E_CHECK(t, !strcmp(t->out, "1 1 "),
			     "perfetto: expected one track \"CUDA memory cuda:N\" per device, got %s",
			     t->out);
	} else {
		printf("note: no protoc: the Perfetto CUDA memory tracks are not checked\n");
	}
	ss_e2e_pass(t);
}

/* CUDA memory is recorded only with both keys, and a CUPTI held by
 * another tool says so once and changes nothing else. */
static void test_cuda_mem_off(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build(t);
	SS_E2E_SH_OK(t, FAKE_ENV " " SS " record " SETS " --set gpu.enabled=true "
			"-o gpu -- ./s-cuda-mem %d > /dev/null", STEPS);
	SS_E2E_CHECK(t, rows_with(t, "gpu", "cuda_mem") == 0,
		     "gpu.enabled without memory.allocations: CUDA memory in the report");
	SS_E2E_SH_OK(t, FAKE_ENV " " SS " record " SETS " --set memory.allocations=true "
			"-o mem -- ./s-cuda-mem %d > /dev/null", STEPS);
	SS_E2E_CHECK(t, rows_with(t, "mem", "cuda_mem") == 0,
		     "memory.allocations without gpu.enabled: CUDA memory in the report");
	SS_E2E_SH_OK(t, "FAKE_CUPTI_BUSY=1 " FAKE_ENV " " SS " record " SETS
			" --set gpu.enabled=true --set memory.allocations=true -o busy -- "
			"./s-cuda-mem %d > /dev/null", STEPS);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "gpu:") == 1 &&
			     ss_e2e_lines_with(t->err, "another tool holds CUPTI") == 1 &&
			     ss_e2e_lines_with(t->err, "CUDA allocations are not recorded") == 1,
		     "CUPTI held by another tool: expected one line saying so, got: %s", t->err);
	SS_E2E_CHECK(t, rows_with(t, "busy", "cuda_mem") == 0,
		     "CUPTI held by another tool: CUDA memory in the report");
	/* the API activity still comes: cudaMalloc slices in the trace, 9 a
	 * step (the batch, the one too big, 3 activations, the gradient, 2
	 * leaks, the worker's) */
	ss_e2e_symbolize(t, "busy");
	SS_E2E_SH_OK(t, "grep -o '\"name\":\"cudaMalloc\"' busy/trace.json | wc -l");
	SS_E2E_CHECK(t, atoi(t->out) == 3 * 9,
		     "CUPTI held by another tool: %s cudaMalloc API slices, expected %d", t->out,
		     3 * 9);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_cuda_mem),
		SS_E2E_TEST(test_cuda_mem_off),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
