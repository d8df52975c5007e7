/*
 * test-html-overview.c - end to end, in a real headless Chromium driven
 * over the DevTools protocol (tests/lib/cdp.c): the "Overview" at the top
 * of `stepscope html` for s-html-overview, whose steps sleep (blocked),
 * spin (operators) and make 50000 tiny calls (stepscope's hooks).
 *
 *  - the stacked bars render: a screenshot of svg#overview-bars holds
 *    each category's exact colour over the area its share of the steps
 *    gives it (within 10%, and two blended pixel rows per segment), and
 *    none of a category the run has not;
 *  - hovering shows the numbers: a real mouse move onto a segment makes
 *    it the :hover element (the page's hover outline is drawn), and its
 *    <title> gives the step's time in that category as `stepscope advise
 *    --format json` reports it;
 *  - the findings' links resolve: every function a finding of advise
 *    names (the hooks check names add_one) is a link to a row of
 *    table#summary showing that name, and a click on the first makes
 *    that row the :target;
 *  - a run advise refuses (no step function) still gets a page that
 *    loads, with the reason in place of the overview;
 *  - a function a finding names that is not in the table's top 40 (42
 *    nested calls above it: s-html-overview deep) gets its row, and
 *    the link lands on it.
 *
 * Fails, saying so, when chromium is absent (Debian package chromium).
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

#include "advise.h"
#include "advise-html.h"
#include "cdp.h"
#include "e2e.h"
#include "png.h"

static struct ss_cdp cdp;
static int cdp_open;

/* the browser goes with the test, also when a check fails */
static int teardown(void **state)
{
	if (cdp_open)
		ss_cdp_close(&cdp);
	cdp_open = 0;
	return ss_e2e_teardown(state);
}

static void open_page(struct ss_e2e *t, const char *page)
{
	char prof[4300], url[4300];

	ss_e2e_need(t, "command -v chromium || command -v chromium-browser",
		    "chromium", "chromium");
	SS_E2E_SH_OK(t, "mkdir -p chrome-profile; command -v chromium || "
		     "command -v chromium-browser");
	t->out[strcspn(t->out, "\n")] = 0;
	snprintf(prof, sizeof(prof), "%s/chrome-profile", t->dir);
	snprintf(url, sizeof(url), "file://%s/%s", t->dir, page);
	cdp_open = 1;
	SS_E2E_CHECK(t, !ss_cdp_open(&cdp, t->out, prof, url, 1200, 900),
		     "chromium: %s (its log: %s/chrome.log)", cdp.why, prof);
}

/* The value of expr in the page; fails the test on an exception. */
static char *js(struct ss_e2e *t, const char *expr)
{
	char *s = ss_cdp_eval(&cdp, expr);

	SS_E2E_CHECK(t, s, "evaluating %s: %s", expr, cdp.why);
	return s;
}

static double js_num(struct ss_e2e *t, const char *expr)
{
	char *s = js(t, expr);
	double v = atof(s);

	free(s);
	return v;
}

static cJSON *load_json(struct ss_e2e *t, const char *name)
{
	char p[4300], *buf;
	FILE *f;
	long n;
	cJSON *j;

	snprintf(p, sizeof(p), "%s/%s", t->dir, name);
	f = fopen(p, "rb");
	SS_E2E_CHECK(t, f, "cannot open %s", p);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	SS_E2E_CHECK(t, buf && fread(buf, 1, (size_t)n, f) == (size_t)n, "cannot read %s", p);
	fclose(f);
	j = cJSON_Parse(buf);
	free(buf);
	SS_E2E_CHECK(t, j, "%s is not JSON", p);
	return j;
}

static uint64_t step_ns(const cJSON *st, enum ss_adv_cat c)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(st, "ns"), ss_adv_cat_key(c));

	return cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
}

static unsigned hex_rgb(const char *h)
{
	return (unsigned)strtoul(h + 1, NULL, 16);
}

/* The bars: exact-colour pixels of each category against the area the
 * steps' numbers give it, in a screenshot of the svg (its clip is in
 * page coordinates). */
