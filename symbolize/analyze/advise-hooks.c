/*
 * advise-hooks.c - `stepscope advise`'s "hooks" check: stepscope's own
 * hooks dominate the steps because the program makes many tiny calls;
 * the advice is the filter workflow (docs/filters.md): `stepscope filter`
 * lists the calls to leave out, the program is rebuilt without their
 * hooks and recorded again.
 *
 * Judged with overhead.c's model and advice, and filter-pick.c's rule,
 * never a copy of them: a finding when the overhead line would advise a
 * filter (ss_overhead_advice: the recorded steps over 10% slower and the
 * hooks alone over 10% of the program's own CPU time) and `filter` would
 * propose something.  The saving per step: the proposed functions'
 * recorded calls on the stepping threads (calls of each on each thread
 * that ran steps, over those steps) x pair_ns, the runtime's calibrated
 * cost of one recorded call, which a rebuild without their hooks removes,
 * or, when the run has unrecorded steps and it is more, what recording
 * added to the median step (against the runtime's mean unrecorded step)
 * times the proposed calls' share of all recorded calls;
 * at the run-time filter's end of the range each left-out call still
 * costs its probe (skip_ns, else half a recorded call).  Calls on other
 * threads (an OpenMP team's) are not counted: what they save the step
 * depends on how the team waits.
 *
 * Must never: advise a filter the overhead line would not, or propose a
 * function `stepscope filter` would not list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "filter-pick.h"

#define HK_NAMES 16   /* proposed functions kept for the evidence */

struct hk_pick {
	char name[128];
	uint64_t calls;            /* in the run, all threads */
	double step_calls;         /* per step, on the stepping threads */
	uint64_t own_call;         /* ns, filter's Own/call */
};

/* per step, on the threads that ran steps: the calls of the picked rows */
static int hk_step_calls(const struct ss_adv_run *run, struct hk_pick *p, size_t n)
{
	struct ss_agg_row *rows;
	size_t nr = ss_agg_rows(run->agg, 1, &rows);

	for (size_t i = 0; i < nr; i++) {
		const struct ss_agg_row *w = &rows[i];
		size_t steps = 0;
		if (w->kind != SS_AGG_FUNCTION)
			continue;
		for (size_t k = 0; k < run->nsteps; k++)
			steps += run->steps[k].pid == w->pid && run->steps[k].tid == w->tid;
		if (!steps)
			continue;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(p[k].name, w->name))
				p[k].step_calls += (double)w->calls / (double)run->nsteps;
	}
	return 0;
}

