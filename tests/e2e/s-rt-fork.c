/*
 * s-rt-fork.c - fixture: new processes and new images.  Every mode prints
 * "parent PID" and the pid of each process it starts, and ends with an
 * exit status the test checks (the children's statuses pass through).
 *
 *   s-rt-fork fork:       main -> spawn_children(): fork twice.  Child A
 *                         calls child_work() x5 (each one leaf()) and
 *                         returns to main, which calls child_tail() and
 *                         returns 3.  Child B calls child_work() and
 *                         child_exit() twice; the second child_exit()
 *                         calls exit(4).  The parent waits (status_of()
 *                         x2), then parent_work() x7 (each one leaf())
 *                         in main; returns 10 * A + B = 34.
 *                         status_of() x1 in the modes below too.
 *   s-rt-fork vfork:      main -> run_vfork(): vfork + exec of
 *                         ./s-rt-exec-child 4 (exits 44); main returns
 *                         its status + 1 = 45.
 *   s-rt-fork spawn:      main -> run_spawn(): posix_spawn of
 *                         ./s-rt-exec-child 6 (exits 46); main returns
 *                         its status + 1 = 47.
 *   s-rt-fork exec:       main -> before_exec() x2, then do_exec() execs
 *                         this program again with "exec-after".
 *   s-rt-fork exec-after: main -> after_exec() x3 (each one leaf());
 *                         returns 6.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

extern char **environ;

NOINLINE void leaf(int i)
{
	SINK(i);
}

NOINLINE void child_work(int i)
{
	leaf(i);
}

NOINLINE void child_tail(void)
{
	SINK(1);
}

NOINLINE void parent_work(int i)
{
	leaf(i);
}

/* Child B: exit() inside child_exit, spawn_children and main. */
NOINLINE void child_exit(int i)
{
	SINK(i);
	if (i == 1) {
		fflush(stdout);
		exit(4);
	}
}

static int status_of(pid_t pid)
{
	int st = 0;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 100;
	return WEXITSTATUS(st);
}

/* Returns 1 in child A, the parent's result (10 * A + B) in the parent. */
NOINLINE int spawn_children(void)
{
	fflush(stdout);
	pid_t a = fork();
	if (a == 0) {
		for (int i = 0; i < 5; i++)
			child_work(i);
		return -1;
	}
	pid_t b = fork();
	if (b == 0) {
		for (int i = 0; i < 2; i++) {
			child_work(i);
			child_exit(i);
		}
		_exit(99); /* not reached */
	}
	printf("child-a %d\nchild-b %d\n", (int)a, (int)b);
	return 10 * status_of(a) + status_of(b);
}

NOINLINE int run_vfork(void)
{
	fflush(stdout);
	pid_t p = vfork();
	if (p == 0) {
		execl("./s-rt-exec-child", "s-rt-exec-child", "4", (char *)NULL);
		_exit(127);
	}
	printf("vfork %d\n", (int)p);
	return status_of(p);
}

NOINLINE int run_spawn(void)
{
	char *argv[] = { "s-rt-exec-child", "6", NULL };
	pid_t p;
	fflush(stdout);
	if (posix_spawn(&p, "./s-rt-exec-child", NULL, NULL, argv, environ))
		return 127;
	printf("spawn %d\n", (int)p);
	return status_of(p);
}

NOINLINE void before_exec(int i)
{
	SINK(i);
}

NOINLINE void after_exec(int i)
{
	leaf(i);
}

NOINLINE void do_exec(const char *self)
{
	fflush(stdout);
	execl(self, "s-rt-fork", "exec-after", (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	if (strcmp(mode, "exec-after"))
		printf("parent %d\n", (int)getpid());
	if (!strcmp(mode, "fork")) {
		int r = spawn_children();
		if (r < 0) {
			child_tail();
			return 3;
		}
		for (int i = 0; i < 7; i++)
			parent_work(i);
		return r;
	} else if (!strcmp(mode, "vfork")) {
		return run_vfork() + 1;
	} else if (!strcmp(mode, "spawn")) {
		return run_spawn() + 1;
	} else if (!strcmp(mode, "exec")) {
		for (int i = 0; i < 2; i++)
			before_exec(i);
		do_exec(argv[0]);
	} else if (!strcmp(mode, "exec-after")) {
		printf("image2 %d\n", (int)getpid());
		for (int i = 0; i < 3; i++)
			after_exec(i);
		return 6;
	}
	return 1;
}
