/*
 * s-rt-secure.c - fixture for test-rt-secure: a program that may be made
 * set-user-ID root.  Prints what the kernel told it (AT_SECURE, its uids),
 * how many STEPSCOPE* variables its environment still holds, then calls
 * work() x5 and exits with status 3.
 *
 *   s-rt-secure          as above
 *   s-rt-secure spawn    also posix_spawn's /usr/bin/env with an
 *                        environment of its own (PATH only): the exec
 *                        wrappers must add nothing of the caller's
 *   s-rt-secure rootexec setuid(0), then execs itself ("child") with its
 *                        environment: a full root process, no longer
 *                        AT_SECURE, that must not find the caller's
 *                        STEPSCOPE_* variables either (mark=0; those
 *                        it counts are its own run's)
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

extern char **environ;

NOINLINE void work(int i)
{
	SINK(i);
}

int main(int argc, char **argv)
{
	int vars = 0;
	for (char **e = environ; *e; e++)
		vars += !strncmp(*e, "STEPSCOPE", 9);
	printf("%s: secure=%lu ruid=%d euid=%d stepscope-vars=%d mark=%d\n",
	       argc > 1 ? argv[1] : "main", getauxval(AT_SECURE), (int)getuid(),
	       (int)geteuid(), vars, getenv("STEPSCOPE_MARK") != NULL);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "spawn")) {
		char *cargv[] = { "env", NULL };
		char *cenv[] = { "PATH=/usr/bin:/bin", NULL };
		pid_t pid;
		int st = 0;
		if (posix_spawn(&pid, "/usr/bin/env", NULL, NULL, cargv, cenv) ||
		    waitpid(pid, &st, 0) != pid)
			return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "rootexec")) {
		char *cargv[] = { argv[0], "child", NULL };
		if (setuid(0))
			return 1;
		execve("/proc/self/exe", cargv, environ);
		return 1;
	}
	for (int i = 0; i < 5; i++)
		work(i);
	return 3;
}
