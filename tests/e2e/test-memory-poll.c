/*
 * test-memory-poll.c - end to end: the memory poller without a GPU.  The
 * test builds lib-nvml-fake.c (plain gcc -shared, no stepscope), a
 * stand-in NVML whose two devices answer scripted values, names it in
 * STEPSCOPE_NVML_LIBRARY and records s-memory (a loop of steps whose host
 * memory grows at every step) with memory sampling on.
 *
 * Checks: the "ph":"C" counter events of trace.json for cuda:0 and cuda:1
 * are exactly the script's values, in its order (a track only gets a value
 * when it changes; cuda:1.process starts once the script lists our pid);
 * memory_profile.json has exactly one entry every 2 steps, whose cuda:0 and
 * cuda:1 bytes_in_use, peak_bytes_in_use and bytes_limit are exactly what
 * the script implies, and whose host bytes_in_use rises from entry to
 * entry; no "memory:" info line is printed; `stepscope memory` writes an
 * SVG and gives the leak hint for host and for no GPU.  Without NVML (the
 * default library missing, or STEPSCOPE_NVML_LIBRARY naming no file)
 * exactly one info line is printed and only host memory is reported.
 * CUDA_VISIBLE_DEVICES=GPU-fake-1 makes the fake's second device cuda:0.
 */
#include <dlfcn.h>
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
/* s-memory's third argument: each entry's step waits for its entry before
 * it allocates, so the entries are exact however late the poller runs */
#define EVERY_S "2"
#define SETS "--set step.function=step --set memory.enabled=true "    \
	     "--set memory.interval_ms=2 --set memory.every_n_steps=" EVERY_S
/* the fake, and every device it has visible */
#define FAKE_ENV "env -u CUDA_VISIBLE_DEVICES "                        \
		 "STEPSCOPE_NVML_LIBRARY=\"$PWD/libnvml-fake.so\" "        \
		 "SS_FAKE_NVML_SCRIPT=\"$PWD/nvml.script\""

enum { STEPS = 16, EVERY = 2, MAXC = 4096 };

#define GIB 1073741824ull
/* The script: device, from call, used, total, ours.  cuda:0 starts with a
 * spike of our own memory that is gone by its third sample; cuda:1 does
 * not list us at first, then does. */
static const char script[] =
	"# lib-nvml-fake script for test-memory-poll\n"
	"devices 2\n"
	"0 1 3000000000 85899345920 2000000000\n"
	"0 3 1500000000 85899345920 1000000000\n"
	"1 1 500000000 42949672960 0\n"
	"1 2 700000000 42949672960 250000000\n";

struct want_track {
	const char *name;
	double v[4];
	int n;
};

static const struct want_track want_tracks[] = {
	{ "cuda:0.used", { 3000000000.0, 1500000000.0 }, 2 },
	{ "cuda:0.total", { 85899345920.0 }, 1 },
	{ "cuda:0.process", { 2000000000.0, 1000000000.0 }, 2 },
	{ "cuda:1.used", { 500000000.0, 700000000.0 }, 2 },
	{ "cuda:1.total", { 42949672960.0 }, 1 },
	{ "cuda:1.process", { 250000000.0 }, 1 },
};

/* What every memory_profile.json entry says of a GPU, taken once the
 * script's values have settled (each step sleeps 20 ms; the poller
 * samples every 2 ms). */
struct want_dev {
	const char *name;
	unsigned long long in_use, peak, limit;
};

static const struct want_dev want_devs[] = {
	{ "cuda:0", 1000000000ull, 2000000000ull, 85899345920ull },
	{ "cuda:1", 250000000ull, 250000000ull, 42949672960ull },
};

static void build_fake(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o libnvml-fake.so "
			"\"$SS_E2E_SRC/tests/e2e/lib-nvml-fake.c\"");
	char path[4200];
	snprintf(path, sizeof(path), "%s/nvml.script", t->dir);
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f && fputs(script, f) >= 0 && !fclose(f),
		     "cannot write %s", path);
}

struct counter {
	const char *name;
	double ts, value;
	int index;
};

static int by_time(const void *a, const void *b)
{
	const struct counter *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index - y->index;
}

/* Counter events of DIR/trace.json, in time order; how many. */
static int counters(struct ss_e2e *t, cJSON *root, struct counter *out)
{
	const cJSON *ev;
	int n = 0;

	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "value");
		if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "C"))
			continue;
		SS_E2E_CHECK(t, cJSON_IsString(name) && cJSON_IsNumber(ts) &&
				     cJSON_IsNumber(v),
			     "a counter event lacks name, ts or args.value");
		SS_E2E_CHECK(t, n < MAXC, "more than %d counter events", MAXC);
		out[n] = (struct counter){ name->valuestring, ts->valuedouble,
					   v->valuedouble, n };
		n++;
	}
	qsort(out, (size_t)n, sizeof(*out), by_time);
	return n;
}

