/*
 * sym-keep.c - the binaries of a run as they were when it ran: a copy of
 * each module the run mapped is kept in the run directory, keyed by its
 * build-id (RUN/.stepscope-bin/<build-id>/<file name>), and every reading
 * command names addresses from the file whose build-id is the one the run
 * recorded: the file at its path when it still is that build, else the
 * kept copy, else nothing (the command refuses in one line).  A module
 * linked without a build-id is kept under path-<hash of its path>, and
 * its file counts as the one that ran while it was not modified after the
 * run began (a rebuild writes a new file).
 *
 * Design: keeping is done by `stepscope record` once the program has
 * exited, and by every reading command for a module whose file is still
 * the recorded build and not kept yet (a run recorded without `record`
 * is kept on its first reading).  A file of the system (/usr but not
 * /usr/local, /lib*) is hard-linked when the run directory is on its
 * filesystem and the kernel allows it, and not copied otherwise: package
 * managers replace such files by renaming, so a link keeps the old build
 * at no cost, and a copy of libc, libstdc++ or the CUDA libraries in every
 * run would cost far more disk than the run.  Every other file (the
 * program and the libraries it was built with) is copied (a reflink where
 * the filesystem has them): a linker or `cp` may write a rebuilt file in
 * place, and a hard link would change with it; one over 64 MiB is linked
 * like a system file.  A kept file is checked against the recorded
 * build-id before use, never trusted by its name.
 *
 * Must never: name an address from a file whose build-id differs from the
 * run's (unless the user forces it), fail a recording because a copy could
 * not be made, or leave a half-written copy under its final name.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"
#include "sym.h"
#include "sym-int.h"

#define SS_SYM_KEEP_COPY_MAX (64 << 20)  /* bytes copied at most per file */

/* The build-id of the file at path: its length (0: none), -1 when the
 * file cannot be opened. */
static long ss_sym_file_build_id(const char *path, uint8_t *id, size_t max)
{
	long n = 0;
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT); /* record keeps without a struct ss_sym */
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		n = (long)ss_sym_elf_build_id(e, id, max);
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

static int ss_sym_is_build(const char *path, const uint8_t *id, size_t len)
{
	uint8_t got[64];
	long n = ss_sym_file_build_id(path, got, sizeof(got));

	return n == (long)len && !memcmp(got, id, len);
}

/* A file without a build-id: is it still the one a run that began at
 * run_ns (CLOCK_REALTIME) mapped, not modified since? */
static int ss_sym_is_unmodified(const char *path, uint64_t run_ns)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec <=
		       run_ns;
}

/* RUN/.stepscope-bin/<hex>/<base> (dironly: without /<base>); without a
 * build-id (len 0), <hex> is path-<FNV-1a of path>. */
static char *ss_sym_kept_path(const char *dir, const char *path,
			      const uint8_t *id, size_t len, int dironly)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char hex[129], *p;

	if (len) {
		ss_sym_build_id_hex(id, len, hex);
	} else {
		uint64_t h = UINT64_C(0xcbf29ce484222325);
		for (const char *c = path; *c; c++)
			h = (h ^ (uint8_t)*c) * UINT64_C(0x100000001b3);
		snprintf(hex, sizeof(hex), "path-%016llx", (unsigned long long)h);
	}
	if (dironly ? asprintf(&p, "%s/" SS_SYM_KEEP_DIR "/%s", dir, hex) < 0
		    : asprintf(&p, "%s/" SS_SYM_KEEP_DIR "/%s/%s", dir, hex, base) < 0)
		return NULL;
	return p;
}

