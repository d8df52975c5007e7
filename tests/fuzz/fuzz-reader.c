/*
 * fuzz-reader.c - libFuzzer target for the raw trace reader and the slicer:
 * whatever bytes come in, `stepscope symbolize` must not crash, hang or
 * read outside the file.
 *
 * Design: each input is written to one scratch file (the reader maps files,
 * it has no in-memory entry point) and read back exactly as cmd/symbolize.c
 * does: open and index, walk every meta record, build a slicer (once with a
 * symbol space, so MAPS text is parsed, and once without, so no ELF file
 * named by the input is ever opened) and slice every thread.  Besides the
 * sanitizers it checks the reader's promises: a refused file and a damaged
 * one are reported with the file's name, damage with an offset inside the
 * file, and no slice ends before it begins.
 *
 * Build and run: `make fuzz` (FUZZ_SECS=N, default 60).  Seeds are in
 * tests/fuzz/corpus/; new inputs go to build/fuzz/corpus/.
 * Must never: write anywhere but its scratch file, or keep state between
 * inputs (every input is judged on its own).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "slices.h"
#include "sym.h"

static char fuzz_path[256];
static int fuzz_fd = -1;
static struct ss_sym *fuzz_sym;

static void fuzz_cleanup(void)
{
	if (fuzz_path[0])
		unlink(fuzz_path);
}

static void fuzz_die(const char *what, const char *text)
{
	fprintf(stderr, "fuzz-reader: %s: %s\n", what, text);
	abort();
}

static void fuzz_init(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	char err[256];

	snprintf(fuzz_path, sizeof(fuzz_path), "%s/ss-fuzz-%d.sstrace", dir,
		 (int)getpid());
	fuzz_fd = open(fuzz_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fuzz_fd < 0)
		fuzz_die("cannot create", fuzz_path);
	atexit(fuzz_cleanup);
	fuzz_sym = ss_sym_new("dw", err, sizeof(err));
	if (!fuzz_sym)
		fuzz_die("symbolizer", err);
	ss_sym_set_quiet(fuzz_sym, 1);
}

static void fuzz_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	uint64_t *n = ctx;

	(void)tid;
	if (s->end_ns < s->begin_ns)
		fuzz_die("slice ends before it begins", s->name ? s->name : "?");
	if (!s->name)
		fuzz_die("slice without a name", "");
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ss_reader *r;
	struct ss_slicer *sl;
	struct ss_sym_space *sp;
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	char err[1024];
	uint64_t nslices = 0;
	size_t t, plen;

	if (fuzz_fd < 0)
		fuzz_init();
	if (ftruncate(fuzz_fd, 0) ||
	    (size && pwrite(fuzz_fd, data, size, 0) != (ssize_t)size))
		fuzz_die("cannot write", fuzz_path);
	plen = strlen(fuzz_path);
	err[0] = 0;
	r = ss_reader_open(fuzz_path, err, sizeof(err));
	if (!r) {
		if (strncmp(err, fuzz_path, plen))
			fuzz_die("refusal does not name the file", err);
		return 0;
	}
	if (r->warning[0]) {
		if (strncmp(r->warning, fuzz_path, plen) ||
		    !strstr(r->warning, "offset"))
			fuzz_die("warning does not name file and offset", r->warning);
		if (r->damage_offset > size)
			fuzz_die("damage offset past the end", r->warning);
	}
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m))
		if (m.data < r->map || m.data + m.len > r->map + r->size)
			fuzz_die("meta record outside the file", "");

	/* with symbols: MAPS text is parsed; nothing is looked up */
	sp = ss_sym_space_new(fuzz_sym);
	if (sp) {
		sl = ss_slicer_new(r, sp);
		ss_slicer_free(sl);
		ss_sym_space_free(sp);
	}
	/* without: every thread sliced */
	sl = ss_slicer_new(r, NULL);
	if (sl) {
		uint32_t cyc[8];
		ss_slicer_cycles(sl, cyc, 8);
		for (t = 0; t < r->nthreads; t++) {
			ss_slicer_thread_name(sl, r->threads[t].tid);
			ss_slicer_thread(sl, t, fuzz_slice, &nslices);
		}
		ss_slicer_free(sl);
	}
	ss_reader_free(r);
	return 0;
}
