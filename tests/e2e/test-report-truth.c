/*
 * test-report-truth.c - end to end: the report's accounting on
 * trainer-shaped programs (tracker issue 27, "Right answers on real
 * trainers").
 *
 *   test_self_sums: s-trainer-omp (OpenMP matmuls) run with 8 threads on
 *     a machine of fewer cores; the Self % column adds up to 100 (within
 *     0.2) in report text, csv (merged and --threads), json and html, and
 *     the end barrier's wait is not also matmul_forward's self time.
 *   test_clones: s-trainer-clone, whose gpt2_forward gcc clones at -O2
 *     (gpt2_forward.constprop.0, checked with nm), recorded in a window
 *     that opens inside the clone (record.stack on): as step.function,
 *     no "inlined into its caller" nor "re-entered" warning and no
 *     clipped gpt2_forward; a window opened in encoder under the clone
 *     gives gpt2_forward 2 clipped parts, not 3 (no phantom frame), main
 *     holds all the time, and every Avg lies between Min and Max.
 *   test_flame: s-trainer-omp's folded stacks hold the barrier's wait
 *     under matmul_forward (and their values add up to report's self
 *     total); every line of a call inside a recorded step goes through
 *     "main;ProfilerStep;", the others (main's own time, the workers)
 *     through no ProfilerStep, also when the window of two steps clips
 *     main; in the merged SVG flame graph only thread frames sit on the
 *     root, one per thread, so workers' functions are not beside main,
 *     and there is one ProfilerStep frame.
 *   test_no_hooks: s-trainer-omp built with plain gcc (no hooks) and
 *     recorded: running no step, stderr is the config line and one that
 *     says the program has no -finstrument-functions hooks and how to
 *     rebuild;
 *     running two (the runtime records the OpenMP regions), that line
 *     says none of its calls was recorded, and there is no advice to run
 *     `stepscope steps`, which could not help.
 *   test_stopped: s-trainer-omp for 3000 steps with max_trace_mb: 16, which
 *     stops recording in some step K: report (text and json), html and
 *     trace.json say where (step K) and why (max_trace_mb), and hold
 *     K + 1 steps, the last ending by the stop on its thread, not 3000
 *     empty ones.
 *   test_no_window: s-trainer-omp with a schedule that waits past its 6
 *     steps: report, html and symbolize exit 2 with one line saying
 *     nothing was recorded and why (no window opened in 7 steps), not an
 *     empty table with status 0.
 *   test_html_clipped: the same program recorded in a window of two steps
 *     (main is cut by the window's edges); html has the Clipped column and
 *     prints "-" where the text table does.
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

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define INC "-fopenmp -I\"$SS_E2E_SRC/tests/e2e\""
#define WAIT "omp barrier: wait for the team"

/* Build s-trainer-omp and record it with 8 OpenMP threads (config: none
 * or the YAML text `yaml`) into rec: 6 steps, 3000 with a max_trace_mb. */
static void record_trainer(struct ss_e2e *t, const char *yaml)
{
	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp "
		    "-o p p.c", "gcc's OpenMP (libgomp)", "gcc");
	ss_e2e_build(t, "trainer-omp", INC);
	if (yaml)
		SS_E2E_SH_OK(t, "printf '%s' > c.yaml", yaml);
	SS_E2E_SH_OK(t, "OMP_NUM_THREADS=8 OMP_WAIT_POLICY=passive " SS
		     " record %s -o rec -- ./s-trainer-omp %d",
		     yaml ? "--config c.yaml" : "",
		     yaml && strstr(yaml, "max_trace_mb") ? 3000 : 6);
}

/* The sum of the first "N.NN%" cell of each line of `text` that has one
 * (the Self % column of the text table), up to the footer's "Self time
 * total", and how many such lines. */
static double sum_text_pct(const char *text, int *rows)
{
	double sum = 0;
	*rows = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		size_t len = strcspn(l, "\n");
		char buf[512];
		if (!strncmp(l, "Self time total", 15))
			break;
		if (len >= sizeof(buf))
			continue;
		memcpy(buf, l, len);
		buf[len] = 0;
		for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
			size_t tl = strlen(tok);
			char *end;
			double v;
			if (tl < 2 || tok[tl - 1] != '%')
				continue;
			v = strtod(tok, &end);
			if (end == tok + tl - 1) {
				sum += v;
				++*rows;
				break;
			}
		}
	}
	return sum;
}

