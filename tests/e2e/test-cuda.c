/*
 * test-cuda.c - end to end: examples/cuda-mlp, a CUDA training program, built
 * with its own Makefile (plain, then PROFILE=1 through stepscope-cc nvcc)
 * from a copy of its sources in the test's dir.
 *
 * Everywhere nvcc is installed: the profile binary links libstepscope, the
 * plain one does not; with no usable GPU (none here, or all hidden by
 * CUDA_VISIBLE_DEVICES="") the program prints exactly one line and exits 3,
 * run alone and under `stepscope record`.  Where `nvidia-smi -L` succeeds:
 * a run recorded with configs/cuda-memory.yaml has exactly the steps of its
 * schedule, exact call counts inside them, and a memory_profile.json whose
 * every entry has "cuda:0".  Each part that cannot run says why and skips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define EX "\"$SS_E2E_SRC/examples/cuda-mlp\""
#define NVPATH "PATH=\"$PATH:/usr/local/cuda/bin\""
#define NO_DEVICE "train: no CUDA device (cudaGetDeviceCount: "

/* configs/cuda-memory.yaml: wait 1, warmup 1, active 3, repeat 2 */
static const int recorded[] = {2, 3, 4, 7, 8, 9};
enum { NREC = 6, STEPS = 30, MATMULS = 5, ADAMS = 4 };

/* Skip (saying why) unless nvcc is installed. */
static void need_nvcc(struct ss_e2e *t)
{
	if (ss_e2e_sh(t, "command -v nvcc || test -x /usr/local/cuda/bin/nvcc")
	    != 0) {
		print_message("e2e: skipped: nvcc is not installed (looked on "
			      "PATH and in /usr/local/cuda/bin)\n");
		ss_e2e_pass(t);
		skip();
	}
}

/* Copy the example into src/ and what it shares with examples/mlp into
 * common/ beside it (once), and build it in src/ with `make ARGS`. */
static void make_example(struct ss_e2e *t, const char *args)
{
	SS_E2E_SH_OK(t, "{ test -d src || { mkdir src common && cp " EX "/Makefile "
		     EX "/*.cu " EX "/*.h src/ && cp " EX "/../common/* common/; }; } && "
		     "%s make -C src %s "
		     "STEPSCOPE_CC=\"$SS_E2E_BUILD/bin/stepscope-cc\" "
		     "CPPFLAGS=\"-I$SS_E2E_SRC/instrument\"",
		     NVPATH, args);
}

static int have_gpu(struct ss_e2e *t)
{
	return ss_e2e_sh(t, "nvidia-smi -L") == 0;
}

/* The last command exited 3 and its stderr, apart from stepscope's own
 * lines, is exactly the one "no CUDA device" line. */
static void expect_no_device(struct ss_e2e *t, int st)
{
	SS_E2E_EXPECT_STATUS(t, st, 3);
	char *text = strdup(t->err), *save = NULL;
	int lines = 0, ok = 0;
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "stepscope: ", 11))
			continue;
		lines++;
		ok = !strncmp(l, NO_DEVICE, strlen(NO_DEVICE)) &&
		     l[strlen(l) - 1] == ')';
	}
	free(text);
	if (lines != 1 || !ok) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "expected exactly one line '" NO_DEVICE
			    "...)' besides stepscope's, got %d line(s)",
			    lines);
	}
	SS_E2E_CHECK(t, !*t->out, "stdout: expected nothing, got: %s",
		     t->out);
}

/* Both builds; which libraries each links; the mode switch keeps objects. */
static void test_build(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	need_nvcc(t);
	make_example(t, "");
	SS_E2E_SH_OK(t, "! readelf -d src/train | grep NEEDED | "
		     "grep -q libstepscope");
	SS_E2E_SH_OK(t, "cp src/train train-plain");
	make_example(t, "PROFILE=1");
	SS_E2E_SH_OK(t, "readelf -d src/train | grep NEEDED | "
		     "grep -q 'libstepscope\\.so'");
	/* instrumented, with the hooks linked in (libstepscope-hooks.a),
	 * which go on into libstepscope.so */
	SS_E2E_SH_OK(t, "nm src/train | grep -q ' t __cyg_profile_func_enter$'"
		     " && nm -D src/train | grep -q ' U stepscope__hook_enter$'"
		     " && nm src/train | grep -q ' T train_step$'");
	/* back to plain and again to profile: nothing is recompiled */
	make_example(t, "");
	make_example(t, "PROFILE=1");
	SS_E2E_CHECK(t, !strstr(t->out, "NVCC"),
		     "make PROFILE=1 after a plain make recompiled: %s",
		     t->out);
	SS_E2E_SH_OK(t, "readelf -d src/train | grep -q libstepscope");

	/* no usable GPU: one line, exit 3, plain and under record */
	expect_no_device(t, ss_e2e_sh(t, "CUDA_VISIBLE_DEVICES= ./train-plain"));
	expect_no_device(t, ss_e2e_sh(t, "CUDA_VISIBLE_DEVICES= " SS
				      " record -o rec-hidden -c "
				      "\"$SS_E2E_SRC/configs/cuda-memory.yaml\""
				      " -- ./src/train --steps 5"));
	if (have_gpu(t)) {
		print_message("e2e: a GPU is present: ran the no-device case "
			      "with CUDA_VISIBLE_DEVICES=\"\" only\n");
	} else {
		expect_no_device(t, ss_e2e_sh(t, "./train-plain"));
		expect_no_device(t, ss_e2e_sh(t, SS " record -o rec-nogpu -c "
					      "\"$SS_E2E_SRC/configs/"
					      "cuda-memory.yaml\" -- "
					      "./src/train --steps 5"));
	}
	ss_e2e_pass(t);
}

