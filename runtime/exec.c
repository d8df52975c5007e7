/*
 * exec.c - children started with an environment of the program's own
 * (execve, execvpe, execle, fexecve, posix_spawn, posix_spawnp with an
 * envp that lacks LD_PRELOAD or STEPSCOPE_*) are recorded into the same
 * run: these wrappers add the run's variables the envp is missing, then
 * call libc's function.  A variable the envp sets itself is left alone
 * (STEPSCOPE_DISABLE=1 still turns recording off in a child).  The forms
 * that take the program's environment (execv, execvp, execl, execlp,
 * system) are wrapped too: glibc runs them through its internal execve
 * and posix_spawn, past the wrappers above, and a program that cleared
 * its environment (clearenv, environ = NULL) would start a child that
 * leaves the run.  system() runs the shell itself only then, as glibc
 * does (SIGINT and SIGQUIT ignored, SIGCHLD held, /bin/sh -c); popen is
 * not wrapped (docs/robustness.md).
 *
 * Design: the run's variables are captured once before main (the program
 * may clear its environment later); the wrappers allocate nothing and
 * take no lock (they may run in a vfork child), building the new envp on
 * the stack.  Only in libstepscope.so: a static program links libc's
 * functions directly.  Never: change argv, the path, or a variable the
 * program set.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define EXEC_MAX_VARS 16

extern char **environ;

static char *run_vars[EXEC_MAX_VARS]; /* "NAME=VALUE", captured */
static int nrun_vars;
static char self_lib[4096];           /* our path, when it was preloaded */

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);
typedef int system_fn(const char *);
static system_fn *real_system;
static execve_fn *real_execve;
static execvpe_fn *real_execvpe;
static fexecve_fn *real_fexecve;
static spawn_fn *real_spawn, *real_spawnp;

static void resolve(void)
{
	if (real_execve)
		return;
	real_execvpe = (execvpe_fn *)dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = (fexecve_fn *)dlsym(RTLD_NEXT, "fexecve");
	real_spawn = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawn");
	real_spawnp = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawnp");
	real_system = (system_fn *)dlsym(RTLD_NEXT, "system");
	real_execve = (execve_fn *)dlsym(RTLD_NEXT, "execve");
}

/* Before main (runtime.c): the run's STEPSCOPE_* variables (but the
 * per-process STEPSCOPE__OWNER) and our place in LD_PRELOAD. */
void ss_exec_capture(void)
{
	resolve();
	if (getauxval(AT_SECURE))
		return; /* a setuid program hands on nothing of its caller's */
	for (char **e = environ; e && *e && nrun_vars < EXEC_MAX_VARS; e++)
		if (!strncmp(*e, "STEPSCOPE", 9) && strncmp(*e, "STEPSCOPE__OWNER=", 17))
			run_vars[nrun_vars++] = ss_strdup(*e);
	Dl_info me;
	const char *pre = secure_getenv("LD_PRELOAD");
	if (pre && dladdr((void *)&ss_exec_capture, &me) && me.dli_fname &&
	    strstr(pre, me.dli_fname) && strlen(me.dli_fname) < sizeof(self_lib))
		strcpy(self_lib, me.dli_fname);
}

static int has_var(char *const envp[], const char *var)
{
	size_t n = strcspn(var, "=") + 1;
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], var, n))
			return 1;
	return 0;
}

static size_t count(char *const envp[])
{
	size_t n = 0;
	while (envp && envp[n])
		n++;
	return n;
}

/* Fill out[] (room for count(envp) + EXEC_MAX_VARS + 2) with envp plus
 * what it misses; `pre` (room for the LD_PRELOAD entry) holds a merged
 * LD_PRELOAD when one is needed.  Returns out. */
static char **merge(char *const envp[], char **out, char *pre, size_t prelen)
{
	size_t n = 0;
	int have_pre = 0;
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *e = envp[i];
		if (self_lib[0] && !strncmp(e, "LD_PRELOAD=", 11)) {
			have_pre = 1;
			if (!strstr(e + 11, self_lib) &&
			    strlen(self_lib) + strlen(e) + 2 < prelen) {
				strcpy(pre, "LD_PRELOAD=");
				strcat(pre, self_lib);
				if (e[11]) {
					strcat(pre, ":");
					strcat(pre, e + 11);
				}
				e = pre;
			}
		}
		out[n++] = (char *)e;
	}
	if (self_lib[0] && !have_pre && strlen(self_lib) + 12 < prelen) {
		strcpy(pre, "LD_PRELOAD=");
		strcat(pre, self_lib);
		out[n++] = pre;
	}
	for (int i = 0; i < nrun_vars; i++)
		if (run_vars[i] && !has_var(envp, run_vars[i]))
			out[n++] = run_vars[i];
	out[n] = NULL;
	return out;
}

static size_t pre_room(char *const envp[])
{
	size_t n = strlen(self_lib) + 16;
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11))
			n += strlen(envp[i]);
	return n;
}

