/*
 * test-html.c - end to end: s-recursion recorded and turned into a
 * report.html; the page must be self-contained (no http(s) resource, no
 * script), hold the summary table, the step plot and the flame graph, and
 * render in headless Chromium without console errors to a screenshot that
 * is not blank (a PNG well above the size of a blank page).
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

static void test_html_renders(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct stat st;

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
	/* a blank 1200x900 page compresses to a few kB; the drawn report is
	 * several times larger (same check on every machine: no ImageMagick) */
	char p[4200];
	snprintf(p, sizeof(p), "%s/shot.png", t->dir);
	SS_E2E_CHECK(t, !stat(p, &st) && st.st_size > 20000,
		     "screenshot is %lld bytes: a blank page is far smaller than a drawn one",
		     (long long)st.st_size);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_html_renders),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
