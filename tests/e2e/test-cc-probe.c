/*
 * test-cc-probe.c - end to end: feature probes through stepscope-cc behave
 * as with the plain compiler.  Makefiles and configure scripts probe a flag
 * with `cc FLAG -x c - -o /dev/null` (or -E, -c, -M of stdin) and drop it
 * when the probe fails; a wrapper that fails where the compiler does not
 * silently loses the flag (-march=native, for one, and with it the
 * program's speed).  Each form below runs through the plain compiler and
 * through the wrapper, in directories of their own: same exit status, the
 * same files left behind, the same stdout for -E and -M (nvcc's temp file
 * names aside), and no stderr through the wrapper where the compiler
 * printed none.  Then a link with `-x c` in force still gets the runtime:
 * the program holds the hooks, needs libstepscope and records its calls.
 *
 * SS_CC_PROBE_WRAPPER=PATH runs the forms through another stepscope-cc
 * (an older one, to see what these tests catch); by default it is the
 * build's.
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

#define WRAP "\"${SS_CC_PROBE_WRAPPER:-$SS_E2E_BUILD/bin/stepscope-cc}\""

/* the compilers, as cmocka prestates (the -O level is not used) */
static const struct ss_e2e_variant v_gcc = {"gcc", "-O0"};
static const struct ss_e2e_variant v_gxx = {"g++", "-O0"};
static const struct ss_e2e_variant v_clang = {"clang", "-O0"};
static const struct ss_e2e_variant v_clangxx = {"clang++", "-O0"};

/* what a form must do with the plain compiler, so that the comparison
 * means something */
enum want { ANY, OK, FAILS };

struct form {
	const char *args;  /* after the compiler; the input comes on stdin */
	const char *input; /* the file fed to stdin: in.c or in.S */
	int out;           /* compare stdout (-E, -M) */
	enum want gnu;     /* with gcc, g++, clang, clang++ */
	enum want nvcc;    /* with nvcc */
	int nvcc_only;     /* a form only nvcc is asked */
};

static const struct form forms[] = {
	{"-x c -", "in.c", 0, OK, ANY, 0},
	{"-x c++ -", "in.c", 0, OK, ANY, 0},
	{"-x assembler-with-cpp -", "in.S", 0, OK, ANY, 0},
	{"-Werror -x assembler -c -", "in.S", 0, OK, ANY, 0},
	{"-E -", "in.c", 1, OK, ANY, 0},
	{"-E -x c -", "in.c", 1, OK, ANY, 0},
	{"-E -x c++ -", "in.c", 1, OK, ANY, 0},
	{"-S -x c -", "in.c", 0, OK, ANY, 0},
	{"-c -x c -", "in.c", 0, OK, ANY, 0},
	{"-c -x c++ -", "in.c", 0, OK, ANY, 0},
	{"-M -x c -", "in.c", 1, OK, ANY, 0},
	{"-MM -x c -", "in.c", 1, OK, ANY, 0},
	{"-x c - -o prog", "in.c", 0, OK, ANY, 0},
	{"-march=native -x c - -o /dev/null", "in.c", 0, OK, ANY, 0},
	{"-Werror -march=native -x c - -o /dev/null", "in.c", 0, OK, ANY, 0},
	{"-Xcompiler -march=native -x c - -o /dev/null", "in.c", 0, ANY, OK, 1},
	{"-fstepscope-no-such-flag -x c - -o /dev/null", "in.c", 0, FAILS,
	 FAILS, 0},
};

/* text with nvcc's temp names (tmpxft_0000abcd_00000000-1_stdin) made
 * equal; the caller frees it */
