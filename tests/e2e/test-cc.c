/*
 * test-cc.c - end to end: stepscope-cc builds real-world projects exactly
 * like the plain build does.  C99 inline functions with no external
 * definition across two files, OpenMP, -Werror, -flto, a static library,
 * an object built without the wrapper, a Makefile, a CMake project with the
 * compiler launcher, nvcc, exclusions, a function that is really missing,
 * and compilers it cannot use.  Each program is recorded and symbolized and
 * its exact call counts checked.
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

#define WRAP "\"$SS_E2E_BUILD/bin/stepscope-cc\""
#define E2E "\"$SS_E2E_SRC/tests/e2e\""
/* include dirs of every fixture */
#define INC "-I" E2E " -I" E2E "/cc"

/* ------------------------------------------------------------ helpers */

/* Record ./s-NAME into DIR/rec, symbolize, load. */
static struct ss_e2e_trace *run_and_load(struct ss_e2e *t, const char *name)
{
	int st = ss_e2e_record(t, "rec", name, NULL);
	if (st != 0) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "stepscope record of s-%s: expected status 0, "
			    "got %d", name, st);
	}
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_NESTED(t, tr);
	return tr;
}

/* The calls of s-cc-calls; lib_fn_calls is 0 when calls-lib.c was not
 * instrumented, and any of the others 0 when excluded. */
static void check_calls(struct ss_e2e *t, struct ss_e2e_trace *tr,
			size_t alpha, size_t beta, size_t leaf, size_t lib_fn)
{
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "alpha", 0, alpha);
	SS_E2E_EXPECT_CALLS(t, tr, "beta", 0, beta);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, leaf);
	SS_E2E_EXPECT_CALLS(t, tr, "lib_fn", 0, lib_fn);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0,
			    1 + alpha + beta + leaf + lib_fn);
	if (leaf && alpha)
		SS_E2E_EXPECT_INSIDE(t, tr, "leaf", "alpha");
}

/* No line of the last command's stderr mentions a warning. */
static void expect_no_warning(struct ss_e2e *t)
{
	if (strstr(t->err, "warning")) {
		ss_e2e_show_last(t, -1);
		SS_E2E_FAIL(t, "stderr: expected no warning");
	}
}

/* Slices whose name contains `part`, and on how many threads. */
static size_t count_containing(const struct ss_e2e_trace *tr,
			       const char *part, size_t *nthreads,
			       const char **example)
{
	size_t n = 0, nt = 0;
	int64_t seen[64];
	*example = NULL;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (!strstr(s->name, part))
			continue;
		n++;
		*example = s->name;
		size_t j = 0;
		while (j < nt && seen[j] != s->tid)
			j++;
		if (j == nt && nt < 64)
			seen[nt++] = s->tid;
	}
	*nthreads = nt;
	return n;
}

/* ------------------------------------------------------------ C99 inline */

/* The calls of s-cc-inline built at `opt`. */
static void check_inline(struct ss_e2e *t, struct ss_e2e_trace *tr,
			 const char *opt)
{
	/* gcc never instruments always_inline functions (the -O0 form of
	 * inline.h), plain -finstrument-functions included */
	int traced = strcmp(t->v->cc, "gcc") != 0 || strcmp(opt, "-O0") != 0;
	if (!traced)
		print_message("e2e: gcc -O0: sq and cube are always_inline, "
			      "which gcc does not instrument: expecting 0\n");
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "use_b", 0, 2);
	SS_E2E_EXPECT_CALLS(t, tr, "sq", 0, traced ? 7 : 0);
	SS_E2E_EXPECT_CALLS(t, tr, "cube", 0, traced ? 2 : 0);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, traced ? 12 : 3);
	if (traced)
		SS_E2E_EXPECT_INSIDE(t, tr, "cube", "use_b");
	SS_E2E_EXPECT_INSIDE(t, tr, "use_b", "main");
}

static void test_inline(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *cc = t->v->cc, *opt = t->v->opt;
	/* the plain build links: the fixture is a valid real-world build */
	SS_E2E_SH_OK(t, "%s %s -std=c99 " INC " -o plain " E2E
		     "/s-cc-inline.c " E2E "/cc/inline-b.c",
		     cc, opt);
	/* through the wrapper, one object per file, as make does */
	SS_E2E_SH_OK(t, WRAP " %s %s -std=c99 -Wall -Wextra -Werror " INC
		     " -c -o main.o " E2E "/s-cc-inline.c",
		     cc, opt);
	expect_no_warning(t);
	SS_E2E_SH_OK(t, WRAP " %s %s -std=c99 -Wall -Wextra -Werror " INC
		     " -MMD -MP -c " E2E "/cc/inline-b.c",
		     cc, opt);
	expect_no_warning(t);
	/* the dependency file is the first pass's, naming the real source */
	SS_E2E_SH_OK(t, "grep -q 'inline-b.o:.*cc/inline-b.c' inline-b.d && "
			"! grep -q stepscope-cc inline-b.d");
	SS_E2E_SH_OK(t, WRAP " %s %s -o s-cc-inline main.o inline-b.o", cc,
		     opt);
	check_inline(t, run_and_load(t, "cc-inline"), opt);
	ss_e2e_pass(t);
}

