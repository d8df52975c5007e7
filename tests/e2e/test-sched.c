/*
 * test-sched.c - end to end: on the CPU or waiting (record.sched).
 *
 * s-sched's step calls spinner() (spins 12 ms on the clock) and sleeper()
 * (nanosleep 5 ms); the fixture prints, for every call and step, what the
 * kernel says: wall time, the thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
 * its run-queue wait (schedstat) and its voluntary and involuntary
 * switches.  The test pins the fixture and a busy shell loop started
 * beside it to one CPU, so the spinner is preempted again and again, and
 * records steps 1-4 (of 0-5) with record.sched on.  Then:
 *   - the sleeper's Off-CPU Self is within 10% of its Total (it is
 *     blocked nearly all the time);
 *   - the spinner's and sleeper's Off-CPU (report csv, summed over the 4
 *     recorded calls; plus what the hooks at their edges were switched
 *     out for, below) equal the kernel's off-CPU time of the same calls,
 *     the sum of wall - cpu the fixture printed, within 10% + 200 us + 30
 *     us a switch (the slack: the fixture's clock reads and the hooks sit
 *     between its readings and the call's slice; the kernel's run-queue
 *     wait came to up to 16 us a switch more than perf's switch-out to
 *     switch-in on the development VM when the spinner was preempted 13-17
 *     times in 12 ms);
 *   - per recorded step and call, the off-CPU slices of trace.json that
 *     begin inside the call (or within 10 us of it: the hooks' own work,
 *     which an exit hook that wakes the background thread on the same
 *     CPU can be preempted in) sum to the kernel's wall - cpu of it
 *     within the same,
 *     and their number is the thread's switches (voluntary + involuntary)
 *     in it, +-1; per step, both calls together the same;
 *   - the spinner holds at least one "off-CPU (preempted)" slice (the
 *     busy loop works) and the sleeper one "off-CPU (blocked)" per call;
 *     no off-CPU slice crosses the edge of a call;
 *   - report --steps json's per-step off_cpu_ns is the sum of the off-CPU
 *     slices in the step's ProfilerStep slice (to the trace's rounding) and
 *     at least the kernel's figure for its calls less 10%; on_cpu_ns +
 *     off_cpu_ns is the step (a step also holds main's code up to the next
 *     step and, for the first, what opening the window took, so the
 *     kernel's calls give only a lower bound);
 *   - the text report has the Off-CPU columns, the footer line for the
 *     sleeper's calls and the per-step section; the Perfetto trace holds
 *     an "off-CPU" track;
 *   - with record.sched off (the default) none of it shows.
 * A kernel that refuses perf events fails the test with the runtime's
 * own line: we run as root where perf_event_paranoid is 2.
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
#define STEPS 6
#define FIRST 1     /* recorded steps: FIRST .. FIRST + ACTIVE - 1 */
#define ACTIVE 4
#define SLACK_NS 200000.0
/* and per switch: the kernel's run-queue wait came to up to 16 us a switch
 * more than perf's switch-out to switch-in on the development VM */
#define SLACK_SWITCH_NS 30000.0
/* A call's hooks run after its ENTER's and before its EXIT's time stamp
 * but inside the fixture's clock reads: a switch-out that close to a call's
 * slice is in the kernel's figure for the call (an exit hook that wakes
 * the background thread, which takes the CPU at once) */
#define HOOK_NS 10000

/* What the fixture printed for one call or step. */
struct kern {
	long long wall, cpu, wait, vol, invol;
};

static int parse_line(const char *out, const char *head, struct kern *k)
{
	const char *p = strstr(out, head);
	if (!p)
		return -1;
	p += strlen(head);
	return sscanf(p, " wall %lld cpu %lld wait %lld vol %lld invol %lld", &k->wall,
		      &k->cpu, &k->wait, &k->vol, &k->invol) == 5 ? 0 : -1;
}

static int near(double got, double want, double slack)
{
	double d = got > want ? got - want : want - got;
	return d <= 0.10 * want + slack;
}

/* The off-CPU slices on s's thread that begin inside s, or up to `margin`
 * ns before or after it: their time, and *n of them. */
static double off_in(const struct ss_e2e_trace *tr, const struct ss_e2e_slice *s,
		     int64_t margin, long *n)
{
	double off = 0;
	*n = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *o = &tr->slices[i];
		if (strcmp(o->cat, "off_cpu") || o->tid != s->tid ||
		    o->ts_ns < s->ts_ns - margin || o->ts_ns >= s->ts_ns + s->dur_ns + margin)
			continue;
		off += (double)o->dur_ns;
		(*n)++;
	}
	return off;
}