/* A file the system's package manager owns (and replaces by rename). */
static int ss_sym_is_system(const char *path)
{
	static const char *const dirs[] = { "/usr/", "/lib/", "/lib64/", "/lib32/",
					    "/libx32/", NULL };
	size_t i;

	if (!strncmp(path, "/usr/local/", 11))
		return 0;
	for (i = 0; dirs[i]; i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			return 1;
	return 0;
}

/* Copy src into the new file fd: a reflink, else copy_file_range, else
 * read and write.  0 or -1. */
static int ss_sym_copy_fd(int src, int fd)
{
	char buf[65536];
	ssize_t n;

	if (!ioctl(fd, FICLONE, src))
		return 0;
	for (;;) {
		n = copy_file_range(src, NULL, fd, NULL, 1 << 30, 0);
		if (n > 0)
			continue;
		if (!n)
			return 0;
		if (errno == EINTR)
			continue;
		break;  /* not supported here: the plain way, from the start */
	}
	if (lseek(src, 0, SEEK_SET) || lseek(fd, 0, SEEK_SET) || ftruncate(fd, 0))
		return -1;
	while ((n = read(src, buf, sizeof(buf))) != 0) {
		char *p = buf;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (n > 0) {
			ssize_t w = write(fd, p, (size_t)n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			p += w;
			n -= w;
		}
	}
	return 0;
}

int ss_sym_keep(const char *dir, const char *path, const uint8_t *id, size_t len,
		uint64_t run_ns, char *err, size_t errlen)
{
	char *d = NULL, *p = NULL, *tmp = NULL;
	int src = -1, fd = -1, rc = -1;
	struct stat st;

	err[0] = 0;
	if ((!len && !run_ns) || len > 64 || path[0] != '/')
		return 0;
	if (!(d = ss_sym_kept_path(dir, path, id, len, 1)) ||
	    !(p = ss_sym_kept_path(dir, path, id, len, 0)))
		goto oom;
	if (len ? ss_sym_is_build(p, id, len) : !access(p, F_OK)) {
		rc = 0;  /* kept before */
		goto out;
	}
	/* the file must still be the build the run mapped */
	if (len ? !ss_sym_is_build(path, id, len) : !ss_sym_is_unmodified(path, run_ns)) {
		rc = 0;
		goto out;
	}
	{
		char *top;
		if (asprintf(&top, "%s/" SS_SYM_KEEP_DIR, dir) < 0)
			goto oom;
		if (mkdir(top, 0755) && errno != EEXIST) {
			snprintf(err, errlen, "%s: cannot create: %s", top, strerror(errno));
			free(top);
			goto out;
		}
		free(top);
	}
	if (mkdir(d, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create: %s", d, strerror(errno));
		goto out;
	}
	/* a big library of the user's (a framework's, over 64 MiB) is
	 * linked too: a copy per run would cost more than most runs; were it
	 * rewritten in place, its build-id would no longer match and the
	 * commands would refuse it rather than misname (without a build-id
	 * nothing would tell: those are copied) */
	if (ss_sym_is_system(path) ||
	    (len && !stat(path, &st) && st.st_size > SS_SYM_KEEP_COPY_MAX)) {
		/* linked or not kept (see the comment at the top); the file
		 * itself, not a symlink to whatever is there later */
		rc = linkat(AT_FDCWD, path, AT_FDCWD, p, AT_SYMLINK_FOLLOW) &&
		     errno != EEXIST ? 1 : 0;
		goto out;
	}
	if (asprintf(&tmp, "%s.tmp.%ld", p, (long)getpid()) < 0)
		goto oom;
	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st)) {
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0555);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	if (ss_sym_copy_fd(src, fd) | close(fd)) {
		fd = -1;
		snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, p)) {
		snprintf(err, errlen, "%s: cannot write: %s", p, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	if (fd >= 0)
		close(fd);
	if (src >= 0)
		close(src);
	free(tmp);
	free(p);
	free(d);
	return rc;
}

void ss_sym_set_run_dir(struct ss_sym *s, const char *dir)
{
	free(s->rundir);
	s->rundir = dir ? strdup(dir) : NULL;
}

/* The message of a module that is not the recorded build and not kept. */
static void ss_sym_refusal(const struct ss_sym *s, const struct ss_sym_module *m,
			   long n, const uint8_t *now, char *err, size_t errlen)
{
	char want[129], got[129];

	if (!m->want_len) {
		snprintf(err, errlen, "%s: %s since the run (it has no build-id) and no "
			 "copy of it kept in %s/" SS_SYM_KEEP_DIR "; restore that build",
			 m->path, n < 0 ? "missing" : "modified",
			 s->rundir ? s->rundir : "the run");
		return;
	}
	ss_sym_build_id_hex(m->want_id, m->want_len, want);
	if (n > 0)
		ss_sym_build_id_hex(now, (size_t)n, got);
	if (n < 0)
		snprintf(err, errlen, "%s: missing since the run (build-id %s) and no copy "
			 "of it kept in %s/" SS_SYM_KEEP_DIR "; restore that build",
			 m->path, want, s->rundir ? s->rundir : "the run");
	else
		snprintf(err, errlen, "%s: changed since the run (build-id %s, now %s) and "
			 "no copy of it kept in %s/" SS_SYM_KEEP_DIR "; restore that build",
			 m->path, want, n ? got : "none",
			 s->rundir ? s->rundir : "the run");
}

size_t ss_sym_check_files(struct ss_sym *s, int force, char *err, size_t errlen)
{
	size_t i, bad = 0;
	char first[1200] = "";

	for (i = 0; i < s->nmods; i++) {
		struct ss_sym_module *m = s->mods[i];
		uint8_t id[64];
		char kerr[600], *kept;
		long n;

		/* the runtime itself is never instrumented: no address of the
		 * trace points into it, so a rebuilt one does not matter */
		if ((!m->want_len && !m->run_ns) || m->checked ||
		    !strncmp(m->base, "libstepscope.", 13))
			continue;
		m->checked = 1;
		n = ss_sym_file_build_id(m->path, id, sizeof(id));
		if (m->want_len ? n == (long)m->want_len &&
					  !memcmp(id, m->want_id, m->want_len)
				: ss_sym_is_unmodified(m->path, m->run_ns)) {
			/* still the run's build: keep it now if nobody did (a
			 * run recorded without `record`); a run directory we
			 * cannot write to is read as it is */
			if (s->rundir)
				ss_sym_keep(s->rundir, m->path, m->want_id, m->want_len,
					    m->run_ns, kerr, sizeof(kerr));
			continue;
		}
		kept = s->rundir ? ss_sym_kept_path(s->rundir, m->path, m->want_id,
						    m->want_len, 0) : NULL;
		if (kept && (m->want_len ? ss_sym_is_build(kept, m->want_id, m->want_len)
					 : !access(kept, R_OK))) {
			free(m->file);
			m->file = kept;
			continue;
		}
		free(kept);
		if (force) {
			char line[1200];
			ss_sym_refusal(s, m, n, id, line, sizeof(line));
			fprintf(stderr, "stepscope: warning: %s; names from it may be wrong "
				"(--force)\n", line);
			continue;
		}
		if (!bad++)
			ss_sym_refusal(s, m, n, id, first, sizeof(first));
	}
	if (bad > 1)
		snprintf(err, errlen, "%s (and %zu more file%s)", first, bad - 1,
			 bad > 2 ? "s" : "");
	else if (bad)
		snprintf(err, errlen, "%s", first);
	return bad;
}

struct ss_keep_walk {
	const char *dir;
	uint64_t run_ns;
	int warned;
};

static void ss_sym_keep_one(void *ctx, const char *path, const uint8_t *id, size_t len)
{
	struct ss_keep_walk *w = ctx;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char err[600];

	if (!strncmp(base, "libstepscope.", 13))
		return;
	if (ss_sym_keep(w->dir, path, id, len, w->run_ns, err, sizeof(err)) < 0 && err[0] &&
	    !w->warned++)
		fprintf(stderr, "stepscope: warning: %s; a rebuilt %s will make this run "
			"unreadable\n", err, path);
}

void ss_sym_keep_trace(const char *dir, const struct ss_reader *r)
{
	struct ss_keep_walk w = { dir, r->hdr.realtime_ns, 0 };

	ss_reader_each_module(r, ss_sym_keep_one, &w);
}
