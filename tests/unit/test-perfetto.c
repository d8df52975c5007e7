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
static char odir[300];  /* a run whose outer call began before recording */

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
	{
		/* whole run (no steps): inner [100, 200], then the EXIT of an
		 * outer call whose ENTER was never recorded: outer [100, 300]
		 * clipped, a slice no opening announced */
		struct ss_tw *o = ss_tw_new(SS_CLOCK_MONOTONIC, 79);
		struct ss_event oe[] = {
			ss_ut_ev(100, SS_EV_ENTER, ss_p_inner), ss_ut_ev(200, SS_EV_EXIT, ss_p_inner),
			ss_ut_ev(300, SS_EV_EXIT, ss_p_outer),
		};
		snprintf(odir, sizeof(odir), "%s/orphan", dir);
		if (mkdir(odir, 0755))
			return -1;
		ss_ut_tw_self_maps(o);
		ss_tw_events(o, 79, 1, 0, oe, sizeof(oe) / sizeof(oe[0]), 16);
		snprintf(path, sizeof(path), "%s/prog.79.sstrace", odir);
		if (ss_tw_write(o, path, SIZE_MAX))
			return -1;
		ss_tw_free(o);
	}
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

/* A strict reading of protoc's text output: times per sequence from its
 * clock snapshot and deltas, names from the sequence's interned data, a
 * BEGIN/END stack per track; each slice as "TRACK NAME BEGIN-END" when its
 * END comes.  Counts what breaks the protocol. */
struct strict {
	char slices[32][96];
	int n;
	int bad_order;     /* an END with nothing open, or ending before its BEGIN */
	int flagged;       /* event packets with sequence_flags (2 bytes each,
			    * and no use in a file written whole) */
	int no_cleared;    /* snapshot packets without SEQ_INCREMENTAL_STATE_CLEARED */
	int boottime;      /* clocks declared BOOTTIME */
	int open_left;
};

