/*
 * test-args.c - end to end: record.args and flops: (issue 33) on s-args, a
 * GPT-2-shaped trainer (matmul_forward with four shapes per layer,
 * attention_forward with a head count, adamw_update with float
 * hyperparameters that change every step; OpenMP), built with gcc and
 * clang at -O0, -O2 and -O3 -march=native -ffast-math.
 *
 * Checks, against the ledger the program writes around every call:
 *   test_ledger: every recorded call of the three functions carries every
 *     parameter by its source name, equal to the ledger's value (integers
 *     exact, floats bit-exact, pointers), in call order; the slices of the
 *     OpenMP outlined body carry none; residual, inlined into its caller,
 *     has each value equal to the ledger's or <optimized out> (clang
 *     keeps little of an inlined copy at the hook); each call's "flops" is the
 *     expression's value for its ledger values; the .perfetto-trace has
 *     the values as debug annotations.
 *   test_group: `report --group-by args --format csv`: exactly the groups
 *     the ledger has (4 matmul shapes, 1 attention, one AdamW per step),
 *     each with the ledger's call count; every group's GFLOP/s within 10%
 *     of the ledger's own (its FLOPs over the program's clock around the
 *     same calls): two figures of the same run, never a fixed time.
 *   test_cxx: s-args-cxx.cc, a C++ method (this and scalars) and a
 *     function in a namespace, g++ and clang++: the same against its ledger.
 *   test_flops_error: a flops: expression naming a parameter the function
 *     does not have stops record before the program runs: exit 2, one line
 *     with the config's file and the entry's line.
 *   test_flops_hostile: 100,000 '-', a divisor that is 0, a function
 *     record.args does not list: refused the same way by record and by the
 *     runtime (STEPSCOPE_CONFIG); a function the program lacks: a warning.
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

enum { STEPS = 3, MAXCALLS = 256, MAXP = 12 };

static const struct ss_e2e_variant gcc_O0 = { "gcc", "-O0" }, gcc_O2 = { "gcc", "-O2" },
	gcc_O3 = { "gcc", "-O3 -march=native -ffast-math" }, clang_O0 = { "clang", "-O0" },
	clang_O2 = { "clang", "-O2" }, clang_O3 = { "clang", "-O3 -march=native -ffast-math" };

static const char *const params_mm[] = { "out", "inp", "weight", "bias", "b", "t", "c", "oc" };
static const char *const params_att[] = { "out", "inp", "b", "t", "c", "nh" };
static const char *const params_res[] = { "x", "y", "n", "a" };
static const char *const params_adam[] = { "params", "grads", "m", "v", "n", "lr", "beta1",
					   "beta2", "eps", "weight_decay", "t" };

static const char config[] =
	"record:\n"
	"  args: [matmul_forward, attention_forward, 'adamw_*', residual]\n"
	"flops:\n"
	"  matmul_forward: \"2*b*t*c*oc\"\n"
	"  attention_forward: \"128 * b * nh * t * t * (c / nh)\"\n";

/* One ledger line: the function, its values as written, its ns. */
struct call {
	char fn[32];
	char v[MAXP][48];
	int nv;
	long long ns;
};

static const char *const *fn_params(const char *fn, int *n)
{
	if (!strcmp(fn, "matmul_forward")) {
		*n = 8;
		return params_mm;
	}
	if (!strcmp(fn, "attention_forward")) {
		*n = 6;
		return params_att;
	}
	if (!strcmp(fn, "residual")) {
		*n = 4;
		return params_res;
	}
	*n = 11;
	return params_adam;
}

