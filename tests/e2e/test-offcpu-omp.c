/*
 * test-offcpu-omp.c - end to end: off-CPU time in an oversubscribed OpenMP
 * trainer (record.sched, issue 35).
 *
 * s-offcpu-omp's step calls forward() and backward(), each one
 * `#pragma omp parallel for num_threads(4)` loop of tiny() calls (a few ns
 * of work each).  The test runs it on two CPUs with a busy loop holding
 * one of them (one CPU for all when the machine has one), so the team of
 * four is oversubscribed and its threads are preempted again and again,
 * and records steps 1-2 (of 0-3) with record.sched on.  The fixture prints
 * the kernel's view of the main thread around each forward() and
 * backward(): wall time, thread CPU time and switch counts.  Then:
 *   - the team start: the range "omp start: wait for the team" is on the
 *     main thread once per region it started (2 a step), on no other
 *     thread; each lies inside a forward or backward call and ends before
 *     the main thread's own share of the region (its `_omp_fn.0`) begins;
 *     forward's and backward's Self (report csv) is their time less every
 *     slice directly inside them (the start wait, their share, the end
 *     barrier's wait), from trace.json: the start wait is not their self
 *     time;
 *   - off-CPU time per call: the main thread's off-CPU slices in each
 *     recorded forward and backward call (and within 10 us of its edges:
 *     the hooks' own work) sum to the kernel's wall - cpu of the call
 *     within 10% + 200 us + 30 us a switch, as test-sched;
 *   - Min/Max: tiny's slowest call in trace.json is report's Max, and
 *     report's max_off_cpu_ns is the off-CPU time inside that call: a
 *     preempted call is flagged (and the text table's Max carries the '*'
 *     with the footer's line); the same for Min; the footer's count of
 *     calls off the CPU longer than on it is the trace's count for tiny;
 *     at least one tiny call was switched out (the busy loop works).
 * No verdict depends on how long anything took: every figure is compared
 * with another record of the same run (the kernel's, or the trace's).
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
#define INC "-fopenmp"
#define STEPS 4
#define FIRST 1     /* recorded steps: FIRST .. FIRST + ACTIVE - 1 */
#define ACTIVE 2
#define SLACK_NS 200000.0
#define SLACK_SWITCH_NS 30000.0
#define HOOK_NS 10000
#define START "omp start: wait for the team"
#define WAIT "omp barrier: wait for the team"

struct kern {
	long long wall, cpu, sw;
};

static int near(double got, double want, double slack)
{
	double d = got > want ? got - want : want - got;
	return d <= 0.10 * want + slack;
}

static int64_t end_of(const struct ss_e2e_slice *s)
{
	return s->ts_ns + s->dur_ns;
}

/* The off-CPU slices of the trace (a few hundred: the tiny calls are
 * 200000, so off_in looks at these alone). */
static const struct ss_e2e_slice **offs;
static size_t noffs;

static void collect_offs(const struct ss_e2e_trace *tr)
{
	free(offs);
	offs = calloc(tr->nslices + 1, sizeof(*offs));
	noffs = 0;
	for (size_t i = 0; offs && i < tr->nslices; i++)
		if (!strcmp(tr->slices[i].cat, "off_cpu"))
			offs[noffs++] = &tr->slices[i];
}

/* Off-CPU time on s's thread inside s (slices that begin within `margin`
 * ns of it counted whole), and how many slices. */
static double off_in(const struct ss_e2e_slice *s, int64_t margin, long *n)
{
	double off = 0;
	*n = 0;
	for (size_t i = 0; i < noffs; i++) {
		const struct ss_e2e_slice *o = offs[i];
		if (o->tid != s->tid || o->ts_ns < s->ts_ns - margin ||
		    o->ts_ns >= end_of(s) + margin)
			continue;
		off += (double)o->dur_ns;
		(*n)++;
	}
	return off;
}

/* Record s-offcpu-omp oversubscribed with a busy loop beside it (extra:
 * more --set options). */
