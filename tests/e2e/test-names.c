/*
 * test-names.c - end to end: every recorded function gets its exact name
 * and declaration line, with both symbol backends, wherever its code and
 * debug info live.  Fixtures: s-names.c (global, static, a dlopen'ed and
 * dlclose'd library s-names-dl.c), s-names-cxx.cc (namespaces, templates,
 * a lambda), built PIE and non-PIE, with debug info split off through
 * .gnu_debuglink or a build-id tree (--debug-dir), stripped, changed after
 * the run and deleted after the run (named from the copy `record` kept;
 * without it refused, unless --force).
 *
 * Expected lines come from "L:name" markers in the fixtures.  Every trace
 * is symbolized with --backend dw and --backend bfd and the two must list
 * the same slices with the same names and files.
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

/* Line of the "L:<marker>" comment in tests/e2e/<src>, 0 if absent. */
static int marker_line(const char *src, const char *marker)
{
	char path[4096], want[128], line[1024];
	int n = 0, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/e2e/%s", SS_SOURCE_DIR, src);
	snprintf(want, sizeof(want), "/* L:%s */", marker);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			found = n;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Symbolize rec with one backend into OUT and load it. */
static struct ss_e2e_trace *symbolize_with(struct ss_e2e *t, const char *backend,
					   const char *extra)
{
	struct ss_e2e_trace *tr = calloc(1, sizeof(*tr));
	char path[4200], err[512];

	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize --details --backend %s %s "
		     "-o %s.json rec", backend, extra ? extra : "", backend);
	snprintf(path, sizeof(path), "%s/%s.json", t->dir, backend);
	if (ss_e2e_trace_load(tr, path, err, sizeof(err)))
		SS_E2E_FAIL(t, "%s: %s", path, err);
	if (t->ntraces < 8)
		t->traces[t->ntraces++] = tr;
	return tr;
}

/* The dw and bfd traces list the same function slices alike. */
static void expect_same(struct ss_e2e *t, const struct ss_e2e_trace *a,
			const struct ss_e2e_trace *b)
{
	SS_E2E_CHECK(t, a->nslices == b->nslices,
		     "dw wrote %zu slices, bfd %zu", a->nslices, b->nslices);
	for (size_t i = 0; i < a->nslices; i++) {
		const struct ss_e2e_slice *x = &a->slices[i], *y = &b->slices[i];
		SS_E2E_CHECK(t, !strcmp(x->name, y->name),
			     "slice %zu: dw names it '%s', bfd '%s'", i, x->name,
			     y->name);
		SS_E2E_CHECK(t, (!x->file && !y->file) ||
				(x->file && y->file && !strcmp(x->file, y->file)),
			     "'%s': dw says file %s, bfd %s", x->name,
			     x->file ? x->file : "none", y->file ? y->file : "none");
	}
}

/* Every slice named `name` (at least one) has file ".../src:LINE" with
 * LINE from the marker. */
static void expect_fn(struct ss_e2e *t, const struct ss_e2e_trace *tr,
		      const char *name, const char *src, const char *marker)
{
	int line = marker_line(src, marker);
	char want[256];
	size_t n = 0;

	SS_E2E_CHECK(t, line > 0, "no L:%s marker in %s", marker, src);
	snprintf(want, sizeof(want), "%s:%d", src, line);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		size_t fl, wl = strlen(want);
		if (strcmp(s->name, name))
			continue;
		n++;
		fl = s->file ? strlen(s->file) : 0;
		SS_E2E_CHECK(t, s->file && fl >= wl && !strcmp(s->file + fl - wl, want) &&
				(fl == wl || s->file[fl - wl - 1] == '/'),
			     "'%s': expected args.file \".../%s\", got %s", name,
			     want, s->file ? s->file : "none");
	}
	SS_E2E_CHECK(t, n > 0, "no slice named '%s' in %s", name, tr->path);
}

/* Some slice is named "<module>+0x..." and none carries a file. */
static void expect_unnamed(struct ss_e2e *t, const struct ss_e2e_trace *tr,
			   const char *module)
{
	size_t n = 0, ml = strlen(module);

	for (size_t i = 0; i < tr->nslices; i++)
		if (!strncmp(tr->slices[i].name, module, ml) &&
		    !strncmp(tr->slices[i].name + ml, "+0x", 3))
			n++;
	SS_E2E_CHECK(t, n > 0, "expected slices named %s+0xOFFSET in %s", module,
		     tr->path);
}