/* The same program built in one command, as training repositories'
 * Makefiles do (cc/oneshot/Makefile: `$(CC) $(CFLAGS) a.c b.c -lm -o x`),
 * with -fopenmp, -flto and -Ofast -march=native; and with -c of both files
 * in one command.  Every build links as the plain one does and names sq
 * and cube. */
static void test_oneshot(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *cc = t->v->cc, *opt = t->v->opt;
	int omp = ss_e2e_sh(t, "echo 'int main(void){return 0;}' > p.c && %s "
			       "-fopenmp -o p p.c", cc) == 0;
	char flags[4][64];
	int n = 0;
	snprintf(flags[n++], sizeof(flags[0]), "%s", opt);
	if (omp)
		snprintf(flags[n++], sizeof(flags[0]), "%s -fopenmp", opt);
	else
		print_message("e2e: %s -fopenmp cannot build here: not tried\n",
			      cc);
	snprintf(flags[n++], sizeof(flags[0]), "%s -flto", opt);
	if (strcmp(opt, "-O0") != 0)
		snprintf(flags[n++], sizeof(flags[0]), "-Ofast -march=native");
	for (int i = 0; i < n; i++) {
		SS_E2E_SH_OK(t, "rm -rf plain wrapped rec && mkdir plain wrapped");
		/* the plain build links: a valid real-world build */
		SS_E2E_SH_OK(t, "cd plain && make -s -f " E2E "/cc/oneshot/Makefile "
			     "SRC=" E2E " CC=%s CFLAGS='%s'", cc, flags[i]);
		SS_E2E_SH_OK(t, "cd wrapped && make -s -f " E2E
			     "/cc/oneshot/Makefile SRC=" E2E
			     " CC=\"$SS_E2E_BUILD/bin/stepscope-cc %s\" "
			     "CFLAGS='%s' && cp s-cc-inline ..", cc, flags[i]);
		expect_no_warning(t);
		print_message("e2e: one shot, %s %s\n", cc, flags[i]);
		check_inline(t, run_and_load(t, "cc-inline"),
			     strstr(flags[i], "-O0") ? "-O0" : "-O2");
	}
	/* -c of both files in one command, then the link */
	SS_E2E_SH_OK(t, "rm -rf rec s-cc-inline *.o && " WRAP " %s %s -std=c99 " INC
		     " -c " E2E "/s-cc-inline.c " E2E "/cc/inline-b.c && "
		     WRAP " %s -o s-cc-inline s-cc-inline.o inline-b.o",
		     cc, opt, cc);
	check_inline(t, run_and_load(t, "cc-inline"), opt);
	ss_e2e_pass(t);
}

/* Objects built plainly with -finstrument-functions (no wrapper, so no
 * definitions of the inline functions) fail to link through the wrapper,
 * as they do without it; then one hint line names the functions and the
 * fixes.  A function that is really missing gets no hint. */
static void test_link_hint(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *cc = t->v->cc, *opt = t->v->opt;
	if (!strcmp(opt, "-O0")) {
		/* at -O0 they are always_inline: gcc does not instrument
		 * them, clang does; the -O2 variants cover the hint */
		ss_e2e_pass(t);
		skip();
	}
	SS_E2E_SH_OK(t, "%s %s -g -std=c99 -finstrument-functions " INC
		     " -c -o a.o " E2E "/s-cc-inline.c && %s %s -g -std=c99 "
		     "-finstrument-functions " INC " -c -o b.o " E2E
		     "/cc/inline-b.c", cc, opt, cc, opt);
	int st = ss_e2e_sh(t, WRAP " %s -o s-cc-inline a.o b.o", cc);
	SS_E2E_CHECK(t, st != 0, "link: expected it to fail");
	size_t hints = 0;
	const char *h = NULL;
	for (const char *p = t->err; (p = strstr(p, "stepscope-cc: hint: "));
	     p++) {
		hints++;
		h = p;
	}
	if (hints != 1 || !strstr(h, "hint: cube, sq: C99 inline") ||
	    !strstr(h, "STEPSCOPE_EXCLUDE=cube,sq\n")) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "stderr: expected one hint line naming cube, sq "
			    "and STEPSCOPE_EXCLUDE=cube,sq, got %zu", hints);
	}
	/* the fix it names works */
	SS_E2E_SH_OK(t, "STEPSCOPE_EXCLUDE=cube,sq " WRAP " %s %s -std=c99 "
		     INC " -o s-cc-inline " E2E "/s-cc-inline.c " E2E
		     "/cc/inline-b.c", cc, opt);
	/* a function defined nowhere: the linker's message, no hint */
	st = ss_e2e_sh(t, WRAP " %s %s " INC " -o m " E2E "/s-cc-missing.c",
		       cc, opt);
	SS_E2E_CHECK(t, st != 0 && strstr(t->err, "ss_cc_missing_fn") &&
			    !strstr(t->err, "hint"),
		     "missing function: expected the linker's error and no "
		     "hint, got: %s", t->err);
	ss_e2e_pass(t);
}

