/*
 * test-perfetto.c - `stepscope symbolize --format perfetto` on a synthetic
 * raw trace (exact times, names from this binary): the file decodes with
 * protoc against tests/proto/perfetto-subset.proto, every slice appears as
 * one SLICE_BEGIN with the right interned name and one SLICE_END, steps
 * land on their own track, memory samples become counter events (and "C"
 * events in the Chrome JSON), and timestamps rebuilt from the incremental
 * clock are exact.  With record.stack, a slice's native stack is its
 * BEGIN's callstack_iid, resolved through the interned callstacks, frames
 * and function names.
 *
 * Fails, saying so, when protoc is not installed (`make test` installs it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace-writer.h"
#include "unit-util.h"

__attribute__((noinline, used)) void ss_p_outer(void) { __asm__ volatile(""); }
__attribute__((noinline, used)) void ss_p_inner(void) { __asm__ volatile("nop"); }
/* never entered: library code in native stacks */
__attribute__((noinline, used)) void ss_p_lib(void) { __asm__ volatile("nop; nop"); }

static char dir[] = "/tmp/ss-test-perfetto-XXXXXX";
static char sdir[300];  /* a run with native stacks, under dir */

/* outer [1000, 3000] with stack 1 (outer <- lib), inner [1100, 1200] and
 * [2000, 2500] both with stack 2 (inner <- lib <- outer). */
static void write_stack_trace(void)
{
	static void (*const s1[])(void) = { ss_p_outer, ss_p_lib };
	static void (*const s2[])(void) = { ss_p_inner, ss_p_lib, ss_p_outer };
	struct ss_tw *w = ss_tw_new(SS_CLOCK_MONOTONIC, 78);
	char path[400];
	struct ss_event e[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_p_outer), ss_ut_event(1000, SS_EV_STACK, 1),
		ss_ut_ev(1100, SS_EV_ENTER, ss_p_inner), ss_ut_event(1100, SS_EV_STACK, 2),
		ss_ut_ev(1200, SS_EV_EXIT, ss_p_inner),
		ss_ut_ev(2000, SS_EV_ENTER, ss_p_inner), ss_ut_event(2000, SS_EV_STACK, 2),
		ss_ut_ev(2500, SS_EV_EXIT, ss_p_inner),
		ss_ut_ev(3000, SS_EV_EXIT, ss_p_outer),
	};

	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 78, "stacked");
	ss_ut_tw_stackdef(w, 1, s1, 2);
	ss_ut_tw_stackdef(w, 2, s2, 3);
	ss_tw_events(w, 78, 1, 0, e, sizeof(e) / sizeof(e[0]), 16);
	snprintf(path, sizeof(path), "%s/prog.78.sstrace", sdir);
	assert_int_equal(ss_tw_write(w, path, SIZE_MAX), 0);
	ss_tw_free(w);
}

/* outer [1000, 5000] calls inner 3 times: [1100,1200] [2000,2500] [3000,4000];
 * steps 7 at 900 and 8 at 2900; two memory samples. */
static int setup(void **state)
{
	struct ss_tw *w;
	char path[256];
	struct ss_meta_counter c;
	struct ss_event e[] = {
		ss_ut_ev(1000, SS_EV_ENTER, ss_p_outer),
		ss_ut_ev(1100, SS_EV_ENTER, ss_p_inner), ss_ut_ev(1200, SS_EV_EXIT, ss_p_inner),
		ss_ut_ev(2000, SS_EV_ENTER, ss_p_inner), ss_ut_ev(2500, SS_EV_EXIT, ss_p_inner),
		ss_ut_ev(3000, SS_EV_ENTER, ss_p_inner), ss_ut_ev(4000, SS_EV_EXIT, ss_p_inner),
		ss_ut_ev(5000, SS_EV_EXIT, ss_p_outer),
	};

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	w = ss_tw_new(SS_CLOCK_MONOTONIC, 77);
	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 77, "main-thread");
	snprintf(sdir, sizeof(sdir), "%s/stacks", dir);
	if (mkdir(sdir, 0755))
		return -1;
	write_stack_trace();
	ss_tw_meta_step(w, 900, 7, 77, 1, SS_STEP_RECORD, 0);
	ss_tw_meta_step(w, 2900, 8, 77, 1, SS_STEP_RECORD, 0);
	memset(&c, 0, sizeof(c));
	strcpy(c.track, "host.rss");
	c.value = 1000000;
	ss_tw_meta(w, SS_META_COUNTER, 1500, &c, sizeof(c));
	c.value = 2000000;
	ss_tw_meta(w, SS_META_COUNTER, 3500, &c, sizeof(c));
	ss_tw_events(w, 77, 1, 0, e, sizeof(e) / sizeof(e[0]), 64);
	snprintf(path, sizeof(path), "%s/prog.77.sstrace", dir);
	if (ss_tw_write(w, path, SIZE_MAX))
		return -1;
	ss_tw_free(w);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ss_ut_rm_rf(dir);
}

