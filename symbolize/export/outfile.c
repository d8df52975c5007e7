/*
 * outfile.c - open, commit or abort a command's output file (outfile.h).
 *
 * Design: lstat decides.  No OUT, or a regular file: write OUT.tmp.XXXXXX
 * (unique, created with O_EXCL by mkostemp, given the mode a plain create
 * would have) and rename it over OUT when complete.  A symlink, a device,
 * a FIFO or a socket is opened with O_WRONLY|O_TRUNC and written through,
 * never replaced: `-o /dev/null` as root keeps /dev/null a device, a link
 * keeps pointing where it did (its target gets the data).  "-" is
 * standard output.
 *
 * Must never: rename over or unlink anything that is not a regular file,
 * or leave a temporary file behind on an error path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

static mode_t ss_out_umask(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

int ss_out_open(struct ss_out *o, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->is_stdout = 1;
		o->name = "standard output";
		return 0;
	}
	o->path = strdup(path);
	if (!o->path) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	o->name = o->path;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a link, a device, a pipe: write through it, keep it */
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	} else {
		if (asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
			o->tmp = NULL;
			snprintf(err, errlen, "%s: out of memory", path);
			ss_out_abort(o);
			return -1;
		}
		fd = mkostemp(o->tmp, O_CLOEXEC);
		if (fd >= 0 && fchmod(fd, 0666 & ~ss_out_umask())) {
			int e = errno;
			close(fd);
			unlink(o->tmp);
			errno = e;
			fd = -1;
		}
		if (fd < 0) {
			free(o->tmp);
			o->tmp = NULL;
		}
	}
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		ss_out_abort(o);
		return -1;
	}
	return 0;
}

int ss_out_commit(struct ss_out *o, int werr, char *err, size_t errlen)
{
	int rc = 0;

	if (!o->f)
		return 0;
	if (fflush(o->f) || ferror(o->f))
		werr = werr ? werr : (errno ? errno : EIO);
	if (!o->is_stdout && fclose(o->f) && !werr)
		werr = errno ? errno : EIO;
	o->f = NULL;
	if (!werr && o->tmp && rename(o->tmp, o->path))
		werr = errno;
	if (werr) {
		snprintf(err, errlen, "%s: cannot write: %s", o->name, strerror(werr));
		rc = -1;
		if (o->tmp)
			unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	return rc;
}

void ss_out_abort(struct ss_out *o)
{
	if (o->f && !o->is_stdout)
		fclose(o->f);
	else if (o->f)
		fflush(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	free(o->path);
	o->path = NULL;
	o->name = "";
}

void ss_out_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}