#define WITH_ENV(envp, newenv)                                                 \
	size_t room_ = pre_room(envp);                                         \
	char pre_[room_];                                                      \
	char *buf_[count(envp) + EXEC_MAX_VARS + 2];                           \
	char **newenv = merge(envp, buf_, pre_, room_)

SS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	resolve();
	if (!real_execve) {
		errno = ENOSYS;
		return -1;
	}
	WITH_ENV(envp, env);
	return real_execve(path, argv, env);
}

SS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	resolve();
	if (!real_execvpe) {
		errno = ENOSYS;
		return -1;
	}
	WITH_ENV(envp, env);
	return real_execvpe(file, argv, env);
}

SS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	resolve();
	if (!real_fexecve) {
		errno = ENOSYS;
		return -1;
	}
	WITH_ENV(envp, env);
	return real_fexecve(fd, argv, env);
}

/* argv of an execl-style call, on the caller's stack: ARG, then the
 * variable arguments up to the NULL; the va_list ap_ is left open at the
 * argument after it (execle's envp) for the caller to va_end. */
#define LIST_ARGV(arg, argv)                                                   \
	va_list ap_;                                                           \
	size_t n_ = 1;                                                         \
	va_start(ap_, arg);                                                    \
	while (va_arg(ap_, const char *))                                      \
		n_++;                                                          \
	va_end(ap_);                                                           \
	char *argv[n_ + 1];                                                    \
	va_start(ap_, arg);                                                    \
	argv[0] = (char *)(arg);                                               \
	for (size_t i_ = 1; i_ <= n_; i_++)                                    \
		argv[i_] = va_arg(ap_, char *)

SS_EXPORT int execle(const char *path, const char *arg, ...)
{
	LIST_ARGV(arg, argv);
	char *const *envp = va_arg(ap_, char *const *);
	va_end(ap_);
	return execve(path, argv, envp);
}

SS_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	resolve();
	if (!real_spawn)
		return ENOSYS;
	WITH_ENV(envp, env);
	return real_spawn(pid, path, fa, attr, argv, env);
}

SS_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	resolve();
	if (!real_spawnp)
		return ENOSYS;
	WITH_ENV(envp, env);
	return real_spawnp(pid, file, fa, attr, argv, env);
}

/* ------------------------------------------------------------ the forms
 * that take the program's environment */

SS_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

SS_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

SS_EXPORT int execl(const char *path, const char *arg, ...)
{
	LIST_ARGV(arg, argv);
	va_end(ap_);
	return execve(path, argv, environ);
}

SS_EXPORT int execlp(const char *file, const char *arg, ...)
{
	LIST_ARGV(arg, argv);
	va_end(ap_);
	return execvpe(file, argv, environ);
}

/* envp holds every variable of the run (nothing for merge to add) */
static int env_complete(char *const envp[])
{
	if (self_lib[0]) {
		int found = 0;
		for (size_t i = 0; envp && envp[i] && !found; i++)
			found = !strncmp(envp[i], "LD_PRELOAD=", 11) && strstr(envp[i] + 11, self_lib);
		if (!found)
			return 0;
	}
	for (int i = 0; i < nrun_vars; i++)
		if (run_vars[i] && !has_var(envp, run_vars[i]))
			return 0;
	return 1;
}

/* system(cmd) with the environment env, as glibc runs it: SIGINT and
 * SIGQUIT ignored and SIGCHLD held while the shell runs, and the child
 * gets them back; the wait status, or 127 << 8 when no shell started. */
static int shell_with_env(const char *cmd, char *const env[])
{
	struct sigaction ign, intr, quit;
	sigset_t hold, omask, dfl;
	posix_spawnattr_t attr;
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	pid_t pid;
	int st = -1;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &intr);
	sigaction(SIGQUIT, &ign, &quit);
	sigemptyset(&hold);
	sigaddset(&hold, SIGCHLD);
	sigprocmask(SIG_BLOCK, &hold, &omask);
	sigemptyset(&dfl);
	if (intr.sa_handler != SIG_IGN)
		sigaddset(&dfl, SIGINT);
	if (quit.sa_handler != SIG_IGN)
		sigaddset(&dfl, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	if (real_spawn(&pid, "/bin/sh", NULL, &attr, argv, env) == 0) {
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR) {
				st = -1;
				break;
			}
	} else {
		st = 127 << 8;
	}
	posix_spawnattr_destroy(&attr);
	sigaction(SIGINT, &intr, NULL);
	sigaction(SIGQUIT, &quit, NULL);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	return st;
}

SS_EXPORT int system(const char *cmd)
{
	resolve();
	if (!real_system) {
		errno = ENOSYS;
		return -1;
	}
	if (!cmd || !real_spawn || env_complete(environ))
		return real_system(cmd);
	WITH_ENV(environ, env);
	return shell_with_env(cmd, env);
}