/* The sum of column `col` (from 0) of the csv rows in `csv`. */
static double sum_csv(const char *csv, int col, int *rows)
{
	double sum = 0;
	const char *l = strchr(csv, '\n');
	*rows = 0;
	while (l && *++l) {
		const char *p = l;
		/* a quoted name holds no comma in these fixtures' rows */
		for (int c = 0; c < col && p; c++) {
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (p) {
			sum += strtod(p, NULL);
			++*rows;
		}
		l = strchr(l, '\n');
	}
	return sum;
}

#define EXPECT_100(t, what, sum, rows)                                         \
	SS_E2E_CHECK(t, (sum) > 99.8 && (sum) < 100.2 && (rows) > 5,          \
		     "%s: Self %% sums to %.4f over %d rows, expected 100 "    \
		     "(within 0.2)", what, (sum), (rows))

static void test_self_sums(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	int n;
	double sum;

	record_trainer(t, NULL);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 rec");
	sum = sum_text_pct(t->out, &n);
	EXPECT_100(t, "report (text)", sum, n);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, WAIT) == 1,
		     "report: expected one row for the barrier's wait:\n%s", t->out);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --threads rec");
	sum = sum_text_pct(t->out, &n);
	EXPECT_100(t, "report --threads (text)", sum, n);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv rec");
	sum = sum_csv(t->out, 2, &n);
	EXPECT_100(t, "report --format csv", sum, n);
	{
		struct ss_e2e_row rows[64];
		size_t nr = ss_e2e_report_rows(t->out, rows, 64);
		const struct ss_e2e_row *mm = ss_e2e_row_find(rows, nr, "matmul_forward");
		const struct ss_e2e_row *wait = ss_e2e_row_find(rows, nr, WAIT);
		SS_E2E_CHECK(t, mm && wait, "csv: rows matmul_forward and '%s' "
			     "expected:\n%s", WAIT, t->out);
		/* matmul_forward's 24 calls each start one team (8 threads):
		 * the wait for it is the range's time, not the call's too */
		SS_E2E_CHECK(t, mm->calls == 24 && wait->calls == 24,
			     "calls: matmul_forward %llu, wait %llu, expected 24 "
			     "each", mm->calls, wait->calls);
		SS_E2E_CHECK(t, mm->self + wait->total <= mm->total,
			     "matmul_forward self %llu ns + barrier wait %llu ns > "
			     "its total %llu ns: the wait is counted twice",
			     mm->self, wait->total, mm->total);
	}

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --threads --format csv rec");
	sum = sum_csv(t->out, 5, &n);
	EXPECT_100(t, "report --threads --format csv", sum, n);

	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format json -o r.json rec");
	{
		cJSON *j = ss_e2e_load_json(t, "r.json"), *r;
		cJSON *rowsj = cJSON_GetObjectItem(j, "rows");
		double total = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "self_total_ns"));
		double ns = 0;
		sum = 0;
		n = 0;
		cJSON_ArrayForEach(r, rowsj) {
			sum += cJSON_GetNumberValue(cJSON_GetObjectItem(r, "self_pct"));
			ns += cJSON_GetNumberValue(cJSON_GetObjectItem(r, "self_ns"));
			n++;
		}
		EXPECT_100(t, "report --format json", sum, n);
		/* exactly: the rows share out the self time total */
		SS_E2E_CHECK(t, ns == total, "json: rows' self_ns add up to %.0f, "
			     "self_total_ns is %.0f", ns, total);
		cJSON_Delete(j);
	}

	SS_E2E_SH_OK(t, SS " html -q -o r.html rec && sed -n "
		     "'/<table id=\"summary\">/,/<\\/table>/p' r.html | "
		     "grep '^<tr[^>]*><td' | sed 's/<[^>]*>/ /g'");
	sum = sum_text_pct(t->out, &n);
	EXPECT_100(t, "html", sum, n);
	ss_e2e_pass(t);
}

/* One row of `report --format csv` (merged): the columns the tests read. */
struct csv_row {
	char name[128];
	unsigned long long self, total, avg, min, max, calls, clipped;
};

static size_t csv_rows(const char *csv, struct csv_row *rows, size_t max)
{
	size_t n = 0;
	const char *l = strchr(csv, '\n');
	while (l && *++l && n < max) {
		char kind[16];
		double sp, tp;
		if (sscanf(l, "%127[^,],%15[^,],%lf,%llu,%lf,%llu,%llu,%llu,%llu,%llu,%llu",
			   rows[n].name, kind, &sp, &rows[n].self, &tp, &rows[n].total,
			   &rows[n].avg, &rows[n].min, &rows[n].max, &rows[n].calls,
			   &rows[n].clipped) == 11)
			n++;
		l = strchr(l, '\n');
	}
	return n;
}

