/*
 * test-args-clone.c - end to end: record.args on the shapes gcc gives
 * functions in optimized builds (issue 44): a .constprop clone (the hook
 * gets the original's address from the clone's body), a function split
 * hot/cold (DW_AT_ranges, no low_pc), and a function inlined into that
 * clone.  gdb runs s-args-clone (tests/e2e/s-args-clone.c) with the
 * runtime recording it and prints `info args` in frame 1 at every enter
 * hook of the listed functions; the same run's trace is symbolized.  Every
 * call carries every parameter by name; each is the program's own value
 * (its printout) or <optimized out>, and every value gdb gives is ours
 * where it is the program's (gdb reads matmul's B as B*T in the clone's
 * second copy at -O3), except those gdb computes from the caller's registers (DW_OP_entry_value,
 * "B=B@entry=4" in its frame line: issue 44's entry-value item), counted.
 * nm says which shapes the compiler made; a build with none of them is
 * skipped with the reason.  test_cxx_cold: a C++ method split hot/cold by
 * g++ -O2 (s-args-cold.cc), its this, B and T against main's printout.
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

#include "e2e.h"
#include "unit-util.h"

enum { NCALLS = 14, MAXP = 8 };

static const struct ss_e2e_variant gcc_O2 = { "gcc", "-O2" }, gcc_O3 = { "gcc", "-O3" },
	clang_O2 = { "clang", "-O2" };

/* gdb resolves `forward` to the clone, whose DIE is named forward too,
 * while the hooks get the original's address: the condition names each
 * function by its symbol's offset from main (%s: main, then the three). */
static const char gdb_script[] =
	"set pagination off\n"
	"set confirm off\n"
	"set print symbol off\n"
	"break __cyg_profile_func_enter if fn == (char *)main - %s + %s || "
	"fn == (char *)main - %s + %s || fn == (char *)main - %s + %s\n"
	"commands\n"
	"silent\n"
	"frame 1\n"
	"info args\n"
	"continue\n"
	"end\n"
	"run\n";

/* Each function's parameters in the order the program prints them. */
static const char *const params[][MAXP] = {
	{ "forward", "model", "B", "T", "mode" },
	{ "matmul", "out", "B", "T", "C", "OC" },
	{ "sgemm", "trans_A", "trans_B", "M", "N", "K", "c" },
};

struct call {
	char fn[16];
	char frame[512];                      /* gdb's "#1 ..." line */
	char gname[MAXP][16], gval[MAXP][64]; /* gdb's info args */
	int ng;
	char val[MAXP][64];                   /* the program's, params[] order */
	int nv;
	const char *const *p;                 /* params[] row */
};

/* Parse the run's output: gdb's "#1 ... in FN (" and "NAME = VALUE"
 * lines, and the program's "FN v1 v2 ..." lines, both in call order. */
static size_t parse(char *out, struct call *c)
{
	size_t ng = 0, nv = 0;
	char *save = NULL;

	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *in, *eq, fn[16];
		if (!strncmp(l, "#1 ", 3) && (in = strstr(l, " in "))) {
			if (ng < NCALLS) {
				snprintf(c[ng].frame, sizeof(c[0].frame), "%s", in);
				c[ng++].ng = 0;
			}
			continue;
		}
		if ((eq = strstr(l, " = ")) && strchr(l, ' ') == eq && ng && ng <= NCALLS) {
			struct call *k = &c[ng - 1];
			if (k->ng < MAXP) {
				snprintf(k->gname[k->ng], sizeof(k->gname[0]), "%.*s", (int)(eq - l), l);
				snprintf(k->gval[k->ng++], sizeof(k->gval[0]), "%s", eq + 3);
			}
			continue;
		}
		for (size_t r = 0; r < sizeof(params) / sizeof(params[0]); r++) {
			size_t len = strlen(params[r][0]);
			if (strncmp(l, params[r][0], len) || l[len] != ' ' || nv >= NCALLS)
				continue;
			struct call *k = &c[nv++];
			char *s2 = NULL, *w = strtok_r(l + len + 1, " ", &s2);
			snprintf(fn, sizeof(fn), "%s", params[r][0]);
			memcpy(k->fn, fn, sizeof(fn));
			k->p = params[r];
			for (k->nv = 0; w && k->nv < MAXP - 1; w = strtok_r(NULL, " ", &s2))
				snprintf(k->val[k->nv++], sizeof(k->val[0]), "%s", w);
			if (!strcmp(fn, "forward"))  /* mode: 1 at every call site */
				snprintf(k->val[k->nv++], sizeof(k->val[0]), "1");
		}
	}
	return ng == nv ? ng : 0;
}