static void test_offcpu(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char out[8192], head[512];
	struct kern call[STEPS][2], step[STEPS];
	double off_step[ACTIVE] = { 0 }, kern_step[ACTIVE] = { 0 }, sw_step[ACTIVE] = { 0 };
	double edge[2] = { 0, 0 };
	const struct ss_e2e_slice *pstep[ACTIVE];

	ss_e2e_build(t, "sched", NULL);
	/* the fixture and a busy loop on one CPU: the spinner is preempted */
	int st = ss_e2e_sh(t,
		"C=$(($(nproc) - 1)); taskset -c $C sh -c 'while :; do :; done' "
		">/dev/null 2>&1 & H=$!; "
		"taskset -c $C " SS " record -o run --set step.function=train_step "
		"--set record.sched=true --set schedule.wait=%d --set schedule.active=%d "
		"-- ./s-sched %d; rc=$?; kill $H; exit $rc", FIRST, ACTIVE, STEPS);
	SS_E2E_CHECK(t, !strstr(t->err, "record.sched:"),
		     "the kernel refused the context-switch event, which this test needs "
		     "(perf_event_open as root, perf_event_paranoid <= 2): %s", t->err);
	SS_E2E_EXPECT_STATUS(t, st, 0);
	snprintf(out, sizeof(out), "%s", t->out);
	for (int s = 0; s < STEPS; s++) {
		char h[64];
		snprintf(h, sizeof(h), "call %d spinner", s);
		SS_E2E_CHECK(t, !parse_line(out, h, &call[s][0]), "no '%s' line in:\n%s", h, out);
		snprintf(h, sizeof(h), "call %d sleeper", s);
		SS_E2E_CHECK(t, !parse_line(out, h, &call[s][1]), "no '%s' line in:\n%s", h, out);
		snprintf(h, sizeof(h), "step %d", s);
		SS_E2E_CHECK(t, !parse_line(out, h, &step[s]), "no '%s' line in:\n%s", h, out);
	}

	/* report: Off-CPU of both functions against the kernel's */
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv run");
	snprintf(head, sizeof(head), "%.*s", (int)strcspn(t->out, "\n"), t->out);
	SS_E2E_CHECK(t, strstr(head, ",off_cpu_self_ns,off_cpu_ns"),
		     "no off-CPU columns in the csv: %s", head);
	double sl_total = ss_e2e_csv_col(t->out, "sleeper", "total_ns");
	double sl_oself = ss_e2e_csv_col(t->out, "sleeper", "off_cpu_self_ns");
	double sl_off = ss_e2e_csv_col(t->out, "sleeper", "off_cpu_ns");
	double sp_off = ss_e2e_csv_col(t->out, "spinner", "off_cpu_ns");
	double k_sl = 0, k_sp = 0, sw_sl = 0, sw_sp = 0;
	for (int s = FIRST; s < FIRST + ACTIVE; s++) {
		k_sp += (double)(call[s][0].wall - call[s][0].cpu);
		k_sl += (double)(call[s][1].wall - call[s][1].cpu);
		sw_sp += (double)(call[s][0].vol + call[s][0].invol);
		sw_sl += (double)(call[s][1].vol + call[s][1].invol);
	}
	print_message("sleeper: total %.0f ns, off-CPU self %.0f, off-CPU %.0f, kernel %.0f\n"
		      "spinner: off-CPU %.0f ns, kernel %.0f\n",
		      sl_total, sl_oself, sl_off, k_sl, sp_off, k_sp);
	SS_E2E_CHECK(t, sl_total > 0 && sl_oself >= 0.9 * sl_total,
		     "sleeper: Off-CPU Self %.0f ns is not within 10%% of its Total %.0f ns:\n%s",
		     sl_oself, sl_total, t->out);
	char csv[8192];
	snprintf(csv, sizeof(csv), "%s", t->out);

	/* the trace: off-CPU slices per call of each recorded step */
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	static const char *const fns[2] = { "spinner", "sleeper" };
	for (int f = 0; f < 2; f++) {
		const struct ss_e2e_slice *c[ACTIVE];
		size_t nc = ss_e2e_by_time(tr, fns[f], NULL, 0, c, ACTIVE);
		SS_E2E_CHECK(t, nc == ACTIVE, "%zu %s slices, expected %d", nc, fns[f], ACTIVE);
		for (size_t k = 0; k < nc; k++) {
			long n;
			long n0;
			double off = off_in(tr, c[k], HOOK_NS, &n);
			edge[f] += off - off_in(tr, c[k], 0, &n0);
			const struct kern *kk = &call[FIRST + k][f];
			long sw = (long)(kk->vol + kk->invol);
			off_step[k] += off;
			kern_step[k] += (double)(kk->wall - kk->cpu);
			print_message("step %zu %s: off-CPU %.0f ns in %ld slices; kernel %lld ns "
				      "(run-queue wait %lld), %ld switches\n", FIRST + k, fns[f],
				      off, n, kk->wall - kk->cpu, kk->wait, sw);
			sw_step[k] += (double)sw;
			SS_E2E_CHECK(t, near(off, (double)(kk->wall - kk->cpu),
					     SLACK_NS + SLACK_SWITCH_NS * (double)sw),
				     "step %zu: off-CPU slices in %s sum to %.0f ns, the kernel "
				     "says %lld ns:\n%s", FIRST + k, fns[f], off,
				     kk->wall - kk->cpu, out);
			SS_E2E_CHECK(t, n >= sw - 1 && n <= sw + 1,
				     "step %zu: %ld off-CPU slices in %s, the kernel counts %ld "
				     "switches", FIRST + k, n, fns[f], sw);
		}
	}
	/* the report's Off-CPU of the 4 calls, and what the hooks around them
	 * were switched out for, against the kernel's */
	print_message("hooks' edges: spinner %.0f ns, sleeper %.0f ns\n", edge[0], edge[1]);
	SS_E2E_CHECK(t, near(sl_off + edge[1], k_sl, SLACK_NS + SLACK_SWITCH_NS * sw_sl),
		     "sleeper: Off-CPU %.0f ns (+ %.0f ns at its edges), the kernel says %.0f ns "
		     "(wall - cpu of its 4 calls):\n%s\n%s", sl_off, edge[1], k_sl, csv, out);
	SS_E2E_CHECK(t, near(sp_off + edge[0], k_sp, SLACK_NS + SLACK_SWITCH_NS * sw_sp),
		     "spinner: Off-CPU %.0f ns (+ %.0f ns at its edges), the kernel says %.0f ns "
		     "(wall - cpu of its 4 calls):\n%s\n%s", sp_off, edge[0], k_sp, csv, out);
	for (size_t k = 0; k < ACTIVE; k++)
		SS_E2E_CHECK(t, near(off_step[k], kern_step[k],
				     SLACK_NS + SLACK_SWITCH_NS * sw_step[k]),
			     "step %zu: the thread's off-CPU time in its calls is %.0f ns, the "
			     "kernel says %.0f ns", FIRST + k, off_step[k], kern_step[k]);
	size_t nsteps = ss_e2e_by_time(tr, NULL, "step", 0, pstep, ACTIVE);
	SS_E2E_CHECK(t, nsteps == ACTIVE, "%zu ProfilerStep slices, expected %d", nsteps, ACTIVE);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *o = &tr->slices[i];
		if (strcmp(o->cat, "off_cpu"))
			continue;
		for (size_t j = 0; j < tr->nslices; j++) { /* no call's edge inside it */
			const struct ss_e2e_slice *f = &tr->slices[j];
			if (!strcmp(f->cat, "off_cpu") || f->tid != o->tid)
				continue;
			int64_t fb = f->ts_ns, fe = fb + f->dur_ns, ob = o->ts_ns,
				oe = ob + o->dur_ns;
			SS_E2E_CHECK(t, !(ob < fb && oe > fb) && !(ob < fe && oe > fe),
				     "off-CPU slice at %lld ns (%lld ns) crosses %s [%lld, %lld]",
				     (long long)ob, (long long)o->dur_ns, f->name,
				     (long long)fb, (long long)fe);
		}
	}
	/* which call each lies in, by the fixture's functions' slices */
	size_t preempted_in_spinner = 0, blocked_in_sleeper = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *o = &tr->slices[i];
		if (strcmp(o->cat, "off_cpu"))
			continue;
		for (size_t j = 0; j < tr->nslices; j++) {
			const struct ss_e2e_slice *f = &tr->slices[j];
			if (f->tid != o->tid || o->ts_ns < f->ts_ns ||
			    o->ts_ns + o->dur_ns > f->ts_ns + f->dur_ns)
				continue;
			if (!strcmp(f->name, "spinner") && strstr(o->name, "preempted"))
				preempted_in_spinner++;
			if (!strcmp(f->name, "sleeper") && strstr(o->name, "blocked"))
				blocked_in_sleeper++;
		}
	}
	SS_E2E_CHECK(t, preempted_in_spinner > 0,
		     "no 'off-CPU (preempted)' slice in spinner: the busy loop on its CPU "
		     "never took it off:\n%s", out);
	SS_E2E_CHECK(t, blocked_in_sleeper >= ACTIVE,
		     "%zu 'off-CPU (blocked)' slices in sleeper, expected one per call at least",
		     blocked_in_sleeper);

	/* report --steps: per step on and off the CPU */
	SS_E2E_SH_OK(t, SS " report -q --steps --format json run > r.json");
	cJSON *j = ss_e2e_load_json(t, "r.json"), *s;
	SS_E2E_CHECK(t, cJSON_GetObjectItem(j, "off_cpu") != NULL, "no off_cpu in report json");
	size_t nsj = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "step_list")) {
		double d = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "ns"));
		double on = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "on_cpu_ns"));
		double off = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "off_cpu_ns"));
		int k = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(s, "step"));
		SS_E2E_CHECK(t, k >= FIRST && k < FIRST + ACTIVE, "step %d recorded", k);
		long n;
		double inside = off_in(tr, pstep[k - FIRST], 0, &n);
		print_message("report --steps: step %d off-CPU %.0f ns, on-CPU %.0f; the trace's "
			      "off-CPU slices in it %.0f; the kernel's in its calls %.0f\n", k,
			      off, on, inside, kern_step[k - FIRST]);
		SS_E2E_CHECK(t, on + off == d, "step %d: on %.0f + off %.0f != %.0f", k, on, off, d);
		/* the trace's times are in us with 3 decimals, the step ends 1 ns early */
		SS_E2E_CHECK(t, off >= inside - 2.0 * (double)(n + 1) && off <= inside + 2.0 * (double)(n + 1) + 2000,
			     "step %d: report --steps says off-CPU %.0f ns, its off-CPU slices "
			     "sum to %.0f ns", k, off, inside);
		SS_E2E_CHECK(t, off >= kern_step[k - FIRST] * 0.9 - SLACK_NS,
			     "step %d: report --steps off-CPU %.0f ns, less than the kernel's %.0f "
			     "ns in its calls alone", k, off, kern_step[k - FIRST]);
		nsj++;
	}
	cJSON_Delete(j);
	SS_E2E_CHECK(t, nsj == ACTIVE, "%zu steps in report --steps json", nsj);
	SS_E2E_SH_OK(t, SS " report -q --steps run");
	SS_E2E_CHECK(t, strstr(t->out, "Off-CPU Self") && strstr(t->out, "On and off the CPU"),
		     "no Off-CPU columns or per-step section:\n%s", t->out);
	SS_E2E_CHECK(t, strstr(t->out, "Off the CPU longer than on it: "),
		     "no footer line for the sleeper's calls:\n%s", t->out);

	/* Perfetto: an off-CPU track */
	ss_e2e_need(t, "command -v protoc", "protoc", "protobuf-compiler");
	SS_E2E_SH_OK(t, SS " symbolize -q --format perfetto run && protoc --decode_raw "
			"< run/trace.perfetto-trace | grep -c 'off-CPU'");
	SS_E2E_CHECK(t, atoi(t->out) >= 2, "perfetto: no off-CPU track and slices: %s", t->out);
	ss_e2e_pass(t);
}

