/*
 * schedule.c - which steps are recorded, as pure functions of the config and
 * the step number (counted from 0).
 *
 * TORCH follows torch.profiler.schedule exactly: skip_first steps are
 * skipped, then cycles of wait + warmup + active steps, repeat times
 * (0 = forever).  EVERY_N is Lightning style: after skip_first, cycles of
 * every_n_steps steps, each starting with wait, warmup and active steps and
 * idle for the rest.  WINDOW records start_step <= step < end_step; ALL
 * records every step.  A disabled config records nothing.
 *
 * Called by the runtime at every step boundary: no allocation, no locks, no
 * state; it must never trust the config to be checked (a zero-length cycle
 * records nothing rather than dividing by zero).
 */
#include <stdint.h>

#include "schedule.h"

static uint64_t u(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

/* a + b, saturating */
static uint64_t add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* a * b, saturating */
static uint64_t mul(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

/* steps in one cycle: wait+warmup+active (TORCH) or every_n_steps (EVERY_N) */
static uint64_t cycle_len(const struct ss_config *c)
{
	if (c->mode == SS_SCHED_TORCH)
		return add(add(u(c->wait), u(c->warmup)), u(c->active));
	if (c->mode == SS_SCHED_EVERY_N)
		return u(c->every_n_steps);
	return 0;
}

static int cycles_valid(const struct ss_config *c)
{
	return c->active > 0 && cycle_len(c) > 0;
}

enum ss_step_action ss_schedule_action(const struct ss_config *c, uint64_t step)
{
	uint64_t s, n, m;

	if (!c->enabled)
		return SS_STEP_NONE;
	switch (c->mode) {
	case SS_SCHED_ALL:
		return SS_STEP_RECORD;
	case SS_SCHED_WINDOW:
		return step >= u(c->start_step) && step < u(c->end_step) ? SS_STEP_RECORD
									 : SS_STEP_NONE;
	case SS_SCHED_TORCH:
	case SS_SCHED_EVERY_N:
		break;
	default:
		return SS_STEP_NONE;
	}
	if (!cycles_valid(c) || step < u(c->skip_first))
		return SS_STEP_NONE;
	s = step - u(c->skip_first);
	n = cycle_len(c);
	if (c->repeat > 0 && s / n >= u(c->repeat))
		return SS_STEP_NONE;
	m = s % n;
	if (m < u(c->wait))
		return SS_STEP_NONE;
	if (m < add(u(c->wait), u(c->warmup)))
		return SS_STEP_WARMUP;
	if (m < add(add(u(c->wait), u(c->warmup)), u(c->active)))
		return SS_STEP_RECORD;
	return SS_STEP_NONE;   /* EVERY_N: rest of the cycle */
}

uint32_t ss_schedule_cycle(const struct ss_config *c, uint64_t step)
{
	uint64_t q;

	if ((c->mode != SS_SCHED_TORCH && c->mode != SS_SCHED_EVERY_N) || !cycles_valid(c) ||
	    step < u(c->skip_first))
		return 0;
	q = (step - u(c->skip_first)) / cycle_len(c);
	return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

int ss_schedule_done(const struct ss_config *c, uint64_t step)
{
	uint64_t first_free;

	if (!c->enabled)
		return 1;
	switch (c->mode) {
	case SS_SCHED_ALL:
		return 0;
	case SS_SCHED_WINDOW:
		return c->end_step <= c->start_step || step >= u(c->end_step);
	case SS_SCHED_TORCH:
	case SS_SCHED_EVERY_N:
		break;
	default:
		return 1;
	}
	if (!cycles_valid(c))
		return 1;
	if (c->repeat <= 0)
		return 0;
	/* first step after the last recorded one: start of the last cycle plus
	 * its wait, warmup and active steps */
	first_free = add(add(u(c->skip_first), mul(u(c->repeat) - 1, cycle_len(c))),
			 add(add(u(c->wait), u(c->warmup)), u(c->active)));
	return step >= first_free;
}