static void check_bars(struct ss_e2e *t, const cJSON *per, size_t n)
{
	double r[4], scale, bw, area[SS_ADV_NCAT] = { 0 }, max = 0;
	size_t px[SS_ADV_NCAT] = { 0 }, segs[SS_ADV_NCAT] = { 0 }, i, c, nseg = 0;
	unsigned char *rgb;
	uint32_t w, h;
	char *s, p[4300], why[200];

	s = js(t, "(()=>{const e=document.getElementById('overview-bars');"
	       "e.scrollIntoView();const r=e.getBoundingClientRect();"
	       "return [r.x+scrollX,r.y+scrollY,r.width,r.height].join(' ')})()");
	SS_E2E_CHECK(t, sscanf(s, "%lf %lf %lf %lf", &r[0], &r[1], &r[2], &r[3]) == 4 &&
		     r[2] > 500 && r[3] > 100, "svg#overview-bars at '%s'", s);
	free(s);
	snprintf(p, sizeof(p), "%s/bars.png", t->dir);
	SS_E2E_CHECK(t, !ss_cdp_screenshot(&cdp, r[0], r[1], r[2], r[3], p), "%s", cdp.why);
	SS_E2E_CHECK(t, !ss_png_rgb(p, &rgb, &w, &h, why, sizeof(why)), "%s: %s", p, why);
	for (i = 0; i < (size_t)w * h; i++) {
		unsigned v = (unsigned)rgb[3 * i] << 16 | (unsigned)rgb[3 * i + 1] << 8 | rgb[3 * i + 2];
		for (c = 0; c < SS_ADV_NCAT; c++)
			px[c] += v == hex_rgb(ss_adv_html_color(c));
	}
	free(rgb);
	/* svg.c's layout: viewBox 1000 x 220, bars from x 70 to 990, plot
	 * 186 high for the tallest step */
	for (i = 0; i < n; i++) {
		double d = cJSON_GetObjectItem(cJSON_GetArrayItem(per, (int)i), "step_ns")->valuedouble;
		max = d > max ? d : max;
	}
	scale = r[2] / 1000.0;
	bw = (920.0 / (double)n - 1) * scale;
	for (i = 0; i < n; i++)
		for (c = 0; c < SS_ADV_NCAT; c++) {
			uint64_t v = step_ns(cJSON_GetArrayItem(per, (int)i), c);
			area[c] += bw * 186.0 * scale * (double)v / max;
			segs[c] += v > 0;
			nseg += v > 0;
		}
	SS_E2E_CHECK(t, js_num(t, "document.querySelectorAll('#overview-bars rect.seg').length") ==
		     (double)nseg, "expected %zu segments (the non-zero categories of %zu steps)",
		     nseg, n);
	for (c = 0; c < SS_ADV_NCAT; c++) {
		/* a segment's top and bottom rows may blend with its
		 * neighbours: up to two rows of the bar's width each */
		double edge = 2 * bw * (double)segs[c];
		print_message("test-html-overview: %-16s %7zu px of %s, expected %.0f +- %.0f\n",
			      ss_adv_cat_name(c), px[c], ss_adv_html_color(c), area[c], edge);
		if (area[c] == 0)
			SS_E2E_CHECK(t, px[c] == 0, "%s: %zu px drawn for a category with no time",
				     ss_adv_cat_name(c), px[c]);
		else
			SS_E2E_CHECK(t, px[c] >= 0.9 * area[c] - edge && px[c] <= 1.1 * area[c] + edge,
				     "%s: %zu px of %s, expected %.0f +- %.0f (bars.png in %s)",
				     ss_adv_cat_name(c), px[c], ss_adv_html_color(c), area[c],
				     edge, t->dir);
	}
	SS_E2E_CHECK(t, area[SS_ADV_OPS] > 400 && area[SS_ADV_BLOCKED] > 400 &&
		     area[SS_ADV_HOOKS] > 400, "the planted operators, blocked time and hooks "
		     "are not all visible in the bars");
}

/* Hover the segment of category c in the step where it is tallest: it
 * becomes :hover, outlined, and its title gives advise's numbers. */
