/*
 * test-report.c - `stepscope report`, the folded exporter and the flame
 * graph on a synthetic raw trace whose times are exact (trace-writer.h):
 * exact Self/Total/Calls/Min/Max, recursion counted once in Total,
 * percentages of the self-time sum, sort orders, CSV and JSON, folded
 * lines, and a well-formed SVG with one <rect> per frame.  A second run
 * carries native stacks (record.stack): folded lines put the frames of
 * code without hooks between a slice and its instrumented caller.
 *
 * Function names come from this binary: the trace's MAPS record is this
 * process's /proc/self/maps and its addresses are those of the ss_t_*
 * functions below, so the real symbol readers name them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "agg.h"
#include "trace-writer.h"
#include "unit-util.h"

__attribute__((noinline, used)) void ss_t_outer(void) { __asm__ volatile(""); }
__attribute__((noinline, used)) void ss_t_rec(void) { __asm__ volatile("nop"); }
__attribute__((noinline, used)) void ss_t_leaf(void) { __asm__ volatile("nop; nop"); }
/* never entered: they stand for library code in native stacks */
__attribute__((noinline, used)) void ss_t_lib1(void) { __asm__ volatile("nop; nop; nop"); }
__attribute__((noinline, used)) void ss_t_lib2(void) { __asm__ volatile("nop; nop; nop; nop"); }

static char dir[] = "/tmp/ss-test-report-XXXXXX";
static char sdir[300];  /* the run with stacks, under dir */

/*
 * tid 100, times in ns:
 *   outer [1000,3000]
 *     rec [1100,1700]
 *       rec [1200,1500]
 *         leaf [1300,1400]
 *     leaf [1800,2000]
 * steps: 0 at 900 (RECORD), 1 at 2500 (RECORD)
 * Expected: outer calls 1 self 1200 total 2000; rec calls 2 self 500 total
 * 600 (once) min 300 max 600; leaf calls 2 self 300 total 300 min 100 max
 * 200; self sum 2000.
 */
static void write_trace(void)
{
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 4242);
	char path[256];
	struct ss_event e[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_t_outer),
		ss_ut_ev(1100, SS_EV_ENTER, ss_t_rec),
		ss_ut_ev(1200, SS_EV_ENTER, ss_t_rec),
		ss_ut_ev(1300, SS_EV_ENTER, ss_t_leaf),
		ss_ut_ev(1400, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(1500, SS_EV_EXIT, ss_t_rec),
		ss_ut_ev(1700, SS_EV_EXIT, ss_t_rec),
		ss_ut_ev(1800, SS_EV_ENTER, ss_t_leaf),
		ss_ut_ev(2000, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(3000, SS_EV_EXIT, ss_t_outer),
	};
	struct ss_meta_counter c;

	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 100, "trainer");
	ss_tw_meta_step(w, 900, 0, 100, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 2500, 1, 100, 1, SS_STEP_RECORD, 0);
	memset(&c, 0, sizeof(c));
	c.value = 1u << 20;
	strcpy(c.track, "host.rss");
	ss_tw_meta(w, SS_META_COUNTER, 950, &c, sizeof(c));
	c.value = 3u << 20;
	ss_tw_meta(w, SS_META_COUNTER, 2100, &c, sizeof(c));
	ss_tw_events(w, 100, 1, 0, e, sizeof(e) / sizeof(e[0]), 64);
	snprintf(path, sizeof(path), "%s/prog.4242.sstrace", dir);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);
}

/*
 * tid 300, every leaf and outer with a native stack (innermost first):
 *   outer [1000,3000]          stack 1: outer <- lib1 (start code: left out)
 *     leaf [1100,1300]         stack 2: leaf <- lib2 <- lib1 <- outer
 *     leaf [1400,1500]         stack 2
 *     leaf [1600,1700]         stack 3: leaf <- outer (a direct call)
 *     rec [1800,2600]          no stack
 *       leaf [1900,2000]       stack 4: leaf <- lib2 <- lib2 <- lib2 (cut
 *                              by stack_depth before any caller: "[...]")
 *       leaf [2100,2200]       stack 5: leaf <- lib1 <- outer (rec not in
 *                              it, as if inlined: outer is the nearest)
 */