static size_t read_ledger(struct ss_e2e *t, struct call *calls)
{
	char path[4200], line[1024];
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/ledger", t->dir);
	FILE *f = fopen(path, "r");
	SS_E2E_CHECK(t, f != NULL, "s-args wrote no ledger at %s", path);
	while (n < MAXCALLS && fgets(line, sizeof(line), f)) {
		struct call *c = &calls[n];
		char *save = NULL, *w = strtok_r(line, " \n", &save);
		int np;
		if (!w)
			continue;
		snprintf(c->fn, sizeof(c->fn), "%s", w);
		fn_params(c->fn, &np);
		c->nv = 0;
		while ((w = strtok_r(NULL, " \n", &save)) && c->nv < np)
			snprintf(c->v[c->nv++], sizeof(c->v[0]), "%s", w);
		SS_E2E_CHECK(t, w != NULL && c->nv == np, "a short ledger line for %s", c->fn);
		c->ns = atoll(w);
		n++;
	}
	fclose(f);
	return n;
}

/* The ledger's value as a number (ints, %a floats). */
static double ledger_num(const char *v)
{
	return strtod(v, NULL);
}

/* Does the recorded JSON value equal the ledger's text? */
static int same_value(const cJSON *got, const char *want, char *why, size_t len)
{
	if (!strcmp(want, "(nil)"))
		want = "0x0";
	if (!strncmp(want, "0x", 2) && !strchr(want, 'p')) {
		if (cJSON_IsString(got) && !strcmp(got->valuestring, want))
			return 1;
		snprintf(why, len, "pointer %s", want);
		return 0;
	}
	if (!cJSON_IsNumber(got)) {
		snprintf(why, len, "number %s, got %s", want,
			 cJSON_IsString(got) ? got->valuestring : "no value");
		return 0;
	}
	if (strchr(want, 'p')) {  /* a float in %a: bit-exact */
		float a = strtof(want, NULL), b = (float)got->valuedouble;
		if (!memcmp(&a, &b, sizeof(a)))
			return 1;
		snprintf(why, len, "float %s (%.9g), got %.9g", want, a, b);
		return 0;
	}
	if (got->valuedouble == (double)atoll(want))
		return 1;
	snprintf(why, len, "integer %s, got %.17g", want, got->valuedouble);
	return 0;
}

static double call_flops(const struct call *c)
{
	if (!strcmp(c->fn, "matmul_forward"))
		return 2 * ledger_num(c->v[4]) * ledger_num(c->v[5]) * ledger_num(c->v[6]) *
		       ledger_num(c->v[7]);
	if (!strcmp(c->fn, "attention_forward"))
		return 128 * ledger_num(c->v[2]) * ledger_num(c->v[5]) * ledger_num(c->v[3]) *
		       ledger_num(c->v[3]) * (double)(atoll(c->v[4]) / atoll(c->v[5]));
	return -1;
}

static void run_args(struct ss_e2e *t)
{
	char path[4200];

	ss_e2e_build(t, "args", "-fopenmp -lm");
	snprintf(path, sizeof(path), "%s/args.yaml", t->dir);
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fputs(config, f);
	fclose(f);
	SS_E2E_SH_OK(t, "OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive \"$SS_E2E_BUILD/bin/stepscope\" "
			"record -c args.yaml -o run -- ./s-args ledger %d", STEPS);
}