static char *normalize(const char *text)
{
	char *s = strdup(text), *w = s;
	assert_non_null(s);
	for (const char *r = text; *r;) {
		if (!strncmp(r, "tmpxft_", 7)) {
			memcpy(w, "tmpxft", 6);
			w += 6;
			r += 7;
			while (*r == '_' || (*r >= '0' && *r <= '9') ||
			       (*r >= 'a' && *r <= 'f'))
				r++;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	return s;
}

/* The forms that differed through the wrapper, for the failure at the
 * end of probe_forms. */
struct diffs {
	const char *cc;
	char list[4096];
	int n;
};

/* One difference of form f: said at once (with the head of the wrapped
 * command's stderr `werr`: a C compile of an archive says a lot) and
 * added to d. */
static void differs(struct diffs *d, const struct form *f, const char *wcmd,
		    const char *werr, const char *what)
{
	print_message("e2e: DIFFERS: %s %s < %s: %s\n  wrapped: %s\n  "
		      "its stderr: %.300s%s\n", d->cc, f->args, f->input,
		      what, wcmd, werr, strlen(werr) > 300 ? "..." : "");
	size_t used = strlen(d->list);
	snprintf(d->list + used, sizeof(d->list) - used, "%s[%s] %s",
		 d->n ? ", " : "", f->args, what);
	d->n++;
}

/* The forms, through `cc` (after the environment `env`, "" for none)
 * plainly and through the wrapper; every form runs, then the test fails
 * naming each one that differed. */
static void probe_forms(struct ss_e2e *t, const char *env, const char *cc,
			int nvcc)
{
	SS_E2E_SH_OK(t, "printf 'int main(void) { return 0; }\\n' > in.c && "
			"printf '\\t.text\\n\\t.globl main\\nmain:\\n\\txor "
			"%%%%eax, %%%%eax\\n\\tret\\n' > in.S");
	size_t n = sizeof(forms) / sizeof(forms[0]), ran = 0;
	struct diffs d = {.cc = cc};
	for (size_t i = 0; i < n; i++) {
		const struct form *f = &forms[i];
		if (f->nvcc_only && !nvcc)
			continue;
		enum want want = nvcc ? f->nvcc : f->gnu;
		SS_E2E_SH_OK(t, "rm -rf p w && mkdir p w");
		int pst = ss_e2e_sh(t, "cd p && %s %s %s < ../%s", env, cc,
				    f->args, f->input);
		char *pout = normalize(t->out);
		int perr = t->err[0] != '\0';
		if ((want == OK && pst != 0) || (want == FAILS && pst == 0)) {
			ss_e2e_show_last(t, pst);
			SS_E2E_FAIL(t, "%s %s: plain: expected it to %s",
				    cc, f->args, want == OK ? "succeed" : "fail");
		}
		int wst = ss_e2e_sh(t, "cd w && %s " WRAP " %s %s < ../%s",
				    env, cc, f->args, f->input);
		print_message("e2e: %s %s: plain %d, wrapped %d\n", cc,
			      f->args, pst, wst);
		char *wcmd = strdup(t->cmd), *werr = strdup(t->err);
		assert_true(wcmd && werr);
		char what[128];
		if (wst != pst) {
			snprintf(what, sizeof(what), "exit status %d, plainly "
				 "%d", wst, pst);
			differs(&d, f, wcmd, werr, what);
		} else if (!perr && t->err[0]) {
			differs(&d, f, wcmd, werr, "stderr, plainly none");
		} else if (f->out) {
			char *wout = normalize(t->out);
			if (strcmp(pout, wout) != 0) {
				print_message("e2e: plain stdout:\n%s\n",
					      pout);
				differs(&d, f, wcmd, werr, "stdout");
			}
			free(wout);
		}
		free(pout);
		/* the same files, by name: -.o, -.s, prog, a.out (nvcc's
		 * -c of stdin: tmpxft_..._stdin.o) */
		if (wst == pst &&
		    ss_e2e_sh(t, "for d in p w; do ls -A $d | sed "
				 "'s/tmpxft_[0-9a-f_]*/tmpxft/' > $d.ls; done "
				 "&& cmp p.ls w.ls") != 0)
			differs(&d, f, wcmd, werr, "the files it left");
		free(wcmd);
		free(werr);
		ran++;
	}
	SS_E2E_CHECK(t, d.n == 0, "%s: %d of %zu probe forms differ through "
		     "stepscope-cc from the plain compiler: %s", cc, d.n, ran,
		     d.list);
	print_message("e2e: %s: %zu forms, the same exit status plainly "
		      "and through stepscope-cc\n", cc, ran);
}

/* A link from stdin with -x c in force: the hooks are in the program
 * (libstepscope-hooks.a was linked as an archive, not read as C), it
 * needs libstepscope, and it records main and leaf. */
static void probe_instrumented(struct ss_e2e *t, const char *env,
			       const char *cc)
{
	SS_E2E_SH_OK(t, "rm -rf rec s-probe && printf 'int leaf(int x) "
			"{ return x + 1; }\\nint main(void) { return leaf(0) "
			"- 1; }\\n' > leaf.c && %s " WRAP " %s -O0 -x c - "
			"-o s-probe < leaf.c && nm s-probe | grep -q "
			"' t __cyg_profile_func_enter' && readelf -d s-probe "
			"| grep -q 'NEEDED.*libstepscope'", env, cc);
	int st = ss_e2e_record(t, "rec", "probe", NULL);
	if (st != 0) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "stepscope record of s-probe: expected status "
			    "0, got %d", st);
	}
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "leaf", 0, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "leaf", "main");
}

static void test_probes(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	probe_forms(t, "", t->v->cc, 0);
	probe_instrumented(t, "", t->v->cc);
	ss_e2e_pass(t);
}

static void test_probes_nvcc(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	if (ss_e2e_sh(t, "command -v nvcc || test -x /usr/local/cuda/bin/nvcc")
	    != 0)
		ss_e2e_skip(t, "nvcc is not installed (NVIDIA's CUDA toolkit, "
			    "not a Debian main package; looked on PATH and in "
			    "/usr/local/cuda/bin): the nvcc probes did not run");
	const char *env = "PATH=\"$PATH:/usr/local/cuda/bin\"";
	probe_forms(t, env, "nvcc", 1);
	probe_instrumented(t, env, "nvcc");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E__ONE(test_probes, v_gcc, "gcc"),
		SS_E2E__ONE(test_probes, v_gxx, "g++"),
		SS_E2E__ONE(test_probes, v_clang, "clang"),
		SS_E2E__ONE(test_probes, v_clangxx, "clang++"),
		SS_E2E__ONE(test_probes_nvcc, ss_e2e_gcc_O0, "nvcc"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