static void check_hover(struct ss_e2e *t, const cJSON *per, size_t n, enum ss_adv_cat c)
{
	size_t best = 0, i;
	uint64_t bv = 0;
	double x, y;
	char expr[600], want[400], t1[32], t2[32], *s;
	const cJSON *st;

	for (i = 0; i < n; i++)
		if (step_ns(cJSON_GetArrayItem(per, (int)i), c) > bv)
			bv = step_ns(cJSON_GetArrayItem(per, (int)i), c), best = i;
	st = cJSON_GetArrayItem(per, (int)best);
	uint64_t d = (uint64_t)cJSON_GetObjectItem(st, "step_ns")->valuedouble;
	snprintf(want, sizeof(want), "step %.0f (pid %.0f, tid %.0f): %s %s = %.1f%% of %s",
		 cJSON_GetObjectItem(st, "step")->valuedouble,
		 cJSON_GetObjectItem(st, "pid")->valuedouble,
		 cJSON_GetObjectItem(st, "tid")->valuedouble, ss_adv_cat_name(c),
		 ss_agg_fmt_time(bv, t1, 32), 100.0 * (double)bv / (double)d,
		 ss_agg_fmt_time(d, t2, 32));
	snprintf(expr, sizeof(expr), "(()=>{const e=document.querySelector('#overview-bars "
		 "rect.seg[data-bar=\"%zu\"][data-seg=\"%d\"]');const r=e.getBoundingClientRect();"
		 "return (r.x+r.width/2)+' '+(r.y+r.height/2)})()", best, (int)c);
	s = js(t, expr);
	SS_E2E_CHECK(t, sscanf(s, "%lf %lf", &x, &y) == 2, "segment at '%s'", s);
	free(s);
	SS_E2E_CHECK(t, !ss_cdp_mouse_move(&cdp, x, y), "%s", cdp.why);
	s = js(t, "(()=>{const h=document.querySelectorAll(':hover');const e=h[h.length-1];"
	       "return e.tagName+'|'+e.getAttribute('data-bar')+'|'+e.getAttribute('data-seg')+"
	       "'|'+getComputedStyle(e).stroke+'|'+e.querySelector('title').textContent})()");
	snprintf(expr, sizeof(expr), "rect|%zu|%d|rgb(0, 0, 0)|%s", best, (int)c, want);
	print_message("test-html-overview: hover at %.0f,%.0f: %s\n", x, y, s);
	SS_E2E_CHECK(t, !strncmp(s, expr, strlen(expr)),
		     "hovering %s of step %zu: got '%s', expected '%s'", ss_adv_cat_name(c),
		     best, s, expr);
	if (c == SS_ADV_OPS) {  /* with the step's largest operator */
		const cJSON *op = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "ops"), 0);
		snprintf(want, sizeof(want), "; top: %s %s",
			 cJSON_GetObjectItem(op, "name")->valuestring,
			 ss_agg_fmt_time((uint64_t)cJSON_GetObjectItem(op, "ns")->valuedouble,
					 t1, 32));
		SS_E2E_CHECK(t, strstr(s, want), "'%s' lacks '%s'", s, want);
	}
	free(s);
	/* away again: the outline goes */
	SS_E2E_CHECK(t, !ss_cdp_mouse_move(&cdp, 2, 2), "%s", cdp.why);
	snprintf(expr, sizeof(expr), "getComputedStyle(document.querySelector('#overview-bars "
		 "rect.seg[data-bar=\"%zu\"][data-seg=\"%d\"]')).stroke", best, (int)c);
	s = js(t, expr);
	SS_E2E_CHECK(t, !strcmp(s, "none"), "outline after the mouse left: %s", s);
	free(s);
}

/* Every function a finding names is a link to its row of the summary
 * table; a click on the first makes that row the :target. */
static void check_links(struct ss_e2e *t, const cJSON *adv)
{
	const cJSON *fs = cJSON_GetObjectItem(adv, "findings"), *f;
	size_t named = 0, add_one = 0;
	char *s;
	double links, ok;

	cJSON_ArrayForEach(f, fs) {
		const cJSON *fn;
		cJSON_ArrayForEach(fn, cJSON_GetObjectItem(f, "functions")) {
			named++;
			add_one += cJSON_IsString(fn) && !strcmp(fn->valuestring, "add_one");
		}
	}
	/* the planted tiny calls: the hooks check names add_one */
	SS_E2E_CHECK(t, add_one, "no finding of advise names add_one (adv.json in %s)", t->dir);
	links = js_num(t, "document.querySelectorAll('#findings a[href^=\"#\"]').length");
	ok = js_num(t, "[...document.querySelectorAll('#findings a[href^=\"#\"]')].filter(a=>{"
		    "const e=document.getElementById(a.getAttribute('href').slice(1));"
		    "return e&&e.tagName==='TR'&&e.closest('table').id==='summary'&&"
		    "e.cells[0].firstChild.textContent===a.textContent}).length");
	print_message("test-html-overview: %zu functions named, %.0f links, %.0f resolve\n",
		      named, links, ok);
	SS_E2E_CHECK(t, links == (double)named && ok == links,
		     "%zu functions named by findings, %.0f links, %.0f to their rows", named,
		     links, ok);
	s = js(t, "(()=>{const a=document.querySelector('#findings a[href^=\"#\"]');"
	       "a.scrollIntoView({block:'center'});const r=a.getBoundingClientRect();"
	       "return (r.x+r.width/2)+' '+(r.y+r.height/2)+' '+a.getAttribute('href').slice(1)})()");
	double x, y;
	char id[300], ev[200], *r;
	SS_E2E_CHECK(t, sscanf(s, "%lf %lf %299s", &x, &y, id) == 3, "link at '%s'", s);
	free(s);
	for (int k = 0; k < 2; k++) {
		snprintf(ev, sizeof(ev), "{\"type\":\"%s\",\"x\":%.1f,\"y\":%.1f,\"button\":"
			 "\"left\",\"clickCount\":1}", k ? "mouseReleased" : "mousePressed", x, y);
		r = ss_cdp_call(&cdp, 1, "Input.dispatchMouseEvent", ev);
		SS_E2E_CHECK(t, r, "%s", cdp.why);
		free(r);
	}
	s = js(t, "(()=>{const e=document.querySelector(':target');const r=e?"
	       "e.getBoundingClientRect():null;return e?e.id+' '+(r.top>=0&&r.bottom<=innerHeight)"
	       ":'none'})()");
	char want[320];
	snprintf(want, sizeof(want), "%s true", id);
	SS_E2E_CHECK(t, !strcmp(s, want), "after the click: :target '%s', expected '%s'", s, want);
	free(s);
}