static void record_busy_with(struct ss_e2e *t, char *out, size_t len, const char *extra)
{
	ss_e2e_need(t, "printf 'int main(void){return 0;}' > p.c && gcc -fopenmp -o p p.c",
		    "gcc's OpenMP (libgomp)", "gcc");
	ss_e2e_build(t, "offcpu-omp", INC);
	int st = ss_e2e_sh(t,
		"C=$(($(nproc) - 1)); CPUS=0,$C; [ $C = 0 ] && CPUS=0; "
		"taskset -c $C sh -c 'while :; do :; done' >/dev/null 2>&1 & H=$!; "
		"taskset -c $CPUS " SS " record -o run --set step.function=train_step "
		"--set record.sched=true --set schedule.wait=%d --set schedule.active=%d %s "
		"-- ./s-offcpu-omp %d; rc=$?; kill $H; exit $rc", FIRST, ACTIVE, extra, STEPS);
	SS_E2E_CHECK(t, !strstr(t->err, "record.sched:"),
		     "the kernel refused the context-switch event, which this test needs "
		     "(perf_event_open as root, perf_event_paranoid <= 2): %s", t->err);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	snprintf(out, len, "%s", t->out);
}

static void record_busy(struct ss_e2e *t, char *out, size_t len)
{
	record_busy_with(t, out, len, "");
}

/* "12.345ms" (ss_agg_fmt_time) in ns, -1 if not a time */
static double parse_time(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return -1;
	if (!strncmp(end, "ns", 2))
		return v;
	if (!strncmp(end, "us", 2))
		return v * 1e3;
	if (!strncmp(end, "ms", 2))
		return v * 1e6;
	if (*end == 's')
		return v * 1e9;
	return -1;
}

