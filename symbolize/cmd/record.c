/*
 * record.c - `stepscope record -- PROG ARGS`: run a program with
 * libstepscope preloaded so it writes its raw traces into a fresh run
 * directory.
 *
 * Design: everything that can be refused is checked before the program
 * starts (config, output directory, PROG on PATH, the runtime library);
 * then the environment contract (STEPSCOPE_DIR, STEPSCOPE__CONFIG: the
 * resolved config, read once here; LD_PRELOAD) is set, the program is forked and waited
 * for, and SIGINT/SIGTERM sent to stepscope are passed on to it.  The exit
 * status is the program's (128+signal if it was killed).
 *
 * Files: record-step.c looks for step.function in the program's files
 * before it starts; record-mpi.c is what record does for MPI programs;
 * run-check.c the last look at the run.
 *
 * Must never: write to stdout (it belongs to the program), start the
 * program on a config the runtime would refuse, or reuse a non-empty
 * directory without --force.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "config.h"
#include "envcode.h"
#include "format.h"
#include "run-check.h"
#include "run.h"

static volatile sig_atomic_t ss_record_child;

static void ss_record_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope record [-o DIR] [--force] [-c FILE] [--set key=value]... -- PROG [ARGS...]\n"
		"\n"
		"   -o, --output DIR   write the run here (absent or empty; default\n"
		"                      <output_dir>/<prog>-<date>-<time>/)\n"
		"   --force            write into DIR even if it is not empty\n"
		"   -c, --config FILE  config file (default $STEPSCOPE_CONFIG, ./stepscope.yaml)\n"
		"   --set key=value    override one config key; may be repeated\n");
}

static void ss_record_forward(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	/* a terminal's ^C already reached the whole process group */
	if (info && info->si_code > 0)
		return;
	if (ss_record_child > 0)
		kill(ss_record_child, sig);
}

/* Like execvp's search: the path to run, or NULL with *why set. */
static char *ss_record_find_prog(const char *prog, const char **why)
{
	const char *path, *p;
	struct stat st;
	char buf[PATH_MAX];
	int seen = 0;

	*why = "command not found";
	if (strchr(prog, '/')) {
		if (stat(prog, &st))
			return NULL;
		if (!S_ISREG(st.st_mode) || access(prog, X_OK)) {
			*why = "not an executable file";
			return NULL;
		}
		return strdup(prog);
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = strchr(p, ':') + 1) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0)
			snprintf(buf, sizeof(buf), "./%s", prog);
		else
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, prog);
		if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
			if (!access(buf, X_OK))
				return strdup(buf);
			seen = 1;
		}
		if (!e)
			break;
	}
	if (seen)
		*why = "found on PATH but not executable";
	return NULL;
}

/* 1 if dir exists and has entries other than . and .. */
static int ss_record_dir_nonempty(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			n = 1;
			break;
		}
	closedir(d);
	return n;
}

/* mkdir -p; the last directory with `mode` (a run directory: 0700, as
 * the runtime makes its own; docs/robustness.md, "Security"). */
static int ss_record_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		buf[i] = 0;
		if (mkdir(buf, path[i + strspn(path + i, "/")] ? 0777 : mode) &&
		    errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

/* The *.sstrace files in dir not listed in `before` (a \n-separated
 * list): how many (images: an exec'd program gets a file of its own) and
 * how many distinct processes wrote them (the pid in each header). */
static int ss_record_count(const char *dir, const char *before, int *images)
{
	size_t sl = strlen(SS_FILE_SUFFIX);
	struct dirent *de;
	DIR *d = opendir(dir);
	uint64_t pids[1024];
	int n = 0, np = 0;

	*images = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char key[NAME_MAX + 3], path[PATH_MAX + NAME_MAX + 2];
		struct ss_file_header h;
		int fd, k;
		if (l <= sl || strcmp(de->d_name + l - sl, SS_FILE_SUFFIX))
			continue;
		snprintf(key, sizeof(key), "\n%s\n", de->d_name);
		if (before && strstr(before, key))
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		memset(&h, 0, sizeof(h));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
			h.pid = 0;
		if (fd >= 0)
			close(fd);
		for (k = 0; k < np && pids[k] != h.pid; k++)
			;
		if (k == np && np < 1024)
			pids[np++] = h.pid;
	}
	closedir(d);
	*images = n;
	return np;
}

