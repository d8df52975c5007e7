/*
 * e2e-raw.c - walk the raw traces of a run directory (see e2e-raw.h).
 */
#include "e2e-raw.h"
#include "e2e.h"
#include "reader.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

int ss_e2e_raw_events(struct ss_e2e *t, const char *dir, int no_warning,
		      ss_e2e_raw_fn fn, void *arg)
{
	char path[8192], err[1024], full[4200];
	int files = 0;
	snprintf(full, sizeof(full), "%s/%s", t->dir, dir);
	DIR *d = opendir(full);
	struct dirent *de;
	SS_E2E_CHECK(t, d, "cannot open %s", dir);
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".sstrace"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", full, de->d_name);
		struct ss_reader *r = ss_reader_open(path, err, sizeof(err));
		SS_E2E_CHECK(t, r, "%s", err);
		SS_E2E_CHECK(t, !no_warning || !r->warning[0], "unexpected warning: %s",
			     r->warning);
		for (size_t i = 0; i < r->nthreads; i++) {
			struct ss_event_iter it;
			struct ss_revent ev;
			ss_reader_events_begin(r, i, &it);
			while (ss_reader_events_next(&it, &ev))
				fn(arg, r->threads[i].tid, &ev);
		}
		ss_reader_free(r);
		files++;
	}
	closedir(d);
	return files;
}