static void test_team_start(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[4096];
	const struct ss_e2e_slice *fn[2][ACTIVE], *st[2 * ACTIVE], *sh[2][ACTIVE];
	static const char *const fns[2] = { "forward", "backward" };
	static const char *const shares[2] = { "forward._omp_fn.0", "backward._omp_fn.0" };

	record_busy(t, out, sizeof(out));
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	collect_offs(tr);
	const struct ss_e2e_slice *ts[1];
	SS_E2E_CHECK(t, ss_e2e_by_time(tr, "train_step", NULL, 0, ts, 1) == 1,
		     "no train_step slice");
	int64_t main_tid = ts[0]->tid;
	SS_E2E_EXPECT_COUNT(t, tr, START, "user_range", main_tid, 2 * ACTIVE);
	SS_E2E_EXPECT_COUNT(t, tr, START, "user_range", 0, 2 * ACTIVE);
	SS_E2E_EXPECT_COUNT(t, tr, WAIT, "user_range", main_tid, 2 * ACTIVE);
	size_t nst = ss_e2e_by_time(tr, START, NULL, main_tid, st, 2 * ACTIVE);
	for (int f = 0; f < 2; f++) {
		SS_E2E_CHECK(t, ss_e2e_by_time(tr, fns[f], NULL, main_tid, fn[f], ACTIVE) ==
				 ACTIVE,
			     "expected %d %s calls on the main thread", ACTIVE, fns[f]);
		SS_E2E_CHECK(t, ss_e2e_by_time(tr, shares[f], NULL, main_tid, sh[f], ACTIVE) ==
				 ACTIVE,
			     "expected %d %s on the main thread", ACTIVE, shares[f]);
	}
	/* each start wait: in forward or backward, before the main thread's
	 * share of that region */
	for (size_t i = 0; i < nst; i++) {
		int in = 0;
		for (int f = 0; f < 2; f++)
			for (int k = 0; k < ACTIVE; k++)
				if (st[i]->ts_ns >= fn[f][k]->ts_ns &&
				    end_of(st[i]) <= end_of(fn[f][k])) {
					in = 1;
					SS_E2E_CHECK(t, end_of(st[i]) <= sh[f][k]->ts_ns,
						     "the start wait at %lld ns ends after %s "
						     "begins (%lld ns)", (long long)st[i]->ts_ns,
						     shares[f], (long long)sh[f][k]->ts_ns);
				}
		SS_E2E_CHECK(t, in, "the start wait at %lld ns is in no forward or backward call",
			     (long long)st[i]->ts_ns);
	}
	/* Self = time less the slices directly inside (the start wait one of
	 * them), to the trace's rounding */
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv run");
	for (int f = 0; f < 2; f++) {
		double self = 0, start = 0;
		for (int k = 0; k < ACTIVE; k++) {
			const struct ss_e2e_slice *c = fn[f][k];
			double kids = 0;
			for (size_t i = 0; i < tr->nslices; i++) {
				const struct ss_e2e_slice *s = &tr->slices[i];
				if (s == c || s->tid != c->tid || s->catbit == SS_E2E_CAT_OTHER ||
				    s->ts_ns < c->ts_ns || end_of(s) > end_of(c))
					continue;
				if (!strcmp(s->name, START))
					start += (double)s->dur_ns;
				if (!strcmp(s->name, START) || !strcmp(s->name, WAIT) ||
				    !strcmp(s->name, shares[f]))
					kids += (double)s->dur_ns;
			}
			self += (double)c->dur_ns - kids;
		}
		double rep = ss_e2e_csv_col(t->out, fns[f], "self_ns");
		print_message("%s: Self %.0f ns (report), %.0f ns (trace: time less the start "
			      "wait, its share, the end wait); start wait %.0f ns\n", fns[f], rep,
			      self, start);
		SS_E2E_CHECK(t, rep >= self - 8.0 * ACTIVE && rep <= self + 8.0 * ACTIVE,
			     "%s: report's Self %.0f ns, the trace's time outside the start wait, "
			     "its share and the end wait %.0f ns:\n%s", fns[f], rep, self, t->out);
	}
	double startrow = ss_e2e_csv_col(t->out, START, "calls");
	SS_E2E_CHECK(t, startrow == 2 * ACTIVE, "report: '%s' has %.0f calls, expected %d:\n%s",
		     START, startrow, 2 * ACTIVE, t->out);

	/* off-CPU per call against the kernel's */
	for (int k = 0; k < ACTIVE; k++)
		for (int f = 0; f < 2; f++) {
			char head[64];
			struct kern kk;
			long n;
			snprintf(head, sizeof(head), "call %d %s", FIRST + k, fns[f]);
			const char *p = strstr(out, head);
			SS_E2E_CHECK(t, p && sscanf(p + strlen(head), " wall %lld cpu %lld sw %lld",
						   &kk.wall, &kk.cpu, &kk.sw) == 3,
				     "no '%s' line in:\n%s", head, out);
			double off = off_in(fn[f][k], HOOK_NS, &n);
			print_message("step %d %s: off-CPU %.0f ns in %ld slices; kernel %lld ns, "
				      "%lld switches\n", FIRST + k, fns[f], off, n,
				      kk.wall - kk.cpu, kk.sw);
			SS_E2E_CHECK(t, near(off, (double)(kk.wall - kk.cpu),
					     SLACK_NS + SLACK_SWITCH_NS * (double)kk.sw),
				     "step %d: off-CPU slices in %s sum to %.0f ns, the kernel "
				     "says %lld ns:\n%s", FIRST + k, fns[f], off, kk.wall - kk.cpu, out);
		}
	ss_e2e_pass(t);
}