/* A function declared but defined nowhere still fails to link, with the
 * linker's own message, as it does plainly. */
static void test_missing_function(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *want = "undefined reference to `ss_cc_missing_fn'";
	int st = ss_e2e_sh(t, "%s %s " INC " -o plain " E2E "/s-cc-missing.c",
			   t->v->cc, t->v->opt);
	SS_E2E_CHECK(t, st != 0 && strstr(t->err, want),
		     "plain build: expected it to fail with \"%s\"", want);
	st = ss_e2e_sh(t, WRAP " %s %s " INC " -c -o m.o " E2E
		       "/s-cc-missing.c && " WRAP " %s -o s-cc-missing m.o",
		       t->v->cc, t->v->opt, t->v->cc);
	if (st == 0 || !strstr(t->err, want)) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "expected the link to fail with \"%s\"", want);
	}
	SS_E2E_SH_OK(t, "test ! -e s-cc-missing");
	ss_e2e_pass(t);
}

/* ------------------------------------------------------------ OpenMP */

/* The outlined region `name` ran exactly once on each of `nthreads`
 * threads, directly inside main on main's thread and at the top of every
 * other thread, with `work` (n_work calls in all) directly inside it. */
static void expect_region(struct ss_e2e *t, struct ss_e2e_trace *tr,
			  const char *name, size_t nthreads, const char *work,
			  size_t n_work)
{
	const struct ss_e2e_slice *m = ss_e2e_find(tr, "main", 0);
	SS_E2E_CHECK(t, m != NULL, "expected a slice of main");
	SS_E2E_EXPECT_CALLS(t, tr, name, 0, nthreads);
	int64_t tids[16];
	size_t ntids = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, name) != 0)
			continue;
		for (size_t j = 0; j < ntids; j++)
			SS_E2E_CHECK(t, tids[j] != s->tid, "%s: expected it "
				     "once per thread, got it twice on thread "
				     "%lld", name, (long long)s->tid);
		if (ntids < 16)
			tids[ntids++] = s->tid;
		const char *p = ss_e2e_parent_name(tr, s);
		const char *want = s->tid == m->tid ? "main" : NULL;
		SS_E2E_CHECK(t, want ? p && !strcmp(p, want) : !p,
			     "%s on thread %lld: expected parent '%s', got "
			     "'%s'", name, (long long)s->tid,
			     want ? want : "(none)", p ? p : "(none)");
	}
	SS_E2E_CHECK(t, ntids == nthreads, "%s: expected it on %zu threads, "
		     "got %zu", name, nthreads, ntids);
	SS_E2E_EXPECT_CALLS(t, tr, work, 0, n_work);
	SS_E2E_EXPECT_INSIDE(t, tr, work, name);
}