static void write_stack_trace(void)
{
	static void (*const s1[])(void) = { ss_t_outer, ss_t_lib1 };
	static void (*const s2[])(void) = { ss_t_leaf, ss_t_lib2, ss_t_lib1, ss_t_outer };
	static void (*const s3[])(void) = { ss_t_leaf, ss_t_outer };
	static void (*const s4[])(void) = { ss_t_leaf, ss_t_lib2, ss_t_lib2, ss_t_lib2 };
	static void (*const s5[])(void) = { ss_t_leaf, ss_t_lib1, ss_t_outer };
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 4343);
	char path[400];
	struct ss_event e[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_t_outer), ss_ut_event(1000, SS_EV_STACK, 1),
		ss_ut_ev(1100, SS_EV_ENTER, ss_t_leaf), ss_ut_event(1100, SS_EV_STACK, 2),
		ss_ut_ev(1300, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(1400, SS_EV_ENTER, ss_t_leaf), ss_ut_event(1400, SS_EV_STACK, 2),
		ss_ut_ev(1500, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(1600, SS_EV_ENTER, ss_t_leaf), ss_ut_event(1600, SS_EV_STACK, 3),
		ss_ut_ev(1700, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(1800, SS_EV_ENTER, ss_t_rec),
		ss_ut_ev(1900, SS_EV_ENTER, ss_t_leaf), ss_ut_event(1900, SS_EV_STACK, 4),
		ss_ut_ev(2000, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(2100, SS_EV_ENTER, ss_t_leaf), ss_ut_event(2100, SS_EV_STACK, 5),
		ss_ut_ev(2200, SS_EV_EXIT, ss_t_leaf),
		ss_ut_ev(2600, SS_EV_EXIT, ss_t_rec),
		ss_ut_ev(3000, SS_EV_EXIT, ss_t_outer),
	};

	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 300, "stacked");
	ss_ut_tw_stackdef(w, 1, s1, 2);
	ss_ut_tw_stackdef(w, 2, s2, 4);
	ss_ut_tw_stackdef(w, 3, s3, 2);
	ss_ut_tw_stackdef(w, 4, s4, 4);
	ss_ut_tw_stackdef(w, 5, s5, 3);
	ss_tw_events(w, 300, 1, 0, e, sizeof(e) / sizeof(e[0]), 64);
	snprintf(path, sizeof(path), "%s/prog.4343.sstrace", sdir);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	write_trace();
	snprintf(sdir, sizeof(sdir), "%s/stacks", dir);
	if (mkdir(sdir, 0755))
		return -1;
	write_stack_trace();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(dir);
}

/* Run directory d walked into a new aggregator, ended. */
static struct ss_agg *load(const char *d)
{
	struct ss_agg *a = ss_agg_new();
	struct ss_exporter *ex = ss_agg_exporter(a);
	char err[512];

	assert_int_equal(ss_agg_walk(d, NULL, 1, &ex, 1, err, sizeof(err)), 0);
	assert_int_equal(ex->end(ex->ctx, err, sizeof(err)), 0);
	return a;
}

static const struct ss_agg_row *row(struct ss_agg_row *r, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	print_error("no row named %s\n", name);
	fail();
	return NULL;
}

static void test_exact_numbers(void **state)
{
	struct ss_agg *a = load(dir);
	struct ss_agg_row *r;
	size_t n = ss_agg_rows(a, 0, &r);
	const struct ss_agg_row *o, *re, *l;

	(void)state;
	assert_int_equal(n, 3);
	o = row(r, n, "ss_t_outer");
	re = row(r, n, "ss_t_rec");
	l = row(r, n, "ss_t_leaf");
	assert_int_equal(o->calls, 1);
	assert_int_equal(o->self_ns, 1200);
	assert_int_equal(o->total_ns, 2000);
	assert_int_equal(re->calls, 2);
	assert_int_equal(re->self_ns, 500);
	assert_int_equal(re->total_ns, 600);   /* recursion counted once */
	assert_int_equal(re->min_ns, 300);
	assert_int_equal(re->max_ns, 600);
	assert_int_equal(l->calls, 2);
	assert_int_equal(l->self_ns, 300);
	assert_int_equal(l->total_ns, 300);
	assert_int_equal(l->min_ns, 100);
	assert_int_equal(l->max_ns, 200);
	assert_int_equal(ss_agg_self_sum(a), 2000);
	assert_int_equal(ss_agg_nthreads(a), 1);

	/* sort orders */
	ss_agg_sort_rows(r, n, SS_AGG_SORT_SELF);
	assert_string_equal(r[0].name, "ss_t_outer");
	assert_string_equal(r[1].name, "ss_t_rec");
	assert_string_equal(r[2].name, "ss_t_leaf");
	ss_agg_sort_rows(r, n, SS_AGG_SORT_CALLS);  /* ties by name */
	assert_string_equal(r[0].name, "ss_t_leaf");
	assert_string_equal(r[1].name, "ss_t_rec");
	assert_string_equal(r[2].name, "ss_t_outer");
	ss_agg_sort_rows(r, n, SS_AGG_SORT_AVG);    /* 2000, 300, 150 */
	assert_string_equal(r[0].name, "ss_t_outer");
	assert_string_equal(r[1].name, "ss_t_rec");
	assert_string_equal(r[2].name, "ss_t_leaf");
	ss_agg_sort_rows(r, n, SS_AGG_SORT_MAX);    /* 2000, 600, 200 */
	assert_string_equal(r[2].name, "ss_t_leaf");

	/* steps: 0 = [900, 2500], 1 = [2500, 3000]; outer and all began in 0 */
	{
		const struct ss_agg_step *st;
		size_t ns = ss_agg_steps(a, &st);
		assert_int_equal(ns, 2);
		assert_int_equal(st[0].end_ns - st[0].begin_ns, 1600);
		assert_int_equal(ss_agg_step_self(a, "ss_t_outer", &st[0]), 1200);
		assert_int_equal(ss_agg_step_self(a, "ss_t_leaf", &st[0]), 300);
		assert_int_equal(ss_agg_step_self(a, "ss_t_leaf", &st[1]), 0);
	}
	ss_agg_free(a);
}

static void test_fmt_and_percentile(void **state)
{
	char b[32];
	uint64_t v[] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 };

	(void)state;
	assert_string_equal(ss_agg_fmt_time(850, b, sizeof(b)), "850ns");
	assert_string_equal(ss_agg_fmt_time(12345, b, sizeof(b)), "12.345us");
	assert_string_equal(ss_agg_fmt_time(1234567, b, sizeof(b)), "1.235ms");
	assert_string_equal(ss_agg_fmt_time(2500000000ull, b, sizeof(b)), "2.500s");
	assert_int_equal(ss_agg_percentile(v, 10, 0.5), 50);
	assert_int_equal(ss_agg_percentile(v, 10, 0.95), 100);
	assert_int_equal(ss_agg_percentile(v, 1, 0.95), 10);
}