static void test_minmax_flag(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[4096];

	record_busy(t, out, sizeof(out));
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	collect_offs(tr);
	const struct ss_e2e_slice *mx = NULL, *mn = NULL;
	size_t preempted = 0, longer = 0, ntiny = 0;
	/* every tiny call and the off-CPU time inside it */
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		long n;
		if (strcmp(s->name, "tiny") || s->flags)
			continue;
		ntiny++;
		if (!mx || s->dur_ns > mx->dur_ns)
			mx = s;
		if (!mn || s->dur_ns < mn->dur_ns)
			mn = s;
		double off = off_in(s, 0, &n);
		preempted += n > 0;
		longer += off > (double)s->dur_ns - off;
	}
	SS_E2E_CHECK(t, mx && mn, "no tiny calls in the trace");
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv run");
	double maxns = ss_e2e_csv_col(t->out, "tiny", "max_ns");
	double minns = ss_e2e_csv_col(t->out, "tiny", "min_ns");
	double maxoff = ss_e2e_csv_col(t->out, "tiny", "max_off_cpu_ns");
	double minoff = ss_e2e_csv_col(t->out, "tiny", "min_off_cpu_ns");
	double rlonger = ss_e2e_csv_col(t->out, "tiny", "off_cpu_longer");
	long n;
	double mxoff = off_in(mx, 0, &n), mnoff = off_in(mn, 0, &n);
	print_message("tiny: %zu calls, %zu switched out, %zu off longer than on; Max %.0f ns "
		      "(trace %lld) with %.0f ns off-CPU (trace %.0f); Min %.0f (trace %lld) "
		      "with %.0f off (trace %.0f)\n", ntiny, preempted, longer, maxns,
		      (long long)mx->dur_ns, maxoff, mxoff, minns, (long long)mn->dur_ns, minoff,
		      mnoff);
	SS_E2E_CHECK(t, preempted > 0, "no tiny call was switched out: the busy loop and the "
		     "team of 4 never took one off its CPU:\n%s", out);
	/* the trace's times are us with 3 decimals: 2 ns of rounding a slice */
	SS_E2E_CHECK(t, maxns >= (double)mx->dur_ns - 2 && maxns <= (double)mx->dur_ns + 2,
		     "report's Max of tiny %.0f ns, the trace's slowest call %lld ns", maxns,
		     (long long)mx->dur_ns);
	SS_E2E_CHECK(t, (maxoff > 0) == (mxoff > 0) && maxoff >= mxoff - 4 && maxoff <= mxoff + 4,
		     "report's max_off_cpu_ns of tiny %.0f, the off-CPU time in its slowest "
		     "call %.0f: a preempted call reported as a slow one without its flag", maxoff,
		     mxoff);
	SS_E2E_CHECK(t, (minoff > 0) == (mnoff > 0), "report's min_off_cpu_ns of tiny %.0f, "
		     "the trace's fastest call has %.0f", minoff, mnoff);
	SS_E2E_CHECK(t, rlonger == (double)longer, "off_cpu_longer of tiny %.0f, the trace "
		     "counts %zu calls off the CPU longer than on it", rlonger, longer);
	/* the text table: the mark and the footer line that explains it */
	SS_E2E_SH_OK(t, SS " report -q --limit 0 run");
	if (maxoff > 0) {
		const char *row = strstr(t->out, "\ntiny ");
		size_t len = row ? strcspn(row + 1, "\n") : 0;
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)len, row ? row + 1 : "");
		SS_E2E_CHECK(t, row && strchr(line, '*'), "tiny's row has no '*' on its Max:\n%s",
			     t->out);
		SS_E2E_CHECK(t, strstr(t->out, "Min/Max with '*': that call was switched out"),
			     "no footer line for the '*':\n%s", t->out);
	}
	/* the flame graph, folded stacks and html: the off-CPU part of each
	 * self time is an "off-CPU" frame; folded's add up to the rows'
	 * Off-CPU Self, and all lines still to the self time total */
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv run");
	double offself = 0, self = 0;
	for (const char *r = strchr(t->out, '\n'); r && r[1]; r = strchr(r + 1, '\n')) {
		char name[256];
		if (sscanf(r + 1, "%255[^,]", name) != 1)
			continue;
		double o = ss_e2e_csv_col(t->out, name, "off_cpu_self_ns");
		double s = ss_e2e_csv_col(t->out, name, "self_ns");
		offself += o > 0 ? o : 0;
		self += s > 0 ? s : 0;
	}
	SS_E2E_SH_OK(t, SS " symbolize -q --format folded -o - run | awk '/;off-CPU / { o += $NF } "
		     "{ a += $NF } END { printf \"%%.0f %%.0f\\n\", o, a }'");
	double fo = -1, fa = -1;
	sscanf(t->out, "%lf %lf", &fo, &fa);
	print_message("folded: off-CPU frames %.0f ns (rows' Off-CPU Self %.0f), all %.0f (self %.0f)\n",
		      fo, offself, fa, self);
	SS_E2E_CHECK(t, fo > 0 && fo == offself, "folded's off-CPU frames sum to %.0f ns, the rows' "
		     "Off-CPU Self to %.0f", fo, offself);
	SS_E2E_CHECK(t, fa == self, "folded sums to %.0f ns, the rows' self to %.0f", fa, self);
	SS_E2E_SH_OK(t, SS " flame -q -o f.svg run && grep -c 'off-CPU: switched out while' f.svg");
	SS_E2E_CHECK(t, atoi(t->out) > 0, "no off-CPU frame in the flame graph");
	SS_E2E_SH_OK(t, SS " html -q -o r.html run && grep -c '<th>Off-CPU Self</th>' r.html");
	SS_E2E_CHECK(t, atoi(t->out) == 1, "no Off-CPU Self column in html");
	ss_e2e_pass(t);
}