static const struct csv_row *csv_find(const struct csv_row *rows, size_t n,
				      const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* Record s-trainer-clone with step.function `step` (the window opens at
 * the 2nd call, in the clone, and holds two steps), then check the rows
 * common to both cases; the rows are left in rows[0..*n). */
static void record_clone(struct ss_e2e *t, const char *step, struct csv_row *rows,
			 size_t *n)
{
	const struct csv_row *m;
	unsigned long long sum = 0;

	SS_E2E_SH_OK(t, "rm -rf rec && printf 'step:\\n  function: %s\\nschedule:\\n  "
		     "wait: 1\\n  warmup: 0\\n  active: 2\\n  repeat: 1\\n"
		     "record:\\n  stack: true\\n' > c.yaml && " SS
		     " record --config c.yaml -o rec -- ./s-trainer-clone 6", step);
	SS_E2E_CHECK(t, !strstr(t->err, "inlined") && !strstr(t->err, "re-entered"),
		     "record with step.function %s: no warning expected, got:\n%s",
		     step, t->err);
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv rec");
	*n = csv_rows(t->out, rows, 16);
	SS_E2E_CHECK(t, *n == 4, "expected 4 rows (main, train_step, "
		     "gpt2_forward, encoder), got %zu:\n%s", *n, t->out);
	for (size_t i = 0; i < *n; i++) {
		const struct csv_row *r = &rows[i];
		sum += r->self;
		SS_E2E_CHECK(t, !strchr(r->name, '.'), "row '%s': a clone's "
			     "name, expected the function's", r->name);
		SS_E2E_CHECK(t, r->max == 0 || (r->avg >= r->min && r->avg <= r->max),
			     "%s: Avg %llu outside Min %llu .. Max %llu", r->name,
			     r->avg, r->min, r->max);
	}
	m = csv_find(rows, *n, "main");
	SS_E2E_CHECK(t, m && m->calls == 0 && m->clipped == 1 && m->total == sum,
		     "main: expected 0 calls, 1 clipped, total = the self total "
		     "%llu (no frame outside it):\n%s", sum, t->out);
}

static void test_clones(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct csv_row rows[16];
	const struct csv_row *g, *ts;
	size_t n;

	ss_e2e_build(t, "trainer-clone", "-fipa-cp-clone -I\"$SS_E2E_SRC/tests/e2e\"");
	if (!strcmp(t->v->opt, "-O2")) {
		SS_E2E_SH_OK(t, "nm s-trainer-clone | grep -c ' gpt2_forward\\.constprop\\.'");
		SS_E2E_CHECK(t, atoi(t->out) >= 1, "s-trainer-clone at -O2: "
			     "expected a gpt2_forward.constprop clone, nm found %s", t->out);
	}

	/* gpt2_forward-steps: 0 train, 1 eval (the clone), 2 train, 3 train:
	 * the window holds steps 1 and 2, opened at the clone's entry */
	record_clone(t, "gpt2_forward", rows, &n);
	g = csv_find(rows, n, "gpt2_forward");
	ts = csv_find(rows, n, "train_step");
	SS_E2E_CHECK(t, g && g->calls == 2 && g->clipped == 0,
		     "step.function gpt2_forward: expected 2 calls, none clipped");
	SS_E2E_CHECK(t, ts && ts->calls == 2 && ts->clipped == 2,
		     "train_step: expected 2 calls, 2 clipped");

	/* encoder-steps: 0 in train, 1 in eval (under the clone), 2, 3: the
	 * window opens in encoder with the clone open below it */
	record_clone(t, "encoder", rows, &n);
	g = csv_find(rows, n, "gpt2_forward");
	SS_E2E_CHECK(t, g && g->calls == 2 && g->clipped == 2,
		     "step.function encoder: gpt2_forward expected 2 calls, 2 "
		     "clipped (the clone cut at the window's start, the last "
		     "call at its end), got %llu, %llu", g ? g->calls : 0,
		     g ? g->clipped : 0);
	ss_e2e_pass(t);
}

/* Folded stacks of `rec` (s-trainer-omp): their values add up exactly to
 * report's self total, every line of a call inside a recorded step (all
 * of train_step's, on the main thread) goes through one "ProfilerStep"
 * frame right under main, which spans the steps, and the others (main's
 * own time; the workers, which have no step slices) through none. */
static void check_folded(struct ss_e2e *t, const char *what)
{
	unsigned long long folded = 0, total;
	int in = 0, out = 0, bad = 0;
	char first[1024] = "";
	const char *l;

	SS_E2E_SH_OK(t, SS " symbolize -q --format folded -o - rec");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, "s-trainer-omp;main;ProfilerStep;train_step;"
					  "layer;matmul_forward;" WAIT " ") == 1,
		     "folded (%s): expected the line of the barrier's wait under "
		     "matmul_forward, in the steps, got:\n%s", what, t->out);
	for (l = t->out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *sp = l + strcspn(l, "\n");
		char path[1024];
		const char *st;
		while (sp > l && sp[-1] != ' ')
			sp--;
		folded += strtoull(sp, NULL, 10);
		if (sp - l < 1 || (size_t)(sp - l) > sizeof(path))
			continue;
		memcpy(path, l, (size_t)(sp - l - 1));
		path[sp - l - 1] = 0;
		st = strstr(path, "ProfilerStep");
		if (strstr(path, ";train_step") ?
		    (in++, strncmp(path, "s-trainer-omp;main;ProfilerStep;train_step",
				   strlen("s-trainer-omp;main;ProfilerStep;train_step")) ||
			   strstr(st + 1, "ProfilerStep")) :
		    (out++, st != NULL)) {
			if (!bad++)
				snprintf(first, sizeof(first), "%s", path);
		}
	}
	SS_E2E_CHECK(t, in >= 6 && out >= 8 && !bad,
		     "folded (%s): expected >= 6 lines in the steps (train_step "
		     "and below), >= 8 outside (main, 7 workers), none misplaced; "
		     "got %d, %d, %d misplaced (first: \"%s\"):\n%s", what, in, out,
		     bad, first, t->out);
	SS_E2E_SH_OK(t, SS " report -q --format json -o r.json rec");
	{
		cJSON *j = ss_e2e_load_json(t, "r.json");
		total = (unsigned long long)cJSON_GetNumberValue(
			cJSON_GetObjectItem(j, "self_total_ns"));
		cJSON_Delete(j);
	}
	SS_E2E_CHECK(t, folded == total, "folded (%s): values add up to %llu ns, "
		     "report's self total is %llu ns", what, folded, total);
}