static void test_openmp(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int clang = !strcmp(t->v->cc, "clang");
	char check[256];
	snprintf(check, sizeof(check), "printf '#include <omp.h>\\nint main(void)"
		 "{return omp_get_max_threads() < 1;}\\n' > p.c && %s -fopenmp "
		 "-o p p.c", t->v->cc);
	ss_e2e_need(t, check, clang ? "clang's OpenMP (omp.h, libomp)" :
		    "gcc's OpenMP (libgomp)", clang ? "libomp-dev" : "gcc");
	ss_e2e_build(t, "cc-omp", "-fopenmp " INC);
	struct ss_e2e_trace *tr = run_and_load(t, "cc-omp");
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	size_t nthreads;
	const char *name;
	if (!strcmp(t->v->cc, "gcc")) {
		/* gcc outlines the regions after adding the hooks; the runtime
		 * wraps libgomp's GOMP_parallel, GOMP_parallel_loop_* and
		 * GOMP_parallel_sections so that each outlined function is
		 * entered once on every thread of its team */
		expect_region(t, tr, "main._omp_fn.0", 4, "region_work", 4);
		expect_region(t, tr, "main._omp_fn.1", 4, "loop_work", 8);
		expect_region(t, tr, "main._omp_fn.2", 2, "section_work", 2);
		SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0,
				    1 + 4 + 8 + 2 + 4 + 4 + 2);
		/* the end barrier's wait on the thread that started each
		 * region is a named range under main, once per region */
		SS_E2E_EXPECT_COUNT(t, tr, "omp barrier: wait for the team", "user_range",
				    ss_e2e_find(tr, "main", 0)->tid, 3);
		SS_E2E_EXPECT_COUNT(t, tr, "omp barrier: wait for the team", "user_range", 0, 3);
		SS_E2E_EXPECT_INSIDE(t, tr, "omp barrier: wait for the team", "main");
		/* built plainly (hooks bound to glibc's no-op ones, libgomp
		 * linked, no libstepscope): `stepscope record` preloads the
		 * runtime, which still comes before libgomp */
		SS_E2E_SH_OK(t, "%s %s -g -finstrument-functions -fopenmp "
			     "-pthread " INC " -o s-cc-omp-plain " E2E
			     "/s-cc-omp.c && ! ldd s-cc-omp-plain | grep -q "
			     "libstepscope", t->v->cc, t->v->opt);
		int st = ss_e2e_record(t, "rec-plain", "cc-omp-plain", NULL);
		SS_E2E_EXPECT_STATUS(t, st, 0);
		tr = ss_e2e_symbolize_load(t, "rec-plain");
		expect_region(t, tr, "main._omp_fn.0", 4, "region_work", 4);
		expect_region(t, tr, "main._omp_fn.1", 4, "loop_work", 8);
		expect_region(t, tr, "main._omp_fn.2", 2, "section_work", 2);
		ss_e2e_pass(t);
		return;
	}
	/* clang instruments its outlined regions itself (libomp's
	 * __kmpc_fork_call, which the runtime leaves alone): .omp_outlined.
	 * and its body .omp_outlined._debug__, once per thread each, for each
	 * of the 3 regions; nothing recorded twice */
	size_t n = count_containing(tr, "omp_outlined", &nthreads, &name);
	SS_E2E_CHECK(t, n == 2 * (4 + 4 + 2) && nthreads == 4,
		     "outlined OpenMP regions: expected 20 slices on 4 "
		     "threads, got %zu on %zu (e.g. '%s')", n, nthreads,
		     name ? name : "none");
	SS_E2E_EXPECT_CALLS(t, tr, ".omp_outlined.", 0, 4);
	SS_E2E_EXPECT_CALLS(t, tr, "region_work", 0, 4);
	SS_E2E_EXPECT_CALLS(t, tr, "loop_work", 0, 8);
	SS_E2E_EXPECT_CALLS(t, tr, "section_work", 0, 2);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 4 + 8 + 2 + 20);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (!strstr(s->name, "_work"))
			continue;
		const char *p = ss_e2e_parent_name(tr, s);
		SS_E2E_CHECK(t, p && strstr(p, "omp_outlined"),
			     "%s: expected it inside an outlined region, got "
			     "parent '%s'", s->name, p ? p : "(none)");
	}
	ss_e2e_pass(t);
}

/* ------------------------------------------------------------ build kinds */

static void test_werror(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *f = "-std=c11 -Wall -Wextra -Werror -pedantic";
	SS_E2E_SH_OK(t, WRAP " %s %s %s " INC " -c -o a.o " E2E
		     "/s-cc-calls.c", t->v->cc, t->v->opt, f);
	expect_no_warning(t);
	SS_E2E_SH_OK(t, WRAP " %s %s %s " INC " -c -o b.o " E2E
		     "/cc/calls-lib.c", t->v->cc, t->v->opt, f);
	expect_no_warning(t);
	SS_E2E_SH_OK(t, WRAP " %s %s %s -o s-cc-calls a.o b.o", t->v->cc,
		     t->v->opt, f);
	expect_no_warning(t);
	/* and in one shot */
	SS_E2E_SH_OK(t, WRAP " %s %s %s " INC " -o one " E2E "/s-cc-calls.c "
		     E2E "/cc/calls-lib.c", t->v->cc, t->v->opt, f);
	expect_no_warning(t);
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	ss_e2e_pass(t);
}

