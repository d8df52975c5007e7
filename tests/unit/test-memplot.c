/*
 * test-memplot.c - `stepscope memory` (symbolize/cmd/memory.c) on synthetic
 * run directories: the leak hint's exact text, no hint for flat or noisy
 * memory, a self-contained SVG with one line per device, exit 2 and one
 * line for a directory without memory data.
 *
 * Includes cmd/memory.c to reach its pure pieces (the hint rule) and runs
 * cmd_memory() itself with stderr captured into a file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "../../symbolize/cmd/memory.c"
#include "unit-util.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ss-memplot.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(tmpdir);
}

/* memory_profile.json with n entries; host grows by host_step bytes per
 * entry (alternating sign when noisy), cuda:0 stays flat. */
static void write_profile(const char *dir, int n, double host_step, int noisy)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory_profile.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "[\n");
	for (int i = 0; i < n; i++) {
		double host = 2147483648.0 + (noisy ? (i % 2 ? host_step : 0) : host_step * i);
		fprintf(f,
			"{\"step\": %d, \"timestamp_ns\": %d, \"pid\": 4242, \"memory\": "
			"{\"cuda:0\": {\"bytes_in_use\": 1073741824, \"peak_bytes_in_use\": 1610612736, \"bytes_limit\": 85899345920}, "
			"\"host\": {\"bytes_in_use\": %.0f, \"peak_bytes_in_use\": %.0f}}}%s\n",
			100 * (i + 1), i, host, host + 1048576, i + 1 < n ? "," : "");
	}
	fprintf(f, "]\n");
	fclose(f);
}

/* Run `stepscope memory ARGS` with stderr in *err (malloc'ed). */
static int run_memory(char **err, const char *a1, const char *a2, const char *a3)
{
	char path[512], *argv[5] = { "memory", (char *)a1, (char *)a2, (char *)a3, NULL };
	int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
	int saved, fd, rc;

	snprintf(path, sizeof(path), "%s/stderr.txt", tmpdir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	rc = cmd_memory(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*err = ss_memplot_slurp(path);
	assert_non_null(*err);
	return rc;
}

static void test_hint_rule(void **state)
{
	double grow[12], flat[12], one_dip[12], small[12];
	char buf[512];
	(void)state;

	for (int i = 0; i < 12; i++) {
		grow[i] = 1e9 + i * 4.3e6;
		flat[i] = 1e9;
		one_dip[i] = 1e9 + i * 4.3e6 - (i >= 6 ? 5e6 : 0);
		small[i] = 1e9 + i * 1000;
	}
	assert_int_equal(ss_memplot_leak_hint("host", grow, 12, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "stepscope: host memory grew in 10 of the last 10 entries (+41 MiB): a leak? see docs/memory.md");
	/* one change that was no rise is still a leak */
	assert_int_equal(ss_memplot_leak_hint("cuda:0", one_dip, 12, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "stepscope: cuda:0 memory grew in 9 of the last 10 entries (+36 MiB): a leak? see docs/memory.md");
	assert_int_equal(ss_memplot_leak_hint("host", flat, 12, buf, sizeof(buf)), 0);
	assert_int_equal(ss_memplot_leak_hint("host", small, 12, buf, sizeof(buf)), 0);
	assert_int_equal(ss_memplot_leak_hint("host", grow, 3, buf, sizeof(buf)), 0);
	/* fewer entries than the window: the changes there are */
	assert_int_equal(ss_memplot_leak_hint("host", grow, 6, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "stepscope: host memory grew in 5 of the last 5 entries (+21 MiB): a leak? see docs/memory.md");
}

static void test_leak_run(void **state)
{
	char out[512], *err, *svg;
	(void)state;

	write_profile(tmpdir, 12, 4.3e6, 0);
	snprintf(out, sizeof(out), "%s/m.svg", tmpdir);
	assert_int_equal(run_memory(&err, tmpdir, "-o", out), 0);
	if (!strstr(err, "stepscope: host memory grew in 10 of the last 10 entries (+41 MiB): a leak? see docs/memory.md\n"))
		fail_msg("expected the host leak hint, got:\n%s", err);
	if (strstr(err, "cuda:0 memory grew"))
		fail_msg("flat cuda:0 memory got a hint:\n%s", err);
	free(err);
	svg = ss_memplot_slurp(out);
	assert_non_null(svg);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "</svg>\n"));
	/* a legend entry and a line each: host, host peak, cuda:0, cuda:0 peak */
	assert_non_null(strstr(svg, ">host</text>"));
	assert_non_null(strstr(svg, ">host peak</text>"));
	assert_non_null(strstr(svg, ">cuda:0</text>"));
	assert_non_null(strstr(svg, ">cuda:0 peak</text>"));
	size_t lines = 0;
	for (const char *p = svg; (p = strstr(p, "<polyline")); p++)
		lines++;
	assert_int_equal(lines, 4);
	/* self-contained: nothing fetched, nothing run */
	assert_null(strstr(svg, "href"));
	assert_null(strstr(svg, "<script"));
	free(svg);
}

static void test_no_leak(void **state)
{
	char *err;
	(void)state;

	write_profile(tmpdir, 12, 4.3e6, 1);
	assert_int_equal(run_memory(&err, tmpdir, NULL, NULL), 0);
	if (strstr(err, "a leak?"))
		fail_msg("noisy memory got a hint:\n%s", err);
	assert_non_null(strstr(err, "stepscope: wrote "));
	free(err);
}

static void test_no_data(void **state)
{
	char *err;
	(void)state;

	assert_int_equal(run_memory(&err, tmpdir, NULL, NULL), 2);
	char want[600];
	snprintf(want, sizeof(want),
		 "stepscope: %s: no memory data (no memory_profile.json, no memory samples in the traces); record with --set memory.enabled=true\n",
		 tmpdir);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(run_memory(&err, "/nonexistent/run", NULL, NULL), 2);
	assert_string_equal(err, "stepscope: /nonexistent/run: no such directory\n");
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hint_rule),
		cmocka_unit_test_setup_teardown(test_leak_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_leak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_data, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