/* Processes of the run that still write (a daemon()'d child, a worker
 * left behind): each holds a shared lock on its trace file while it may
 * write.  Waits for them, at most `limit` seconds, saying so once. */
static void ss_record_wait_writers(const char *dir, int limit)
{
	size_t sl = strlen(SS_FILE_SUFFIX);
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	int said = 0;

	for (int round = 0; round < limit * 20; round++) {
		struct dirent *de;
		DIR *d = opendir(dir);
		int busy = 0;
		if (!d)
			return;
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			char path[PATH_MAX + NAME_MAX + 2];
			int fd;
			if (l <= sl || strcmp(de->d_name + l - sl, SS_FILE_SUFFIX))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK)
				busy++;
			close(fd);
		}
		closedir(d);
		if (!busy)
			return;
		if (!said++)
			fprintf(stderr, "stepscope: waiting for %d process(es) of the run still "
				"writing into %s (at most %d s)\n", busy, dir, limit);
		nanosleep(&nap, NULL);
	}
	fprintf(stderr, "stepscope: %s: processes of the run still write after %d s; "
		"their traces may be incomplete\n", dir, limit);
}

/* A config that is not a regular file (a pipe from -c <(...), /dev/stdin,
 * a FIFO) is read once, here, with a time limit, into a private copy: a
 * FIFO nobody writes to must not hang.  0 with *path pointing at the copy
 * (or unchanged for a regular file), -1 with a message printed. */