/* The overhead line from the runtime's own account (SS_META_COST): tiny
 * left out by filter.exclude, its calls counted all the same (the main
 * thread's at exit, each worker's in batches of 4096: up to 4095 of each
 * of the 3 workers still uncounted); the CPU time while recording at
 * least what the kernel counted for the recorded steps' bodies and at
 * most 10% + 20 ms more (the window also spans its opening and the loop
 * between the steps). */
static void test_overhead_account(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[4096];
	const double k = ACTIVE * (40000.0 + 60000.0); /* s-offcpu-omp's tiny calls */

	record_busy_with(t, out, sizeof(out), "--set filter.exclude=tiny");
	double pcpu = 0;
	for (int s = FIRST; s < FIRST + ACTIVE; s++) {
		char head[32];
		long long v;
		snprintf(head, sizeof(head), "step %d pcpu ", s);
		const char *p = strstr(out, head);
		SS_E2E_CHECK(t, p && sscanf(p + strlen(head), "%lld", &v) == 1,
			     "no '%s' line in:\n%s", head, out);
		pcpu += (double)v;
	}
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv run");
	SS_E2E_CHECK(t, !strstr(t->out, "\ntiny,"), "tiny is recorded despite filter.exclude:\n%s",
		     t->out);
	SS_E2E_SH_OK(t, SS " report -q run");
	const char *l = strstr(t->out, "stepscope overhead: ");
	unsigned long long calls = 0, pair = 0, skipped = 0;
	SS_E2E_CHECK(t, l && sscanf(l, "stepscope overhead: %*f%% of recorded time (%llu calls x "
				    "%llu ns, %llu calls filters left out", &calls, &pair,
				    &skipped) == 3,
		     "no overhead line with the calls filters left out:\n%s", t->out);
	const char *c = strstr(l, " in stepscope's background thread, of ");
	double cpu = c ? parse_time(c + strlen(" in stepscope's background thread, of ")) : -1;
	print_message("overhead line: %llu calls x %llu ns, %llu left out (the program made %.0f); "
		      "CPU while recording %.0f ns, the kernel's for the steps' bodies %.0f ns\n",
		      calls, pair, skipped, k, cpu, pcpu);
	SS_E2E_CHECK(t, (double)skipped <= k && (double)skipped >= k - 3 * 4095,
		     "%llu calls left out counted, the recorded steps made %.0f tiny calls", skipped, k);
	SS_E2E_CHECK(t, cpu >= pcpu && cpu <= pcpu * 1.10 + 20e6,
		     "the CPU time while recording %.0f ns, the kernel's for the recorded steps' "
		     "bodies %.0f ns:\n%s", cpu, pcpu, l);
	SS_E2E_CHECK(t, strstr(l, "slower than unrecorded"), "the line does not say the slowdown:\n%s", l);
	ss_e2e_pass(t);
}

/* The median of each step's off-CPU share of run `dir` by report --steps
 * (its on_cpu_ns and off_cpu_ns), the oracle of diff's off_cpu_share. */