static void strict_decode(const char *text, struct strict *d)
{
	char names[8][64][48], tname[64][24];
	uint64_t now[8] = { 0 }, deftrack[8] = { 0 };
	uint64_t stk_b[64][16];
	uint32_t stk_n[64][16];
	int sp[64];
	char *copy = strdup(text), *save = NULL, *l;
	char block[16][40];
	int depth = 0;
	/* per packet */
	uint64_t seq = 0, ts = 0, iid = 0, name_iid = 0, track = 0, snap_ts = 0;
	int type = 0, flags = -1, has_ts = 0, is_snap = 0;

	memset(d, 0, sizeof(*d));
	memset(names, 0, sizeof(names));
	memset(tname, 0, sizeof(tname));
	memset(sp, 0, sizeof(sp));
	for (l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		char str[48];
		const char *in;
		while (*l == ' ')
			l++;
		in = depth ? block[depth - 1] : "";
		if (strlen(l) > 2 && !strcmp(l + strlen(l) - 2, " {")) {
			if (depth < 16)
				snprintf(block[depth], sizeof(block[0]), "%.*s",
					 (int)(strlen(l) - 2), l);
			depth++;
			if (depth == 1) {
				seq = ts = name_iid = track = 0;
				type = has_ts = is_snap = 0;
				flags = -1;
			}
			if (!strcmp(l, "clock_snapshot {"))
				is_snap = 1;
			continue;
		}
		if (!strcmp(l, "}")) {
			depth--;
			if (depth)
				continue;
			/* end of a packet */
			if (seq >= 8)
				continue;
			if (is_snap) {
				now[seq] = snap_ts;
				d->no_cleared += flags != 1;
			}
			if (!type)
				continue;
			d->flagged += flags != -1;
			if (has_ts)
				now[seq] += ts;
			{
				uint64_t tr = track ? track : deftrack[seq];
				int k = tr < 64 ? (int)tr : 0;
				if (type == 1 && sp[k] < 16) {
					stk_b[k][sp[k]] = now[seq];
					stk_n[k][sp[k]++] = (uint32_t)name_iid;
				} else if (type == 2) {
					if (!sp[k] || stk_b[k][sp[k] - 1] > now[seq]) {
						d->bad_order++;
						continue;
					}
					sp[k]--;
					if (d->n < 32)
						snprintf(d->slices[d->n++], sizeof(d->slices[0]),
							 "%s %s %llu-%llu",
							 tname[k][0] ? tname[k] : "thread",
							 stk_n[k][sp[k]] < 64 ? names[seq][stk_n[k][sp[k]]] : "?",
							 (unsigned long long)stk_b[k][sp[k]],
							 (unsigned long long)now[seq]);
				}
			}
			continue;
		}
		if (sscanf(l, "trusted_packet_sequence_id: %llu", &v) == 1) {
			seq = v;
		} else if (sscanf(l, "sequence_flags: %llu", &v) == 1) {
			flags = (int)v;
		} else if (!strcmp(in, "clocks") && sscanf(l, "clock_id: %llu", &v) == 1) {
			d->boottime += v == 6;
		} else if (!strcmp(in, "clocks") && sscanf(l, "timestamp: %llu", &v) == 1) {
			snap_ts = v;
		} else if (depth == 1 && sscanf(l, "timestamp: %llu", &v) == 1) {
			ts = v;
			has_ts = 1;
		} else if (!strcmp(in, "event_names") && sscanf(l, "iid: %llu", &v) == 1) {
			iid = v;
		} else if (!strcmp(in, "event_names") &&
			   sscanf(l, "name: \"%47[^\"]\"", str) == 1 && iid < 64 && seq < 8) {
			strcpy(names[seq][iid], str);
		} else if (!strcmp(in, "track_descriptor") && sscanf(l, "uuid: %llu", &v) == 1) {
			iid = v;
		} else if (!strcmp(in, "track_descriptor") &&
			   sscanf(l, "name: \"%23[^\"]\"", str) == 1 && iid < 64) {
			strcpy(tname[iid], str);
		} else if (!strcmp(in, "track_event_defaults") &&
			   sscanf(l, "track_uuid: %llu", &v) == 1 && seq < 8) {
			deftrack[seq] = v;
		} else if (!strcmp(in, "track_event") && sscanf(l, "track_uuid: %llu", &v) == 1) {
			track = v;
		} else if (!strcmp(in, "track_event") && sscanf(l, "name_iid: %llu", &v) == 1) {
			name_iid = v;
		} else if (!strcmp(l, "type: TYPE_SLICE_BEGIN")) {
			type = 1;
		} else if (!strcmp(l, "type: TYPE_SLICE_END")) {
			type = 2;
		} else if (!strcmp(l, "type: TYPE_COUNTER") || !strcmp(l, "type: TYPE_INSTANT")) {
			type = 3;
		}
	}
	for (int k = 0; k < 64; k++)
		d->open_left += sp[k];
	free(copy);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Event packets carry no sequence flags, every snapshot clears the
 * sequence's incremental state; only MONOTONIC is declared, as the primary clock;
 * BEGIN/END nest per track with exact times; consecutive steps do not
 * touch; the process is named without its pid. */
static void test_perfetto_protocol(void **state)
{
	static const char *const want[] = {
		"steps ProfilerStep#7 900-2899", "steps ProfilerStep#8 2900-4999",
		"thread ss_p_inner 1100-1200", "thread ss_p_inner 2000-2500",
		"thread ss_p_inner 3000-4000", "thread ss_p_outer 1000-5000",
	};
	char out[300], *t;
	struct strict d;
	int i;

	(void)state;
	ss_ut_need_protoc("test-perfetto: skipped");
	snprintf(out, sizeof(out), "%s/p", dir);
	t = ss_ut_perfetto_text(dir, out);
	strict_decode(t, &d);
	assert_int_equal(d.bad_order, 0);
	assert_int_equal(d.open_left, 0);
	assert_int_equal(d.flagged, 0);
	assert_int_equal(d.no_cleared, 0);
	assert_int_equal(d.boottime, 0);
	assert_non_null(strstr(t, "primary_trace_clock: 3"));
	assert_non_null(strstr(t, "process_name: \""));
	assert_null(strstr(t, "(pid"));
	qsort(d.slices, (size_t)d.n, sizeof(d.slices[0]), cmp_str);
	for (i = 0; i < d.n || i < 6; i++)
		if (i >= d.n || i >= 6 || strcmp(d.slices[i], want[i]))
			fail_msg("slice %d: got '%s', want '%s'", i, i < d.n ? d.slices[i] : "(none)",
				 i < 6 ? want[i] : "(none)");
	free(t);
}

/* A slice that no opening announced (its ENTER preceded the recording)
 * comes on a sequence of its own, still a well-formed BEGIN/END pair. */
static void test_perfetto_unannounced(void **state)
{
	char out[400], *t;
	struct strict d;

	(void)state;
	ss_ut_need_protoc("test-perfetto: skipped");
	snprintf(out, sizeof(out), "%s/o", dir);
	t = ss_ut_perfetto_text(odir, out);
	strict_decode(t, &d);
	free(t);
	assert_int_equal(d.bad_order, 0);
	assert_int_equal(d.open_left, 0);
	assert_int_equal(d.flagged, 0);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.slices[0], "thread ss_p_inner 100-200");
	assert_string_equal(d.slices[1], "thread ss_p_outer 100-300");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfetto_decodes),
		cmocka_unit_test(test_perfetto_callstacks),
		cmocka_unit_test(test_perfetto_protocol),
		cmocka_unit_test(test_perfetto_unannounced),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