static void build_dl(struct ss_e2e *t, const char *flags)
{
	SS_E2E_SH_OK(t, "%s %s -g -fPIC -shared -finstrument-functions %s "
		     "-o libssdl.so \"$SS_E2E_SRC/tests/e2e/s-names-dl.c\"",
		     t->v->cc, t->v->opt, flags ? flags : "");
}

static void build_names(struct ss_e2e *t, const char *flags)
{
	SS_E2E_SH_OK(t, "%s %s -g -finstrument-functions %s -o s-names "
		     "\"$SS_E2E_SRC/tests/e2e/s-names.c\" -ldl",
		     t->v->cc, t->v->opt, flags ? flags : "");
}

static void record_names(struct ss_e2e *t)
{
	/* small chunks: see s-names-dl.c */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec "
			   "--set buffer_kb=64 -- ./s-names \"$PWD/libssdl.so\"");
	SS_E2E_EXPECT_STATUS(t, st, 0);
}

static void check_names_c(struct ss_e2e *t, const struct ss_e2e_trace *tr)
{
	expect_fn(t, tr, "main", "s-names.c", "main");
	expect_fn(t, tr, "gl_work", "s-names.c", "gl_work");
	expect_fn(t, tr, "st_helper", "s-names.c", "st_helper");
	expect_fn(t, tr, "dl_entry", "s-names-dl.c", "dl_entry");
	expect_fn(t, tr, "dl_inner", "s-names-dl.c", "dl_inner");
	SS_E2E_EXPECT_CALLS(t, tr, "gl_work", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "st_helper", 0, 3);
	SS_E2E_EXPECT_CALLS(t, tr, "dl_inner", 0, 3000);
	SS_E2E_EXPECT_INSIDE(t, tr, "dl_inner", "dl_entry");
	SS_E2E_EXPECT_INSIDE(t, tr, "st_helper", "gl_work");
}

/* Both backends, then the C checks on each. */
static void check_both_c(struct ss_e2e *t, const char *extra)
{
	struct ss_e2e_trace *dw = symbolize_with(t, "dw", extra);
	struct ss_e2e_trace *bfd = symbolize_with(t, "bfd", extra);

	check_names_c(t, dw);
	check_names_c(t, bfd);
	expect_same(t, dw, bfd);
}

static void test_names_pie(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_dl(t, NULL);
	build_names(t, "-fPIE -pie");
	record_names(t);
	check_both_c(t, NULL);
	ss_e2e_pass(t);
}

static void test_names_nopie(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_dl(t, NULL);
	build_names(t, "-fno-PIE -no-pie");
	SS_E2E_SH_OK(t, "readelf -h s-names | grep -q 'EXEC'");
	record_names(t);
	check_both_c(t, NULL);
	ss_e2e_pass(t);
}

static void test_names_cxx(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *cxx = strcmp(t->v->cc, "clang") ? "g++" : "clang++";
	struct ss_e2e_trace *tr[2];

	SS_E2E_SH_OK(t, "%s %s -g -finstrument-functions -o s-names-cxx "
		     "\"$SS_E2E_SRC/tests/e2e/s-names-cxx.cc\"", cxx, t->v->opt);
	int st = ss_e2e_record(t, "rec", "names-cxx", NULL);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	tr[0] = symbolize_with(t, "dw", NULL);
	tr[1] = symbolize_with(t, "bfd", NULL);
	for (int i = 0; i < 2; i++) {
		expect_fn(t, tr[i], "main", "s-names-cxx.cc", "main");
		expect_fn(t, tr[i], "outer::inner::Box<long>::get() const",
			  "s-names-cxx.cc", "get");
		expect_fn(t, tr[i], "outer::inner::twice(int)", "s-names-cxx.cc",
			  "twice");
		expect_fn(t, tr[i], "int addn<5>(int)", "s-names-cxx.cc", "addn");
		/* GCC and clang mangle a lambda's closure type differently */
		expect_fn(t, tr[i], strcmp(t->v->cc, "clang") ?
			  "main::{lambda(int)#1}::operator()(int) const" :
			  "main::$_0::operator()(int) const",
			  "s-names-cxx.cc", "lambda");
	}
	expect_same(t, tr[0], tr[1]);
	ss_e2e_pass(t);
}

/* Debug info only in a separate file named by .gnu_debuglink; the
 * binaries themselves are fully stripped. */
static void test_names_debuglink(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_dl(t, NULL);
	build_names(t, NULL);
	SS_E2E_SH_OK(t, "for f in s-names libssdl.so; do "
		     "objcopy --only-keep-debug $f $f.debug && strip $f && "
		     "objcopy --add-gnu-debuglink=$f.debug $f || exit 1; done; "
		     "! readelf -S s-names | grep -q debug_info");
	record_names(t);
	check_both_c(t, NULL);
	ss_e2e_pass(t);
}

