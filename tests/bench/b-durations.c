/*
 * b-durations.c - bench tool: the leaf calls in a stepscope run directory
 * (or trace files) longer than a threshold.  A leaf call is an ENTER whose
 * next event on its thread is the EXIT of the same function.  Prints
 * "leaf-calls N over M events E bytes B disk D" (bytes: the traces' size,
 * disk: the space they take).  Uses only the reader's public API.
 * Usage: b-durations THRESHOLD_NS DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: b-durations THRESHOLD_NS DIR\n");
		return 2;
	}
	uint64_t limit = strtoull(argv[1], NULL, 10), leaves = 0, over = 0, events = 0;
	unsigned long long bytes = 0, disk = 0;
	DIR *d = opendir(argv[2]);
	struct dirent *de;
	if (!d) {
		fprintf(stderr, "b-durations: %s: cannot open\n", argv[2]);
		return 2;
	}
	while ((de = readdir(d))) {
		char path[4096], err[1024];
		struct stat st;
		if (!strstr(de->d_name, ".sstrace"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[2], de->d_name);
		struct ss_reader *r = ss_reader_open(path, err, sizeof(err));
		if (!r) {
			fprintf(stderr, "b-durations: %s\n", err);
			return 2;
		}
		if (!stat(path, &st)) {
			bytes += (unsigned long long)st.st_size;
			disk += (unsigned long long)st.st_blocks * 512;
		}
		for (size_t i = 0; i < r->nthreads; i++) {
			struct ss_event_iter it;
			struct ss_revent ev, prev = { 0 };
			ss_reader_events_begin(r, i, &it);
			while (ss_reader_events_next(&it, &ev)) {
				events++;
				if (ev.kind == SS_EV_EXIT && prev.kind == SS_EV_ENTER &&
				    prev.arg == ev.arg) {
					leaves++;
					over += ev.ns - prev.ns > limit;
				}
				prev = ev;
			}
		}
		ss_reader_free(r);
	}
	closedir(d);
	printf("leaf-calls %llu over %llu events %llu bytes %llu disk %llu\n",
	       (unsigned long long)leaves, (unsigned long long)over,
	       (unsigned long long)events, bytes, disk);
	return 0;
}