static void test_ledger(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct call calls[MAXCALLS];
	cJSON *evs[MAXCALLS], *ev;
	size_t n = 0, ncalls, i;

	run_args(t);
	ncalls = read_ledger(t, calls);
	SS_E2E_CHECK(t, ncalls == (size_t)STEPS * 13, "ledger: expected %d calls, got %zu",
		     STEPS * 13, ncalls);
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (!cJSON_IsString(name))
			continue;
		if (strstr(name->valuestring, "_omp_fn") || strstr(name->valuestring, "omp_outlined")) {
			const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
			SS_E2E_CHECK(t, !cJSON_GetObjectItemCaseSensitive(a, "b") &&
						!cJSON_GetObjectItemCaseSensitive(a, "c"),
				     "the OpenMP body %s carries arguments", name->valuestring);
			continue;
		}
		if (strcmp(name->valuestring, "matmul_forward") &&
		    strcmp(name->valuestring, "attention_forward") &&
		    strcmp(name->valuestring, "adamw_update") && strcmp(name->valuestring, "residual"))
			continue;
		SS_E2E_CHECK(t, n < MAXCALLS, "too many calls");
		evs[n++] = ev;
	}
	SS_E2E_CHECK(t, n == ncalls, "trace: %zu calls of the listed functions, ledger: %zu", n,
		     ncalls);
	size_t exact = 0, out = 0;
	qsort(evs, n, sizeof(evs[0]), ss_e2e_cmp_ts);
	for (i = 0; i < n; i++) {
		const struct call *c = &calls[i];
		const char *fn = cJSON_GetObjectItemCaseSensitive(evs[i], "name")->valuestring;
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(evs[i], "args");
		const char *const *pn;
		int np;
		char why[256];
		SS_E2E_CHECK(t, !strcmp(fn, c->fn), "call %zu: trace has %s, ledger %s", i, fn, c->fn);
		SS_E2E_CHECK(t, cJSON_IsObject(a), "call %zu (%s) has no args", i, fn);
		pn = fn_params(fn, &np);
		for (int k = 0; k < np; k++) {
			const cJSON *got = cJSON_GetObjectItemCaseSensitive(a, pn[k]);
			if (!strcmp(fn, "residual") && cJSON_IsString(got) &&
			    !strcmp(got->valuestring, "<optimized out>")) {
				out++;  /* inlined: never a wrong value, maybe none */
				continue;
			}
			SS_E2E_CHECK(t, same_value(got, c->v[k], why, sizeof(why)),
				     "call %zu %s: %s: expected %s", i, fn, pn[k], why);
			exact += !strcmp(fn, "residual");
		}
		double want = call_flops(c);
		const cJSON *fl = cJSON_GetObjectItemCaseSensitive(a, "flops");
		if (want >= 0)
			SS_E2E_CHECK(t, cJSON_IsNumber(fl) && fl->valuedouble == want,
				     "call %zu %s: flops %.17g expected", i, fn, want);
		else
			SS_E2E_CHECK(t, !fl, "call %zu %s has flops but no expression", i, fn);
	}
	print_message("e2e: inlined residual: %zu values exact, %zu <optimized out>\n", exact, out);
	cJSON_Delete(root);
	/* Perfetto: the same values as debug annotations on each call's END */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize --format perfetto run >/dev/null && "
			"protoc --decode=perfetto.protos.Trace -I\"$SS_E2E_SRC/tests/proto\" "
			"\"$SS_E2E_SRC/tests/proto/perfetto-subset.proto\" < run/trace.perfetto-trace | "
			"grep -A1 -e 'int_value: 2$' -e 'uint_value: 2$' | grep -c 'name: \"b\"'");
	SS_E2E_CHECK(t, atoi(t->out) == 5 * STEPS * 2,
		     "Perfetto: %d annotations b = 2, expected %d (matmul and attention calls)",
		     atoi(t->out), 5 * STEPS * 2);
	ss_e2e_pass(t);
}

/* One group of the ledger: its key as the report writes it. */
struct group {
	char fn[32], key[512];
	unsigned long long calls;
	double flops, ns;
};

