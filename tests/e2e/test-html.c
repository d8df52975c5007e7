/*
 * test-html.c - end to end: s-recursion recorded and turned into a
 * report.html; the page must be self-contained (no http(s) resource, no
 * script), hold the summary table, the step plot and the flame graph, and
 * render in headless Chromium without console errors to a screenshot that
 * is neither blank nor solid (the PNG is decoded by tests/lib/png.c and its
 * non-white pixels counted, the same on every machine).
 *
 * Fails, saying so, when chromium is absent (Debian package chromium;
 * `make test` installs it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "e2e.h"
#include "png.h"

/* The fraction of pixels of the PNG at PATH (what Chromium writes) that
 * are not white once laid over white: luma below 97%, as ImageMagick's
 * `-colorspace gray -threshold 97%`.  -1 with WHY filled in when the file
 * cannot be read (tests/lib/png.c). */
static double png_ink(const char *path, char *why, size_t nwhy)
{
	unsigned char *rgb;
	uint32_t w, h;
	size_t dark = 0;

	if (ss_png_rgb(path, &rgb, &w, &h, why, nwhy))
		return -1;
	for (size_t i = 0; i < (size_t)w * h; i++) {
		const unsigned char *p = rgb + 3 * i;
		dark += 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2] < 0.97 * 255;
	}
	free(rgb);
	return (double)dark / ((double)w * h);
}

static void test_html_renders(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	ss_e2e_build(t, "recursion", NULL);
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "run", "recursion", "12 9 50"), 0);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" html -q -o report.html run");
	SS_E2E_SH_OK(t, "grep -c '<table id=\"summary\"' report.html");
	SS_E2E_SH_OK(t, "grep -q '<title>fib ' report.html");
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -Eiq '(src|href)=\"(https?:)?//|<script|@import|url\\(' report.html") == 1,
		     "report.html must not reference anything outside itself");

	ss_e2e_need(t, "command -v chromium || command -v chromium-browser",
		    "chromium", "chromium");
	SS_E2E_SH_OK(t, "b=$(command -v chromium || command -v chromium-browser); "
		     "timeout 120 \"$b\" --headless --no-sandbox --disable-gpu "
		     "--disable-background-networking --disable-component-update --disable-sync "
		     "--no-first-run --user-data-dir=\"$PWD/chrome-profile\" "
		     "--enable-logging=stderr --v=0 --window-size=1200,900 "
		     "--screenshot=\"$PWD/shot.png\" \"file://$PWD/report.html\" 2>chrome.log; "
		     "test -s shot.png");
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -E 'CONSOLE.*(ERROR|error)|Uncaught' chrome.log") == 1,
		     "chromium reported console errors (see chrome.log in %s)", t->dir);
	char p[4200], why[200];
	snprintf(p, sizeof(p), "%s/shot.png", t->dir);
	double ink = png_ink(p, why, sizeof(why));
	SS_E2E_CHECK(t, ink >= 0, "%s: %s", p, why);
	print_message("test-html: %.4f of the screenshot's pixels are not white\n", ink);
	SS_E2E_CHECK(t, ink > 0.02 && ink < 0.95,
		     "screenshot looks blank or solid: %.4f of pixels not white", ink);
	ss_e2e_pass(t);
}

/* The panels of a run with two schedule cycles and memory samples: the
 * flame graph scales to the page (viewBox, width 100%), step bars are
 * grouped by cycle with their step numbers, both RSS lines are drawn (the
 * earlier one wider), and a large trace.json gets a size note with the
 * command for the Perfetto file.  The screenshot at 1200 px is shot.png
 * in the test's directory. */
static void test_html_panels(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	ss_e2e_build(t, "steps", NULL);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\nschedule:\\n  wait: 1\\n"
		     "  active: 3\\n  repeat: 2\\nmemory:\\n  enabled: true\\n"
		     "  interval_ms: 1\\n' > c.yaml");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c c.yaml -o run -- "
		     "./s-steps fn 12 >/dev/null");
	/* a trace.json of 300 MB (sparse): the page must warn and name the
	 * Perfetto command */
	SS_E2E_SH_OK(t, "truncate -s 300M run/trace.json");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" html -q -o report.html run");
	SS_E2E_SH_OK(t, "grep -q '<svg [^>]*width=\"100%%\" viewBox=\"0 0 1200 ' report.html");
	SS_E2E_SH_OK(t, "grep -q '>cycle 0: steps 1..3</text>' report.html");
	SS_E2E_SH_OK(t, "grep -q '>cycle 1: steps 5..7</text>' report.html");
	SS_E2E_SH_OK(t, "grep -q '>6</text>' report.html");
	SS_E2E_SH_OK(t, "grep -q 'id=\"size-note\".*trace.json</code> is 315 MB.*"
		     "stepscope symbolize --format perfetto run</code>' report.html");
	SS_E2E_SH_OK(t, "test $(grep -c '<polyline' report.html) -ge 2");
	SS_E2E_SH_OK(t, "grep -q 'stroke-width=\"4.5\" stroke-opacity=\"0.55\"' report.html");
	SS_E2E_SH_OK(t, "rm run/trace.json; \"$SS_E2E_BUILD/bin/stepscope\" html -q -o small.html run");
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -q 'size-note' small.html") == 1,
		     "a small run got the size note");
	if (ss_e2e_sh(t, "command -v chromium || command -v chromium-browser") != 0) {
		fprintf(stderr, "test-html: skipped the rendering: chromium is not installed "
			"(apt-get install chromium)\n");
		ss_e2e_pass(t);
		skip();
	}
	SS_E2E_SH_OK(t, "b=$(command -v chromium || command -v chromium-browser); "
		     "timeout 120 \"$b\" --headless --no-sandbox --disable-gpu "
		     "--disable-background-networking --disable-component-update --disable-sync "
		     "--no-first-run --user-data-dir=\"$PWD/chrome-profile\" "
		     "--enable-logging=stderr --v=0 --window-size=1200,2400 --hide-scrollbars "
		     "--screenshot=\"$PWD/shot.png\" \"file://$PWD/report.html\" 2>chrome.log; "
		     "test -s shot.png");
	if (getenv("SS_HTML_SHOT"))  /* keep the picture to look at */
		SS_E2E_SH_OK(t, "cp shot.png \"$SS_HTML_SHOT\"");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_html_renders),
		SS_E2E_TEST(test_html_panels),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