/* -static: the wrapper links libstepscope.a, which must add no link
 * warning (glibc's static dlopen warns at every link that names it):
 * -Wl,--fatal-warnings links through the wrapper exactly when it links
 * plainly, and the program records its calls; record.stack says in one
 * line that it goes without libunwind. */
static void test_static_link(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *f = "-static -Wl,--fatal-warnings";
	SS_E2E_SH_OK(t, "%s %s %s " INC " -o plain " E2E "/s-cc-calls.c " E2E "/cc/calls-lib.c",
		     t->v->cc, t->v->opt, f);
	SS_E2E_SH_OK(t, WRAP " %s %s %s " INC " -o s-cc-calls " E2E "/s-cc-calls.c " E2E
		     "/cc/calls-lib.c", t->v->cc, t->v->opt, f);
	expect_no_warning(t);
	SS_E2E_SH_OK(t, "! readelf -d s-cc-calls | grep -q NEEDED && nm s-cc-calls | grep -q ' __cyg_profile_func_enter$'");
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec2 --set record.stack=true -- ./s-cc-calls");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "record.stack: a static program does not load libunwind.so.8") == 1,
		     "one line should say the static program goes without libunwind:\n%s", t->err);
	ss_e2e_pass(t);
}

static void test_lto(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, WRAP " %s %s -flto " INC " -c -o a.o " E2E
		     "/s-cc-calls.c && " WRAP " %s %s -flto " INC
		     " -c -o b.o " E2E "/cc/calls-lib.c && " WRAP
		     " %s %s -flto -o s-cc-calls a.o b.o",
		     t->v->cc, t->v->opt, t->v->cc, t->v->opt, t->v->cc,
		     t->v->opt);
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	ss_e2e_pass(t);
}

static void test_static_library(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, WRAP " %s %s " INC " -c -o calls-lib.o " E2E
		     "/cc/calls-lib.c && ar rcs libcalls.a calls-lib.o && "
		     WRAP " %s %s " INC " -o s-cc-calls " E2E
		     "/s-cc-calls.c -L. -lcalls",
		     t->v->cc, t->v->opt, t->v->cc, t->v->opt);
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	ss_e2e_pass(t);
}

/* calls-lib.c built plainly: lib_fn runs but is not traced. */
static void test_uninstrumented_object(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "%s %s " INC " -c -o calls-lib.o " E2E
		     "/cc/calls-lib.c && " WRAP " %s %s " INC
		     " -o s-cc-calls " E2E "/s-cc-calls.c calls-lib.o",
		     t->v->cc, t->v->opt, t->v->cc, t->v->opt);
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 0);
	ss_e2e_pass(t);
}

static void test_makefile(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	/* make CC="stepscope-cc gcc" */
	SS_E2E_SH_OK(t, "make -f " E2E "/cc/make/Makefile SRC=" E2E
		     " CFLAGS=%s CC=\"$SS_E2E_BUILD/bin/stepscope-cc %s\"",
		     t->v->opt, t->v->cc);
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	/* make CC=stepscope-cc: the compiler is cc */
	SS_E2E_SH_OK(t, "mkdir m2 && cd m2 && PATH=\"$SS_E2E_BUILD/bin:$PATH\" "
		     "make -f " E2E "/cc/make/Makefile SRC=" E2E
		     " CFLAGS=%s CC=stepscope-cc && "
		     "ldd s-cc-calls | grep -q libstepscope && "
		     "nm s-cc-calls | grep -q __cyg_profile_func_enter",
		     t->v->opt);
	ss_e2e_pass(t);
}

/* The ranges and steps of s-cc-range, recorded: `rec` is the run dir. */
static void check_range(struct ss_e2e *t, const char *rec)
{
	SS_E2E_CHECK(t, strstr(t->out, "recording 1") != NULL,
		     "stdout: expected 'recording 1' (the API works under "
		     "stepscope record), got: %s", t->out);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, rec);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "work", 0, 3);
	SS_E2E_EXPECT_COUNT(t, tr, "outer", "user_range", 0, 1);
	SS_E2E_EXPECT_COUNT(t, tr, "iter", "user_range", 0, 3);
	SS_E2E_EXPECT_INSIDE(t, tr, "iter", "work");
}

/* Build s-cc-range in DIR (cmake with `how`), run it alone (the API does
 * nothing: "recording 0"), record it and check it. */