static int ss_record_read_config(const char **path, char *copy, size_t len)
{
	struct stat st;
	char tmpl[] = "/tmp/stepscope-config-XXXXXX";
	char buf[65536];
	size_t n = 0;
	int fd, out;

	if (!*path || stat(*path, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return 0;
	fd = open(*path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the config reader says why */
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;
		if (poll(&p, 1, 5000) == 0) {
			fprintf(stderr, "stepscope: %s: nothing to read after 5 s (a FIFO "
				"nobody writes to?); give a file or a pipe that is written\n", *path);
			close(fd);
			return -1;
		}
		r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0 || (n += (size_t)r) == sizeof(buf) - 1)
			break;
	}
	close(fd);
	if (!mkdtemp(tmpl) ||
	    snprintf(copy, len, "%s/%s", tmpl, strrchr(*path, '/') ? strrchr(*path, '/') + 1 : *path) >= (int)len ||
	    (out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		fprintf(stderr, "stepscope: %s: cannot keep a copy: %s\n", *path, strerror(errno));
		return -1;
	}
	if (write(out, buf, n) != (ssize_t)n) {
		fprintf(stderr, "stepscope: %s: cannot keep a copy: %s\n", *path, strerror(errno));
		close(out);
		return -1;
	}
	close(out);
	*path = copy;
	return 0;
}

/* Remove the private copy of a piped config (and its directory). */
static void ss_record_drop_copy(const char *copy)
{
	char dir[PATH_MAX];
	if (!copy[0])
		return;
	unlink(copy);
	snprintf(dir, sizeof(dir), "%s", copy);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = 0;
	rmdir(dir);
}

static char *ss_record_list(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char *s = strdup("\n");
	size_t len = 1;

	if (!d || !s) {
		if (d)
			closedir(d);
		return s;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char *ns = realloc(s, len + l + 2);
		if (!ns)
			break;
		s = ns;
		memcpy(s + len, de->d_name, l);
		s[len + l] = '\n';
		s[len + l + 1] = 0;
		len += l + 1;
	}
	closedir(d);
	return s;
}

/* Runtime library next to this command: <exe dir>/../lib/libstepscope.so.0,
 * or where `make install LIBDIR=...` put it (SS_LIBDIR_REL: below the
 * prefix, or absolute; a multiarch libdir) */
#ifndef SS_LIBDIR_REL
#define SS_LIBDIR_REL "lib"
#endif
static int ss_record_find_lib(char *out, size_t len)
{
	static const char *const dirs[] = {"lib", SS_LIBDIR_REL};
	char exe[PATH_MAX], lib[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (dirs[i][0] == '/')
			snprintf(lib, sizeof(lib), "%s/libstepscope.so.0", dirs[i]);
		else
			snprintf(lib, sizeof(lib), "%s/../%s/libstepscope.so.0",
				 exe, dirs[i]);
		if (realpath(lib, out) && !access(out, R_OK))
			return 0;
	}
	snprintf(out, len, "%s/../lib/libstepscope.so.0", exe);
	return -1;
}

static int ss_record_new_run_dir(const char *base, const char *prog, char *out,
				 size_t len)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int k;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (ss_record_mkdirs(base, 0777))
		return -1;
	if (strlen(base) + strlen(prog) + strlen(stamp) + 8 > len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (k = 1; k < 1000; k++) {
		int n;
		if (k == 1)
			n = snprintf(out, len, "%s/%s-%s", base, prog, stamp);
		else
			n = snprintf(out, len, "%s/%s-%s-%d", base, prog, stamp, k);
		if (n < 0 || (size_t)n >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (!mkdir(out, 0700)) /* new, owner-only */
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

int cmd_record(int argc, char **argv)
{
	const char *outdir = NULL, *cfgpath = NULL, **sets = NULL, *why;
	int force = 0, i, status, nsets = 0, nrec, nohooks;
	char err[2048], dir[PATH_MAX], absdir[PATH_MAX], lib[PATH_MAX + 32];
	char *prog_path = NULL, *before = NULL, *val = NULL, cfgcopy[PATH_MAX] = "";
	int lockfd = -1, nimg, mpi_rank = 0;
	struct ss_config cfg;
	struct sigaction sa;
	const char *prog, *base;
	pid_t pid;

	sets = calloc((size_t)argc + 1, sizeof(*sets));
	if (!sets)
		return 1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			ss_record_usage(stdout);
			free(sets);
			return 0;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
			   !strcmp(a, "-c") || !strcmp(a, "--config") ||
			   !strcmp(a, "--set")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "stepscope: record: option '%s' needs a value\n", a);
				free(sets);
				return 2;
			}
			if (a[1] == 'o' || !strcmp(a, "--output"))
				outdir = argv[++i];
			else if (a[1] == 'c' || !strcmp(a, "--config"))
				cfgpath = argv[++i];
			else
				sets[nsets++] = argv[++i];
		} else if (!strncmp(a, "--output=", 9)) {
			outdir = a + 9;
		} else if (!strncmp(a, "--config=", 9)) {
			cfgpath = a + 9;
		} else if (!strncmp(a, "--set=", 6)) {
			sets[nsets++] = a + 6;
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if (a[0] == '-') {
			fprintf(stderr, "stepscope: record: unknown option '%s'; see 'stepscope record --help'\n", a);
			free(sets);
			return 2;
		} else {
			break;  /* PROG without -- */
		}
	}
	if (i >= argc) {
		fprintf(stderr, "stepscope: record: no program to run; usage: stepscope record [options] -- PROG [ARGS...]\n");
		free(sets);
		return 2;
	}
	prog = argv[i];
	for (int k = 0; k < nsets; k++) {
		/* a list key's commas are its separators: spaces do the same
		 * and travel in STEPSCOPE_SET (record.args=a,b) */
		if (!strncmp(sets[k], "record.args=", 12))
			for (char *c = (char *)sets[k]; *c; c++)
				*c = *c == ',' ? ' ' : *c;
		if (strchr(sets[k], ',')) {
			fprintf(stderr, "stepscope: --set: '%s': values may not contain ','\n", sets[k]);
			free(sets);
			return 2;
		}
	}

	const char *cfgarg = cfgpath; /* before a piped one becomes its copy */
	if (ss_record_read_config(&cfgpath, cfgcopy, sizeof(cfgcopy))) {
		free(sets);
		return 2;
	}
	i = ss_config_resolve(&cfg, cfgpath, sets, (size_t)nsets, err, sizeof(err)) ? -1 : i;
	ss_record_drop_copy(cfgcopy);
	if (i < 0) {
		fprintf(stderr, "stepscope: %s\n", err);
		free(sets);
		return 2;
	}
	prog_path = ss_record_find_prog(prog, &why);
	if (!prog_path) {
		fprintf(stderr, "stepscope: %s: %s\n", prog, why);
		free(sets);
		return 2;
	}
	/* a C++ name given demangled becomes its symbol (record-step.c) */
	if (cfg.enabled && cfg.step_function[0] && !ss_record_mpi_launcher(prog_path) &&
	    ss_record_step_function(&cfg, prog_path, prog)) {
		free(prog_path);
		free(sets);
		return 2;
	}
	/* the runtime would say this and run the program unrecorded */
	if (cfg.enabled && cfg.filter_exclude_file[0] && access(cfg.filter_exclude_file, R_OK)) {
		char where[SS_CONFIG_PATH_MAX + 80];
		ss_config_where(&cfg, "filter.exclude_file", where, sizeof(where));
		fprintf(stderr, "stepscope: %scannot read %s: %s (write one function name a line, "
			"e.g. with stepscope filter RUN -o FILE)\n", where, cfg.filter_exclude_file,
			strerror(errno));
		free(prog_path);
		free(sets);
		return 2;
	}
	if (cfg.enabled && (cfg.flops[0] || cfg.bytes[0]) && ss_record_check_flops(&cfg, prog_path)) {
		free(prog_path);  /* flops: names its parameters (record-flops.c) */
		free(sets);
		return 2;
	}
	if (!cfg.enabled) {
		fprintf(stderr, "stepscope: recording is disabled by the config (enabled: false); running %s as is\n",
			prog);
		execv(prog_path, argv + i);
		fprintf(stderr, "stepscope: %s: cannot run: %s\n", prog, strerror(errno));
		free(prog_path);
		free(sets);
		return errno == ENOENT ? 127 : 126;
	}
	if (ss_record_find_lib(lib, sizeof(lib))) {
		fprintf(stderr, "stepscope: %s: runtime library not found (is stepscope installed or built?)\n",
			lib);
		goto fail1;
	}

	/* run directory */
	if (outdir) {
		struct stat st;
		if (!stat(outdir, &st)) {
			if (!S_ISDIR(st.st_mode)) {
				fprintf(stderr, "stepscope: %s: exists and is not a directory\n", outdir);
				goto fail2;
			}
		} else if (ss_record_mkdirs(outdir, 0700)) {
			fprintf(stderr, "stepscope: %s: cannot create: %s\n", outdir, strerror(errno));
			goto fail2;
		}
		/* one record per directory: the second of two started
		 * together is refused (the lock comes before the emptiness
		 * check, so it also sees what the first one wrote); the ranks
		 * of one mpirun share RUN (record-mpi.c) and its lock */
		mpi_rank = ss_record_mpi_rank();
		lockfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lockfd >= 0 && flock(lockfd, (mpi_rank ? LOCK_SH : LOCK_EX) | LOCK_NB) &&
		    errno == EWOULDBLOCK) {
			fprintf(stderr, "stepscope: %s: another stepscope record is writing into it\n",
				outdir);
			close(lockfd);
			goto fail2;
		}
		if (!force && !mpi_rank && ss_record_dir_nonempty(outdir)) {
			fprintf(stderr, "stepscope: %s: output directory is not empty (use --force to write into it anyway)\n",
				outdir);
			if (lockfd >= 0)
				close(lockfd);
			goto fail2;
		}
		snprintf(dir, sizeof(dir), "%s", outdir);
	} else {
		base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
		if (ss_record_new_run_dir(cfg.output_dir[0] ? cfg.output_dir : "stepscope-out",
					  base, dir, sizeof(dir))) {
			fprintf(stderr, "stepscope: %s: cannot create a run directory: %s\n",
				cfg.output_dir[0] ? cfg.output_dir : "stepscope-out", strerror(errno));
			goto fail2;
		}
	}
	if (!realpath(dir, absdir)) {
		fprintf(stderr, "stepscope: %s: %s\n", dir, strerror(errno));
		goto fail2;
	}
	before = ss_record_list(absdir);

	/* the environment contract */
	setenv("STEPSCOPE_DIR", absdir, 1);
	/* the config, read once here, handed to every process of the run:
	 * none of them reads the file (or pipe) again */
	{
		size_t need = ss_config_dump(&cfg, NULL, 0) + 1;
		char *dump = malloc(need);
		if (!dump)
			goto fail1;
		ss_config_dump(&cfg, dump, need);
		size_t n = strlen(dump), vlen = ss_envcode_put(NULL, 0, dump, n) + 1;
		val = malloc(vlen);
		if (!val) {
			free(dump);
			goto fail1;
		}
		ss_envcode_put(val, vlen, dump, n); /* one line (envcode.h) */
		free(dump);
		setenv("STEPSCOPE__CONFIG", val, 1);
	}
	{
		/* room for the runtime's owner mark, which it writes in place
		 * (runtime.c: setenv would call the program's malloc) */
		char room[65];
		memset(room, '-', sizeof(room) - 1);
		room[sizeof(room) - 1] = 0;
		setenv("STEPSCOPE__OWNER", room, 1);
	}
	{
		const char *old = getenv("LD_PRELOAD");
		char *pre;
		if (old && *old) {
			if (asprintf(&pre, "%s:%s", lib, old) < 0)
				goto fail1;
			setenv("LD_PRELOAD", pre, 1);
			free(pre);
		} else {
			setenv("LD_PRELOAD", lib, 1);
		}
		ss_record_mpi_preload(lib, prog_path); /* libstepscope-mpi */
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ss_record_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	/* the first line of a run: which config (not for steps' own, nor
	 * once per MPI rank) */
	if (strcmp(argv[0], "steps") && !mpi_rank)
		ss_record_note_config(&cfg, cfgarg, nsets);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "stepscope: cannot start %s: %s\n", prog, strerror(errno));
		goto fail1;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execv(prog_path, argv + i);
		fprintf(stderr, "stepscope: %s: cannot run: %s\n", prog, strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	ss_record_child = pid;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "stepscope: waiting for %s: %s\n", prog, strerror(errno));
			status = 1 << 8;
			break;
		}
	}
	ss_record_child = 0;
	ss_record_wait_writers(absdir, 60);
	if (lockfd >= 0)
		close(lockfd);
	nrec = ss_record_count(absdir, before, &nimg);
	if (nrec) /* the run stays readable when its binaries are rebuilt */
		ss_run_keep(absdir);
	nohooks = ss_record_lacks_hooks(prog_path);
	if (nrec || !nohooks) {
		if (nimg > nrec)
			fprintf(stderr, "stepscope: recorded %d process(es) (%d images, counting "
				"each exec) into %s\n", nrec, nimg, dir);
		else
			fprintf(stderr, "stepscope: recorded %d process(es) into %s\n", nrec, dir);
	}
	/* without hooks no call is recorded (an OpenMP region or a range may
	 * be): say that, not a step problem `stepscope steps` cannot solve */
	if (nohooks)
		fprintf(stderr, "stepscope: %s has no -finstrument-functions hooks, so %s"
			"recorded: rebuild it with stepscope-cc (CC=stepscope-cc make, or "
			"stepscope-cc gcc -O2 -g -o %s SOURCES)\n", prog,
			nrec ? "none of its calls was " : "nothing was ", prog);
	else
		ss_run_check_steps(absdir, &cfg);
	if (!outdir) /* what the default output directory holds besides */
		ss_record_note_earlier(cfg.output_dir[0] ? cfg.output_dir : "stepscope-out", dir);
	if (nrec)
		fprintf(stderr, "stepscope: next: stepscope symbolize %s\n", dir);
	free(before);
	free(val);
	free(prog_path);
	free(sets);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;

fail2:
	free(prog_path);
	free(sets);
	return 2;
fail1:
	free(before);
	free(val);
	free(prog_path);
	free(sets);
	return 1;
}
