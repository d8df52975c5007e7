/*
 * cost.c - what recording costs this process as it runs (SS_META_COST),
 * for report's overhead line (symbolize/analyze/overhead.c, docs/report.md
 * "What recording cost").
 *
 * Design: the calibration (filter.c) says what one recorded call costs on
 * a quiet core; what a run pays also holds the background thread that
 * copies the blocks out (on a machine with fewer free CPUs than threads it
 * takes them from the program), and the hook calls a filter left out,
 * which leave no event to count.  So, at each step boundary where
 * recording starts or stops (window.c, ss_rt.lock held) and at exit, the
 * process's CPU time (CLOCK_PROCESS_CPUTIME_ID: every thread, the
 * program's and ours) and the background thread's (its CPU clock, handed
 * over when it starts) are read, and their growth while windows were open
 * is summed; the hooks only count, per thread, the calls a filter skipped
 * or took back, and add them to a shared counter every 4096 (a thread
 * that ends leaves fewer than 4096 of each uncounted).
 *
 * The steps themselves are timed too, as the program's own clock around
 * a step would see them (issue 48): at each step boundary, on the
 * stepping thread, the tick the step function was entered at closes the
 * step before it.  A recorded step keeps all its time (its window's
 * opening included: the program waits for it); an unrecorded one loses
 * the runtime's own work at its boundary (first use, the early filling of
 * the pool: what STEPSCOPE_DISABLE=1 would not do), so that report can
 * state the recorded steps against the unrecorded ones of the same run.
 * The first step is kept apart: it often holds the program's own warm-up.
 *
 * Never: a syscall, a lock or a shared write per call; never blocks.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

__thread uint32_t ss_cost_skips __attribute__((tls_model("initial-exec")));
__thread uint32_t ss_cost_backs __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t cost_skipped, cost_backs;

static struct {
	_Atomic int have_bg;         /* bg is the background thread's clock */
	clockid_t bg;
	pid_t pid;                   /* m belongs to this process */
	int on, bg_known;            /* a window is open; have_bg at its open */
	int opening;                 /* ss_cost_opening, its boundary not
	                              * done yet (ss_cost_on_step) */
	uint64_t cpu0, bg0, wall0;   /* at the open */
	uint64_t open0;              /* when the opening's boundary began */
	uint64_t skip_ns;            /* filter.c's calibration, 0 none */
	/* the step that runs now (ss_cost_on_step) */
	int step_have, step_rec, step_first;
	int after;                   /* unrecorded steps closed since the last
	                              * recorded one */
	uint64_t step_ts, step_own;  /* its boundary's tick, the runtime's
	                              * ticks at that boundary */
	struct ss_meta_cost m;
} cost;

