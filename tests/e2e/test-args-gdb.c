/*
 * test-args-gdb.c - end to end: record.args against gdb (issue 33).  gdb
 * runs s-args (tests/e2e/s-args.c, the GPT-2-shaped trainer) with the
 * runtime recording it, stops in the enter hook of every call of the three
 * listed functions and prints `info args` in frame 1; the same run's trace
 * is then symbolized.  For every parameter gdb gives a value for, stepscope
 * gives the same (integers, pointers, floats bit-exact).  Where gdb's value
 * is not the program's own (its ledger: clang -O0 keeps the parameters'
 * homes unwritten until after the hook, and gdb reads those homes),
 * stepscope must give the ledger's value or <optimized out>.  gcc and
 * clang, -O0, -O2 and -O3 -march=native -ffast-math, OpenMP.
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

enum { MAXSTOPS = 64, MAXP = 12 };

static const struct ss_e2e_variant gcc_O0 = { "gcc", "-O0" }, gcc_O2 = { "gcc", "-O2" },
	gcc_O3 = { "gcc", "-O3 -march=native -ffast-math" }, clang_O0 = { "clang", "-O0" },
	clang_O2 = { "clang", "-O2" }, clang_O3 = { "clang", "-O3 -march=native -ffast-math" };

static const char gdb_script[] =
	"set pagination off\n"
	"set confirm off\n"
	"set print symbol off\n"
	"set breakpoint pending on\n"
	"break __cyg_profile_func_enter if fn == (void *)matmul_forward || "
	"fn == (void *)attention_forward || fn == (void *)adamw_update\n"
	"commands\n"
	"silent\n"
	"frame 1\n"
	"info args\n"
	"continue\n"
	"end\n"
	"run\n";

struct stop {
	char fn[32];
	char name[MAXP][32], val[MAXP][64];
	int n;
};

/* gdb's stdout: "#1  0x... in FN (...)" then "NAME = VALUE" lines. */
static size_t parse_gdb(char *out, struct stop *stops)
{
	size_t n = 0;
	char *save = NULL;

	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *in, *eq;
		if (!strncmp(l, "#1 ", 3) && (in = strstr(l, " in "))) {
			if (n >= MAXSTOPS)
				break;
			sscanf(in + 4, "%31[A-Za-z_0-9]", stops[n].fn);
			stops[n++].n = 0;
			continue;
		}
		if (!n || !(eq = strstr(l, " = ")) || strchr(l, ' ') != eq)
			continue;
		struct stop *s = &stops[n - 1];
		if (s->n >= MAXP)
			continue;
		snprintf(s->name[s->n], sizeof(s->name[0]), "%.*s", (int)(eq - l), l);
		snprintf(s->val[s->n], sizeof(s->val[0]), "%s", eq + 3);
		s->n++;
	}
	return n;
}

/* What s-args logs of each function's parameters, in its ledger's order. */
static const char *const logged[][12] = {
	{ "matmul_forward", "out", "inp", "weight", "bias", "b", "t", "c", "oc" },
	{ "attention_forward", "out", "inp", "b", "t", "c", "nh" },
	{ "adamw_update", "params", "grads", "m", "v", "n", "lr", "beta1", "beta2", "eps",
	  "weight_decay", "t" },
};

/* The ledger's value of parameter `name` of the i-th call: 0, or -1 when
 * the program does not log it. */
static int ledger_value(struct ss_e2e *t, size_t i, const char *fn, const char *name,
			char *buf, size_t len)
{
	char path[4200], line[1024];
	size_t at = 0;
	int rc = -1, k = -1;

	for (size_t r = 0; r < sizeof(logged) / sizeof(logged[0]); r++)
		if (!strcmp(logged[r][0], fn))
			for (int j = 1; j < 12 && logged[r][j]; j++)
				if (!strcmp(logged[r][j], name))
					k = j - 1;
	if (k < 0)
		return -1;

	snprintf(path, sizeof(path), "%s/ledger", t->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "residual ", 9))
			continue;  /* not listed here */
		if (at++ != i)
			continue;
		char *save = NULL, *w = strtok_r(line, " \n", &save);
		for (int j = 0; w && j <= k; j++)
			w = strtok_r(NULL, " \n", &save);
		if (w) {
			snprintf(buf, len, "%s", !strcmp(w, "(nil)") ? "0x0" : w);
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}

/* Equal as what they are: pointers and integers by value, floats as
 * floats (gdb prints 9 digits, the ledger %a, stepscope %.9g). */