static int hk_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
		    char *why, size_t whylen)
{
	const struct ss_overhead *ov = &run->ovh;
	struct ss_filter_opts o = SS_FILTER_OPTS_DEFAULT;
	struct ss_filter_rows r;
	struct hk_pick p[HK_NAMES];
	size_t npick, n = 0;
	uint64_t calls, self_sum;
	char *pick;
	(void)state;

	if (!ov->known || !ov->pair_ns) {
		snprintf(why, whylen, "the run has no calibration of a recorded call's cost "
				      "(its runtime predates it)");
		return 1;
	}
	calls = ss_overhead_calls(run->agg);
	self_sum = ss_agg_self_sum(run->agg);
	if (ss_overhead_advice(ov, calls, self_sum) != SS_OVERHEAD_FILTER)
		return 0;
	if (ss_filter_propose(run->agg, ov, &o, &r, &pick, &npick))
		return -1;
	for (size_t i = 0; i < r.n && n < HK_NAMES; i++) {
		/* a runtime-only name keeps its hooks in a rebuild */
		if (!pick[i] || ss_filter_clash(&r, pick, i))
			continue;
		memset(&p[n], 0, sizeof(p[n]));
		snprintf(p[n].name, sizeof(p[n].name), "%s", r.rows[i].name);
		p[n].calls = r.rows[i].calls;
		p[n].own_call = ss_filter_own_call(&r, i, ov);
		n++;
	}
	free(pick);
	free(r.below);
	if (!n)
		return 0;
	double step = 0;
	for (size_t k = 0; k < run->nsteps; k++)
		step += (double)(run->steps[k].end_ns - run->steps[k].begin_ns);
	step /= (double)run->nsteps;
	hk_step_calls(run, p, n); /* r.rows is no longer valid after this */
	double per = 0, picked = 0;
	double probe = ov->skip_ns ? (double)ov->skip_ns : (double)ov->pair_ns / 2;
	for (size_t k = 0; k < n; k++)
		per += p[k].step_calls, picked += (double)p[k].calls;
	/* the model: their calls x pair_ns; less a probe each at run time */
	double model = per * (double)ov->pair_ns, lo = per * ((double)ov->pair_ns - probe);
	/* measured: what recording added to a step (the median recorded
	 * step, which a stretched step or the window's opening in the first
	 * one does not move, against the runtime's mean unrecorded step),
	 * the proposed calls' share of it */
	double rec = (double)run->median_step_ns, ref, extra = 0, save = model;
	if (ss_overhead_measured(ov, NULL, &ref) > 0) {
		extra = rec - ref;
		extra = extra > 0 ? extra * picked / (double)calls : 0.0;
		if (extra > save)
			save = extra;
	}
	if (save > step)
		save = step;
	if (lo > save)
		lo = save;
	if (save <= 0)
		return 0;
	struct ss_adv_finding *f = ss_adv_add(out, "hooks");
	if (!f)
		return -1;
	f->save_ns = save;
	f->save_lo = lo;
	f->save_hi = save;
	snprintf(f->title, sizeof(f->title),
		 "stepscope's hooks dominate: %.0f tiny calls a step, the recorded steps %.2fx "
		 "slower than unrecorded ones",
		 per, ss_overhead_slowdown(ov, calls, self_sum));
	int len = snprintf(f->evidence, sizeof(f->evidence),
			   "%llu recorded calls x %llu ns (the runtime's calibrated cost of one) "
			   "make the recorded steps %.2fx slower than unrecorded ones; "
			   "`stepscope filter` would leave out %zu function%s called %.0f times a step "
			   "on the stepping thread:",
			   (unsigned long long)calls, (unsigned long long)ov->pair_ns,
			   ss_overhead_slowdown(ov, calls, self_sum), n, n == 1 ? "" : "s", per);
	for (size_t k = 0; k < n && len > 0 && (size_t)len < sizeof(f->evidence); k++)
		len += snprintf(f->evidence + len, sizeof(f->evidence) - (size_t)len,
				"%s %s (%.0f calls a step, %llu ns of its own work a call against "
				"%llu ns of hooks)",
				k ? "," : "", p[k].name, p[k].step_calls,
				(unsigned long long)p[k].own_call, (unsigned long long)ov->pair_ns);
	snprintf(f->advice, sizeof(f->advice),
		 "run 'stepscope filter -o exclude.txt %s', rebuild the program with "
		 "STEPSCOPE_EXCLUDE_FILE=exclude.txt (stepscope-cc) and record again "
		 "(docs/filters.md); at run time --set filter.exclude_file=exclude.txt saves less "
		 "(a left-out call still costs its probe)",
		 run->dir);
	if (extra >= model)
		snprintf(f->how, sizeof(f->how),
			 "what recording added to a step (the median recorded step %.0f ns against "
			 "the mean unrecorded %.0f ns) x the proposed calls' share of the recorded "
			 "calls (%.1f%%); the lower end: their %.0f calls a step x (%llu ns - a %.0f "
			 "ns probe)",
			 rec, ref, 100.0 * picked / (double)calls, per,
			 (unsigned long long)ov->pair_ns, probe);
	else
		snprintf(f->how, sizeof(f->how),
			 "%.0f calls a step of the functions filter proposes, on the stepping "
			 "thread, x %llu ns a recorded call (the runtime's calibration); the lower "
			 "end keeps a %.0f ns probe per call",
			 per, (unsigned long long)ov->pair_ns, probe);
	for (size_t k = 0; k < n && k < SS_ADV_FUNCS; k++)
		snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", p[k].name);
	return 0;
}

const struct ss_adv_check ss_adv_check_hooks = {
	.name = "hooks",
	.looks_at = "the recorded calls' hooks against the steps, and the tiny functions "
		    "`stepscope filter` would leave out",
	.exporter = NULL,
	.judge = hk_judge,
	.release = NULL,
};
