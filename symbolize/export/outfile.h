/*
 * outfile.h - the one way every command opens and finishes the file it
 * writes (symbolize, flame, html, memory, report).
 *
 * ss_out_open(o, "OUT"): "-" is standard output; an absent OUT or a
 * regular file is written as a fresh temporary file beside it and renamed
 * over OUT by ss_out_commit, so a failed run never leaves half a file
 * under the asked name; anything else (a symlink, /dev/null, a FIFO, a
 * character device) is opened and written in place: the link, the device
 * or the pipe stays what it was.
 */
#ifndef SS_OUTFILE_H
#define SS_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct ss_out {
	FILE *f;          /* write here (fileno(f) for write(2)) */
	const char *name; /* for messages: OUT, or "standard output" */
	char *path;       /* OUT as asked */
	char *tmp;        /* the temporary file renamed over OUT, or NULL */
	int is_stdout;
};

/* Open OUT for writing.  0, or -1 with "OUT: cannot create: why" in err. */
int ss_out_open(struct ss_out *o, const char *path, char *err, size_t errlen);

/* Flush and close (standard output is flushed, not closed), then rename
 * the temporary file over OUT.  werr: errno of a write the caller saw
 * fail, or 0.  0, or -1 with "OUT: cannot write: why" in err (the
 * temporary file is removed).  o->name stays valid until ss_out_abort. */
int ss_out_commit(struct ss_out *o, int werr, char *err, size_t errlen);

/* Give up (close, remove the temporary file) and free; after a commit it
 * only frees.  Safe on a zeroed struct and twice. */
void ss_out_abort(struct ss_out *o);

/* One CSV field: s as it is, or in double quotes (quotes doubled) when it
 * holds a comma, a quote or a line break (RFC 4180). */
void ss_out_csv_field(FILE *f, const char *s);

#endif /* SS_OUTFILE_H */
