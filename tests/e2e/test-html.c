/*
 * test-html.c - end to end: s-recursion recorded and turned into a
 * report.html; the page must be self-contained (no http(s) resource, no
 * script), hold the summary table, the step plot and the flame graph, and
 * render in headless Chromium without console errors to a screenshot that
 * is neither blank nor solid (the PNG is decoded here with zlib and its
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
#include <zlib.h>

#include <cmocka.h>

#include "e2e.h"

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* The fraction of pixels of the 8-bit RGB or RGBA, non-interlaced PNG at
 * PATH (what Chromium writes) that are not white once laid over white:
 * luma below 97%, as ImageMagick's `-colorspace gray -threshold 97%`.
 * -1 with WHY filled in when the file is something else. */
static double png_ink(const char *path, char *why, size_t nwhy)
{
	FILE *f = fopen(path, "rb");
	unsigned char *png = NULL, *idat = NULL, *raw = NULL;
	size_t n = 0, nidat = 0, cap = 0;
	uint32_t w = 0, h = 0, bpp = 0;
	double ink = -1;

	snprintf(why, nwhy, "not a PNG");
	if (!f)
		return -1;
	for (size_t r = 1; r > 0; n += r) {
		if (n + 65536 > cap && !(png = realloc(png, cap = 2 * cap + 65536)))
			abort();
		r = fread(png + n, 1, cap - n, f);
	}
	fclose(f);
	if (n < 8 || memcmp(png, "\x89PNG\r\n\x1a\n", 8))
		goto out;
	for (size_t at = 8; at + 12 <= n; ) {
		uint32_t len = be32(png + at);
		const unsigned char *d = png + at + 8;
		if (len > n - at - 12)
			goto out;
		if (!memcmp(png + at + 4, "IHDR", 4) && len >= 13) {
			w = be32(d), h = be32(d + 4);
			bpp = d[9] == 6 ? 4 : d[9] == 2 ? 3 : 0;
			if (d[8] != 8 || !bpp || d[12] != 0 || !w || !h || w > 16384 || h > 16384) {
				snprintf(why, nwhy, "PNG of depth %d, colour type %d, interlace %d: "
					 "only 8-bit RGB(A) without interlace is read", d[8], d[9], d[12]);
				goto out;
			}
		} else if (!memcmp(png + at + 4, "IDAT", 4)) {
			if (!(idat = realloc(idat, nidat + len + 1)))
				abort();
			memcpy(idat + nidat, d, len);
			nidat += len;
		}
		at += 12 + (size_t)len;
	}
	size_t stride = (size_t)w * bpp, want = (size_t)h * (stride + 1);
	uLongf got = want;
	if (!bpp || !(raw = malloc(want)))
		goto out;
	if (uncompress(raw, &got, idat, nidat) != Z_OK || got != want) {
		snprintf(why, nwhy, "PNG image data does not inflate to %ux%u pixels", w, h);
		goto out;
	}
	size_t dark = 0;
	for (uint32_t y = 0; y < h; y++) {
		unsigned char *row = raw + y * (stride + 1), *cur = row + 1;
		const unsigned char *up = y ? cur - (stride + 1) : NULL;
		for (size_t i = 0; i < stride; i++) {
			int a = i >= bpp ? cur[i - bpp] : 0, b = up ? up[i] : 0;
			int c = up && i >= bpp ? up[i - bpp] : 0;
			switch (row[0]) {
			case 0: break;
			case 1: cur[i] += a; break;
			case 2: cur[i] += b; break;
			case 3: cur[i] += (a + b) / 2; break;
			case 4: cur[i] += paeth(a, b, c); break;
			default:
				snprintf(why, nwhy, "PNG row %u has filter %d", y, row[0]);
				goto out;
			}
		}
		for (size_t x = 0; x < stride; x += bpp) {
			double al = bpp == 4 ? cur[x + 3] / 255.0 : 1, v[3];
			for (int k = 0; k < 3; k++)
				v[k] = cur[x + k] * al + 255 * (1 - al);
			dark += 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < 0.97 * 255;
		}
	}
	ink = (double)dark / ((double)w * h);
out:
	free(png);
	free(idat);
	free(raw);
	return ink;
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
