/*
 * test-window-prepare.c - end to end: the rings a window opening prepares
 * are the program's threads' only (issue 36).  The step before a window
 * has the background thread page in a ring for every thread that has none
 * (pool.c ss_pool_early, ring.c ss_ring_missing); the runtime's own threads
 * (stepscope-buf, the stats sampler) never record and get none: before,
 * each of them had a 1 MiB ring paged in at the opening and punched out at
 * exit.  s-window-open has one thread of its own, so its trace holds
 * exactly one RING chunk, the stepping thread's, whichever thread paged it
 * in and whenever (counted from the raw file's chunk headers, a timing-free
 * oracle), and the recorded steps are all there:
 *   - wait 1, warmup 1, active 2, repeat 1 (the window prepared during
 *     step 1, its chunks given back after step 3), with stats: whole_run
 *     (one more runtime thread);
 *   - active 2, repeat 1, from step 0 (no step before it: opened as
 *     before).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"
#include "format.h"

/* RING chunks of the trace file at path (every chunk walked by its size
 * from the header page); -1 when the file cannot be read. */
static int ring_chunks(const char *path, int *chunks)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	int rings = 0;
	*chunks = 0;
	struct ss_chunk_header h;
	for (uint64_t off = SS_HEADER_SIZE;; off += h.size) {
		if (fseeko(f, (off_t)off, SEEK_SET) || fread(&h, sizeof(h), 1, f) != 1 ||
		    h.magic != SS_CHUNK_MAGIC || h.size < sizeof(h))
			break;
		(*chunks)++;
		rings += h.kind == SS_CHUNK_RING;
	}
	fclose(f);
	return rings;
}

static void check_run(struct ss_e2e *t, const char *sets, int first)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "rm -rf run && \"$SS_E2E_BUILD/bin/stepscope\" record -o run "
		 "--set step.function=train_step %s -- ./s-window-open 10 && ls run/*.sstrace",
		 sets);
	SS_E2E_SH_OK(t, cmd);
	char path[4600];
	snprintf(path, sizeof(path), "%s/%.*s", t->dir, (int)strcspn(t->out, "\n"), t->out);
	int chunks = 0, rings = ring_chunks(path, &chunks);
	SS_E2E_CHECK(t, rings == 1, "%s: %d RING chunks (of %d chunks), expected 1: the "
		     "stepping thread's", sets, rings, chunks);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "run");
	for (int k = 0; k < 10; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		SS_E2E_CHECK(t, ss_e2e_count(tr, name, NULL, 0) == (k >= first && k < first + 2),
			     "%s: %s: %zu slices", sets, name, ss_e2e_count(tr, name, NULL, 0));
	}
	SS_E2E_CHECK(t, ss_e2e_count(tr, "leaf", NULL, 0) == 2, "%s: leaf: %zu calls", sets,
		     ss_e2e_count(tr, "leaf", NULL, 0));
}

static void test_rings_of_the_program_only(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "window-open", NULL);
	check_run(t, "--set schedule.wait=1 --set schedule.warmup=1 --set schedule.active=2 "
		     "--set schedule.repeat=1 --set stats=whole_run", 2);
	check_run(t, "--set schedule.active=2 --set schedule.repeat=1", 0);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_rings_of_the_program_only),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
