/*
 * run-check.c - what `stepscope record` says at the end about the steps of
 * the run it recorded, so a wrong step.function or a schedule that never
 * opens a window is not silent:
 *   - no step began (step.function never called);
 *   - steps began but none was recorded: how many steps were seen and at
 *     which step the schedule would have opened its first window;
 *   - in the recorded steps, step.function was nested in itself (a nested
 *     call does not begin a step) or was called from more than one
 *     function (a forward that also runs for validation, a zero_grad also
 *     called inside backward): its calls are not one per iteration.
 *
 * Design: the step counts come from the SS_META_STEP records alone (cheap);
 * the nesting and caller checks walk the recorded slices with step-facts.c, and
 * only when the traces are small enough to read back quickly.
 *
 * Must never: change the exit status of record, or print more than one
 * line per finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "run-check.h"
#include "run.h"
#include "schedule.h"
#include "step-facts.h"

#define SS_CHECK_MAX_BYTES (128ull << 20) /* traces read back for nesting */
#define SS_CHECK_FIRST_MAX 100000000ull   /* steps searched for a window */

/* The first step the schedule records, or UINT64_MAX. */
static uint64_t ss_check_first_recorded(const struct ss_config *c)
{
	for (uint64_t s = 0; s < SS_CHECK_FIRST_MAX; s++) {
		if (ss_schedule_action(c, s) == SS_STEP_RECORD)
			return s;
		if (ss_schedule_done(c, s))
			break;
	}
	return UINT64_MAX;
}

static void ss_check_schedule(const struct ss_config *c, char *buf, size_t len)
{
	switch (c->mode) {
	case SS_SCHED_TORCH:
		snprintf(buf, len, "schedule skip_first=%lld wait=%lld warmup=%lld active=%lld",
			 (long long)c->skip_first, (long long)c->wait, (long long)c->warmup,
			 (long long)c->active);
		break;
	case SS_SCHED_WINDOW:
		snprintf(buf, len, "window start_step=%lld end_step=%lld",
			 (long long)c->start_step, (long long)c->end_step);
		break;
	case SS_SCHED_EVERY_N:
		snprintf(buf, len, "every_n_steps=%lld", (long long)c->every_n_steps);
		break;
	default:
		snprintf(buf, len, "no schedule");
	}
}

int ss_run_check_steps(const char *dir, const struct ss_config *cfg)
{
	char **paths = NULL, err[1024], sched[256], why[600];
	size_t n = 0, i;
	uint64_t steps = 0, recorded = 0, bytes = 0, first;
	int warned = 0, any_step = 0;

	if (!cfg->enabled || (cfg->mode == SS_SCHED_ALL && !cfg->step_function[0]))
		return 0; /* the whole run: no steps to get wrong */
	if (ss_run_list_traces(dir, &paths, &n, err, sizeof(err)))
		n = 0; /* no trace: no step began (the file opens at the first) */
	for (i = 0; i < n; i++) {
		struct ss_reader *r;
		struct ss_meta_iter it;
		struct ss_meta_rec m;
		struct stat sb;

		if (!stat(paths[i], &sb))
			bytes += (uint64_t)sb.st_size;
		r = ss_reader_open(paths[i], err, sizeof(err));
		if (!r)
			continue;
		ss_reader_meta_begin(r, &it);
		while (ss_reader_meta_next(&it, &m)) {
			struct ss_meta_step st;
			if (m.type != SS_META_STEP || m.len < sizeof(st))
				continue;
			memcpy(&st, m.data, sizeof(st));
			any_step = 1;
			if (st.step + 1 > steps)
				steps = st.step + 1;
			if (st.action == SS_STEP_RECORD)
				recorded++;
		}
		ss_reader_free(r);
	}
	ss_run_list_free(paths, n);

	const char *what = cfg->step_function[0] ? cfg->step_function : NULL;
	if (!any_step) {
		if (what)
			fprintf(stderr,
				"stepscope: warning: no step began: step.function '%s' was never called "
				"(run 'stepscope steps -- PROG ARGS' to find the step function)\n",
				what);
		else
			fprintf(stderr, "stepscope: warning: no step began: stepscope_step() was never called\n");
		return 1;
	}
	if (!recorded) {
		ss_check_schedule(cfg, sched, sizeof(sched));
		first = ss_check_first_recorded(cfg);
		if (first == UINT64_MAX)
			fprintf(stderr,
				"stepscope: warning: no step was recorded: the program ran %llu step(s) "
				"and the %s records none\n",
				(unsigned long long)steps, sched);
		else
			fprintf(stderr,
				"stepscope: warning: no step was recorded: the program ran %llu step(s) "
				"of %s%s%s, and the %s records from step %llu on\n",
				(unsigned long long)steps, what ? "step.function '" : "stepscope_step()",
				what ? what : "", what ? "'" : "", sched, (unsigned long long)first);
		return 1;
	}
	if (!what || bytes > SS_CHECK_MAX_BYTES)
		return 0;

	/* the recorded steps: is the step function nested, or called from
	 * more than one place? */
	struct ss_steps st;
	memset(&st, 0, sizeof(st));
	if (!ss_steps_walk(&st, dir, NULL, 1, err, sizeof(err))) {
		struct ss_steps_fn *f = ss_steps_find(&st, what);
		if (f && f->nested) {
			fprintf(stderr,
				"stepscope: warning: step.function '%s' was re-entered: %llu of its %llu "
				"recorded calls ran inside another call of it and began no step "
				"(see 'stepscope steps')\n",
				what, (unsigned long long)f->nested, (unsigned long long)f->calls);
			warned++;
		}
		struct ss_steps_fn g;
		if (f && !f->nested && f->ncallers > 1) {
			g = *f;
			g.multi_thread = 0; /* only the callers, said here */
		}
		if (f && !f->nested && f->ncallers > 1 && ss_steps_reject(&g, why, sizeof(why))) {
			fprintf(stderr,
				"stepscope: warning: step.function '%s' is %s in the recorded steps: "
				"its calls are not one per training iteration (see 'stepscope steps')\n",
				what, why);
			warned++;
		}
	}
	ss_steps_release(&st);
	return warned;
}

