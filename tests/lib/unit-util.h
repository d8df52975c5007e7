/*
 * unit-util.h - what the unit tests of symbolize/ share: reading a file
 * whole, running a shell command that must succeed, raw events and stack
 * records for synthetic traces (trace-writer.h) whose addresses are
 * functions of the test binary, and decoding a Perfetto trace with protoc.
 *
 * Every helper fails the running cmocka test with what went wrong; call
 * them from cmocka tests (or their setup) only.
 */
#ifndef SS_UNIT_UTIL_H
#define SS_UNIT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "trace-writer.h"

/* The whole file, NUL-terminated and malloc'ed; NULL if it cannot be
 * opened.  Reads to the end (/proc files give no size). */
char *ss_ut_slurp(const char *path);

/* Run fmt with a and b (two %s) through the shell; fail on non-zero. */
void ss_ut_sh(const char *fmt, const char *a, const char *b);

/* rm -rf dir: 0, or -1 (for a cmocka teardown). */
int ss_ut_rm_rf(const char *dir);

/* A raw event: kind with its argument (an address, a count, an id). */
struct ss_event ss_ut_event(uint64_t ts, unsigned kind, uint64_t arg);
/* An ENTER or EXIT of function fn of this binary. */
struct ss_event ss_ut_ev(uint64_t ts, unsigned kind, void (*fn)(void));

/* This process's /proc/self/maps as the trace's MAPS record (at ts 1), so
 * the symbol readers name the functions of this binary. */
void ss_ut_tw_self_maps(struct ss_tw *w);

/* SS_META_STACKDEF `id` of n (at most 32) return addresses as given. */
void ss_ut_tw_stackdef_pcs(struct ss_tw *w, uint64_t id, const uint64_t *pc,
			   size_t n);
/* SS_META_STACKDEF `id` whose frames are the functions fn[] (innermost
 * first): return addresses just past each start, so the reader, which
 * resolves the byte before, names the function itself. */
void ss_ut_tw_stackdef(struct ss_tw *w, uint64_t id, void (*const *fn)(void),
		       size_t n);

/* Fail the test when protoc is not installed, saying "WHY: protoc is not
 * installed (Debian package protobuf-compiler ...)". */
void ss_ut_need_protoc(const char *why);
/* `stepscope symbolize -q --format perfetto` of run directory run into
 * OUT.perfetto-trace, decoded by protoc against
 * tests/proto/perfetto-subset.proto into OUT.txt: that text (malloc'ed).
 * Fails the test when protoc cannot decode the file. */
char *ss_ut_perfetto_text(const char *run, const char *out);

#endif /* SS_UNIT_UTIL_H */