/* A JSON value as text: strings as they are, numbers as integers. */
static void text_of(const cJSON *v, char *buf, size_t len)
{
	if (cJSON_IsString(v))
		snprintf(buf, len, "%s", v->valuestring);
	else
		snprintf(buf, len, "%.17g", v->valuedouble);
}

/* Equal as values: pointers by number, integers by number. */
static int same(const char *a, const char *b)
{
	if (!strncmp(a, "0x", 2) || !strncmp(b, "0x", 2))
		return !strncmp(a, "0x", 2) && !strncmp(b, "0x", 2) &&
		       strtoull(a, NULL, 16) == strtoull(b, NULL, 16);
	return strtoll(a, NULL, 10) == strtoll(b, NULL, 10) && strchr("-0123456789", *a) &&
	       strchr("-0123456789", *b);
}

static void test_shapes(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct call calls[NCALLS];
	cJSON *evs[NCALLS], *ev;
	size_t n = 0, ncalls, compared = 0, exact = 0, out = 0, entry = 0, gdb_wrong = 0;
	int must = 5 * 6 + 3 * 2;
	int clone, cold;
	char path[4200];

	ss_e2e_need(t, "command -v gdb", "gdb", "gdb");
	ss_e2e_build(t, "args-clone", NULL);
	clone = ss_e2e_sh(t, "nm s-args-clone | grep -q ' forward\\.\\(constprop\\|isra\\|part\\)\\.'") == 0;
	cold = ss_e2e_sh(t, "nm s-args-clone | grep -q ' sgemm\\.cold$'") == 0;
	if (!clone && !cold)
		ss_e2e_skip(t, "%s %s made neither forward.constprop.N nor sgemm.cold (nm)", t->v->cc,
			    t->v->opt);
	print_message("e2e: %s %s: clone %s, hot/cold split %s\n", t->v->cc, t->v->opt,
		      clone ? "yes" : "no", cold ? "yes" : "no");
	/* the symbols' addresses: nm's "ADDR t NAME" of main and the three */
	static const char *const syms[] = { "main", "forward", "matmul", "sgemm" };
	char sym[4][24];
	for (int k = 0; k < 4; k++) {
		SS_E2E_SH_OK(t, "nm s-args-clone | awk '$3 == \"%s\" { print \"0x\" $1 }'", syms[k]);
		SS_E2E_CHECK(t, sscanf(t->out, "%23s", sym[k]) == 1, "nm: no symbol %s", syms[k]);
	}
	snprintf(path, sizeof(path), "%s/gdb.cmd", t->dir);
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fprintf(f, gdb_script, sym[0], sym[1], sym[0], sym[2], sym[0], sym[3]);
	fclose(f);
	SS_E2E_SH_OK(t, "STEPSCOPE_SET='record.args=forward matmul sgemm,output_dir=out' "
			"gdb -q -batch -nx -x gdb.cmd --args ./s-args-clone 2 4 64");
	char *text = strdup(t->out);
	ncalls = parse(text, calls);
	free(text);
	SS_E2E_CHECK(t, ncalls == NCALLS, "gdb stops and the program's lines: %zu calls, expected %d",
		     ncalls, NCALLS);
	SS_E2E_SH_OK(t, "mv out/s-args-clone-* run && \"$SS_E2E_BUILD/bin/stepscope\" symbolize run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (cJSON_IsString(name) && (!strcmp(name->valuestring, "forward") ||
					     !strcmp(name->valuestring, "matmul") ||
					     !strcmp(name->valuestring, "sgemm"))) {
			SS_E2E_CHECK(t, n < NCALLS, "trace: more than %d listed calls", NCALLS);
			evs[n++] = ev;
		}
	}
	SS_E2E_CHECK(t, n == NCALLS, "trace: %zu listed calls, expected %d", n, NCALLS);
	qsort(evs, n, sizeof(evs[0]), ss_e2e_cmp_ts);
	for (size_t i = 0; i < n; i++) {
		const struct call *c = &calls[i];
		const char *fn = cJSON_GetObjectItemCaseSensitive(evs[i], "name")->valuestring;
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(evs[i], "args");
		char mine[64], at[48];
		SS_E2E_CHECK(t, !strcmp(fn, c->fn), "call %zu: trace %s, program %s", i, fn, c->fn);
		for (int k = 0; k < c->nv; k++) {
			const char *pn = c->p[k + 1];
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, pn);
			SS_E2E_CHECK(t, v != NULL, "call %zu %s: no %s in the trace (program: %s)", i, fn,
				     pn, c->val[k]);
			text_of(v, mine, sizeof(mine));
			if (!strcmp(mine, "<optimized out>")) {
				out++;
				continue;
			}
			exact++;
			if (!strcmp(fn, "sgemm") || !strcmp(pn, "mode") || !strcmp(pn, "model"))
				must--;
			SS_E2E_CHECK(t, same(mine, c->val[k]), "call %zu %s: %s: stepscope %s, program %s",
				     i, fn, pn, mine, c->val[k]);
		}
		for (int k = 0; k < c->ng; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, c->gname[k]);
			if (!strcmp(c->gval[k], "<optimized out>"))
				continue;
			SS_E2E_CHECK(t, v != NULL, "call %zu %s: no %s (gdb: %s)", i, fn, c->gname[k],
				     c->gval[k]);
			text_of(v, mine, sizeof(mine));
			snprintf(at, sizeof(at), "%s=%s@entry=", c->gname[k], c->gname[k]);
			if (!strcmp(mine, "<optimized out>") && strstr(c->frame, at)) {
				entry++;  /* gdb's DW_OP_entry_value, from the caller */
				continue;
			}
			const char *own = NULL;
			for (int j = 0; j < c->nv; j++)
				if (!strcmp(c->p[j + 1], c->gname[k]))
					own = c->val[j];
			if (own && !same(c->gval[k], own)) {
				/* gdb wrong: ours was checked against the program's above */
				gdb_wrong++;
				continue;
			}
			compared++;
			SS_E2E_CHECK(t, same(mine, c->gval[k]), "call %zu %s: %s: stepscope %s, gdb %s", i,
				     fn, c->gname[k], mine, c->gval[k]);
		}
	}
	/* the report's footer: per function, the calls with a value
	 * <optimized out> and each such parameter's count, as the trace has them */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report run --group-by args");
	char *report = strdup(t->out);
	for (size_t r = 0; r < sizeof(params) / sizeof(params[0]); r++) {
		const char *fn = params[r][0];
		size_t calls = 0, with = 0, per[MAXP] = { 0 };
		char head[160], item[64], *line;
		for (size_t i = 0; i < n; i++) {
			const cJSON *a = cJSON_GetObjectItemCaseSensitive(evs[i], "args");
			int any = 0;
			if (strcmp(cJSON_GetObjectItemCaseSensitive(evs[i], "name")->valuestring, fn))
				continue;
			calls++;
			for (int k = 1; k < MAXP && params[r][k]; k++) {
				const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, params[r][k]);
				if (cJSON_IsString(v) && !strcmp(v->valuestring, "<optimized out>"))
					per[k]++, any = 1;
			}
			with += any;
		}
		snprintf(head, sizeof(head), "\n%s: %zu of %zu calls with a value <optimized out>:", fn,
			 with, calls);
		line = strstr(report, head);
		if (!with) {
			snprintf(head, sizeof(head), "\n%s: ", fn);
			SS_E2E_CHECK(t, !strstr(report, head), "report: a footer line for %s, whose "
				     "calls have every value:\n%s", fn, report);
			continue;
		}
		SS_E2E_CHECK(t, line != NULL, "report: no line '%s' in:\n%s", head + 1, report);
		char *eol = strchr(line + 1, '\n');
		if (eol)
			*eol = 0;
		for (int k = 1; k < MAXP && params[r][k]; k++) {
			snprintf(item, sizeof(item), " %s %zu", params[r][k], per[k]);
			if (per[k])
				SS_E2E_CHECK(t, strstr(line, item) != NULL, "report: '%s' lacks '%s'",
					     line + 1, item);
		}
		print_message("e2e: footer: %s\n", line + 1);
		if (eol)
			*eol = '\n';
	}
	free(report);
	cJSON_Delete(root);
	print_message("e2e: %zu values exact, %zu <optimized out>; %zu equal to gdb's, %zu gdb "
		      "has only from the caller (entry values), %zu where gdb's is not the program's\n",
		      exact, out, compared, entry, gdb_wrong);
	SS_E2E_CHECK(t, compared > 0, "gdb recovered nothing to compare");
	/* in registers or constants at the hook in every shape: sgemm's six
	 * (x5 calls), forward's model and mode (x3) */
	SS_E2E_CHECK(t, must == 0, "%d of the values every shape keeps came back <optimized out>",
		     must);
	ss_e2e_pass(t);
}

