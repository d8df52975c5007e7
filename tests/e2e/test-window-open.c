/*
 * test-window-open.c - end to end: opening a window is no step's time.
 * s-window-open runs 10 cheap steps recorded with wait 1, warmup 1,
 * active 6.  When the window opens (step 2) the runtime creates the trace
 * file, snapshots the maps, walks the frames, runs the filter and gives the
 * stepping thread its first chunk.  The raw trace must show that work as
 * one SS_META_WINDOW_OPEN span, with the step beginning where it ends:
 *   - exactly one WINDOW_OPEN record, for step 2 on the stepping thread;
 *   - the SS_META_STEP of step 2 is stamped at its end_ts, not before;
 *   - the whole-run statistics written when the window opens (stats:
 *     whole_run) lie inside the span: work that used to be charged to
 *     the step;
 *   - the stepping thread's first event (train_step's entry) comes after
 *     the span's end: the first chunk was in place before the step began.
 * Checked on timestamps' order only, never on durations.  The symbolized
 * trace still has exactly ProfilerStep#2..#7.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"
#include "format.h"
#include "reader.h"

static void test_window_open_off_the_clock(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "window-open", NULL);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o run --set step.function=train_step "
		     "--set schedule.wait=1 --set schedule.warmup=1 --set schedule.active=6 --set stats=whole_run "
		     "-- ./s-window-open 10 && ls run/*.sstrace");
	char path[4600], err[512];
	snprintf(path, sizeof(path), "%s/%.*s", t->dir, (int)strcspn(t->out, "\n"), t->out);
	struct ss_reader *r = ss_reader_open(path, err, sizeof(err));
	SS_E2E_CHECK(t, r != NULL, "%s", err);

	struct ss_meta_iter it;
	struct ss_meta_rec m;
	struct ss_meta_window_open w = { 0 };
	uint64_t open_ts = 0, step2_ts = 0, step_tid = 0, stats_ts[64];
	int nstats = 0;
	int nopen = 0, nrec = 0;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		if (m.type == SS_META_WINDOW_OPEN && m.len >= sizeof(w)) {
			memcpy(&w, m.data, sizeof(w));
			open_ts = m.ts;
			nopen++;
		} else if (m.type == SS_META_STEP) {
			struct ss_meta_step st;
			memcpy(&st, m.data, sizeof(st));
			if (st.action == SS_STEP_RECORD)
				nrec++;
			if (st.step == 2) {
				step2_ts = m.ts;
				step_tid = st.tid;
			}
		} else if (m.type == SS_META_STATS && nstats < 64) {
			stats_ts[nstats++] = m.ts;
		}
	}
	SS_E2E_CHECK(t, nopen == 1, "expected 1 window-open record, got %d", nopen);
	SS_E2E_CHECK(t, nrec == 6, "expected 6 recorded steps, got %d", nrec);
	SS_E2E_CHECK(t, w.step == 2 && w.tid == step_tid,
		     "window-open record: step %llu tid %llu, expected step 2 tid %llu",
		     (unsigned long long)w.step, (unsigned long long)w.tid,
		     (unsigned long long)step_tid);
	SS_E2E_CHECK(t, open_ts && open_ts <= w.end_ts, "window-open span %llu..%llu",
		     (unsigned long long)open_ts, (unsigned long long)w.end_ts);
	SS_E2E_CHECK(t, step2_ts == w.end_ts,
		     "step 2 begins at %llu, the window-open work ends at %llu",
		     (unsigned long long)step2_ts, (unsigned long long)w.end_ts);
	int inside = 0;
	for (int i = 0; i < nstats; i++)
		inside += stats_ts[i] >= open_ts && stats_ts[i] <= w.end_ts;
	SS_E2E_CHECK(t, inside >= 1, "none of the %d stats records lies in the window-open "
		     "span %llu..%llu", nstats, (unsigned long long)open_ts,
		     (unsigned long long)w.end_ts);

	/* the stepping thread's first event: after the span */
	uint64_t first_ns = 0;
	unsigned first_kind = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].tid != step_tid)
			continue;
		struct ss_event_iter ei;
		struct ss_revent e;
		ss_reader_events_begin(r, i, &ei);
		if (ss_reader_events_next(&ei, &e)) {
			first_ns = e.ns;
			first_kind = e.kind;
		}
	}
	SS_E2E_CHECK(t, first_kind == SS_EV_ENTER, "first event of the stepping thread: kind %u",
		     first_kind);
	SS_E2E_CHECK(t, first_ns >= ss_reader_ns(r, w.end_ts),
		     "the first event (%llu ns) precedes the step's begin (%llu ns)",
		     (unsigned long long)first_ns,
		     (unsigned long long)ss_reader_ns(r, w.end_ts));
	ss_reader_free(r);

	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	for (int k = 0; k < 10; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		SS_E2E_CHECK(t, ss_e2e_count(tr, name, NULL, 0) == (k >= 2 && k < 8),
			     "%s: %zu slices", name, ss_e2e_count(tr, name, NULL, 0));
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_window_open_off_the_clock),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