static void cmake_range(struct ss_e2e *t, const char *dir, const char *how)
{
	SS_E2E_SH_OK(t, "cmake -S " E2E "/cc/cmake -B %s -DCMAKE_C_COMPILER=%s "
		     "-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=%s %s "
		     ">/dev/null && cmake --build %s >/dev/null && "
		     "cp %s/s-cc-range . && ./s-cc-range",
		     dir, t->v->cc, t->v->opt, how, dir, dir);
	SS_E2E_CHECK(t, strstr(t->out, "recording 0") != NULL,
		     "%s: run alone: expected 'recording 0', got: %s", dir,
		     t->out);
	char rec[64];
	snprintf(rec, sizeof(rec), "rec-%s", dir);
	int st = ss_e2e_record(t, rec, "cc-range", NULL);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	check_range(t, rec);
}

static void test_cmake(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_need(t, "command -v cmake", "cmake", "cmake");
	/* the launcher gets the compiler's full path first; the link is not
	 * launched, so `stepscope record` preloads the runtime; annotated
	 * code links too (the stepscope.h API is weak) */
	cmake_range(t, "bld", "-DCMAKE_C_COMPILER_LAUNCHER="
		    "\"$SS_E2E_BUILD/bin/stepscope-cc\"");
	SS_E2E_SH_OK(t, "cp bld/s-cc-calls . && ! ldd s-cc-calls | grep -q "
		     "libstepscope && ! ldd s-cc-range | grep -q libstepscope");
	check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	/* with the linker launcher too, the programs link the runtime */
	SS_E2E_SH_OK(t, "cmake -S " E2E "/cc/cmake -B bld2 -DCMAKE_C_COMPILER=%s "
		     "-DCMAKE_C_COMPILER_LAUNCHER=\"$SS_E2E_BUILD/bin/stepscope-cc\" "
		     "-DCMAKE_C_LINKER_LAUNCHER=\"$SS_E2E_BUILD/bin/stepscope-cc\" "
		     "&& cmake --build bld2 && ldd bld2/s-cc-calls | grep -q "
		     "libstepscope.so.0 && ldd bld2/s-cc-range | grep -q "
		     "libstepscope.so.0", t->v->cc);
	ss_e2e_pass(t);
}

/* pkg-config in the forms CMake projects use: every one links the runtime,
 * and the rest of the link keeps its own --as-needed state: the project
 * links -Wl,--no-as-needed -lm, so libm, which the program does not use, is
 * NEEDED, exactly as without stepscope. */
static void test_pkg_config(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	if (ss_e2e_sh(t, "command -v cmake && command -v pkg-config") != 0) {
		print_message("e2e: skipped: cmake or pkg-config is missing\n");
		ss_e2e_pass(t);
		skip();
	}
	const char *pc = "PKG_CONFIG_PATH=\"$SS_E2E_BUILD/lib/pkgconfig\"";
	SS_E2E_SH_OK(t, "cmake -S " E2E "/cc/cmake -B none -DCMAKE_C_COMPILER=%s "
		     "-DSS_LIB=m -DSS_INCLUDE=\"$SS_E2E_SRC/instrument\" >/dev/null && "
		     "cmake --build none >/dev/null",
		     t->v->cc);
	int libm = ss_e2e_sh(t, "readelf -d none/s-cc-range | grep -q "
				"'NEEDED.*libm\\.so'") == 0;
	SS_E2E_CHECK(t, libm, "without stepscope: expected libm needed "
		     "(-Wl,--no-as-needed -lm)");
	const char *forms[] = {"imported", "vars", "ldflags"};
	for (size_t i = 0; i < 3; i++) {
		char how[128];
		snprintf(how, sizeof(how), "-DSS_PKG=%s -DSS_LIB=m", forms[i]);
		SS_E2E_SH_OK(t, "%s cmake -S " E2E "/cc/cmake -B %s "
			     "-DCMAKE_C_COMPILER=%s %s >/dev/null && "
			     "%s cmake --build %s >/dev/null", pc, forms[i],
			     t->v->cc, how, pc, forms[i]);
		int st = ss_e2e_sh(t, "readelf -d %s/s-cc-range | grep -q "
				      "'NEEDED.*libstepscope\\.so\\.0'",
				   forms[i]);
		SS_E2E_CHECK(t, st == 0, "pkg-config %s: expected the program "
			     "to need libstepscope.so.0", forms[i]);
		int m = ss_e2e_sh(t, "readelf -d %s/s-cc-range | grep -q "
				    "'NEEDED.*libm\\.so'", forms[i]) == 0;
		SS_E2E_CHECK(t, m == libm, "pkg-config %s: libm %s, as it is "
			     "without stepscope %s (a flag leaked into the "
			     "link)", forms[i], m ? "needed" : "dropped",
			     libm ? "needed" : "dropped");
		SS_E2E_SH_OK(t, "cp %s/s-cc-range . && rm -rf rec", forms[i]);
		st = ss_e2e_record(t, "rec", "cc-range", NULL);
		SS_E2E_EXPECT_STATUS(t, st, 0);
		check_range(t, "rec");
	}
	ss_e2e_pass(t);
}