static char *run(const char *args)
{
	char out[300];

	snprintf(out, sizeof(out), "%s/out.txt", dir);
	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope %s > %s", args, out);
	return ss_ut_slurp(out);
}

static void test_cli_table_csv_json(void **state)
{
	char args[512], *t;
	cJSON *j, *rows, *r0;

	(void)state;
	snprintf(args, sizeof(args), "report --steps %s", dir);
	t = run(args);
	assert_non_null(strstr(t, "Self time total: 2.000us"));
	assert_non_null(strstr(t, "Steps: 2 (1 process, 1 thread)"));
	/* default sort is total: outer, rec, leaf */
	assert_true(strstr(t, "ss_t_outer") < strstr(t, "ss_t_rec"));
	assert_true(strstr(t, "ss_t_rec") < strstr(t, "ss_t_leaf"));
	assert_non_null(strstr(t, "60.00%"));   /* outer self */
	assert_non_null(strstr(t, "100.00%"));  /* outer total */
	free(t);

	snprintf(args, sizeof(args), "report --format csv --sort self %s", dir);
	t = run(args);
	assert_string_equal(t,
		"name,kind,self_pct,self_ns,total_pct,total_ns,avg_ns,min_ns,max_ns,calls,clipped\n"
		"ss_t_outer,function,60.0000,1200,100.0000,2000,2000,2000,2000,1,0\n"
		"ss_t_rec,function,25.0000,500,30.0000,600,300,300,600,2,0\n"
		"ss_t_leaf,function,15.0000,300,15.0000,300,150,100,200,2,0\n");
	free(t);

	snprintf(args, sizeof(args), "report --format json --sort calls --limit 2 --threads --steps %s", dir);
	t = run(args);
	j = cJSON_Parse(t);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "self_total_ns")->valuedouble, 2000);
	assert_int_equal(cJSON_GetObjectItem(j, "steps")->valuedouble, 2);
	rows = cJSON_GetObjectItem(j, "rows");
	assert_int_equal(cJSON_GetArraySize(rows), 2);
	r0 = cJSON_GetArrayItem(rows, 0);
	assert_string_equal(cJSON_GetObjectItem(r0, "name")->valuestring, "ss_t_leaf");
	assert_string_equal(cJSON_GetObjectItem(r0, "thread")->valuestring, "trainer");
	assert_int_equal(cJSON_GetObjectItem(r0, "tid")->valuedouble, 100);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "step_list")), 2);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cycles"), 0),
					     "p50_ns")->valuedouble, 500);
	cJSON_Delete(j);
	free(t);
}

