/*
 * run-check.h - record's last look at the run it recorded: warn on stderr
 * when no step began, when no step was recorded (with the number of steps
 * seen and where the schedule would have started), and when step.function
 * was nested in itself or called from more than one function in the
 * recorded steps.
 */
#ifndef SS_RUN_CHECK_H
#define SS_RUN_CHECK_H

#include "config.h"

/* Check run directory dir recorded with cfg; returns the number of
 * warnings printed (the exit status of record does not change). */
int ss_run_check_steps(const char *dir, const struct ss_config *cfg);

/* For report, html and symbolize: 1 when no trace of run directory dir
 * holds an event (no window opened, or nothing was recorded in it), with
 * why in words (from the steps the traces saw); 0 otherwise, or when it
 * has no trace at all (the commands say that themselves). */
int ss_run_check_empty(const char *dir, char *why, size_t len);

#endif /* SS_RUN_CHECK_H */