static void ledger_key(const struct call *c, char *buf, size_t len)
{
	const char *const *pn;
	int np;
	size_t used = 0;

	pn = fn_params(c->fn, &np);
	buf[0] = 0;
	for (int k = 0; k < np; k++) {
		const char *v = c->v[k];
		char num[64];
		if ((!strncmp(v, "0x", 2) && !strchr(v, 'p')) || !strcmp(v, "(nil)"))
			continue;  /* pointers are not in the key */
		if (strchr(v, 'p')) {
			snprintf(num, sizeof(num), "%.9g", (double)strtof(v, NULL));
			v = num;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", pn[k], v);
	}
}

static void test_group(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct call calls[MAXCALLS];
	static struct group groups[64];
	size_t ng = 0, ncalls, i, rows = 0;
	char key[512];

	memset(groups, 0, sizeof(groups));
	run_args(t);
	ncalls = read_ledger(t, calls);
	for (i = 0; i < ncalls; i++) {
		size_t g;
		if (!strcmp(calls[i].fn, "residual"))
			continue;  /* inlined: test_ledger's */
		ledger_key(&calls[i], key, sizeof(key));
		for (g = 0; g < ng; g++)
			if (!strcmp(groups[g].fn, calls[i].fn) && !strcmp(groups[g].key, key))
				break;
		if (g == ng) {
			snprintf(groups[g].fn, sizeof(groups[g].fn), "%s", calls[i].fn);
			snprintf(groups[g].key, sizeof(groups[g].key), "%s", key);
			ng++;
		}
		groups[g].calls++;
		groups[g].flops += call_flops(&calls[i]);
		groups[g].ns += (double)calls[i].ns;
	}
	SS_E2E_CHECK(t, ng == 4 + 1 + STEPS, "ledger: expected %d groups, got %zu", 5 + STEPS, ng);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --group-by args --limit 0 "
			"--format csv run");
	char *save = NULL, *out = strdup(t->out);
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char fn[64], k[512], *p = line;
		unsigned long long calls_n, total;
		double flops, gf;
		if (!strncmp(line, "name,", 5) || !strncmp(line, "residual,", 9))
			continue;
		size_t fl = strcspn(p, ",");
		snprintf(fn, sizeof(fn), "%.*s", (int)fl, p);
		p += fl + 1;
		size_t kl = strcspn(p, ",");
		snprintf(k, sizeof(k), "%.*s", (int)kl, p);
		p += kl + 1;
		SS_E2E_CHECK(t, sscanf(p, "%llu,%llu", &calls_n, &total) == 2, "bad row: %s", line);
		for (i = 0; i < ng; i++)
			if (!strcmp(groups[i].fn, fn) && !strcmp(groups[i].key, k))
				break;
		SS_E2E_CHECK(t, i < ng, "report row %s '%s' is no group of the ledger", fn, k);
		SS_E2E_CHECK(t, groups[i].calls == calls_n, "%s '%s': %llu calls, ledger %llu", fn, k,
			     calls_n, groups[i].calls);
		rows++;
		if (groups[i].flops <= 0)
			continue;
		/* calls, total, avg, min, max, flops, gflops */
		SS_E2E_CHECK(t, sscanf(p, "%*u,%*u,%*u,%*u,%*u,%lf,%lf", &flops, &gf) == 2,
			     "%s '%s' has no FLOPs: %s", fn, k, line);
		SS_E2E_CHECK(t, flops == groups[i].flops, "%s '%s': FLOPs %.17g, ledger %.17g", fn, k,
			     flops, groups[i].flops);
		double own = groups[i].flops / groups[i].ns;
		SS_E2E_CHECK(t, gf > own * 0.9 && gf < own * 1.1,
			     "%s '%s': %.4f GFLOP/s, the program's own clock %.4f", fn, k, gf, own);
	}
	free(out);
	SS_E2E_CHECK(t, rows == ng, "report: %zu rows, ledger %zu groups", rows, ng);
	/* the plain table: matmul_forward's FLOPs over all its calls */
	double mm = 0;
	for (i = 0; i < ng; i++)
		if (!strcmp(groups[i].fn, "matmul_forward"))
			mm += groups[i].flops;
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report --limit 0 run | grep -e GFLOP/s -e '^matmul_forward '");
	char want[32];
	snprintf(want, sizeof(want), " %.4g ", mm);
	SS_E2E_CHECK(t, strstr(t->out, "GFLOP/s") && strstr(t->out, want),
		     "report: no FLOPs column with matmul_forward's %s: %s", want, t->out);
	ss_e2e_pass(t);
}

static void test_flops_error(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char path[4200];

	ss_e2e_build(t, "args", "-fopenmp -lm");
	snprintf(path, sizeof(path), "%s/bad.yaml", t->dir);
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fputs("record:\n  args: [matmul_forward, attention_forward]\nflops:\n"
	      "  attention_forward: \"2*b*t*t*c\"\n  matmul_forward: \"2*B*T*C*OC\"\n", f);
	fclose(f);
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c bad.yaml -o run -- "
			      "./s-args ledger 1");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_EXPECT_LINES(t, "stderr", t->err, 1);
	SS_E2E_CHECK(t, strstr(t->err, "bad.yaml:5: flops: matmul_forward: 'B' is not a parameter "
				       "of matmul_forward (its parameters: out inp weight bias b t c oc)"),
		     "unexpected message: %s", t->err);
	SS_E2E_CHECK(t, ss_e2e_sh(t, "test -e ledger") != 0, "the program ran");
	ss_e2e_pass(t);
}

