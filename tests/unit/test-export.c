/*
 * test-export.c - what every text exporter of `stepscope symbolize` owes
 * its viewer, on one synthetic run (exact times, names from this binary):
 *   - Chrome JSON: valid UTF-8 whatever bytes a name holds (invalid ones
 *     become \ufffd), function slices without "cat" or args and at most 90
 *     bytes each by default, args file and addr with --details, and
 *     consecutive steps that do not share an instant;
 *   - speedscope: checked by tests/lib/speedscope-check.cjs against the
 *     npm package speedscope's own file-format-schema.json, one evented
 *     profile per thread named after it, steps as the top level (a call
 *     running across two steps shows under both);
 *   - folded: every thread's stacks start at the thread's name, what
 *     lies inside a step of its thread goes through "ProfilerStep" (under
 *     the call that spans the steps), and the command says the values are nanoseconds, not samples;
 *   - the JSON string writer of report and diff: quoted, escaped, valid UTF-8.
 *
 * The speedscope check runs node on `speedscope` and `ajv` as
 * tests/lib/npm pins them, which make installs into build/npm (npm ci)
 * before it builds this test; without node (Debian package nodejs, which
 * `make test` installs) or those modules it fails, never skips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export.h"
#include "trace-writer.h"
#include "unit-util.h"

__attribute__((noinline, used)) void ss_x_outer(void) { __asm__ volatile(""); }
__attribute__((noinline, used)) void ss_x_inner(void) { __asm__ volatile("nop"); }

static char dir[] = "/tmp/ss-test-export-XXXXXX";

/* main thread 77: outer [1000, 5000] calls inner at [1100,1200]
 * [2000,2500] [3000,4000], range "bad\xff name" [1500, 1600]; steps 7 at
 * 900 and 8 at 2900.  Worker 78 "w\xc3rker": inner [1200, 1300]. */
static int setup(void **state)
{
	struct ss_tw *w;
	char path[256];
	struct ss_event e[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_x_outer),
		ss_ut_ev(1100, SS_EV_ENTER, ss_x_inner), ss_ut_ev(1200, SS_EV_EXIT, ss_x_inner),
		ss_ut_event(1500, SS_EV_RANGE_PUSH, 5), ss_ut_event(1600, SS_EV_RANGE_POP, 5),
		ss_ut_ev(2000, SS_EV_ENTER, ss_x_inner), ss_ut_ev(2500, SS_EV_EXIT, ss_x_inner),
		ss_ut_ev(3000, SS_EV_ENTER, ss_x_inner), ss_ut_ev(4000, SS_EV_EXIT, ss_x_inner),
		ss_ut_ev(5000, SS_EV_EXIT, ss_x_outer),
	};
	struct ss_event e2[] = {
		ss_ut_ev(1200, SS_EV_ENTER, ss_x_inner), ss_ut_ev(1300, SS_EV_EXIT, ss_x_inner),
	};

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	w = ss_tw_new(SS_CLOCK_MONOTONIC, 77);
	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 77, "main-thread");
	ss_tw_meta_thread(w, 78, "w\xc3rker");
	ss_tw_meta_string(w, 5, "bad\xff name");
	ss_tw_meta_step(w, 900, 7, 77, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 2900, 8, 77, 1, SS_STEP_RECORD, 0);
	ss_tw_events(w, 77, 1, 0, e, sizeof(e) / sizeof(e[0]), 64);
	ss_tw_events(w, 78, 2, 0, e2, sizeof(e2) / sizeof(e2[0]), 64);
	snprintf(path, sizeof(path), "%s/prog.77.sstrace", dir);
	if (ss_tw_write(w, path, SIZE_MAX))
		return -1;
	ss_tw_free(w);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(dir);
}

/* Offset of the first byte that is not valid UTF-8, or -1. */
static long utf8_bad(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 :
			     (*p >> 3) == 30 ? 4 : 0;
		if (!n || (n > 1 && *p < 0xc2) || (*p > 0xf4))
			return (long)((const char *)p - s);
		for (unsigned i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return (long)((const char *)p - s);
		p += n;
	}
	return -1;
}

static char *symbolize(const char *opts, const char *name)
{
	char out[300], cmd[600];

	snprintf(out, sizeof(out), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), SS_BUILD_DIR "/bin/stepscope symbolize -q %s -o %%s %%s 2>/dev/null",
		 opts);
	ss_ut_sh(cmd, out, dir);
	return ss_ut_slurp(out);
}

static void test_chrome_default(void **state)
{
	char *t = symbolize("", "t.json"), *l, *save = NULL;
	double ts7 = 0, dur7 = 0, ts8 = 0;
	int nfn = 0;

	(void)state;
	assert_non_null(t);
	if (utf8_bad(t) >= 0)
		fail_msg("trace.json is not UTF-8 at byte %ld", utf8_bad(t));
	assert_non_null(strstr(t, "\"name\":\"bad\\ufffd name\""));
	assert_non_null(strstr(t, "\"name\":\"w\\ufffdrker\""));
	assert_null(strstr(t, "\"cat\":\"function\""));
	assert_null(strstr(t, "\"file\":"));
	for (l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *s7 = strstr(l, "\"name\":\"ProfilerStep#7\"");
		const char *s8 = strstr(l, "\"name\":\"ProfilerStep#8\"");
		if (!strncmp(l, "{\"ph\":\"X\",\"name\":\"ss_x_", 23)) {
			size_t n = strlen(l) + 1;  /* with its newline */
			nfn++;
			if (n > 90 || strstr(l, "\"args\""))
				fail_msg("function slice of %zu bytes (want <= 90, no args): %s", n, l);
		}
		if (s7)
			assert_int_equal(sscanf(strstr(l, "\"ts\":"), "\"ts\":%lf,\"dur\":%lf", &ts7,
						&dur7), 2);
		if (s8)
			assert_int_equal(sscanf(strstr(l, "\"ts\":"), "\"ts\":%lf", &ts8), 1);
	}
	assert_int_equal(nfn, 5);
	/* step 7 [900, 2899], step 8 from 2900: no shared instant */
	if (!(ts7 + dur7 < ts8))
		fail_msg("ProfilerStep#7 ends at %.3f, ProfilerStep#8 begins at %.3f", ts7 + dur7,
			 ts8);
	free(t);
}

