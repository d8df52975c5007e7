/*
 * schedule.h - which steps are recorded: torch.profiler.schedule semantics,
 * JAX-style windows and Lightning-style every_n_steps.  Pure functions of
 * the config and the step number, shared by the runtime and the tests.
 */
#ifndef SS_SCHEDULE_H
#define SS_SCHEDULE_H

#include <stdint.h>
#include "config.h"
#include "format.h"

/* enum ss_step_action for step `step` (from 0). */
enum ss_step_action ss_schedule_action(const struct ss_config *c, uint64_t step);

/* Schedule cycle that `step` belongs to (0 for modes without cycles). */
uint32_t ss_schedule_cycle(const struct ss_config *c, uint64_t step);

/* 1 if no step at or after `step` can be recorded any more, else 0. */
int ss_schedule_done(const struct ss_config *c, uint64_t step);

#endif /* SS_SCHEDULE_H */