/* Hostile flops: entries (issue 45): each refused by record with one line
 * at its place, exit 2, before the program runs; the deep one also by the
 * runtime through STEPSCOPE_CONFIG (it overran the stack before main). */
static void test_flops_hostile(void **state)
{
	static const struct {
		const char *expr, *args, *msg;
	} bad[] = {
		{ NULL, "matmul_forward", "h.yaml:4:19: flops: matmul_forward: the expression is "
		  "longer than 512 characters (at '--------------------')" },
		{ "2*b*t/0", "matmul_forward", "h.yaml:4:19: flops: matmul_forward: divides by "
		  "zero (at '/0')" },
		{ "2*b*t*c*oc/(2 - 2)", "matmul_forward", "h.yaml:4:19: flops: matmul_forward: "
		  "divides by zero (at '/(2 - 2)')" },
		{ "2*b", "attention_forward", "h.yaml:4: flops: matmul_forward: matmul_forward is "
		  "not listed in record.args, so its calls keep no arguments to count FLOPs from "
		  "(add it to record.args)" },
	};
	struct ss_e2e *t = ss_e2e_begin(state);
	char path[4200], want[512];

	ss_e2e_build(t, "args", "-fopenmp -lm");
	snprintf(path, sizeof(path), "%s/h.yaml", t->dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");
		SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
		fprintf(f, "record:\n  args: [%s]\nflops:\n  matmul_forward: \"", bad[i].args);
		if (bad[i].expr)
			fputs(bad[i].expr, f);
		else
			for (int k = 0; k < 100000; k++)
				fputc('-', f);
		fputs(bad[i].expr ? "\"\n" : "b\"\n", f);
		fclose(f);
		snprintf(want, sizeof(want), "stepscope: %s\n", bad[i].msg);
		int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c h.yaml -o run%zu -- "
				   "./s-args ledger 1", i);
		SS_E2E_EXPECT_STATUS(t, st, 2);
		SS_E2E_CHECK(t, !strcmp(t->err, want), "entry %zu: expected\n%sgot\n%s", i, want,
			     t->err);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -e ledger") != 0, "entry %zu: the program ran", i);
		/* the runtime on its own: the same line, and the program runs to
		 * its end unrecorded (never stopped by its config) */
		st = ss_e2e_sh(t, "STEPSCOPE_CONFIG=h.yaml STEPSCOPE_DIR=\"$PWD/rt%zu\" ./s-args ledger 1",
			       i);
		SS_E2E_EXPECT_STATUS(t, st, 0);
		snprintf(want, sizeof(want), "stepscope: %s; the program runs unrecorded\n", bad[i].msg);
		SS_E2E_CHECK(t, !strcmp(t->err, want), "entry %zu, runtime: expected\n%sgot\n%s", i,
			     want, t->err);
		SS_E2E_CHECK(t, ss_e2e_sh(t, "test -s ledger && test ! -e rt%zu", i) == 0,
			     "entry %zu: the program did not run to its end, or was recorded", i);
		SS_E2E_SH_OK(t, "rm -f ledger");
	}
	/* a function the program lacks (a library may define it): one warning
	 * line, and the run goes on */
	FILE *f = fopen(path, "w");
	SS_E2E_CHECK(t, f != NULL, "cannot write %s", path);
	fputs("record:\n  args: [matmul_forward, no_such_fn]\nflops:\n  no_such_fn: \"2*b\"\n", f);
	fclose(f);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c h.yaml -o ok -- ./s-args ledger 1");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "stepscope: warning: h.yaml:4: flops: no_such_fn: "
					  "./s-args has no function no_such_fn with debug info (its "
					  "calls have FLOPs only if a library defines it)") == 1,
		     "no warning for the missing function: %s", t->err);
	SS_E2E_SH_OK(t, "test -s ledger");
	ss_e2e_pass(t);
}