static void test_chrome_details(void **state)
{
	char *t = symbolize("--details", "d.json");

	(void)state;
	assert_non_null(t);
	assert_non_null(strstr(t, "\"name\":\"ss_x_inner\""));
	assert_non_null(strstr(t, "\"file\":\""));
	assert_non_null(strstr(t, "\"addr\":\"0x"));
	assert_int_equal(utf8_bad(t), -1);
	free(t);
}

static void test_speedscope(void **state)
{
	char out[300], cmd[1200], *t;
	FILE *p;
	char line[512];
	int n = 0, ok_main = 0, ok_worker = 0;

	(void)state;
	if (system("command -v node >/dev/null"))
		fail_msg("test-export: node is not installed (Debian package nodejs; "
			 "`make test` installs it)");
	if (system("test -f " SS_BUILD_DIR "/npm/node_modules/speedscope/dist/release/file-format-schema.json"
		   " && test -d " SS_BUILD_DIR "/npm/node_modules/ajv"))
		fail_msg("test-export: speedscope and ajv are not in " SS_BUILD_DIR "/npm "
			 "(make installs them before it builds this test: npm ci from "
			 "tests/lib/npm)");
	t = symbolize("--format speedscope", "t.speedscope.json");
	assert_non_null(t);
	assert_int_equal(utf8_bad(t), -1);
	free(t);
	snprintf(out, sizeof(out), "%s/t.speedscope.json", dir);
	snprintf(cmd, sizeof(cmd), "NODE_PATH=" SS_BUILD_DIR "/npm/node_modules node "
		 SS_SOURCE_DIR "/tests/lib/speedscope-check.cjs %s 2>&1", out);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		n++;
		if (!strncmp(line, "error", 5))
			fail_msg("speedscope check: %s", line);
		/* outer runs across both steps: under each, nothing above them */
		ok_main += !strcmp(line, "main-thread (tid 77) [nanoseconds]: "
				   "ProfilerStep#7 ProfilerStep#8");
		ok_worker += !strcmp(line, "w\xef\xbf\xbdrker (tid 78) [nanoseconds]: ss_x_inner");
		if (!ok_main && !ok_worker)
			fprintf(stderr, "speedscope check: %s\n", line);
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ok_main, 1);
	assert_int_equal(ok_worker, 1);
}

static void test_folded(void **state)
{
	char out[300], err[300], *t, *e;

	(void)state;
	snprintf(out, sizeof(out), "%s/t.folded", dir);
	snprintf(err, sizeof(err), "%s/folded.err", dir);
	{
		char cmd[1000];
		snprintf(cmd, sizeof(cmd), SS_BUILD_DIR "/bin/stepscope symbolize --format folded "
			 "-o %s %s 2>%s", out, dir, err);
		assert_int_equal(system(cmd), 0);
	}
	t = ss_ut_slurp(out);
	e = ss_ut_slurp(err);
	assert_non_null(t);
	assert_non_null(e);
	/* each thread's stacks under its name, the range where it was
	 * pushed (its 100 ns are not ss_x_outer's); what lies inside a step
	 * of its thread under ProfilerStep, below ss_x_outer, which spans
	 * both steps (the worker has no steps); self time in ns, said so */
	assert_string_equal(t, "main-thread;ss_x_outer 2300\n"
			       "main-thread;ss_x_outer;ProfilerStep;bad\xff name 100\n"
			       "main-thread;ss_x_outer;ProfilerStep;ss_x_inner 1600\n"
			       "w\xc3rker;ss_x_inner 100\n");
	assert_non_null(strstr(e, "folded values are self time in nanoseconds, not samples"));
	free(t);
	free(e);
}

/* report --format json and diff --format json write names with
 * ss_export_json_fputs: quoted, escaped, valid UTF-8 whatever the bytes
 * (a short name on the stack, a long one through malloc) */
static void test_json_fputs(void **state)
{
	char *buf = NULL, *big;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	ss_export_json_fputs(f, "a\"b\\c\x01\x7f\xff\xc3\xa9");
	fputc('\n', f);
	big = malloc(1001);
	assert_non_null(big);
	memset(big, '"', 1000);
	big[1000] = 0;
	ss_export_json_fputs(f, big);
	fclose(f);
	assert_int_equal(len, strlen("\"a\\\"b\\\\c\\u0001\\u007f\\ufffd\xc3\xa9\"\n") + 2002);
	assert_memory_equal(buf, "\"a\\\"b\\\\c\\u0001\\u007f\\ufffd\xc3\xa9\"\n\"\\\"\\\"", 33);
	assert_memory_equal(buf + len - 3, "\\\"\"", 3);
	free(big);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrome_default),
		cmocka_unit_test(test_chrome_details),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_json_fputs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