int ss_run_check_empty(const char *dir, char *why, size_t len)
{
	char **paths = NULL, err[1024];
	size_t n = 0, i;
	uint64_t events = 0, steps = 0, recorded = 0, first = UINT64_MAX;
	int any_step = 0, opened = 0;

	if (ss_run_list_traces(dir, &paths, &n, err, sizeof(err)) || !n)
		return 0;
	for (i = 0; i < n; i++) {
		/* kept for the command's ss_run_open: one scan of each file */
		struct ss_reader *r = ss_run_peek(paths[i], err, sizeof(err));
		struct ss_meta_iter it;
		struct ss_meta_rec m;

		if (!r) {
			events++; /* unreadable: the commands say why */
			continue;
		}
		events += r->nevents;
		ss_reader_meta_begin(r, &it);
		while (ss_reader_meta_next(&it, &m)) {
			struct ss_meta_step st;
			opened |= m.type == SS_META_WINDOW_OPEN;
			if (m.type != SS_META_STEP || m.len < sizeof(st))
				continue;
			memcpy(&st, m.data, sizeof(st));
			any_step = 1;
			if (st.step + 1 > steps)
				steps = st.step + 1;
			if (st.action == SS_STEP_RECORD) {
				recorded++;
				if (st.step < first)
					first = st.step;
			}
		}
	}
	ss_run_list_free(paths, n);
	if (events)
		return 0;
	ss_run_peek_drop();  /* nothing to read: no ss_run_open follows */
	if (!any_step)
		snprintf(why, len, "no step began, so no window opened (step.function was "
			 "never called, or stepscope_step() never was; 'stepscope steps -- PROG "
			 "ARGS' finds the step function)");
	else if (!recorded && !opened)
		snprintf(why, len, "the program ran %llu step(s) and the schedule recorded "
			 "none of them, so no window opened (see 'schedule' in the config)",
			 (unsigned long long)steps);
	else if (first != UINT64_MAX)
		snprintf(why, len, "a window opened at step %llu but no event was recorded "
			 "in it (recording stopped at once: is max_trace_mb smaller than "
			 "the first window needs?)", (unsigned long long)first);
	else
		snprintf(why, len, "a window opened but no event was recorded in it "
			 "(recording stopped at once: is max_trace_mb smaller than the "
			 "first window needs?)");
	return 1;
}