struct decoded {
	int begins[4];      /* outer, inner, ProfilerStep#7, ProfilerStep#8 */
	int ends, counters, other_begins;
	uint64_t inner_ts[3];
	int ninner;
};

/* Walk protoc's text output: per packet, resolve name_iid through the
 * names interned on its sequence, rebuild absolute time from the clock
 * snapshot and the deltas. */
static void decode(const char *text, struct decoded *d)
{
	static const char *const want[] = { "ss_p_outer", "ss_p_inner",
					    "ProfilerStep#7", "ProfilerStep#8" };
	char names[64][64];
	char *copy = strdup(text), *save = NULL, *l;
	uint64_t iid = 0, ts = 0, now = 0, cur_iid = 0, snap = 0;
	int type = 0, in_snap = 0, have_ts = 0, k;

	memset(d, 0, sizeof(*d));
	memset(names, 0, sizeof(names));
	for (l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		char s[64];
		int top = l[0] == '}';  /* the end of a packet */
		while (*l == ' ')
			l++;
		if (!strcmp(l, "packet {")) {
			type = 0;
			cur_iid = 0;
			have_ts = 0;
		} else if (!strcmp(l, "clock_snapshot {")) {
			in_snap = 1;
		} else if (in_snap && sscanf(l, "timestamp: %llu", &v) == 1) {
			snap = v;
		} else if (in_snap && !strncmp(l, "is_incremental: true", 20)) {
			now = snap;
			in_snap = 0;
		} else if (sscanf(l, "timestamp: %llu", &v) == 1) {
			ts = v;
			have_ts = 1;
		} else if (sscanf(l, "name_iid: %llu", &v) == 1) {
			cur_iid = v;
		} else if (sscanf(l, "iid: %llu", &v) == 1) {
			iid = v;
		} else if (sscanf(l, "name: \"%63[^\"]\"", s) == 1 && iid && iid < 64) {
			strcpy(names[iid], s);
			iid = 0;
		} else if (!strcmp(l, "type: TYPE_SLICE_BEGIN")) {
			type = 1;
		} else if (!strcmp(l, "type: TYPE_SLICE_END")) {
			type = 2;
		} else if (!strcmp(l, "type: TYPE_COUNTER")) {
			type = 4;
		} else if (top && type) {
			if (have_ts)
				now += ts;
			have_ts = 0;
			if (type == 1) {
				const char *n = cur_iid < 64 ? names[cur_iid] : "";
				int hit = 0;
				for (k = 0; k < 4; k++)
					if (!strcmp(n, want[k])) {
						d->begins[k]++;
						hit = 1;
					}
				if (!hit)
					d->other_begins++;
				if (!strcmp(n, "ss_p_inner") && d->ninner < 3)
					d->inner_ts[d->ninner++] = now;
			} else if (type == 2) {
				d->ends++;
			} else if (type == 4) {
				d->counters++;
			}
			type = 0;
		}
	}
	free(copy);
}

static void test_perfetto_decodes(void **state)
{
	char out[300], json[300], *t;
	struct decoded d;

	(void)state;
	ss_ut_need_protoc("test-perfetto");
	snprintf(out, sizeof(out), "%s/t", dir);
	snprintf(json, sizeof(json), "%s/t.json", dir);
	t = ss_ut_perfetto_text(dir, out);
	decode(t, &d);
	assert_int_equal(d.begins[0], 1);
	assert_int_equal(d.begins[1], 3);
	assert_int_equal(d.begins[2], 1);
	assert_int_equal(d.begins[3], 1);
	assert_int_equal(d.other_begins, 0);
	assert_int_equal(d.ends, 6);
	assert_int_equal(d.counters, 2);
	/* absolute times rebuilt from the snapshot and the deltas */
	assert_int_equal(d.ninner, 3);
	assert_int_equal(d.inner_ts[0], 1100);
	assert_int_equal(d.inner_ts[1], 2000);
	assert_int_equal(d.inner_ts[2], 3000);
	assert_non_null(strstr(t, "thread_name: \"main-thread\""));
	assert_non_null(strstr(t, "unit: UNIT_SIZE_BYTES"));
	assert_non_null(strstr(t, "name: \"host.rss\""));
	assert_non_null(strstr(t, "counter_value: 2000000"));
	free(t);

	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope symbolize -q -o %s %s 2>/dev/null", json, dir);
	t = ss_ut_slurp(json);
	assert_non_null(strstr(t, "{\"ph\":\"C\",\"name\":\"host.rss\""));
	free(t);
}