static double busy_of(struct ss_e2e *t, const char *dir)
{
	double v[64], x;
	size_t n = 0;
	cJSON *s;
	SS_E2E_SH_OK(t, SS " report -q --steps --format json %s > %s.json", dir, dir);
	char path[64];
	snprintf(path, sizeof(path), "%s.json", dir);
	cJSON *j = ss_e2e_load_json(t, path);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "step_list")) {
		double off = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "off_cpu_ns"));
		double d = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "ns"));
		if (n < 64)
			v[n++] = d > 0 ? off / d : 0;
	}
	cJSON_Delete(j);
	for (size_t k = 1; k < n; k++)
		for (size_t i = k; i > 0 && v[i - 1] > v[i]; i--)
			x = v[i], v[i] = v[i - 1], v[i - 1] = x;
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : -1;
}

/* diff of two recordings of one build on the busy machine: on-CPU time by
 * default, each run's off-CPU share of a step as report --steps has it,
 * the note that the machine was busy (both well over 10%: the team of 4
 * on 2 CPUs, one of them held); --wall compares wall time, and so does a
 * pair where one run recorded no switches, each saying so. */
static void test_diff_oncpu(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[4096];

	record_busy(t, out, sizeof(out));
	SS_E2E_SH_OK(t, "mv run a");
	record_busy(t, out, sizeof(out));
	SS_E2E_SH_OK(t, "mv run b");
	double ba = busy_of(t, "a"), bb = busy_of(t, "b");
	SS_E2E_SH_OK(t, SS " diff -q a b");
	print_message("%s", t->out);
	SS_E2E_CHECK(t, strstr(t->out, "\ncompared: on-CPU time (") &&
			strstr(t->out, "step on-CPU time (every thread's calls) (median): "),
		     "diff does not compare on-CPU time:\n%s", t->out);
	SS_E2E_CHECK(t, ba >= 0.10 && bb >= 0.10 && strstr(t->out, "\nnote: the machine was busy (up to "),
		     "steps off the CPU %.3f and %.3f (report --steps), and no or a wrong note:\n%s",
		     ba, bb, t->out);
	SS_E2E_SH_OK(t, SS " diff -q --format json a b > d.json");
	cJSON *j = ss_e2e_load_json(t, "d.json");
	cJSON *share = cJSON_GetObjectItem(j, "off_cpu_share");
	const char *cmp = cJSON_GetStringValue(cJSON_GetObjectItem(j, "compared"));
	double sa = cJSON_GetNumberValue(cJSON_GetObjectItem(share, "base"));
	double sb = cJSON_GetNumberValue(cJSON_GetObjectItem(share, "new"));
	print_message("off_cpu_share: base %.4f new %.4f; report --steps: %.4f %.4f\n", sa, sb, ba, bb);
	SS_E2E_CHECK(t, cmp && !strcmp(cmp, "on_cpu"), "json compared: %s", cmp ? cmp : "(none)");
	SS_E2E_CHECK(t, sa > ba - 1e-4 && sa < ba + 1e-4 && sb > bb - 1e-4 && sb < bb + 1e-4,
		     "diff's off_cpu_share %.4f, %.4f; report --steps' median share %.4f, %.4f",
		     sa, sb, ba, bb);
	cJSON_Delete(j);
	SS_E2E_SH_OK(t, SS " diff -q --wall a b");
	SS_E2E_CHECK(t, strstr(t->out, "\ncompared: wall time (--wall); ") &&
			strstr(t->out, "\nstep time (median): ") &&
			strstr(t->out, "wall time holds the waits for a CPU"),
		     "diff --wall:\n%s", t->out);
	SS_E2E_SH_OK(t, SS " record -o c --set step.function=train_step --set schedule.wait=%d "
		     "--set schedule.active=%d -- ./s-offcpu-omp %d > /dev/null", FIRST, ACTIVE, STEPS);
	SS_E2E_SH_OK(t, SS " diff -q a c");
	SS_E2E_CHECK(t, strstr(t->out, "\ncompared: wall time (one run recorded no switches") &&
			strstr(t->out, "new 0.0% (not recorded)"),
		     "diff of a run with switches and one without:\n%s", t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_team_start),
		SS_E2E_TEST(test_minmax_flag),
		SS_E2E_TEST(test_overhead_account),
		SS_E2E_TEST(test_diff_oncpu),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