/* The values of one track, in time order, as "a, b, c". */
static int track(const struct counter *c, int n, const char *name, double *v,
		 int max, char *shown, size_t len)
{
	int k = 0;
	size_t at = 0;

	shown[0] = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(c[i].name, name))
			continue;
		if (k < max)
			v[k] = c[i].value;
		k++;
		if (at + 32 < len)
			at += (size_t)snprintf(shown + at, len - at, "%s%.17g",
					       k > 1 ? ", " : "", c[i].value);
	}
	return k;
}

static void check_counters(struct ss_e2e *t, cJSON *trace, int gpus)
{
	static struct counter c[MAXC];
	double v[64];
	char shown[2048];
	int n = counters(t, trace, c);

	for (size_t w = 0; w < sizeof(want_tracks) / sizeof(want_tracks[0]); w++) {
		const struct want_track *wt = &want_tracks[w];
		int k = track(c, n, wt->name, v, 64, shown, sizeof(shown));
		int want = gpus ? wt->n : 0;
		int same = k == want;
		char expect[256];
		size_t at = 0;
		expect[0] = 0;
		for (int i = 0; i < want; i++)
			at += (size_t)snprintf(expect + at, sizeof(expect) - at, "%s%.17g",
					       i ? ", " : "", wt->v[i]);
		for (int i = 0; same && i < k; i++)
			same = v[i] == wt->v[i];
		SS_E2E_CHECK(t, same, "trace.json: counter %s: expected [%s]%s, got [%s]",
			     wt->name, expect, gpus ? " as scripted" : " (no GPU)", shown);
	}
	for (int i = 0; i < n; i++)
		SS_E2E_CHECK(t, !strncmp(c[i].name, "host.", 5) ||
				     (gpus && (!strncmp(c[i].name, "cuda:0.", 7) ||
					       !strncmp(c[i].name, "cuda:1.", 7))),
			     "trace.json: unexpected counter track %s", c[i].name);
	int k = track(c, n, "host.rss", v, 64, shown, sizeof(shown));
	SS_E2E_CHECK(t, k >= 2 && v[(k < 64 ? k : 64) - 1] > v[0],
		     "trace.json: host.rss should rise as s-memory allocates: [%s]",
		     shown);
	SS_E2E_CHECK(t, track(c, n, "host.rss_peak", v, 64, shown, sizeof(shown)) >= 1,
		     "trace.json: no host.rss_peak counter");
}

static unsigned long long num(struct ss_e2e *t, const cJSON *obj, const char *key,
			      const char *where)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	SS_E2E_CHECK(t, cJSON_IsNumber(v), "memory_profile.json: %s: no number \"%s\"",
		     where, key);
	return (unsigned long long)v->valuedouble;
}

/* One entry every EVERY steps, exact GPU values (when gpus), host memory
 * rising from entry to entry. */
