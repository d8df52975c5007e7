/*
 * merge.c - `stepscope merge DIR... -o RUN`: the run directories that
 * the hosts of an MPI job wrote (one per host, when RUN is not on a shared
 * file system) into one run.  The raw traces are hard-linked (copied across
 * file systems) into RUN, renamed when two hosts used the same name; the
 * per-host clock offsets that every command applies when it reads RUN
 * (mpi-clock.c) are estimated and printed.  RUN must not exist or be empty.
 * The binaries each host's record kept (DIR/.stepscope-bin/<build-id>/,
 * sym-keep.c) are linked into RUN the same way, one per build-id, so RUN
 * is named from the builds that ran wherever it is read.
 * Must never: change a source directory, or leave a half-copied trace
 * under a .sstrace name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "format.h"
#include "ranks.h"
#include "run.h"

static void ss_merge_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope merge DIR... -o RUN\n"
		"\n"
		"   -o, --output RUN   the merged run directory (created; must be empty)\n"
		"\n"
		"Puts the raw traces of every DIR (run directories of the hosts of one MPI\n"
		"job) into RUN and aligns the hosts' clocks on the clock-sync barriers that\n"
		"libstepscope-mpi recorded (docs/mpi.md).  Then: stepscope symbolize RUN,\n"
		"stepscope report RUN --ranks.\n");
}

static int ss_merge_any(const char *name)
{
	return strcmp(name, ".") && strcmp(name, "..");
}

static int ss_merge_copy(const char *from, const char *to)
{
	char tmp[PATH_MAX + 8], buf[65536];
	int in, out, ok = 1;
	ssize_t n;

	if (!link(from, to))
		return 0;
	if (errno != EXDEV && errno != EPERM && errno != EMLINK)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.part", to);
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	ok = ok && n == 0;
	close(in);
	if (close(out))
		ok = 0;
	if (!ok || rename(tmp, to)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* DIR's kept binaries into RUN's (a build-id kept by two hosts: once).  A
 * file that cannot be linked or copied is one warning: the reading
 * commands refuse RUN only if that build is rebuilt or gone. */