static void test_overview(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	cJSON *adv, *per;
	size_t n;

	ss_e2e_build(t, "html-overview", NULL);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\nrecord:\\n  sched: true\\n' "
		     "> c.yaml");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c c.yaml -o run -- "
		     "./s-html-overview 8 >/dev/null");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" html -q -o report.html run");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" advise -q --format json run > adv.json");
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -Eiq '(src|href)=\"(https?:)?//|<script|@import|url\\(' "
				  "report.html") == 1,
		     "report.html must not reference anything outside itself");
	adv = load_json(t, "adv.json");
	per = cJSON_GetObjectItem(adv, "per_step");
	n = (size_t)cJSON_GetArraySize(per);
	SS_E2E_CHECK(t, n == 8, "advise saw %zu steps, expected 8", n);

	open_page(t, "report.html");
	check_bars(t, per, n);
	check_hover(t, per, n, SS_ADV_BLOCKED);
	check_hover(t, per, n, SS_ADV_OPS);
	check_hover(t, per, n, SS_ADV_HOOKS);
	check_links(t, adv);
	ss_cdp_close(&cdp);
	cdp_open = 0;
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -E 'CONSOLE.*(ERROR|error)|Uncaught' "
				  "chrome-profile/chrome.log") == 1,
		     "chromium reported console errors (see chrome-profile/chrome.log in %s)", t->dir);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

/* No step function: advise refuses the run, the page says why where the
 * overview would be and the rest of it is there. */
static void test_no_steps(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *s;

	ss_e2e_build(t, "html-overview", NULL);
	SS_E2E_EXPECT_STATUS(t, ss_e2e_record(t, "run", "html-overview", "2"), 0);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" html -q -o report.html run");
	SS_E2E_SH_OK(t, "grep -q '<p id=\"no-overview\">No overview: run: no recorded step' "
		     "report.html");
	open_page(t, "report.html");
	s = js(t, "[!!document.getElementById('overview'),!!document.getElementById('no-overview'),"
	       "!!document.getElementById('overview-bars'),"
	       "document.querySelectorAll('#summary tr[id]').length].join(' ')");
	/* main, train_step, run_step, load_batch, forward, add_one */
	SS_E2E_CHECK(t, !strcmp(s, "true true false 6"), "page: '%s'", s);
	free(s);
	s = js(t, "document.getElementById('row-add_one').cells[0].textContent");
	SS_E2E_CHECK(t, !strcmp(s, "add_one"), "row-add_one: '%s'", s);
	free(s);
	ss_e2e_pass(t);
}

/* add_one is the 47th of 48 rows by total (42 nested calls above it):
 * the table shows the top 40 and add_one, which the hooks finding names,
 * and the finding's link lands on it. */
static void test_named_past_top(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	cJSON *adv;
	char *s;

	ss_e2e_build(t, "html-overview", NULL);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\n' > c.yaml");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c c.yaml -o run -- "
		     "./s-html-overview 4 deep >/dev/null");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" html -q -o report.html run");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" advise -q --format json run > adv.json");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report -q --sort total --limit 0 "
		     "--format csv run | sed 1d | cut -d, -f1 | grep -n '^add_one$'");
	SS_E2E_CHECK(t, atoi(t->out) > 40, "add_one is row %d by total, expected past 40", atoi(t->out));
	SS_E2E_SH_OK(t, "grep -q '<p class=\"muted\">41 of 48 rows, by total time, and the rows "
		     "the findings name. ' report.html");
	adv = load_json(t, "adv.json");
	open_page(t, "report.html");
	s = js(t, "[document.querySelectorAll('#summary tr[id]').length,"
	       "document.getElementById('summary').rows.length - 1,"
	       "document.getElementById('row-add_one').rowIndex].join(' ')");
	SS_E2E_CHECK(t, !strcmp(s, "41 41 41"), "summary rows with ids, rows, add_one's index: '%s'", s);
	free(s);
	check_links(t, adv);
	cJSON_Delete(adv);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "test_overview/gcc-O0", test_overview, ss_e2e_setup, teardown,
		  (void *)&ss_e2e_gcc_O0 },
		{ "test_no_steps/gcc-O0", test_no_steps, ss_e2e_setup, teardown,
		  (void *)&ss_e2e_gcc_O0 },
		{ "test_named_past_top/gcc-O0", test_named_past_top, ss_e2e_setup, teardown,
		  (void *)&ss_e2e_gcc_O0 },
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
