/*
 * e2e-raw.h - end-to-end tests that look at the raw trace itself (events
 * as the runtime wrote them, before symbolize): every event of every
 * thread of every .sstrace file in a run directory, through the reader.
 */
#ifndef SS_E2E_RAW_H
#define SS_E2E_RAW_H

#include <stddef.h>
#include <stdint.h>

struct ss_e2e;
struct ss_revent;

/* Called for each event; tid is the recording thread's. */
typedef void (*ss_e2e_raw_fn)(void *arg, uint64_t tid, const struct ss_revent *ev);

/* Feed every event of the raw traces in t->dir/DIR to fn.  With
 * no_warning set, a reader warning (lost or corrupt data) fails the test.
 * Returns the number of trace files read. */
int ss_e2e_raw_events(struct ss_e2e *t, const char *dir, int no_warning,
		      ss_e2e_raw_fn fn, void *arg);

#endif /* SS_E2E_RAW_H */