static uint64_t ss_cost_clock(clockid_t c)
{
	struct timespec ts;
	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ss_cost_skips_flush(void)
{
	atomic_fetch_add_explicit(&cost_skipped, ss_cost_skips, memory_order_relaxed);
	ss_cost_skips = 0;
}

void ss_cost_backs_flush(void)
{
	atomic_fetch_add_explicit(&cost_backs, ss_cost_backs, memory_order_relaxed);
	ss_cost_backs = 0;
}

/* Before main (filter.c): what a call filter.exclude leaves out costs. */
void ss_cost_set_skip_ns(uint64_t ns)
{
	cost.skip_ns = ns ? ns : 1;
}

/* On the background thread, as it starts (pool.c). */
void ss_cost_bg_started(void)
{
	clockid_t c;
	if (pthread_getcpuclockid(pthread_self(), &c))
		return;
	cost.bg = c;
	atomic_store_explicit(&cost.have_bg, 1, memory_order_release);
}

/* Lock held (or before main): the record, when the file is open. */
static void ss_cost_write(void)
{
	if (ss_rt.fd < 0)
		return;
	ss_cost_skips_flush(); /* the calling thread's; the others' as they go */
	ss_cost_backs_flush();
	cost.m.skipped = atomic_load_explicit(&cost_skipped, memory_order_relaxed);
	cost.m.taken_back = atomic_load_explicit(&cost_backs, memory_order_relaxed);
	cost.m.skip_pair_ns = cost.skip_ns;
	ss_meta_write(SS_META_COST, &cost.m, sizeof(cost.m), NULL, 0);
}

/* Each step boundary (window.c, ss_rt.lock held), and at start-up when
 * the whole run is recorded: `open` says whether events are recorded in
 * what begins. */
static void ss_cost_here(void)
{
	if (cost.pid != getpid()) { /* first use, or a forked child's */
		memset(&cost.m, 0, sizeof(cost.m));
		cost.on = 0;
		cost.step_have = 0;
		cost.pid = getpid();
		atomic_store_explicit(&cost_skipped, 0, memory_order_relaxed);
		atomic_store_explicit(&cost_backs, 0, memory_order_relaxed);
	}
}

void ss_cost_on_window(int open)
{
	ss_cost_here();
	if (!!open == cost.on)
		return;
	cost.opening = 0;
	int bg = atomic_load_explicit(&cost.have_bg, memory_order_acquire);
	uint64_t cpu = ss_cost_clock(CLOCK_PROCESS_CPUTIME_ID), wall = ss_clock_mono_ns();
	uint64_t bgc = bg ? ss_cost_clock(cost.bg) : 0;
	if (open) {
		cost.cpu0 = cpu;
		cost.wall0 = wall;
		cost.bg0 = bgc;
		cost.bg_known = bg;
		cost.on = 1;
		return;
	}
	cost.m.cpu_ns += cpu > cost.cpu0 ? cpu - cost.cpu0 : 0;
	cost.m.wall_ns += wall > cost.wall0 ? wall - cost.wall0 : 0;
	if (bg) { /* started during the window: all of its time is the window's */
		uint64_t from = cost.bg_known ? cost.bg0 : 0;
		cost.m.bg_cpu_ns += bgc > from ? bgc - from : 0;
	}
	cost.m.windows++;
	cost.on = 0;
	ss_cost_write();
}

/* A window starts to open (window.c, lock held): its cost counts from
 * here, and the opening's time is said apart (open_ns), as the program
 * waits for it: from `entered_ns` (CLOCK_MONOTONIC, when the stepping
 * thread entered the boundary, before it took the lock; 0 unknown) to the
 * end of the boundary's work (ss_cost_on_step), not from here to the
 * gate's opening only: that left out the lock, the schedule and this
 * bookkeeping (41 us stated where b-window's own clocks saw 65 us). */
void ss_cost_opening(uint64_t entered_ns)
{
	ss_cost_on_window(1);
	cost.opening = cost.on;
	cost.open0 = entered_ns && entered_ns <= cost.wall0 ? entered_ns : cost.wall0;
}

/* Each step boundary, after the runtime's work there (window.c, lock
 * held): `ts` is the tick the step function was entered at, `rec` whether
 * the step that begins is recorded.  Closes the step before it. */
void ss_cost_on_step(uint64_t ts, int rec)
{
	ss_cost_here();
	if (cost.opening && cost.on) { /* the window's opening done */
		uint64_t ns = ss_clock_mono_ns();
		cost.m.open_ns += ns > cost.open0 ? ns - cost.open0 : 0;
	}
	cost.opening = 0;
	uint64_t now = ss_clock_now();
	if (cost.step_have && ts > cost.step_ts) {
		uint64_t d = ts - cost.step_ts;
		uint64_t own = d > cost.step_own ? d - cost.step_own : 0;
		if (cost.step_rec) {
			cost.m.rec_step_ticks += d;
			cost.m.rec_steps++;
		} else if (cost.step_first) {
			cost.m.first_step_ticks = own;
			cost.m.first_steps = 1;
		} else {
			cost.m.ref_step_ticks += own;
			cost.m.ref_steps++;
		}
		cost.after = cost.step_rec ? 0 : cost.after + 1;
	}
	cost.step_first = !cost.step_have;
	cost.step_have = 1;
	cost.step_ts = ts;
	cost.step_rec = rec;
	cost.step_own = now > ts ? now - ts : 0;
}

/* Lock held: 1 while the steps after the last window are still wanted
 * as unrecorded steps to compare with (window.c keeps watching the step
 * function for them once the schedule is done): SS_COST_AFTER_STEPS of
 * them, the one a window's closing ran in and the ones after it */
int ss_cost_want_steps(void)
{
	return cost.pid == getpid() && cost.step_have && cost.after < SS_COST_AFTER_STEPS;
}

/* At exit (runtime.c, ss_rt.lock held): close the open window's count and
 * write the record.  `end`: the tick the runtime's exit began at. */
void ss_cost_on_exit(uint64_t end)
{
	if (cost.pid == getpid() && cost.step_have && cost.step_rec) {
		/* the last step, cut by exit */
		cost.m.tail_step_ticks += end > cost.step_ts ? end - cost.step_ts : 0;
		cost.m.tail_steps++;
		cost.step_have = 0;
	}
	if (cost.pid == getpid() && cost.on)
		ss_cost_on_window(0);
	else if (cost.pid == getpid())
		ss_cost_write();
}
