/*
 * fuzz-meta.c - libFuzzer target for META records: a well-formed trace
 * (file header, one thread's events) whose META chunk holds the input's
 * bytes as its records.  Whatever they are, the reader must not crash or
 * read outside the chunk, and a damaged record must lose only itself.
 *
 * Design: the input is laid out as the records of one META chunk (a zero
 * record after it, as the runtime leaves), written with the test suite's
 * trace writer to one scratch file and opened as cmd/symbolize.c does;
 * then every meta record is walked, the MAPS text parsed (a symbol space)
 * and the thread sliced, which reads the steps, strings and thread names.
 * Checked promises: every record handed out lies inside the META chunk, in
 * file order, 8-byte aligned; a skipped record is warned about with the
 * file's name and an offset inside the chunk; the event thread is kept.
 *
 * Build and run: `make fuzz` (FUZZ_SECS=N each target, default 60).
 * Must never: write anywhere but its scratch file, or keep state between
 * inputs.
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
#include "trace-writer.h"

static char fuzz_path[256];
static struct ss_sym *fuzz_sym;

static void fuzz_cleanup(void)
{
	if (fuzz_path[0])
		unlink(fuzz_path);
}

static void fuzz_die(const char *what, const char *text)
{
	fprintf(stderr, "fuzz-meta: %s: %s\n", what, text);
	abort();
}

static void fuzz_init(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	char err[256];

	snprintf(fuzz_path, sizeof(fuzz_path), "%s/ss-fuzz-meta-%d.sstrace", dir, (int)getpid());
	atexit(fuzz_cleanup);
	fuzz_sym = ss_sym_new("dw", err, sizeof(err));
	if (!fuzz_sym)
		fuzz_die("symbolizer", err);
	ss_sym_set_quiet(fuzz_sym, 1);
}

static void fuzz_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	(void)ctx;
	(void)tid;
	if (!s->name || s->end_ns < s->begin_ns)
		fuzz_die("bad slice", s->name ? s->name : "?");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t zero[24];  /* pad to 8, then the zero record */
	struct ss_tw *w;
	struct ss_reader *r;
	struct ss_slicer *sl;
	struct ss_sym_space *sp;
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	struct ss_chunk_header ch;
	struct ss_event ev[2] = { { 100, SS_EV_WORD(SS_EV_ENTER, 0x401000) },
				  { 200, SS_EV_WORD(SS_EV_EXIT, 0x401000) } };
	const uint8_t *lo, *hi, *last = NULL;
	size_t pad = (8 - size % 8) % 8, chunk_off;
	char err[1024];

	if (size > (1u << 20))
		return 0;
	if (!fuzz_path[0])
		fuzz_init();
	w = ss_tw_new(SS_CLOCK_MONOTONIC, 7);
	ss_tw_events(w, 1, 1, 0, ev, 2, 2);
	memset(&ch, 0, sizeof(ch));
	ch.magic = SS_CHUNK_MAGIC;
	ch.kind = SS_CHUNK_META;
	ch.size = sizeof(ch) + size + pad + 16;
	ss_tw_data(w, &chunk_off);
	ss_tw_raw(w, &ch, sizeof(ch));
	if (size)
		ss_tw_raw(w, data, size);
	ss_tw_raw(w, zero, pad + 16);
	if (ss_tw_write(w, fuzz_path, SIZE_MAX))
		fuzz_die("cannot write", fuzz_path);
	ss_tw_free(w);

	r = ss_reader_open(fuzz_path, err, sizeof(err));
	if (!r)
		fuzz_die("a well-formed file refused", err);
	lo = r->map + chunk_off + sizeof(ch);
	hi = lo + size + pad + 16;
	if (r->warning[0]) {
		if (strncmp(r->warning, fuzz_path, strlen(fuzz_path)) || !strstr(r->warning, "offset"))
			fuzz_die("warning does not name file and offset", r->warning);
		/* damage in the chunk, or (the end record counting more
		 * events than the file has) at the file's end */
		if ((r->damage_offset < chunk_off + sizeof(ch) ||
		     r->damage_offset >= (uint64_t)(hi - r->map)) && r->damage_offset != r->size)
			fuzz_die("damage offset outside the META chunk", r->warning);
	}
	if (r->nthreads != 1 || r->nevents != 2)
		fuzz_die("the event thread was lost", r->warning);
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		const uint8_t *h = m.data - sizeof(struct ss_meta);
		if (h < lo || m.data + m.len > hi || (size_t)(h - lo) % 8 || (last && h <= last))
			fuzz_die("meta record outside the chunk or out of order", "");
		last = h;
	}
	sp = ss_sym_space_new(fuzz_sym);
	if (sp) {
		sl = ss_slicer_new(r, sp);
		ss_slicer_free(sl);
		ss_sym_space_free(sp);
	}
	sl = ss_slicer_new(r, NULL);
	if (sl) {
		ss_slicer_thread_name(sl, r->threads[0].tid);
		ss_slicer_thread(sl, 0, fuzz_slice, NULL);
		ss_slicer_free(sl);
	}
	ss_reader_free(r);
	return 0;
}
