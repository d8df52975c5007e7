/*
 * reader-cache.c - a command that reads one run several times indexes
 * each trace once (html: the tables, then the overhead, args, allocation
 * and rank panels, each opening the traces again: five scans of every
 * event of a 320 MB file before this).  Between ss_reader_cache_on and
 * ss_reader_cache_off a reader that is freed is kept, and opening the
 * same path again hands it back instead of mapping and scanning the file.
 *
 * How: a short list of (reader, in use); ss_reader_open asks
 * ss_reader_cache_take first and notes every reader it opened whole,
 * ss_reader_free asks ss_reader_cache_put.  A reader handed back has its
 * MPI clock shift (mpi-clock.c) cleared, as a fresh one would.
 *
 * Must never: be on in a command that writes or changes traces (a file
 * must be the same bytes while it is cached), hand one reader to two
 * users at once, or keep a reader that did not open whole.
 */
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "reader-int.h"

static struct ss_reader_cached {
	struct ss_reader *r;
	int used;
} *ss_rc;
static size_t ss_rc_n, ss_rc_cap;
static int ss_rc_on;

void ss_reader_cache_on(void)
{
	ss_rc_on = 1;
}

void ss_reader_cache_off(void)
{
	size_t i;

	ss_rc_on = 0;
	for (i = 0; i < ss_rc_n; i++)
		if (!ss_rc[i].used)
			ss_reader_free(ss_rc[i].r);  /* off: freed for real */
	free(ss_rc);
	ss_rc = NULL;
	ss_rc_n = ss_rc_cap = 0;
}

struct ss_reader *ss_reader_cache_take(const char *path)
{
	size_t i;

	for (i = 0; ss_rc_on && i < ss_rc_n; i++)
		if (!ss_rc[i].used && !strcmp(ss_rc[i].r->path, path)) {
			ss_rc[i].used = 1;
			ss_rc[i].r->shift_ns = 0;
			return ss_rc[i].r;
		}
	return NULL;
}

void ss_reader_cache_note(struct ss_reader *r)
{
	if (!ss_rc_on)
		return;
	if (ss_rc_n == ss_rc_cap) {
		size_t nc = ss_rc_cap ? ss_rc_cap * 2 : 16;
		struct ss_reader_cached *n = realloc(ss_rc, nc * sizeof(*n));
		if (!n)
			return;  /* not kept: freed as usual */
		ss_rc = n;
		ss_rc_cap = nc;
	}
	ss_rc[ss_rc_n].r = r;
	ss_rc[ss_rc_n++].used = 1;
}

int ss_reader_cache_put(struct ss_reader *r)
{
	size_t i;

	for (i = 0; ss_rc_on && i < ss_rc_n; i++)
		if (ss_rc[i].r == r) {
			ss_rc[i].used = 0;
			return 1;
		}
	return 0;
}