/* Annotated code built with plain `cc -finstrument-functions`, no wrapper
 * and no libstepscope: links, does nothing alone, records when preloaded.
 * Built as README.md's guarded include says, it also builds with the plain
 * compiler and no -I at all (issue 40 item 6), and through stepscope-cc
 * with no -I it records its ranges. */
static void test_plain_annotated(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "%s %s -g -finstrument-functions -DSTEPSCOPE_ENABLED=1 "
		     "-Wall -Wextra -Werror -I\"$SS_E2E_BUILD/include\" " INC
		     " -o s-cc-range " E2E "/s-cc-range.c && ./s-cc-range && "
		     "! ldd s-cc-range | grep -q libstepscope",
		     t->v->cc, t->v->opt);
	SS_E2E_CHECK(t, strstr(t->out, "recording 0") != NULL,
		     "run alone: expected 'recording 0', got: %s", t->out);
	int st = ss_e2e_record(t, "rec", "cc-range", NULL);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	check_range(t, "rec");
	/* the pattern README.md gives (__has_include, no-op macros) builds
	 * with the plain compiler and no -I, stepscope absent, and runs */
	int installed = ss_e2e_sh(t, "echo '#include <stepscope.h>' | %s -E -x c - >/dev/null",
				  t->v->cc) == 0;
	SS_E2E_SH_OK(t, "rm -rf rec && %s %s -Wall -Wextra -Werror -pedantic -o s-cc-range "
		     E2E "/s-cc-range.c && ./s-cc-range && ! ldd s-cc-range | grep -q libstepscope",
		     t->v->cc, t->v->opt);
	SS_E2E_CHECK(t, strstr(t->out, "recording 0") != NULL,
		     "plain build, no -I: expected 'recording 0', got: %s", t->out);
	if (installed)
		print_message("e2e: stepscope.h is on %s's own include path: the plain build "
			      "found it, the guard's no-op macros went unused\n", t->v->cc);
	else
		SS_E2E_SH_OK(t, "%s -E -P " E2E "/s-cc-range.c | grep -c '((void)(\"iter\"))'",
			     t->v->cc);
	/* the same source through stepscope-cc, no -I either: the wrapper
	 * puts stepscope.h on the path, and the ranges are recorded */
	SS_E2E_SH_OK(t, WRAP " %s %s -Wall -Wextra -Werror -o s-cc-range " E2E "/s-cc-range.c",
		     t->v->cc, t->v->opt);
	st = ss_e2e_record(t, "rec", "cc-range", NULL);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	check_range(t, "rec");
	ss_e2e_pass(t);
}

static void test_nvcc(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	if (ss_e2e_sh(t, "command -v nvcc || test -x /usr/local/cuda/bin/nvcc")
	    != 0)
		ss_e2e_skip(t, "nvcc is not installed (NVIDIA's CUDA toolkit, not "
			    "a Debian main package; looked on PATH and in "
			    "/usr/local/cuda/bin)");
	const char *path = "PATH=\"$PATH:/usr/local/cuda/bin\"";
	/* host-only .cu: compile + link, run, record */
	SS_E2E_SH_OK(t, "%s " WRAP " nvcc -O2 -c -o cu.o " E2E
		     "/s-cc-cuda.cu && %s " WRAP " nvcc -o s-cc-cuda cu.o",
		     path, path);
	struct ss_e2e_trace *tr = run_and_load(t, "cc-cuda");
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "twice(int)", 0, 3);
	/* a kernel: built only, it needs a GPU to run */
	SS_E2E_SH_OK(t, "%s " WRAP " nvcc -O2 -o s-cc-kernel " E2E
		     "/s-cc-kernel.cu && nm s-cc-kernel | grep -q "
		     "__cyg_profile_func_enter", path);
	print_message("e2e: s-cc-kernel built; not run (needs a GPU, this "
		      "test never runs it)\n");
	ss_e2e_pass(t);
}

/* ------------------------------------------------------------ exclusions */