static void check_profile(struct ss_e2e *t, cJSON *prof, int gpus)
{
	const cJSON *e;
	int k = 0;
	unsigned long long last_host = 0;
	char where[64];

	SS_E2E_CHECK(t, cJSON_IsArray(prof), "memory_profile.json is not an array");
	SS_E2E_CHECK(t, cJSON_GetArraySize(prof) == STEPS / EVERY - 1,
		     "memory_profile.json: expected %d entries (steps %d, %d, ... %d), got %d",
		     STEPS / EVERY - 1, EVERY, 2 * EVERY, STEPS - EVERY,
		     cJSON_GetArraySize(prof));
	cJSON_ArrayForEach(e, prof) {
		k++;
		snprintf(where, sizeof(where), "entry %d", k);
		SS_E2E_CHECK(t, num(t, e, "step", where) == (unsigned long long)(k * EVERY),
			     "memory_profile.json: entry %d is for step %llu, expected %d", k,
			     num(t, e, "step", where), k * EVERY);
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(e, "memory");
		SS_E2E_CHECK(t, cJSON_IsObject(mem) &&
				     cJSON_GetArraySize(mem) == (gpus ? 3 : 1),
			     "memory_profile.json: entry %d: expected the keys %s",
			     k, gpus ? "cuda:0, cuda:1, host" : "host only");
		for (int d = 0; gpus && d < 2; d++) {
			const struct want_dev *w = &want_devs[d];
			const cJSON *dev = cJSON_GetObjectItemCaseSensitive(mem, w->name);
			snprintf(where, sizeof(where), "entry %d %s", k, w->name);
			SS_E2E_CHECK(t, cJSON_IsObject(dev), "memory_profile.json: no %s", where);
			unsigned long long in_use = num(t, dev, "bytes_in_use", where);
			unsigned long long peak = num(t, dev, "peak_bytes_in_use", where);
			unsigned long long limit = num(t, dev, "bytes_limit", where);
			SS_E2E_CHECK(t, in_use == w->in_use && peak == w->peak &&
					     limit == w->limit,
				     "memory_profile.json: %s: expected bytes_in_use %llu, "
				     "peak_bytes_in_use %llu, bytes_limit %llu; got %llu, "
				     "%llu, %llu",
				     where, w->in_use, w->peak, w->limit, in_use, peak, limit);
		}
		const cJSON *host = cJSON_GetObjectItemCaseSensitive(mem, "host");
		snprintf(where, sizeof(where), "entry %d host", k);
		SS_E2E_CHECK(t, cJSON_IsObject(host), "memory_profile.json: no %s", where);
		unsigned long long rss = num(t, host, "bytes_in_use", where);
		unsigned long long hwm = num(t, host, "peak_bytes_in_use", where);
		SS_E2E_CHECK(t, hwm >= rss, "memory_profile.json: %s: peak %llu < in use %llu",
			     where, hwm, rss);
		SS_E2E_CHECK(t, rss > last_host,
			     "memory_profile.json: %s: bytes_in_use %llu, not above the "
			     "previous entry's %llu while s-memory keeps allocating",
			     where, rss, last_host);
		last_host = rss;
	}
}

/* The fake NVML: exact GPU values, no info line, the leak hint. */
static void test_fake_nvml(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_fake(t);
	ss_e2e_build(t, "memory", NULL);
	SS_E2E_SH_OK(t, FAKE_ENV " " SS " record " SETS " -o run -- ./s-memory %d 1 " EVERY_S,
		     STEPS);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "memory:") == 0 &&
			     ss_e2e_lines_with(t->err, "lib-nvml-fake") == 0,
		     "record with the fake NVML: expected no memory info line, got: %s",
		     t->err);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	SS_E2E_EXPECT_CALLS(t, tr, "step", 0, STEPS);

	cJSON *trace = ss_e2e_load_json(t, "run/trace.json");
	check_counters(t, trace, 1);
	cJSON_Delete(trace);
	cJSON *prof = ss_e2e_load_json(t, "run/memory_profile.json");
	check_profile(t, prof, 1);
	cJSON_Delete(prof);

	SS_E2E_SH_OK(t, SS " memory run");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "stepscope: host memory grew in ") == 1 &&
			     ss_e2e_lines_with(t->err, "a leak?") == 1,
		     "stepscope memory: expected one leak hint, for host; got: %s", t->err);
	SS_E2E_CHECK(t, !strstr(t->err, "cuda:0 memory grew") &&
			     !strstr(t->err, "cuda:1 memory grew"),
		     "stepscope memory: a leak hint for a steady GPU: %s", t->err);
	SS_E2E_SH_OK(t, "head -c 300 run/memory.svg | grep -q '<svg'");
	ss_e2e_pass(t);
}

/* CUDA_VISIBLE_DEVICES names the fake's second device by UUID: it is
 * cuda:0, and the first is not reported. */
static void test_fake_visible(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_fake(t);
	ss_e2e_build(t, "memory", NULL);
	SS_E2E_SH_OK(t, FAKE_ENV " CUDA_VISIBLE_DEVICES=GPU-fake-1 " SS " record "
			SETS " -o run -- ./s-memory 6 1 " EVERY_S);
	cJSON *prof = ss_e2e_load_json(t, "run/memory_profile.json");
	const cJSON *e;
	int k = 0;
	cJSON_ArrayForEach(e, prof) {
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(e, "memory");
		const cJSON *dev = cJSON_GetObjectItemCaseSensitive(mem, "cuda:0");
		k++;
		SS_E2E_CHECK(t, cJSON_GetArraySize(mem) == 2 && cJSON_IsObject(dev) &&
				     num(t, dev, "bytes_in_use", "cuda:0") == want_devs[1].in_use &&
				     num(t, dev, "bytes_limit", "cuda:0") == want_devs[1].limit,
			     "memory_profile.json entry %d: expected cuda:0 (the fake's "
			     "device 1: %llu of %llu bytes) and host only",
			     k, want_devs[1].in_use, want_devs[1].limit);
	}
	SS_E2E_CHECK(t, k == 2, "memory_profile.json: expected 2 entries, got %d", k);
	cJSON_Delete(prof);
	ss_e2e_pass(t);
}