static void test_flame(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *l;
	int roots = 0, threads = 0, under = 0;

	record_trainer(t, NULL);
	check_folded(t, "the whole run");
	/* "Y KIND NAME" per frame, KIND "thread" or "-"; root "all" is the
	 * lowest (largest y), its children 16 px above */
	SS_E2E_SH_OK(t, SS " flame -q -o f.svg rec && grep -o '<g><title>[^<]*</title>"
		     "<rect x=\"[0-9.]*\" y=\"[0-9]*\"' f.svg | sed "
		     "'s/<g><title>\\(.*\\) (\\(thread: \\)\\{0,1\\}.*y=\"\\([0-9]*\\)\"/\\3 \\2\\1/' "
		     "| sort -n -r");
	{
		int yall = atoi(t->out);
		for (l = t->out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
			int y = atoi(l);
			const char *name = strchr(l, ' ');
			if (y != yall - 16 || !name)
				continue;
			roots++;
			if (!strncmp(name + 1, "thread: s-trainer-omp", 21))
				threads++;
		}
		for (l = t->out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
			if (atoi(l) == yall - 32 && strstr(l, " main\n") == strchr(l, ' '))
				under++;
	}
	SS_E2E_CHECK(t, roots == 8 && threads == 8 && under == 1,
		     "flame: expected 8 frames on the root, all threads (main and 7 "
		     "workers), main above one of them; got %d, %d threads, main %d:\n%s",
		     roots, threads, under, t->out);
	SS_E2E_SH_OK(t, "grep -o '<g><title>ProfilerStep (every recorded step: ' f.svg | wc -l");
	SS_E2E_CHECK(t, atoi(t->out) == 1, "flame: expected one ProfilerStep frame "
		     "(the steps of the main thread), got %s", t->out);

	/* a window of two steps: main, clipped at both ends, is no step's */
	SS_E2E_SH_OK(t, "rm -rf rec");
	record_trainer(t, "step:\\n  function: train_step\\nschedule:\\n  "
		       "wait: 1\\n  warmup: 1\\n  active: 2\\n  repeat: 1\\n");
	check_folded(t, "a window of two steps");
	ss_e2e_pass(t);
}

static void test_no_hooks(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char want[512];

	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp "
		    "-o p p.c", "gcc's OpenMP (libgomp)", "gcc");
	SS_E2E_SH_OK(t, "gcc %s -g " INC " -I\"$SS_E2E_SRC/instrument\" -o plain \"$SS_E2E_SRC/tests/e2e/s-trainer-omp.c\"",
		     t->v->opt);
	/* no OpenMP region: nothing at all is recorded */
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\n' > c.yaml && "
		     "OMP_NUM_THREADS=2 " SS " record --config c.yaml -o rec -- ./plain 0");
	snprintf(want, sizeof(want), "stepscope: config -c c.yaml: step.function=train_step\n"
		 "stepscope: ./plain has no -finstrument-functions "
		 "hooks, so nothing was recorded: rebuild it with stepscope-cc "
		 "(CC=stepscope-cc make, or stepscope-cc gcc -O2 -g -o ./plain SOURCES)\n");
	SS_E2E_CHECK(t, !strcmp(t->err, want), "record of a program without hooks: "
		     "expected stderr\n%s\ngot\n%s", want, t->err);
	/* two steps of OpenMP regions: the runtime records those (omp.c),
	 * still no call of the program's */
	SS_E2E_SH_OK(t, "OMP_NUM_THREADS=2 " SS " record --config c.yaml -o rec2 -- ./plain 2");
	snprintf(want, sizeof(want), "stepscope: ./plain has no -finstrument-functions "
		 "hooks, so none of its calls was recorded: rebuild it with stepscope-cc "
		 "(CC=stepscope-cc make, or stepscope-cc gcc -O2 -g -o ./plain SOURCES)");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, want) == 1 &&
		     !strstr(t->err, "stepscope steps") && !strstr(t->err, "warning"),
		     "record of an OpenMP program without hooks: expected the "
		     "line\n%s\nand no advice about steps, got\n%s", want, t->err);
	ss_e2e_pass(t);
}