static void test_exclude(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int gcc = !strcmp(t->v->cc, "gcc");
	SS_E2E_SH_OK(t, "STEPSCOPE_EXCLUDE=leaf " WRAP
		     " --exclude-functions=beta --exclude-files=cc/ %s %s " INC
		     " -o s-cc-calls " E2E "/s-cc-calls.c " E2E
		     "/cc/calls-lib.c", t->v->cc, t->v->opt);
	if (gcc) {
		expect_no_warning(t);
		check_calls(t, run_and_load(t, "cc-calls"), 3, 0, 0, 0);
		/* the same with each value after a space */
		SS_E2E_SH_OK(t, "rm -rf rec && STEPSCOPE_EXCLUDE=leaf " WRAP
			     " --exclude-functions beta --exclude-files cc/ %s %s " INC
			     " -o s-cc-calls " E2E "/s-cc-calls.c " E2E
			     "/cc/calls-lib.c", t->v->cc, t->v->opt);
		expect_no_warning(t);
		check_calls(t, run_and_load(t, "cc-calls"), 3, 0, 0, 0);
	} else {
		/* clang has no exclude lists: one warning line, no effect */
		SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
		SS_E2E_CHECK(t, strstr(t->err, "nothing excluded") != NULL,
			     "stderr: expected 'nothing excluded', got: %s",
			     t->err);
		check_calls(t, run_and_load(t, "cc-calls"), 3, 2, 3, 4);
	}
	ss_e2e_pass(t);
}

/* ------------------------------------------------------------ bad input */

#define EXPECT_REFUSED(t, needle, ...)                                         \
	do {                                                                   \
		int st_ = ss_e2e_sh((t), __VA_ARGS__);                         \
		SS_E2E_EXPECT_STATUS((t), st_, 2);                             \
		SS_E2E_EXPECT_LINES((t), "stderr", (t)->err, 1);               \
		if (!strstr((t)->err, (needle))) {                             \
			ss_e2e_show_last((t), st_);                            \
			SS_E2E_FAIL((t), "stderr: expected it to say '%s'",    \
				    (const char *)(needle));                   \
		}                                                              \
	} while (0)

static void test_bad_compiler(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "echo 'int main(void){return 0;}' > x.c");
	EXPECT_REFUSED(t, "compiler 'nosuchcc' not found",
		       WRAP " nosuchcc -c x.c");
	EXPECT_REFUSED(t, "compiler 'nosuchcc' not found",
		       "CC=nosuchcc " WRAP " -c x.c");
	EXPECT_REFUSED(t, "compiler 'cc' not found",
		       "CC= PATH=/nonexistent /bin/sh " WRAP " -c x.c");
	/* a compiler that ignores -finstrument-functions */
	SS_E2E_SH_OK(t, "mkdir bin && printf '#!/bin/sh\\nwhile [ $# -gt 0 ]; "
			"do [ \"$1\" = -o ] && : > \"$2\"; shift; done\\n' "
			"> bin/fakecc && chmod +x bin/fakecc");
	EXPECT_REFUSED(t, "does not support -finstrument-functions",
		       WRAP " \"$PWD/bin/fakecc\" -c x.c");
	EXPECT_REFUSED(t, "does not support -finstrument-functions",
		       "PATH=\"$PWD/bin:$PATH\" " WRAP " fakecc -c x.c");
	EXPECT_REFUSED(t, "--exclude-functions needs a value", WRAP " --exclude-functions");
	EXPECT_REFUSED(t, "--exclude-file needs a value", WRAP " --exclude-file");
	/* the wrapper's own help, before any compiler */
	SS_E2E_SH_OK(t, WRAP " --help");
	SS_E2E_CHECK(t, !strncmp(t->out, "Usage: stepscope-cc [OPTIONS] [COMPILER] ARGS...", 48) &&
			     strstr(t->out, "--exclude-file=FILE"),
		     "stepscope-cc --help: %s", t->out);
	SS_E2E_SH_OK(t, "test ! -e x.o");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_inline),
		SS_E2E_VARIANTS(test_oneshot),
		SS_E2E_VARIANTS(test_link_hint),
		SS_E2E_VARIANTS(test_missing_function),
		SS_E2E_VARIANTS(test_openmp),
		SS_E2E_VARIANTS(test_werror),
		SS_E2E_VARIANTS(test_static_link),
		SS_E2E_VARIANTS(test_lto),
		SS_E2E_VARIANTS(test_static_library),
		SS_E2E_VARIANTS(test_uninstrumented_object),
		SS_E2E_VARIANTS(test_makefile),
		SS_E2E_VARIANTS(test_cmake),
		SS_E2E_VARIANTS(test_pkg_config),
		SS_E2E_VARIANTS(test_plain_annotated),
		SS_E2E_TEST(test_nvcc),
		SS_E2E_VARIANTS(test_exclude),
		SS_E2E_TEST(test_bad_compiler),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