static void test_folded(void **state)
{
	char args[512], path[300], *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/x.folded", dir);
	snprintf(args, sizeof(args), "symbolize -q --format folded -o %s %s 2>/dev/null", path, dir);
	free(run(args));
	t = ss_ut_slurp(path);
	assert_non_null(t);
	assert_string_equal(t,
		"trainer;ss_t_outer 1200\n"
		"trainer;ss_t_outer;ProfilerStep;ss_t_leaf 200\n"
		"trainer;ss_t_outer;ProfilerStep;ss_t_rec 300\n"
		"trainer;ss_t_outer;ProfilerStep;ss_t_rec;ss_t_rec 200\n"
		"trainer;ss_t_outer;ProfilerStep;ss_t_rec;ss_t_rec;ss_t_leaf 100\n");
	free(t);
}

static void test_folded_stacks(void **state)
{
	char args[700], path[400], *t;
	struct ss_agg *a;
	struct ss_agg_row *r;

	(void)state;
	snprintf(path, sizeof(path), "%s/s.folded", dir);
	snprintf(args, sizeof(args), "symbolize -q --format folded -o %s %s 2>/dev/null", path,
		 sdir);
	free(run(args));
	t = ss_ut_slurp(path);
	assert_non_null(t);
	assert_string_equal(t,
		"stacked;ss_t_outer 800\n"
		"stacked;ss_t_outer;ss_t_leaf 100\n"
		"stacked;ss_t_outer;ss_t_lib1;ss_t_lib2;ss_t_leaf 300\n"
		"stacked;ss_t_outer;ss_t_rec 600\n"
		"stacked;ss_t_outer;ss_t_rec;[...];ss_t_lib2;ss_t_lib2;ss_t_lib2;ss_t_leaf 100\n"
		"stacked;ss_t_outer;ss_t_rec;ss_t_lib1;ss_t_leaf 100\n");
	free(t);

	/* the table counts slices only: no rows for the library frames */
	a = load(sdir);
	size_t n = ss_agg_rows(a, 0, &r);
	assert_int_equal(n, 3);
	assert_int_equal(row(r, n, "ss_t_leaf")->calls, 5);
	assert_int_equal(row(r, n, "ss_t_leaf")->total_ns, 600);
	assert_int_equal(row(r, n, "ss_t_outer")->total_ns, 2000);
	assert_int_equal(row(r, n, "ss_t_rec")->total_ns, 800);
	ss_agg_free(a);
}