static void test_stopped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	const char *l;
	char want[128];
	long long k, steps;

	record_trainer(t, "max_trace_mb: 16\\n");
	SS_E2E_SH_OK(t, SS " report -q rec");
	l = strstr(t->out, "\nRecording stopped in step ");
	SS_E2E_CHECK(t, l && ss_e2e_lines_with(t->out, "Recording stopped") == 1 &&
		     ss_e2e_lines_with(t->out, "(max_trace_mb reached): nothing after it "
				       "is recorded, the program ran on") == 1,
		     "report: expected one line saying where and why recording "
		     "stopped:\n%s", t->out);
	k = l ? atoll(l + 27) : -1;
	l = strstr(t->out, "\nSteps: ");
	steps = l ? atoll(l + 8) : -1;
	SS_E2E_CHECK(t, k > 0 && k < 2999 && steps == k + 1, "report: stopped in "
		     "step %lld, expected steps 0..%lld in the table, it says %lld",
		     k, k, steps);

	SS_E2E_SH_OK(t, SS " report -q --format json -o r.json rec");
	{
		cJSON *j = ss_e2e_load_json(t, "r.json");
		cJSON *st = cJSON_GetObjectItem(j, "stopped");
		SS_E2E_CHECK(t, st && cJSON_GetNumberValue(cJSON_GetObjectItem(st, "step")) == k &&
			     !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(st, "why")),
				     "max_trace_mb reached") &&
			     cJSON_GetNumberValue(cJSON_GetObjectItem(j, "steps")) == k + 1,
			     "json: expected \"stopped\":{\"why\":\"max_trace_mb "
			     "reached\",\"step\":%lld,...} and %lld steps", k, k + 1);
		cJSON_Delete(j);
	}

	SS_E2E_SH_OK(t, SS " html -q -o r.html rec && grep '<p id=\"stopped\"' r.html");
	snprintf(want, sizeof(want), "Recording stopped in step %lld, ", k);
	SS_E2E_CHECK(t, strstr(t->out, want) && strstr(t->out, "(max_trace_mb reached)"),
		     "html: expected '%s' ... (max_trace_mb reached), got:\n%s", want, t->out);

	SS_E2E_SH_OK(t, SS " symbolize -q -o trace.json rec");
	{
		cJSON *j = ss_e2e_load_json(t, "trace.json"), *e;
		cJSON *od = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "otherData"),
						"recording_stopped");
		double stop_us = 0, last_end = 0, step_tid = -1;
		int n = 0;
		SS_E2E_CHECK(t, od && cJSON_GetNumberValue(cJSON_GetObjectItem(od, "step")) == k &&
			     !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(od, "why")),
				     "max_trace_mb reached"),
			     "trace.json: expected otherData.recording_stopped with step "
			     "%lld and why max_trace_mb reached", k);
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
			double end;
			if (!name || strncmp(name, "ProfilerStep#", 13))
				continue;
			n++;
			step_tid = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tid"));
			end = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "ts")) +
			      cJSON_GetNumberValue(cJSON_GetObjectItem(e, "dur"));
			if (end > last_end)
				last_end = end;
		}
		/* the stop as the stepping thread saw it: its instant */
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
			if (name && !strcmp(name, "stepscope: recording stopped (max_trace_mb)") &&
			    cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tid")) == step_tid)
				stop_us = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "ts"));
		}
		SS_E2E_CHECK(t, n == k + 1 && last_end <= stop_us + 0.001,
			     "trace.json: expected %lld ProfilerStep slices ending by the "
			     "stop at %.3f us, got %d ending at %.3f us", k + 1, stop_us,
			     n, last_end);
		cJSON_Delete(j);
	}
	ss_e2e_pass(t);
}