/* A schedule that ends early does not end the sampling (docs/memory.md:
 * "memory is sampled for the whole run, recorded steps or not"): a window
 * of steps 2-3 in a run of 12 steps still gives memory_profile.json an
 * entry every 2 steps, 2 to 10. */
static void test_after_schedule(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int k = 0, bad = 0;

	ss_e2e_build(t, "memory", NULL);
	SS_E2E_SH_OK(t, "STEPSCOPE_NVML_LIBRARY=\"$PWD/no-such-nvml.so\" " SS " record " SETS
			" --set window.start_step=2 --set window.end_step=4 -o run -- "
			"./s-memory 12 1 " EVERY_S);
	cJSON *prof = ss_e2e_load_json(t, "run/memory_profile.json");
	const cJSON *e;
	cJSON_ArrayForEach(e, prof) {
		k++;
		if (num(t, e, "step", "memory_profile.json") != (unsigned long long)(k * EVERY))
			bad++;
	}
	SS_E2E_CHECK(t, k == 5 && !bad,
		     "memory_profile.json after a window of steps 2-3 in 12 steps: expected "
		     "the 5 entries of steps 2, 4, 6, 8, 10, got %d (%d at another step)", k, bad);
	cJSON_Delete(prof);
	/* the window itself is what it was: steps 2 and 3 */
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	SS_E2E_EXPECT_CALLS(t, tr, "step", 0, 2);
	ss_e2e_pass(t);
}

/* No NVML: one info line, host memory only. */
static void test_no_nvml(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const char nodriver[] =
		"stepscope: memory: no NVIDIA driver (libnvidia-ml.so.1 not found); "
		"polling host memory only";

	ss_e2e_build(t, "memory", NULL);
	void *real = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (real) {
		dlclose(real);
		print_message("e2e: libnvidia-ml.so.1 is installed here: the run "
			      "without STEPSCOPE_NVML_LIBRARY is not checked\n");
	} else {
		SS_E2E_SH_OK(t, "env -u STEPSCOPE_NVML_LIBRARY " SS " record " SETS
				" -o run -- ./s-memory 6 1 " EVERY_S);
		SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "memory:") == 1 &&
				     ss_e2e_lines_with(t->err, nodriver) == 1,
			     "record without NVML: expected exactly one line '%s', got: %s",
			     nodriver, t->err);
		cJSON *trace = (ss_e2e_symbolize(t, "run"), ss_e2e_load_json(t, "run/trace.json"));
		check_counters(t, trace, 0);
		cJSON_Delete(trace);
		cJSON *prof = ss_e2e_load_json(t, "run/memory_profile.json");
		SS_E2E_CHECK(t, cJSON_GetArraySize(prof) == 2,
			     "memory_profile.json: expected 2 entries (steps 2, 4)");
		const cJSON *e;
		cJSON_ArrayForEach(e, prof) {
			const cJSON *mem = cJSON_GetObjectItemCaseSensitive(e, "memory");
			SS_E2E_CHECK(t, cJSON_GetArraySize(mem) == 1 &&
					     cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(mem, "host")),
				     "memory_profile.json: expected host only without NVML");
		}
		cJSON_Delete(prof);
	}

	/* a library named in STEPSCOPE_NVML_LIBRARY that is not there */
	SS_E2E_SH_OK(t, "STEPSCOPE_NVML_LIBRARY=\"$PWD/no-such-nvml.so\" " SS " record "
			SETS " -o run2 -- ./s-memory 6 1 " EVERY_S);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "memory:") == 1 &&
			     ss_e2e_lines_with(t->err, "stepscope: memory: cannot load "
						"STEPSCOPE_NVML_LIBRARY=") == 1 &&
			     ss_e2e_lines_with(t->err, "no-such-nvml.so") == 1 &&
			     ss_e2e_lines_with(t->err, "polling host memory only") == 1,
		     "record with a missing STEPSCOPE_NVML_LIBRARY: expected exactly one "
		     "'cannot load' line, got: %s", t->err);
	SS_E2E_SH_OK(t, "grep -c '\"host\"' run2/memory_profile.json && "
			"! grep -q cuda run2/memory_profile.json");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_fake_nvml),
		SS_E2E_TEST(test_fake_visible),
		SS_E2E_TEST(test_no_nvml),
		SS_E2E_TEST(test_after_schedule),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
