/*
 * unit-util.c - helpers shared by the unit tests (see unit-util.h).
 *
 * Design: each helper checks what it does with cmocka's asserts, so a
 * test reads as its steps; files and commands go through plain stdio and
 * /bin/sh.
 *
 * Must never: be linked into the stepscope command or the runtime.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit-util.h"

#ifndef SS_SOURCE_DIR
#error "SS_SOURCE_DIR must name the source tree"
#endif

#define SS_UT_STACK_MAX 32

char *ss_ut_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {  /* no size known in advance: /proc files say 0 */
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	return buf;
}

void ss_ut_sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	if (system(cmd)) {
		print_error("failed: %s\n", cmd);
		fail();
	}
}

int ss_ut_rm_rf(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

struct ss_event ss_ut_event(uint64_t ts, unsigned kind, uint64_t arg)
{
	struct ss_event e = { ts, SS_EV_WORD(kind, arg) };

	return e;
}

struct ss_event ss_ut_ev(uint64_t ts, unsigned kind, void (*fn)(void))
{
	return ss_ut_event(ts, kind, (uint64_t)(uintptr_t)fn);
}

void ss_ut_tw_self_maps(struct ss_tw *w)
{
	char *maps = ss_ut_slurp("/proc/self/maps");

	assert_non_null(maps);
	ss_tw_meta_maps(w, 1, maps);
	free(maps);
}

void ss_ut_tw_stackdef_pcs(struct ss_tw *w, uint64_t id, const uint64_t *pc,
			   size_t n)
{
	uint8_t buf[sizeof(struct ss_meta_stackdef) + SS_UT_STACK_MAX * sizeof(uint64_t)];
	struct ss_meta_stackdef d = { id, n };

	assert_true(n <= SS_UT_STACK_MAX);
	memcpy(buf, &d, sizeof(d));
	memcpy(buf + sizeof(d), pc, n * sizeof(*pc));
	ss_tw_meta(w, SS_META_STACKDEF, 1, buf, sizeof(d) + n * sizeof(*pc));
}

void ss_ut_tw_stackdef(struct ss_tw *w, uint64_t id, void (*const *fn)(void),
		       size_t n)
{
	uint64_t pc[SS_UT_STACK_MAX];
	size_t i;

	assert_true(n <= SS_UT_STACK_MAX);
	for (i = 0; i < n; i++)
		pc[i] = (uint64_t)(uintptr_t)fn[i] + 1;
	ss_ut_tw_stackdef_pcs(w, id, pc, n);
}

void ss_ut_need_protoc(const char *why)
{
	if (system("command -v protoc >/dev/null 2>&1"))
		fail_msg("%s: protoc is not installed (Debian package protobuf-compiler; "
			 "`make test` installs it)", why);
}

static char *ss_ut_protoc_decode(const char *pf, const char *txt)
{
	char cmd[2048], *t;

	snprintf(cmd, sizeof(cmd),
		 "protoc -I%s/tests/proto --decode=perfetto.protos.Trace "
		 "%s/tests/proto/perfetto-subset.proto < %s > %s",
		 SS_SOURCE_DIR, SS_SOURCE_DIR, pf, txt);
	if (system(cmd)) {
		print_error("protoc could not decode %s: %s\n", pf, cmd);
		fail();
	}
	t = ss_ut_slurp(txt);
	assert_non_null(t);
	return t;
}

char *ss_ut_perfetto_text(const char *run, const char *out)
{
	char pf[4200], txt[4200];

	snprintf(pf, sizeof(pf), "%s.perfetto-trace", out);
	snprintf(txt, sizeof(txt), "%s.txt", out);
	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope symbolize -q --format perfetto -o %s %s 2>/dev/null",
		 pf, run);
	return ss_ut_protoc_decode(pf, txt);
}