/* Count <tag and </tag / <tag .../> and check every element closes. */
static void check_xml(const char *s, const char *tag, size_t *count)
{
	const char *p = s;
	int depth = 0;
	size_t tl = strlen(tag);

	*count = 0;
	while ((p = strchr(p, '<'))) {
		if (!strncmp(p, "<?", 2) || !strncmp(p, "<!", 2)) {
			p++;
			continue;
		}
		if (p[1] == '/') {
			depth--;
			assert_true(depth >= 0);
		} else {
			const char *end = strchr(p, '>');
			assert_non_null(end);
			if (!strncmp(p + 1, tag, tl) && (p[1 + tl] == ' ' || p[1 + tl] == '>'))
				(*count)++;
			if (end[-1] != '/')
				depth++;
		}
		p++;
	}
	assert_int_equal(depth, 0);
}

static void test_flame_svg(void **state)
{
	char args[512], path[300], *t;
	size_t rects;

	(void)state;
	snprintf(path, sizeof(path), "%s/f.svg", dir);
	snprintf(args, sizeof(args), "flame -q -o %s %s 2>/dev/null", path, dir);
	free(run(args));
	t = ss_ut_slurp(path);
	assert_non_null(t);
	check_xml(t, "rect", &rects);
	/* background + all, the thread, outer, ProfilerStep (leaf and rec lie
	 * in step 0, outer spans both), leaf, rec, rec, leaf */
	assert_int_equal(rects, 9);
	assert_non_null(strstr(t, "<title>ProfilerStep (every recorded step: total 800ns"));
	assert_non_null(strstr(t, "<title>ss_t_rec (total 600ns, 30.00%, self 300ns, 1 calls)</title>"));
	free(t);
}

/* flame --threads: tid 100 "trainer" outer [1000,3000] > leaf
 * [1100,1200]; tid 101 "loader" leaf [1000,1500]; one graph each. */
static void test_flame_threads(void **state)
{
	char tdir[300], path[400], args[800], *t;
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 4444);
	struct ss_event a[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_t_outer), ss_ut_ev(1100, SS_EV_ENTER, ss_t_leaf),
		ss_ut_ev(1200, SS_EV_EXIT, ss_t_leaf), ss_ut_ev(3000, SS_EV_EXIT, ss_t_outer),
	};
	struct ss_event b[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_t_leaf), ss_ut_ev(1500, SS_EV_EXIT, ss_t_leaf),
	};
	size_t rects;
	const char *p1, *p2;

	(void)state;
	snprintf(tdir, sizeof(tdir), "%s/threads", dir);
	assert_int_equal(mkdir(tdir, 0755), 0);
	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 100, "trainer");
	ss_tw_meta_thread(w, 101, "loader");
	ss_tw_events(w, 101, 2, 0, b, 2, 16);
	ss_tw_events(w, 100, 1, 0, a, 4, 16);
	snprintf(path, sizeof(path), "%s/prog.4444.sstrace", tdir);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);

	snprintf(path, sizeof(path), "%s/t.svg", dir);
	snprintf(args, sizeof(args), "flame -q --threads -o %s %s 2>/dev/null", path, tdir);
	free(run(args));
	t = ss_ut_slurp(path);
	assert_non_null(t);
	check_xml(t, "rect", &rects);
	/* background; all, outer, leaf; all, leaf */
	assert_int_equal(rects, 6);
	p1 = strstr(t, ">trainer (pid 4444, tid 100): 2.000us</text>");
	p2 = strstr(t, ">loader (pid 4444, tid 101): 500ns</text>");
	assert_non_null(p1);
	assert_non_null(p2);
	assert_true(p1 < p2);  /* sorted by tid */
	/* each graph is the whole width: loader's leaf is 100% of it */
	assert_non_null(strstr(p2, "<title>ss_t_leaf (total 500ns, 100.00%, self 500ns, 1 calls)</title>"));
	assert_non_null(strstr(p1, "<title>ss_t_leaf (total 100ns, 5.00%, self 100ns, 1 calls)</title>"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_numbers),
		cmocka_unit_test(test_fmt_and_percentile),
		cmocka_unit_test(test_cli_table_csv_json),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_folded_stacks),
		cmocka_unit_test(test_flame_svg),
		cmocka_unit_test(test_flame_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