static const struct ss_e2e_slice *step_slice(const struct ss_e2e_trace *tr,
					     int k)
{
	char name[32];
	snprintf(name, sizeof(name), "ProfilerStep#%d", k);
	for (size_t i = 0; i < tr->nslices; i++)
		if (!strcmp(tr->slices[i].cat, "step") &&
		    !strcmp(tr->slices[i].name, name))
			return &tr->slices[i];
	return NULL;
}

/* Function slices named `name` that begin inside step slice st. */
static size_t calls_in(const struct ss_e2e_trace *tr, const char *name,
		       const struct ss_e2e_slice *st)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		n += !strcmp(s->cat, "function") && !strcmp(s->name, name) &&
		     s->ts_ns >= st->ts_ns && s->ts_ns < st->ts_ns + st->dur_ns;
	}
	return n;
}

/* Every entry of memory_profile.json (in t->out) has a "cuda:0", and at
 * least one says the process uses GPU memory.  Which steps got entries is
 * not checked: the sampler may skip some while NVML starts (a short run's
 * steps take well under a millisecond each). */
static void check_memory_profile(struct ss_e2e *t)
{
	const char *p = t->out;
	int entries = 0, in_use = 0;
	while ((p = strstr(p, "{\"step\": ")) != NULL) {
		long long step;
		const char *next = strstr(p + 1, "{\"step\": ");
		const char *gpu = strstr(p, "\"cuda:0\": {\"bytes_in_use\": ");
		unsigned long long bytes = 0;
		SS_E2E_CHECK(t, sscanf(p, "{\"step\": %lld", &step) == 1,
			     "memory_profile.json: unreadable entry: %.80s", p);
		SS_E2E_CHECK(t, gpu && (!next || gpu < next),
			     "memory_profile.json: entry for step %lld has no "
			     "\"cuda:0\": %.200s", step, p);
		SS_E2E_CHECK(t, sscanf(gpu, "\"cuda:0\": {\"bytes_in_use\": "
				       "%llu", &bytes) == 1,
			     "memory_profile.json: step %lld: unreadable "
			     "cuda:0 bytes_in_use: %.120s", step, gpu);
		in_use += bytes > 0;
		entries++;
		p++;
	}
	SS_E2E_CHECK(t, entries > 0, "memory_profile.json: no entries: %s",
		     t->out);
	SS_E2E_CHECK(t, in_use > 0,
		     "memory_profile.json: cuda:0 bytes_in_use is 0 in every "
		     "entry, after the model was allocated: %s", t->out);
}

/* A real run on the GPU, recorded with configs/cuda-memory.yaml. */
static void test_record_gpu(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	need_nvcc(t);
	if (!have_gpu(t)) {
		print_message("e2e: skipped: no GPU here (nvidia-smi -L failed "
			      "or is missing); the recorded CUDA run needs "
			      "one\n");
		ss_e2e_pass(t);
		skip();
	}
	make_example(t, "PROFILE=1");
	int st = ss_e2e_sh(t, SS " record -o rec -c "
			   "\"$SS_E2E_SRC/configs/cuda-memory.yaml\" -- "
			   "./src/train --steps %d --eval-every 0 "
			   "--log-every 10", (int)STEPS);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	SS_E2E_CHECK(t, strstr(t->out, "done: ") != NULL,
		     "train: expected a final 'done:' line, got: %s", t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");

	/* exactly the steps of the schedule */
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "step", 0, NREC);
	for (int i = 0; i < NREC; i++) {
		const struct ss_e2e_slice *s = step_slice(tr, recorded[i]);
		SS_E2E_CHECK(t, s, "expected a slice ProfilerStep#%d, found "
			     "none", recorded[i]);
		SS_E2E_CHECK(t, calls_in(tr, "train_step", s) == 1 &&
				     calls_in(tr, "launch_matmul", s) ==
					     MATMULS &&
				     calls_in(tr, "launch_adam", s) == ADAMS &&
				     calls_in(tr, "loader_next_batch", s) == 1,
			     "ProfilerStep#%d: expected train_step 1, "
			     "launch_matmul %d, launch_adam %d, "
			     "loader_next_batch 1; got %zu, %zu, %zu, %zu",
			     recorded[i], MATMULS, ADAMS,
			     calls_in(tr, "train_step", s),
			     calls_in(tr, "launch_matmul", s),
			     calls_in(tr, "launch_adam", s),
			     calls_in(tr, "loader_next_batch", s));
	}
	/* and nothing outside them */
	SS_E2E_EXPECT_CALLS(t, tr, "train_step", 0, NREC);
	SS_E2E_EXPECT_CALLS(t, tr, "launch_matmul", 0, NREC * MATMULS);
	SS_E2E_EXPECT_CALLS(t, tr, "evaluate", 0, 0);
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_INSIDE(t, tr, "mlp_forward", "train_step");
	SS_E2E_EXPECT_INSIDE(t, tr, "mlp_update", "optimizer");
	SS_E2E_EXPECT_INSIDE(t, tr, "launch_adam", "adam_param");

	SS_E2E_SH_OK(t, "cat rec/memory_profile.json");
	check_memory_profile(t);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_build),
		SS_E2E_TEST(test_record_gpu),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