/* C++: a method (this, int, float) and a function in a namespace (long,
 * double), listed by globs of their symbols, against s-args-cxx's ledger */
static void test_cxx(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char path[4200], line[256];
	cJSON *evs[16], *ev;
	size_t n = 0, i = 0;

	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -o s-args-cxx "
			"\"$SS_E2E_SRC/tests/e2e/s-args-cxx.cc\"",
		     strcmp(t->v->cc, "clang") ? "g++" : "clang++", t->v->opt);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record --set 'record.args=*Layer*forward*,*gemm*' "
			"-o run -- ./s-args-cxx ledger");
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (cJSON_IsString(name) && n < 16 &&
		    (!strcmp(name->valuestring, "Layer::forward(int, int, float)") ||
		     !strcmp(name->valuestring, "nn::gemm(long, long, double)")))
			evs[n++] = ev;
	}
	SS_E2E_CHECK(t, n == 8, "expected 8 calls of Layer::forward and nn::gemm, got %zu", n);
	qsort(evs, n, sizeof(evs[0]), ss_e2e_cmp_ts);
	snprintf(path, sizeof(path), "%s/ledger", t->dir);
	FILE *f = fopen(path, "r");
	SS_E2E_CHECK(t, f != NULL, "no ledger");
	while (i < n && fgets(line, sizeof(line), f)) {
		static const char *const fw[] = { "this", "b", "t", "scale" }, *const gm[] = { "m", "n", "alpha" };
		char w[4][64], why[256];
		int k = sscanf(line, "%*s %63s %63s %63s %63s", w[0], w[1], w[2], w[3]);
		int is_fw = !strncmp(line, "forward", 7);
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(evs[i], "args");
		for (int j = 0; j < (is_fw ? 4 : 3) && j < k; j++) {
			const cJSON *got = cJSON_GetObjectItemCaseSensitive(a, is_fw ? fw[j] : gm[j]);
			if (!is_fw && j == 2) {  /* a double in %a: bit-exact */
				double want = strtod(w[j], NULL);
				SS_E2E_CHECK(t, cJSON_IsNumber(got) && !memcmp(&want, &got->valuedouble, 8),
					     "call %zu gemm alpha: expected %s", i, w[j]);
				continue;
			}
			SS_E2E_CHECK(t, same_value(got, w[j], why, sizeof(why)), "call %zu %s: %s: expected %s",
				     i, is_fw ? "forward" : "gemm", is_fw ? fw[j] : gm[j], why);
		}
		i++;
	}
	fclose(f);
	SS_E2E_CHECK(t, i == n, "ledger: %zu lines for %zu calls", i, n);
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

#define VARIANT(fn, var, tag) { #fn "/" tag, fn, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT(test_ledger, gcc_O0, "gcc-O0"),
		VARIANT(test_ledger, gcc_O2, "gcc-O2"),
		VARIANT(test_ledger, gcc_O3, "gcc-O3-native-fast-math"),
		VARIANT(test_ledger, clang_O0, "clang-O0"),
		VARIANT(test_ledger, clang_O2, "clang-O2"),
		VARIANT(test_ledger, clang_O3, "clang-O3-native-fast-math"),
		VARIANT(test_group, gcc_O2, "gcc-O2"),
		VARIANT(test_group, clang_O3, "clang-O3-native-fast-math"),
		VARIANT(test_flops_error, gcc_O2, "gcc-O2"),
		VARIANT(test_flops_hostile, gcc_O2, "gcc-O2"),
		VARIANT(test_cxx, gcc_O0, "gcc-O0"),
		VARIANT(test_cxx, gcc_O2, "gcc-O2"),
		VARIANT(test_cxx, clang_O0, "clang-O0"),
		VARIANT(test_cxx, clang_O3, "clang-O3-native-fast-math"),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