/* Debug info only in DIR/.build-id/xx/rest.debug, found with --debug-dir. */
static void test_names_build_id_dir(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_dl(t, "-Wl,--build-id");
	build_names(t, "-Wl,--build-id");
	SS_E2E_SH_OK(t, "for f in s-names libssdl.so; do "
		     "id=$(readelf -n $f | sed -n 's/.*Build ID: *//p') && "
		     "[ -n \"$id\" ] && d=dbg/.build-id/$(echo $id | cut -c1-2) && "
		     "mkdir -p $d && objcopy --only-keep-debug $f "
		     "$d/$(echo $id | cut -c3-).debug && strip $f || exit 1; done");
	record_names(t);
	check_both_c(t, "--debug-dir \"$PWD/dbg\"");
	ss_e2e_pass(t);
}

/* Stripped, no debug file: exported functions keep their .dynsym names,
 * the rest is module+0xoffset, with one warning naming the module. */
static void test_names_stripped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr[2];

	build_dl(t, NULL);
	build_names(t, "-rdynamic");
	SS_E2E_SH_OK(t, "strip s-names libssdl.so");
	record_names(t);
	tr[0] = symbolize_with(t, "dw", NULL);
	SS_E2E_CHECK(t, strstr(t->err, "libssdl.so") != NULL,
		     "expected a warning naming libssdl.so, got: %s", t->err);
	tr[1] = symbolize_with(t, "bfd", NULL);
	for (int i = 0; i < 2; i++) {
		SS_E2E_EXPECT_CALLS(t, tr[i], "gl_work", 0, 3);
		SS_E2E_EXPECT_CALLS(t, tr[i], "dl_entry", 0, 1);
		SS_E2E_EXPECT_CALLS(t, tr[i], "st_helper", 0, 0);
		SS_E2E_EXPECT_CALLS(t, tr[i], "dl_inner", 0, 0);
		expect_unnamed(t, tr[i], "s-names");
		expect_unnamed(t, tr[i], "libssdl.so");
	}
	expect_same(t, tr[0], tr[1]);
	ss_e2e_pass(t);
}

/* The binary is rebuilt differently after the run: named from the copy
 * record kept in the run; without that copy refused (exit 2, one line
 * naming it and both build-ids) unless --force. */
static void test_names_changed(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	build_dl(t, NULL);
	build_names(t, NULL);
	record_names(t);
	build_names(t, "-DSS_NAMES_CHANGED");
	check_both_c(t, NULL);
	SS_E2E_SH_OK(t, "rm -r rec/.stepscope-bin");
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -o x.json rec");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, "s-names: changed since the run (build-id ") &&
			strstr(t->err, ", now ") && strstr(t->err, "--force"),
		     "expected 's-names: changed since the run (build-id X, now Y) ... "
		     "--force', got: %s", t->err);
	SS_E2E_SH_OK(t, "test ! -e x.json");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize --force rec");
	ss_e2e_pass(t);
}

/* The binary is deleted after the run: named from the kept copy; without
 * it refused in one line, and with --force a warning naming it, its
 * functions as s-names+0xOFFSET, the library still named. */
static void test_names_missing(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr;

	build_dl(t, NULL);
	build_names(t, NULL);
	record_names(t);
	SS_E2E_SH_OK(t, "rm s-names");
	check_both_c(t, NULL);
	SS_E2E_SH_OK(t, "rm -r rec/.stepscope-bin");
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -o x.json rec");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, "s-names: missing since the run (build-id ") != NULL,
		     "expected 's-names: missing since the run (build-id X) ...', got: %s",
		     t->err);
	tr = symbolize_with(t, "dw", "--force");
	SS_E2E_CHECK(t, strstr(t->err, "s-names: missing") != NULL,
		     "expected a warning 's-names: missing ...', got: %s", t->err);
	expect_unnamed(t, tr, "s-names");
	expect_fn(t, tr, "dl_inner", "s-names-dl.c", "dl_inner");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_names_pie),
		SS_E2E__ONE(test_names_nopie, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_names_nopie, ss_e2e_clang_O0, "clang-O0"),
		SS_E2E_VARIANTS(test_names_cxx),
		SS_E2E__ONE(test_names_debuglink, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_names_build_id_dir, ss_e2e_gcc_O0, "gcc-O0"),
		SS_E2E_TEST(test_names_stripped),
		SS_E2E_TEST(test_names_changed),
		SS_E2E_TEST(test_names_missing),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