static void ss_merge_kept(const char *dir, const char *out)
{
	char from[PATH_MAX], to[PATH_MAX + 64], **ids, **files;
	size_t nids, nfiles, i, k;

	snprintf(from, sizeof(from), "%s/" SS_SYM_KEEP_DIR, dir);
	if (ss_run_list(from, ss_merge_any, &ids, &nids))
		return;  /* none kept there */
	snprintf(to, sizeof(to), "%s/" SS_SYM_KEEP_DIR, out);
	if (nids && mkdir(to, 0755) && errno != EEXIST)
		fprintf(stderr, "stepscope: merge: warning: %s: cannot create: %s\n", to,
			strerror(errno));
	for (i = 0; i < nids; i++) {
		const char *id = strrchr(ids[i], '/') + 1;
		if (ss_run_list(ids[i], ss_merge_any, &files, &nfiles))
			continue;
		snprintf(to, sizeof(to), "%s/" SS_SYM_KEEP_DIR "/%s", out, id);
		if (mkdir(to, 0755) && errno != EEXIST)
			nfiles = 0;
		for (k = 0; k < nfiles; k++) {
			snprintf(to, sizeof(to), "%s/" SS_SYM_KEEP_DIR "/%s/%s", out, id,
				 strrchr(files[k], '/') + 1);
			if (access(to, F_OK) && ss_merge_copy(files[k], to))
				fprintf(stderr, "stepscope: merge: warning: %s: cannot copy to %s: %s\n",
					files[k], to, strerror(errno));
		}
		ss_run_list_free(files, nfiles);
	}
	ss_run_list_free(ids, nids);
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL, **dirs;
	char err[2048];
	size_t ndirs = 0, ntraces = 0, nh, h, d, k;
	struct ss_ranks_host hosts[64];
	struct ss_run run;
	int i, rc = 0;

	dirs = calloc((size_t)argc + 1, sizeof(*dirs));
	if (!dirs)
		return 1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			ss_merge_usage(stdout);
			free(dirs);
			return 0;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "stepscope: merge: option '%s' needs a value\n", a);
				free(dirs);
				return 2;
			}
			out = argv[++i];
		} else if (!strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "stepscope: merge: unknown option '%s'; see 'stepscope merge --help'\n", a);
			free(dirs);
			return 2;
		} else {
			dirs[ndirs++] = a;
		}
	}
	if (!ndirs || !out) {
		fprintf(stderr, "stepscope: merge: %s\n", !ndirs ? "no run directory given (usage below)"
							       : "no output given (-o RUN; usage below)");
		ss_merge_usage(stderr);
		free(dirs);
		return 2;
	}
	/* every source must have traces before anything is written */
	for (d = 0; d < ndirs; d++) {
		char **paths;
		size_t n;
		if (ss_run_list_traces(dirs[d], &paths, &n, err, sizeof(err))) {
			fprintf(stderr, "stepscope: merge: %s\n", err);
			free(dirs);
			return 2;
		}
		ss_run_list_free(paths, n);
	}
	if (mkdir(out, 0777) && errno != EEXIST) {
		fprintf(stderr, "stepscope: merge: %s: cannot create: %s\n", out, strerror(errno));
		free(dirs);
		return 2;
	}
	{
		char **paths = NULL;
		size_t n = 0;
		if (ss_run_list(out, ss_merge_any, &paths, &n) < 0) {
			fprintf(stderr, "stepscope: merge: %s: %s\n", out, strerror(errno));
			free(dirs);
			return 2;
		}
		ss_run_list_free(paths, n);
		if (n) {
			fprintf(stderr, "stepscope: merge: %s: output directory is not empty\n", out);
			free(dirs);
			return 2;
		}
	}
	for (d = 0; d < ndirs && !rc; d++) {
		char **paths;
		size_t n;
		if (ss_run_list_traces(dirs[d], &paths, &n, err, sizeof(err)))
			break;
		for (k = 0; k < n; k++) {
			const char *base = strrchr(paths[k], '/') ? strrchr(paths[k], '/') + 1 : paths[k];
			char to[PATH_MAX + 64];
			int tries;
			snprintf(to, sizeof(to), "%s/%s", out, base);
			/* the same name from another host: NAME.dD.sstrace */
			for (tries = 1; !access(to, F_OK) && tries < 1000; tries++)
				snprintf(to, sizeof(to), "%s/%.*s.d%zu.%d%s", out,
					 (int)(strlen(base) - strlen(SS_FILE_SUFFIX)), base, d, tries,
					 SS_FILE_SUFFIX);
			if (ss_merge_copy(paths[k], to)) {
				fprintf(stderr, "stepscope: merge: %s: cannot copy to %s: %s\n",
					paths[k], to, strerror(errno));
				rc = 1;
				break;
			}
			ntraces++;
		}
		ss_run_list_free(paths, n);
		if (!rc)
			ss_merge_kept(dirs[d], out);
	}
	free(dirs);
	if (rc)
		return rc;
	/* the clock offsets every reader of RUN will apply */
	memset(&run, 0, sizeof(run));
	if (ss_run_list_traces(out, &run.paths, &run.n, err, sizeof(err)))
		return 2;
	run.rs = calloc(run.n, sizeof(*run.rs));
	if (!run.rs) {
		ss_run_release(&run);
		return 1;
	}
	for (k = 0; k < run.n; k++)
		if (!(run.rs[k] = ss_run_reader(run.paths[k], err, sizeof(err)))) {
			fprintf(stderr, "stepscope: merge: %s\n", err);
			ss_run_release(&run);
			return 2;
		}
	nh = ss_ranks_align(run.rs, run.n, hosts, 64);
	for (h = 0; h < nh && h < 64 && nh > 1; h++) {
		if (hosts[h].reference || !hosts[h].points) {
			fprintf(stderr, "stepscope: merge: host %s: %s\n", hosts[h].name,
				hosts[h].reference ? "reference clock"
						   : "no clock-sync points (wall clock as it was)");
			continue;
		}
		fprintf(stderr, "stepscope: merge: host %s: clock offset %+.3f ms from %zu sync "
			"points (spread %.1f us)\n", hosts[h].name, (double)hosts[h].offset_ns / 1e6,
			hosts[h].points, (double)hosts[h].spread_ns / 1e3);
	}
	fprintf(stderr, "stepscope: merged %zu trace(s) from %zu host(s) into %s "
		"(next: stepscope symbolize %s)\n", ntraces, nh, out, out);
	ss_run_release(&run);
	return 0;
}