/* The interned tables of one sequence and the BEGINs that use them, read
 * from protoc's text output. */
struct cs_decoded {
	char fname[16][32];          /* function_names: iid -> str */
	uint64_t frame_fn[16];       /* frames: iid -> function_name_id */
	uint64_t cs[8][8];           /* callstacks: iid -> frame_ids */
	int ncs_frames[8];
	int ncallstacks;
	char begin_name[8][32];      /* BEGINs in order: name, callstack_iid */
	uint64_t begin_cs[8];
	int nbegins;
};

static void decode_callstacks(const char *text, struct cs_decoded *d)
{
	char ename[16][32];
	char *copy = strdup(text), *save = NULL, *l;
	enum { NONE, EVNAME, FNAME, FRAME, CSTACK } in = NONE;
	uint64_t iid = 0, name_iid = 0, cs_iid = 0;
	int begin = 0;

	memset(d, 0, sizeof(*d));
	memset(ename, 0, sizeof(ename));
	for (l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		char s[64];
		int top = l[0] == '}';
		while (*l == ' ')
			l++;
		if (!strcmp(l, "event_names {"))
			in = EVNAME;
		else if (!strcmp(l, "function_names {"))
			in = FNAME;
		else if (!strcmp(l, "frames {"))
			in = FRAME;
		else if (!strcmp(l, "callstacks {")) {
			in = CSTACK;
			d->ncallstacks++;
		} else if (in != NONE && sscanf(l, "iid: %llu", &v) == 1)
			iid = v < 16 ? v : 0;
		else if (in == EVNAME && sscanf(l, "name: \"%31[^\"]\"", s) == 1)
			strcpy(ename[iid], s);
		else if (in == FNAME && sscanf(l, "str: \"%31[^\"]\"", s) == 1)
			strcpy(d->fname[iid], s);
		else if (in == FRAME && sscanf(l, "function_name_id: %llu", &v) == 1)
			d->frame_fn[iid] = v;
		else if (in == CSTACK && sscanf(l, "frame_ids: %llu", &v) == 1 && iid < 8 &&
			 d->ncs_frames[iid] < 8)
			d->cs[iid][d->ncs_frames[iid]++] = v;
		else if (!strcmp(l, "}"))
			in = NONE;
		else if (!strcmp(l, "type: TYPE_SLICE_BEGIN"))
			begin = 1;
		else if (sscanf(l, "name_iid: %llu", &v) == 1)
			name_iid = v < 16 ? v : 0;
		else if (sscanf(l, "callstack_iid: %llu", &v) == 1)
			cs_iid = v;
		if (top) {  /* the end of a packet: its interned data is in */
			if (begin && d->nbegins < 8) {
				strcpy(d->begin_name[d->nbegins], ename[name_iid]);
				d->begin_cs[d->nbegins++] = cs_iid;
			}
			begin = 0;
			name_iid = cs_iid = 0;
		}
	}
	free(copy);
}

/* Callstack iid as "outermost;...;innermost" function names. */
static void cs_text(const struct cs_decoded *d, uint64_t cs, char *out, size_t len)
{
	size_t k = 0;
	int i;

	out[0] = 0;
	if (cs >= 8)
		return;
	for (i = 0; i < d->ncs_frames[cs]; i++) {
		uint64_t f = d->cs[cs][i];
		uint64_t fn = f < 16 ? d->frame_fn[f] : 0;
		k += (size_t)snprintf(out + k, len - k, "%s%s", i ? ";" : "",
				      fn < 16 ? d->fname[fn] : "?");
	}
}

static void test_perfetto_callstacks(void **state)
{
	char out[400], got[256], *t;
	struct cs_decoded d;

	(void)state;
	ss_ut_need_protoc("test-perfetto");
	snprintf(out, sizeof(out), "%s/s", dir);
	t = ss_ut_perfetto_text(sdir, out);
	decode_callstacks(t, &d);
	free(t);
	assert_int_equal(d.nbegins, 3);
	/* each distinct stack interned once on the sequence */
	assert_int_equal(d.ncallstacks, 2);
	assert_string_equal(d.begin_name[0], "ss_p_outer");
	cs_text(&d, d.begin_cs[0], got, sizeof(got));
	assert_string_equal(got, "ss_p_lib;ss_p_outer");
	assert_string_equal(d.begin_name[1], "ss_p_inner");
	cs_text(&d, d.begin_cs[1], got, sizeof(got));
	assert_string_equal(got, "ss_p_outer;ss_p_lib;ss_p_inner");
	assert_string_equal(d.begin_name[2], "ss_p_inner");
	assert_int_equal(d.begin_cs[2], d.begin_cs[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfetto_decodes),
		cmocka_unit_test(test_perfetto_callstacks),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