/* A C++ method split hot/cold (s-args-cold.cc): every call's this, B and
 * T, as main printed them. */
static void test_cxx_cold(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const char name[] = "Layer::forward(int, int)";
	char want[3][64], mine[64], *save = NULL;
	const char *pn[] = { "this", "B", "T" };
	size_t n = 0;
	cJSON *ev;

	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" g++ %s -o s-args-cold "
			"\"$SS_E2E_SRC/tests/e2e/s-args-cold.cc\"", t->v->opt);
	if (ss_e2e_sh(t, "nm -C s-args-cold | grep -qF 'Layer::forward(int, int) [clone .cold]'"))
		ss_e2e_skip(t, "g++ %s made no Layer::forward [clone .cold] (nm)", t->v->opt);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set 'record.args=*Layer*forward*' "
			"-o run -- ./s-args-cold 3 > printed");
	ss_e2e_symbolize(t, "run");
	SS_E2E_SH_OK(t, "cat printed");
	char *printed = strdup(t->out);
	char *line = strtok_r(printed, "\n", &save);
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
		if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name))
			continue;
		SS_E2E_CHECK(t, line && sscanf(line, "forward %63s %63s %63s", want[0], want[1],
					       want[2]) == 3, "call %zu: no line printed for it", n);
		for (int k = 0; k < 3; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, pn[k]);
			SS_E2E_CHECK(t, v != NULL, "call %zu: no %s in the trace", n, pn[k]);
			text_of(v, mine, sizeof(mine));
			SS_E2E_CHECK(t, same(mine, want[k]), "call %zu: %s: stepscope %s, program %s", n,
				     pn[k], mine, want[k]);
		}
		n++;
		line = strtok_r(NULL, "\n", &save);
	}
	free(printed);
	cJSON_Delete(root);
	SS_E2E_CHECK(t, n == 3, "trace: %zu calls of %s, expected 3", n, name);
	print_message("e2e: %s (hot/cold): 3 calls, this B T exact on each\n", name);
	ss_e2e_pass(t);
}

#define VARIANT(var, tag) { "test_shapes/" tag, test_shapes, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(gcc_O2, "gcc-O2"),
		VARIANT(gcc_O3, "gcc-O3"),
		VARIANT(clang_O2, "clang-O2"),
		{ "test_cxx_cold/gcc-O2", test_cxx_cold, ss_e2e_setup, ss_e2e_teardown, (void *)&gcc_O2 },
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
