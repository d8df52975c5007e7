/*
 * s-offcpu-omp.c - fixture for off-CPU time in an oversubscribed OpenMP
 * trainer (record.sched, test-offcpu-omp): forward and backward are
 * `#pragma omp parallel for num_threads(4)` loops of tiny calls, run with
 * fewer free CPUs than threads.
 *
 *   s-offcpu-omp STEPS   main calls train_step STEPS times (default 6);
 *                        train_step calls forward() then backward(); each
 *                        starts one team of 4 threads, whose loop calls
 *                        tiny() N times in all (forward 40000, backward
 *                        60000): a few ns of work a call, so a switch-out
 *                        inside one is what makes it look slow (the first
 *                        call of each thread's share yields its CPU)
 *
 * What the kernel says, for the test to compare with: around forward()
 * and backward() on the main thread the fixture reads the thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID, between two wall-clock reads with no
 * switch between them) and its voluntary + involuntary switch counts
 * (/proc/thread-self/status), and prints after the step:
 *
 *   call STEP NAME wall NS cpu NS sw N
 *
 * wall - cpu is the time the main thread was off the CPU in that call.
 * And the process's CPU time (every thread, CLOCK_PROCESS_CPUTIME_ID) from
 * the start to the end of the step's body:
 *
 *   step STEP pcpu NS
 * Prints "steps N" at the end.
 * Functions: main, train_step, forward, backward, tiny, and gcc's outlined
 * regions forward._omp_fn.0 and backward._omp_fn.0.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

#define FORWARD_N 40000
#define BACKWARD_N 60000

struct look {
	long long wall, cpu, sw;
};

/* wall and thread CPU time as one pair (fixture.h: no switch between) */
#define CLK(l) CLOCK_PAIR((l).wall, (l).cpu)

/* the thread's voluntary + involuntary switches so far */
#define SW(l)                                                                   \
	do {                                                                    \
		long long sw_v_, sw_i_;                                         \
		THREAD_SWITCHES(sw_v_, sw_i_);                                  \
		(l).sw = (sw_v_ > 0 ? sw_v_ : 0) + (sw_i_ > 0 ? sw_i_ : 0);     \
	} while (0)

static float acc[4096];

/* A few ns of work; the first call of each thread's share of a loop
 * (schedule(static): i a multiple of N / 4) gives up its CPU
 * (sched_yield) to the other threads and the busy loop waiting for it,
 * so some tiny calls are switched out in every run, not only the ones a
 * timer tick happens to preempt. */
NOINLINE float tiny(int i, int n)
{
	if (i % (n / 4) == 0)
		sched_yield();
	return (float)(i & 7) * 0.5f + 1.0f;
}

NOINLINE void forward(void)
{
#pragma omp parallel for num_threads(4) schedule(static)
	for (int i = 0; i < FORWARD_N; i++)
		acc[i & 4095] += tiny(i, FORWARD_N);
}

NOINLINE void backward(void)
{
#pragma omp parallel for num_threads(4) schedule(static)
	for (int i = 0; i < BACKWARD_N; i++)
		acc[i & 4095] -= tiny(i, BACKWARD_N);
}

static char lines[3][128];

/* the process's CPU time so far (a macro: no function the test does not
 * count) */
#define PCPU(v)                                                                 \
	do {                                                                    \
		struct timespec p_;                                             \
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p_);                   \
		(v) = p_.tv_sec * 1000000000LL + p_.tv_nsec;                    \
	} while (0)

NOINLINE void train_step(long step)
{
	struct look a, b, c, d;
	long long p0, p1;
	PCPU(p0);
	/* the switch counts outside, the clocks right around the call */
	SW(a);
	CLK(a);
	forward();
	CLK(b);
	SW(b);
	SW(c);
	CLK(c);
	backward();
	CLK(d);
	SW(d);
	PCPU(p1);
	snprintf(lines[2], sizeof(lines[2]), "step %ld pcpu %lld\n", step, p1 - p0);
	snprintf(lines[0], sizeof(lines[0]), "call %ld forward wall %lld cpu %lld sw %lld\n",
		 step, b.wall - a.wall, b.cpu - a.cpu, b.sw - a.sw);
	snprintf(lines[1], sizeof(lines[1]), "call %ld backward wall %lld cpu %lld sw %lld\n",
		 step, d.wall - c.wall, d.cpu - c.cpu, d.sw - c.sw);
	SINK(acc[step & 4095]);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 6;
	for (long s = 0; s < steps; s++) {
		train_step(s);
		fputs(lines[0], stdout); /* outside the step: stdio is not step time */
		fputs(lines[1], stdout);
		fputs(lines[2], stdout);
	}
	printf("steps %ld\n", steps);
	return 0;
}
