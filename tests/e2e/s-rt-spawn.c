/*
 * s-rt-spawn.c - fixture: a program that starts other processes the ways
 * training launchers do.  step_fn() is the step function of the tests.
 *
 *   s-rt-spawn child N:   N x step_fn() -> leaf(); prints "child N"
 *   s-rt-spawn system:    2 x step_fn(); system("echo from-sh") and popen
 *                         ("uname"); prints "system S" (S: its status)
 *                         and "popen LINE"
 *   s-rt-spawn envp:      2 x step_fn(); then with an environment of its
 *                         own (PATH only: no LD_PRELOAD, no STEPSCOPE_*):
 *                         posix_spawn "child 3", posix_spawnp "child 4",
 *                         fork + execve "child 5"; waits for each and
 *                         prints "pid P N" for each child
 *   s-rt-spawn clearenv:  2 x step_fn(); clearenv() (environ is NULL), then
 *                         fork + execv "child 3", fork + execvp "child 4",
 *                         fork + execl "child 5", fork + execlp "child 6"
 *                         (printing "pid P N status S" for each), and
 *                         system("./s-rt-spawn child 7") ("system S")
 *   s-rt-spawn rmcfg F:   deletes the file F, then system("./s-rt-spawn
 *                         child 6")
 *   s-rt-spawn daemon:    2 x step_fn(); a daemon()'d child sleeps 300 ms,
 *                         then runs 7 x step_fn(); the parent returns
 *                         at once
 *   s-rt-spawn reexec:    1 x step_fn(), then execs "child 2" (one pid,
 *                         two images)
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE void leaf(int i)
{
	SINK(i);
}

NOINLINE void step_fn(int i)
{
	leaf(i);
}

static void steps(int n)
{
	for (int i = 0; i < n; i++)
		step_fn(i);
}

static void wait_print(pid_t pid, int n)
{
	int st = 0;
	waitpid(pid, &st, 0);
	printf("pid %d %d status %d\n", (int)pid, n, st);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "child";
	if (!strcmp(mode, "child")) {
		int n = argc > 2 ? atoi(argv[2]) : 1;
		steps(n);
		printf("child %d\n", n);
	} else if (!strcmp(mode, "system")) {
		steps(2);
		fflush(stdout);
		int st = system("echo from-sh");
		printf("system %d\n", st);
		FILE *p = popen("uname", "r");
		char line[128] = "";
		if (p) {
			if (!fgets(line, sizeof(line), p))
				line[0] = 0;
			printf("popen %s", line);
			printf("pclose %d\n", pclose(p));
		}
	} else if (!strcmp(mode, "envp")) {
		steps(2);
		fflush(stdout);
		char *env[] = { "PATH=/usr/bin:/bin", NULL };
		char *a3[] = { "./s-rt-spawn", "child", "3", NULL };
		char *a4[] = { "./s-rt-spawn", "child", "4", NULL };
		char *a5[] = { "./s-rt-spawn", "child", "5", NULL };
		char *env4[] = { "PATH=.:/usr/bin:/bin", NULL };
		pid_t pid;
		if (posix_spawn(&pid, "./s-rt-spawn", NULL, NULL, a3, env) == 0)
			wait_print(pid, 3);
		if (posix_spawnp(&pid, "./s-rt-spawn", NULL, NULL, a4, env4) == 0)
			wait_print(pid, 4);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execve("./s-rt-spawn", a5, env);
			_exit(127);
		}
		wait_print(pid, 5);
	} else if (!strcmp(mode, "clearenv")) {
		steps(2);
		fflush(stdout);
		clearenv();
		char *a3[] = { "./s-rt-spawn", "child", "3", NULL };
		char *a4[] = { "./s-rt-spawn", "child", "4", NULL };
		pid_t pid;
		for (int n = 3; n <= 6; n++) {
			fflush(stdout);
			if ((pid = fork()) == 0) {
				if (n == 3)
					execv(a3[0], a3);
				else if (n == 4)
					execvp(a4[0], a4);
				else if (n == 5)
					execl("./s-rt-spawn", "./s-rt-spawn", "child", "5", (char *)NULL);
				else
					execlp("./s-rt-spawn", "./s-rt-spawn", "child", "6", (char *)NULL);
				_exit(127);
			}
			wait_print(pid, n);
		}
		fflush(stdout);
		printf("system %d\n", system("./s-rt-spawn child 7"));
	} else if (!strcmp(mode, "rmcfg")) {
		unlink(argv[2]);
		fflush(stdout);
		printf("system %d\n", system("./s-rt-spawn child 6"));
	} else if (!strcmp(mode, "reexec")) {
		steps(1);
		fflush(stdout);
		char *a[] = { "./s-rt-spawn", "child", "2", NULL };
		execv(a[0], a);
		return 1;
	} else if (!strcmp(mode, "daemon")) {
		steps(2);
		fflush(stdout);
		if (fork() == 0) {
			if (daemon(1, 1) == 0) {
				usleep(300000);
				steps(7);
			}
			_exit(0);
		}
		wait(NULL);
	}
	return 0;
}