static void test_no_window(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const char *const cmds[] = { "report", "html", "symbolize" };
	char want[512];

	record_trainer(t, "schedule:\\n  wait: 100\\n  warmup: 1\\n  active: 2\\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int st = ss_e2e_sh(t, SS " %s -q -o out rec", cmds[i]);
		snprintf(want, sizeof(want), "stepscope: %s: rec: nothing was recorded: the "
			 "program ran 7 step(s) and the schedule recorded none of them, so "
			 "no window opened (see 'schedule' in the config)\n", cmds[i]);
		SS_E2E_CHECK(t, st == 2 && !strcmp(t->err, want) && !*t->out,
			     "%s of a run whose window never opened: expected status 2 "
			     "and stderr\n%sgot status %d and\n%s", cmds[i], want, st, t->err);
		SS_E2E_SH_OK(t, "test ! -e out");
	}
	ss_e2e_pass(t);
}

static void test_html_clipped(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *text;

	record_trainer(t, "step:\\n  function: train_step\\nschedule:\\n  "
		       "wait: 1\\n  warmup: 1\\n  active: 2\\n  repeat: 1\\n");
	/* main: the window cuts it at both ends, so no call, and no
	 * Avg/Min/Max in either table */
	SS_E2E_SH_OK(t, SS " report -q --limit 0 rec | grep '^main '");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, " -          -          -          0          1") == 1,
		     "report: main expected with Avg, Min, Max '-', 0 calls, 1 "
		     "clipped:\n%s", t->out);
	text = strdup(t->out);
	SS_E2E_SH_OK(t, SS " html -q -o r.html rec && grep -c '<th>Clipped</th>' r.html");
	SS_E2E_CHECK(t, atoi(t->out) == 1, "html: expected one Clipped column "
		     "header, got %s", t->out);
	SS_E2E_SH_OK(t, "grep '^<tr[^>]*><td class=\"n\">main</td>' r.html");
	SS_E2E_CHECK(t, strstr(t->out, "<td>-</td><td>-</td><td>-</td><td>0</td><td>1</td></tr>"),
		     "html: main expected with Avg, Min, Max '-', 0 calls, 1 "
		     "clipped (text table: %s), got:\n%s", text, t->out);
	SS_E2E_CHECK(t, !strstr(t->out, "0ns"), "html: 0ns in main's row:\n%s", t->out);
	free(text);
	ss_e2e_pass(t);
}

/* gcc at -O0 and -O2: the end barrier's range is gcc's (libgomp) */
#define GCC(fn) SS_E2E__ONE(fn, ss_e2e_gcc_O0, "gcc-O0"), \
		SS_E2E__ONE(fn, ss_e2e_gcc_O2, "gcc-O2")

int main(void)
{
	const struct CMUnitTest tests[] = {
		GCC(test_self_sums),
		GCC(test_clones),
		GCC(test_flame),
		GCC(test_no_hooks),
		GCC(test_stopped),
		GCC(test_no_window),
		GCC(test_html_clipped),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
