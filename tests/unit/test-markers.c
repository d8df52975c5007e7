/*
 * test-markers.c - what happened to the recording, as the outputs show it,
 * on a synthetic raw trace (trace-writer.h) with exact times: a STOP (the
 * size cap) and a LOST event become instant events on their thread in
 * trace.json ("ph":"i", "s":"t", the lost count in args) and INSTANT
 * TrackEvents in the Perfetto trace (decoded with protoc); every way a
 * frame can be unwound (longjmp, an outer frame's exit, pthread_exit,
 * exit) gives its reason in args.unwound / an "unwound" annotation (on
 * the Perfetto END).
 *
 * The Perfetto part fails, saying so, when protoc is not installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace-writer.h"
#include "unit-util.h"

__attribute__((noinline, used)) void ss_m_outer(void) { __asm__ volatile(""); }
__attribute__((noinline, used)) void ss_m_inner(void) { __asm__ volatile("nop"); }
__attribute__((noinline, used)) void ss_m_leaf(void) { __asm__ volatile("nop; nop"); }

static char dir[] = "/tmp/ss-test-markers-XXXXXX";

static uint64_t fn(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f;
}

/*
 * tid 500, no step records (one window over the whole run), t0 = 1000:
 *   outer [1000, 2100]                 clipped at the STOP
 *     inner [1100, 1200]               UNWIND reason 2: exit
 *     inner [1300, 1500]
 *       leaf [1400, 1500]              inner's EXIT came first: longjmp
 *     LOST 7 at 1600
 *     inner [1700, 1800]               UNWIND reason 1: thread_exit
 *     inner [1900, 2000]               UNWIND reason 0: longjmp
 *   STOP (size cap) at 2100
 */
