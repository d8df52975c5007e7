/*
 * s-sched-exit.c - fixture for switches at an exit that skips the
 * runtime's destructor: train_step sleeps 3 ms (usleep: blocked nearly the
 * whole time), STEPS times, then the process ends by HOW.
 *
 *   s-sched-exit STEPS _exit     main calls _exit(0)
 *   s-sched-exit STEPS _Exit     main calls _Exit(0)
 *   s-sched-exit STEPS fork      a forked child runs the steps and calls
 *                                _exit(0); the parent waits for it and
 *                                returns 0
 *   s-sched-exit STEPS exit_group  the exit_group system call, raw
 *   s-sched-exit STEPS kill        raise(SIGKILL)
 * Prints "pid P" (the process that runs the steps) before the steps.
 * Functions: main, train_step.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void train_step(int i)
{
	usleep(3000);
	SINK(i);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int steps = atoi(argv[1]);
	pid_t child = !strcmp(argv[2], "fork") ? fork() : 0;
	if (child > 0) {
		int st;
		waitpid(child, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	printf("pid %ld\n", (long)getpid());
	fflush(stdout);
	for (int i = 0; i < steps; i++)
		train_step(i);
	if (!strcmp(argv[2], "_Exit"))
		_Exit(0);
	if (!strcmp(argv[2], "exit_group"))
		syscall(SYS_exit_group, 0);
	if (!strcmp(argv[2], "kill"))
		raise(SIGKILL);
	_exit(0);
}
