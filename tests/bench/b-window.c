/*
 * b-window.c - `make bench` (tests/bench/window.sh): what opening a
 * recording window costs the program's own thread, as the program's own
 * clock sees it, and how the first recorded step compares with the others.
 *
 *   b-window STEPS CALLS WORK_US
 *
 * Each step is a call of train_step: WORK_US of work the clock fixes
 * (SPIN_US) and CALLS tiny instrumented calls.  Around every step the
 * program reads its clocks (CLOCK_PAIR: wall and this thread's CPU time):
 * in main right before the call, first thing in train_step's body, and
 * last thing in it.  So the step boundary's time (the entry hook and all
 * the runtime does there: a window's opening or closing) is "enter", and
 * the step's own work, recorded or not, is "body".  Prints one line a
 * step after the run, nothing during it:
 *   STEP ENTER_WALL_NS ENTER_CPU_NS BODY_WALL_NS BODY_CPU_NS
 * Built with stepscope-cc; the clocks are libc's, never instrumented.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

#define MAX_STEPS 4096

static long long enter_w[MAX_STEPS], enter_c[MAX_STEPS], body_w[MAX_STEPS],
	body_c[MAX_STEPS];
static long long call_w, call_c;

NOINLINE static void tiny(long i)
{
	SINK(i);
}

NOINLINE void train_step(int step, long calls, long work_us)
{
	long long w0, c0, w1, c1;
	CLOCK_PAIR(w0, c0);
	enter_w[step] = w0 - call_w;
	enter_c[step] = c0 - call_c;
	SPIN_US(work_us);
	for (long i = 0; i < calls; i++)
		tiny(i);
	CLOCK_PAIR(w1, c1);
	body_w[step] = w1 - w0;
	body_c[step] = c1 - c0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: b-window STEPS CALLS WORK_US\n");
		return 2;
	}
	int steps = atoi(argv[1]);
	long calls = atol(argv[2]), work_us = atol(argv[3]);
	if (steps < 1 || steps > MAX_STEPS) {
		fprintf(stderr, "b-window: STEPS must be 1..%d\n", MAX_STEPS);
		return 2;
	}
	for (int s = 0; s < steps; s++) {
		CLOCK_PAIR(call_w, call_c);
		train_step(s, calls, work_us);
	}
	for (int s = 0; s < steps; s++)
		printf("%d %lld %lld %lld %lld\n", s, enter_w[s], enter_c[s], body_w[s], body_c[s]);
	return 0;
}