static int setup(void **state)
{
	struct ss_tw *w;
	char path[256];
	const uint64_t o = fn(ss_m_outer), in = fn(ss_m_inner), l = fn(ss_m_leaf);
	struct ss_event e[] = {
		ss_ut_event(1000, SS_EV_ENTER, o),
		ss_ut_event(1100, SS_EV_ENTER, in),
		ss_ut_event(1200, SS_EV_UNWIND, in | (uint64_t)SS_UNWIND_EXIT << SS_UNWIND_SHIFT),
		ss_ut_event(1300, SS_EV_ENTER, in),
		ss_ut_event(1400, SS_EV_ENTER, l),
		ss_ut_event(1500, SS_EV_EXIT, in),
		ss_ut_event(1600, SS_EV_LOST, 7),
		ss_ut_event(1700, SS_EV_ENTER, in),
		ss_ut_event(1800, SS_EV_UNWIND,
			    in | (uint64_t)SS_UNWIND_THREAD_EXIT << SS_UNWIND_SHIFT),
		ss_ut_event(1900, SS_EV_ENTER, in),
		ss_ut_event(2000, SS_EV_UNWIND,
			    in | (uint64_t)SS_UNWIND_SKIPPED << SS_UNWIND_SHIFT),
		ss_ut_event(2100, SS_EV_STOP, SS_STOP_SIZE_CAP),
	};

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	w = ss_tw_new(SS_CLOCK_MONOTONIC, 55);
	ss_ut_tw_self_maps(w);
	ss_tw_meta_thread(w, 500, "worker");
	ss_tw_events(w, 500, 1, 0, e, sizeof(e) / sizeof(e[0]), 32);
	snprintf(path, sizeof(path), "%s/prog.55.sstrace", dir);
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

/* The one line of text t that starts with `head` ends with `tail`. */
static void expect_line(const char *t, const char *head, const char *tail)
{
	const char *p = t;
	size_t hl = strlen(head), tl = strlen(tail);
	int found = 0;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len >= hl && !strncmp(p, head, hl)) {
			found++;
			if (len < hl + tl || strncmp(p + len - tl, tail, tl)) {
				print_error("line %.*s\ndoes not end with %s\n", (int)len, p, tail);
				fail();
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	if (found != 1) {
		print_error("%d lines start with %s, expected 1 in:\n%s\n", found, head, t);
		fail();
	}
}

static size_t count(const char *t, const char *s)
{
	size_t n = 0;

	while ((t = strstr(t, s))) {
		n++;
		t += strlen(s);
	}
	return n;
}

#define FN "{\"ph\":\"X\",\"name\":"
#define PT "\"pid\":55,\"tid\":500,"

static void test_chrome(void **state)
{
	char json[300], *t;

	(void)state;
	snprintf(json, sizeof(json), "%s/trace.json", dir);
	ss_ut_sh(SS_BUILD_DIR "/bin/stepscope symbolize -q --details -o %s %s 2>/dev/null", json,
		 dir);
	t = ss_ut_slurp(json);
	assert_non_null(t);
	/* the markers, exactly, on the thread that recorded them */
	assert_non_null(strstr(t,
		"\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"stepscope\",\"name\":\"stepscope: events lost\","
		PT "\"ts\":0.600,\"args\":{\"count\":7}},\n"));
	assert_non_null(strstr(t,
		"\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"stepscope\","
		"\"name\":\"stepscope: recording stopped (max_trace_mb)\","
		PT "\"ts\":1.100},\n"));
	assert_int_equal(count(t, "\"ph\":\"i\""), 2);
	/* each unwound slice with its reason (args hold file and addr first) */
	expect_line(t, FN "\"ss_m_inner\"," PT "\"ts\":0.100,\"dur\":0.100,\"args\":{",
		    ",\"unwound\":\"exit\"}},");
	expect_line(t, FN "\"ss_m_leaf\"," PT "\"ts\":0.400,\"dur\":0.100,\"args\":{",
		    ",\"unwound\":\"longjmp\"}},");
	expect_line(t, FN "\"ss_m_inner\"," PT "\"ts\":0.300,\"dur\":0.200,\"args\":{",
		    "\"}},");
	expect_line(t, FN "\"ss_m_inner\"," PT "\"ts\":0.700,\"dur\":0.100,\"args\":{",
		    ",\"unwound\":\"thread_exit\"}},");
	expect_line(t, FN "\"ss_m_inner\"," PT "\"ts\":0.900,\"dur\":0.100,\"args\":{",
		    ",\"unwound\":\"longjmp\"}},");
	/* the frame open at the stop ends there, clipped */
	expect_line(t, FN "\"ss_m_outer\"," PT "\"ts\":0.000,\"dur\":1.100,\"args\":{",
		    ",\"clipped\":\"end\"}}");
	assert_int_equal(count(t, "\"unwound\""), 4);
	free(t);
}

static void test_perfetto(void **state)
{
	char out[300], *t;

	(void)state;
	ss_ut_need_protoc("test-markers: the perfetto part");
	snprintf(out, sizeof(out), "%s/t", dir);
	t = ss_ut_perfetto_text(dir, out);
	/* names are interned as calls open: ss_m_outer 1, ss_m_inner 2,
	 * ss_m_leaf 3, then the markers 4 and 5 */
	assert_non_null(strstr(t,
		"  timestamp: 100\n"
		"  trusted_packet_sequence_id: 1\n"
		"  track_event {\n"
		"    debug_annotations {\n"
		"      uint_value: 7\n"
		"      name: \"count\"\n"
		"    }\n"
		"    type: TYPE_INSTANT\n"
		"    name_iid: 4\n"
		"  }\n"
		"  interned_data {\n"
		"    event_names {\n"
		"      iid: 4\n"
		"      name: \"stepscope: events lost\"\n"
		"    }\n"
		"  }\n"
		"}\n"));
	/* event packets carry no sequence_flags (perfetto.c: only each
	 * sequence's first packet clears the state) */
	assert_non_null(strstr(t,
		"  track_event {\n"
		"    type: TYPE_INSTANT\n"
		"    name_iid: 5\n"
		"  }\n"
		"  interned_data {\n"
		"    event_names {\n"
		"      iid: 5\n"
		"      name: \"stepscope: recording stopped (max_trace_mb)\"\n"
		"    }\n"
		"  }\n"));
	assert_int_equal(count(t, "type: TYPE_INSTANT"), 2);
	/* the reason rides on the END (Perfetto adds it to the slice's args) */
	assert_non_null(strstr(t,
		"  track_event {\n"
		"    debug_annotations {\n"
		"      string_value: \"exit\"\n"
		"      name: \"unwound\"\n"
		"    }\n"
		"    type: TYPE_SLICE_END\n"
		"  }\n"));
	assert_int_equal(count(t, "string_value: \"exit\""), 1);
	assert_int_equal(count(t, "string_value: \"thread_exit\""), 1);
	assert_int_equal(count(t, "string_value: \"longjmp\""), 2);
	assert_int_equal(count(t, "name: \"unwound\""), 4);
	assert_int_equal(count(t, "type: TYPE_SLICE_BEGIN"), 6);
	assert_int_equal(count(t, "type: TYPE_SLICE_END"), 6);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrome),
		cmocka_unit_test(test_perfetto),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