static int same(const char *a, const char *b)
{
	if (!strncmp(a, "0x", 2) && !strchr(a, 'p'))
		return !strncmp(b, "0x", 2) && strtoull(a, NULL, 16) == strtoull(b, NULL, 16);
	float x = strtof(a, NULL), y = strtof(b, NULL);
	return !memcmp(&x, &y, sizeof(x));
}

static void test_gdb(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct stop stops[MAXSTOPS];
	cJSON *evs[MAXSTOPS], *ev;
	size_t nstops, n = 0, compared = 0, gdb_wrong = 0;
	char path[4200];

	ss_e2e_need(t, "command -v gdb", "gdb", "gdb");
	ss_e2e_build(t, "args", "-fopenmp -lm");
	snprintf(path, sizeof(path), "%s/gdb.cmd", t->dir);
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fputs(gdb_script, f);
	fclose(f);
	SS_E2E_SH_OK(t, "OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive "
			"STEPSCOPE_SET='record.args=matmul_forward attention_forward adamw_update,"
			"output_dir=out' gdb -q -batch -nx -x gdb.cmd --args ./s-args ledger 1");
	char *out = strdup(t->out);
	nstops = parse_gdb(out, stops);
	free(out);
	SS_E2E_CHECK(t, nstops == 11, "gdb stopped %zu times in the listed functions' enter hooks, expected 11",
		     nstops);
	SS_E2E_SH_OK(t, "mv out/s-args-* run && \"$SS_E2E_BUILD/bin/stepscope\" symbolize run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (cJSON_IsString(name) && (!strcmp(name->valuestring, "matmul_forward") ||
					     !strcmp(name->valuestring, "attention_forward") ||
					     !strcmp(name->valuestring, "adamw_update")) &&
		    n < MAXSTOPS)
			evs[n++] = ev;
	}
	SS_E2E_CHECK(t, n == nstops, "trace: %zu calls, gdb: %zu stops", n, nstops);
	qsort(evs, n, sizeof(evs[0]), ss_e2e_cmp_ts);
	for (size_t i = 0; i < n; i++) {
		const struct stop *s = &stops[i];
		const char *fn = cJSON_GetObjectItemCaseSensitive(evs[i], "name")->valuestring;
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(evs[i], "args");
		SS_E2E_CHECK(t, !strcmp(fn, s->fn), "call %zu: trace %s, gdb %s", i, fn, s->fn);
		for (int k = 0; k < s->n; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, s->name[k]);
			char mine[64], led[64];
			if (!strcmp(s->val[k], "<optimized out>"))
				continue;
			SS_E2E_CHECK(t, v != NULL, "call %zu %s: no %s in the trace (gdb: %s)", i, fn,
				     s->name[k], s->val[k]);
			if (cJSON_IsString(v))
				snprintf(mine, sizeof(mine), "%s", v->valuestring);
			else
				snprintf(mine, sizeof(mine), "%.17g", v->valuedouble);
			if (!ledger_value(t, i, fn, s->name[k], led, sizeof(led)) &&
			    !same(s->val[k], led)) {
				/* gdb read a home not yet written */
				gdb_wrong++;
				SS_E2E_CHECK(t, same(mine, led) || !strcmp(mine, "<optimized out>"),
					     "call %zu %s: %s: stepscope %s, the program's own %s (gdb %s)",
					     i, fn, s->name[k], mine, led, s->val[k]);
				continue;
			}
			compared++;
			SS_E2E_CHECK(t, same(mine, s->val[k]), "call %zu %s: %s: stepscope %s, gdb %s",
				     i, fn, s->name[k], mine, s->val[k]);
		}
	}
	cJSON_Delete(root);
	print_message("e2e: %zu values equal to gdb's; %zu of gdb's were not the program's own\n",
		      compared, gdb_wrong);
	SS_E2E_CHECK(t, compared > 0, "gdb recovered nothing to compare");
	ss_e2e_pass(t);
}

#define VARIANT(var, tag) { "test_gdb/" tag, test_gdb, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(gcc_O0, "gcc-O0"),
		VARIANT(gcc_O2, "gcc-O2"),
		VARIANT(gcc_O3, "gcc-O3-native-fast-math"),
		VARIANT(clang_O0, "clang-O0"),
		VARIANT(clang_O2, "clang-O2"),
		VARIANT(clang_O3, "clang-O3-native-fast-math"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