/* record.sched off (the default): no switch records, no columns, no slices */
static void test_offcpu_off(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "sched", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step "
			"--set schedule.active=2 -- ./s-sched 3");
	SS_E2E_SH_OK(t, SS " report -q run");
	SS_E2E_CHECK(t, !strstr(t->out, "Off-CPU"), "Off-CPU without record.sched:\n%s", t->out);
	SS_E2E_SH_OK(t, SS " symbolize -q run && grep -c off_cpu run/trace.json || true");
	SS_E2E_CHECK(t, atoi(t->out) == 0, "off_cpu slices without record.sched: %s", t->out);
	ss_e2e_pass(t);
}

/* the kernel refuses the event (seccomp, as in Docker): one line says so
 * and why, and the rest is recorded as without record.sched */
static void test_offcpu_refused(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "sched", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set record.sched=true "
			"--set schedule.active=3 -- ./s-sched 3 noperf");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "record.sched:") == 1,
		     "not one record.sched line on stderr:\n%s", t->err);
	SS_E2E_CHECK(t, strstr(t->err, "stepscope: record.sched: perf_event_open not permitted") &&
			strstr(t->err, "Permission denied") && strstr(t->err, "seccomp") &&
			strstr(t->err, "off-CPU time is not recorded"),
		     "the line does not say what was refused and why:\n%s", t->err);
	SS_E2E_SH_OK(t, SS " report -q --limit 0 --format csv run");
	SS_E2E_CHECK(t, !strstr(t->out, "off_cpu"), "off-CPU columns without switches:\n%s", t->out);
	SS_E2E_CHECK(t, strstr(t->out, "\nspinner,function,") && strstr(t->out, "\nsleeper,function,"),
		     "the calls are not recorded:\n%s", t->out);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_offcpu),
		SS_E2E__ONE(test_offcpu, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E_TEST(test_offcpu_off),
		SS_E2E_TEST(test_offcpu_refused),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
