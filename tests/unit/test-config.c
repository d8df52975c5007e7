/*
 * test-config.c - the window config (runtime/config.c): defaults, YAML files,
 * overrides, STEPSCOPE_SET, lookup order, dump/set round trip, the exact
 * error messages users see, and every shipped .yaml file in configs/.
 *
 * The group setup makes a temporary directory and chdirs into it, so the
 * bad configs are written as "c.yaml" and the expected messages read
 * exactly as a user sees them ("c.yaml:4:3: ...").  Teardown removes what
 * the tests wrote and goes back.  Tests that resolve a config clear
 * STEPSCOPE_CONFIG and STEPSCOPE_SET first and never depend on the caller's
 * environment.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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
#include <yaml.h>

#include "config.h"
#include "config-keys.h"

#ifndef SS_SOURCE_DIR
#define SS_SOURCE_DIR "."
#endif

#define ERR_MAX 1024

static char tmpdir[] = "/tmp/ss-test-config-XXXXXX";
static char old_cwd[PATH_MAX];

static const char *const written[] = { "c.yaml", "a.yaml", "b.yaml", "stepscope.yaml",
				       "full.yaml", NULL };

static int group_setup(void **state)
{
	if (!getcwd(old_cwd, sizeof(old_cwd)) || !mkdtemp(tmpdir) || chdir(tmpdir))
		return -1;
	unsetenv("STEPSCOPE_CONFIG");
	unsetenv("STEPSCOPE_SET");
	return 0;
}

static int group_teardown(void **state)
{
	for (const char *const *f = written; *f; f++)
		unlink(*f);
	rmdir("adir");
	if (chdir(old_cwd))
		return -1;
	return rmdir(tmpdir);
}

/* each test starts with no config files and a clean environment */
static int test_setup(void **state)
{
	for (const char *const *f = written; *f; f++)
		unlink(*f);
	unsetenv("STEPSCOPE_CONFIG");
	unsetenv("STEPSCOPE_SET");
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void expect_set_error(const char *keyval, const char *origin, const char *message);

/* load `text` as c.yaml and check it; "" when good, else the message */
static const char *load_text(struct ss_config *c, const char *text)
{
	static char err[ERR_MAX];

	err[0] = 0;
	write_file("c.yaml", text);
	ss_config_defaults(c);
	if (ss_config_load_file(c, "c.yaml", err, sizeof(err)) == 0 &&
	    ss_config_check(c, err, sizeof(err)) == 0)
		return "";
	if (!err[0])
		return "(failed with an empty message)";
	return err;
}

/* ------------------------------------------------------------ defaults */

static void test_defaults(void **state)
{
	struct ss_config c;
	char err[ERR_MAX];

	ss_config_defaults(&c);
	assert_int_equal(c.enabled, 1);
	assert_string_equal(c.output_dir, "stepscope-out");
	assert_string_equal(c.step_function, "");
	assert_int_equal(c.mode, SS_SCHED_ALL);
	assert_int_equal(c.max_trace_mb, 4096);
	assert_int_equal(c.buffer_kb, 1024);
	assert_int_equal(c.record_stack, 0);
	assert_int_equal(c.record_stack_depth, 16);
	assert_int_equal(c.memory_enabled, 0);
	assert_int_equal(c.memory_interval_ms, 10);
	assert_int_equal(c.memory_every_n_steps, 100);
	assert_int_equal(c.stats, SS_STATS_WINDOW);
	assert_int_equal(c.log_every_n_steps, 0);
	assert_string_equal(c.source, "");
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), 0);

	/* a struct filled by hand is range-checked too */
	c.buffer_kb = 1;
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "config: buffer_kb must be between 64 and 65536, got 1");
	c.buffer_kb = 64;
	c.mode = SS_SCHED_TORCH;
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "config: schedule.active is required (how many steps each cycle records)");
}

/* ------------------------------------------------------------ good files */

static const char full_yaml[] =
	"# every key\n"
	"enabled: yes\n"
	"output_dir: /tmp/traces   # trailing comment\n"
	"step:\n"
	"  function: train_step\n"
	"schedule:\n"
	"  skip_first: 2\n"
	"  wait: 1\n"
	"  warmup: 1\n"
	"  active: 3\n"
	"  repeat: 2\n"
	"max_trace_mb: 0\n"
	"buffer_kb: 256\n"
	"record: {stack: on, stack_depth: 32}\n"
	"memory:\n"
	"  enabled: true\n"
	"  interval_ms: 5\n"
	"  every_n_steps: 7\n"
	"stats: whole_run\n"
	"log:\n"
	"  every_n_steps: 10\n";

static void test_full_file(void **state)
{
	struct ss_config c;

	assert_string_equal(load_text(&c, full_yaml), "");
	assert_int_equal(c.enabled, 1);
	assert_string_equal(c.output_dir, "/tmp/traces");
	assert_string_equal(c.step_function, "train_step");
	assert_int_equal(c.mode, SS_SCHED_TORCH);
	assert_int_equal(c.skip_first, 2);
	assert_int_equal(c.wait, 1);
	assert_int_equal(c.warmup, 1);
	assert_int_equal(c.active, 3);
	assert_int_equal(c.repeat, 2);
	assert_int_equal(c.max_trace_mb, 0);
	assert_int_equal(c.buffer_kb, 256);
	assert_int_equal(c.record_stack, 1);
	assert_int_equal(c.record_stack_depth, 32);
	assert_int_equal(c.memory_enabled, 1);
	assert_int_equal(c.memory_interval_ms, 5);
	assert_int_equal(c.memory_every_n_steps, 7);
	assert_int_equal(c.stats, SS_STATS_WHOLE_RUN);
	assert_int_equal(c.log_every_n_steps, 10);
	assert_string_equal(c.source, "c.yaml");
	/* marks point at the keys */
	assert_int_equal(c.mark[0].line, 2);   /* enabled */
	assert_int_equal(c.mark[0].col, 1);
}

static void test_empty_and_comment_only(void **state)
{
	struct ss_config c, d;

	ss_config_defaults(&d);
	assert_string_equal(load_text(&c, ""), "");
	assert_int_equal(c.mode, SS_SCHED_ALL);
	assert_int_equal(c.buffer_kb, d.buffer_kb);
	assert_string_equal(load_text(&c, "# nothing here\n\n   # at all\n"), "");
	assert_int_equal(c.mode, SS_SCHED_ALL);
	assert_string_equal(load_text(&c, "---\n"), "");
}

static void test_modes_from_file(void **state)
{
	struct ss_config c;

	assert_string_equal(load_text(&c, "window: {start_step: 10, end_step: 20}\n"), "");
	assert_int_equal(c.mode, SS_SCHED_WINDOW);
	assert_int_equal(c.start_step, 10);
	assert_int_equal(c.end_step, 20);

	assert_string_equal(load_text(&c, "every_n_steps: 50\nschedule: {active: 3}\n"), "");
	assert_int_equal(c.mode, SS_SCHED_EVERY_N);
	assert_int_equal(c.every_n_steps, 50);
	assert_int_equal(c.active, 3);
	assert_int_equal(c.wait, 0);
	assert_int_equal(c.warmup, 0);
	assert_int_equal(c.repeat, 0);

	/* missing schedule fields default to 0 */
	assert_string_equal(load_text(&c, "schedule:\n  active: 1\n"), "");
	assert_int_equal(c.mode, SS_SCHED_TORCH);
	assert_int_equal(c.skip_first + c.wait + c.warmup + c.repeat, 0);

	/* dotted keys at the top level mean the same as nested ones */
	assert_string_equal(load_text(&c, "schedule.active: 4\n"), "");
	assert_int_equal(c.mode, SS_SCHED_TORCH);
	assert_int_equal(c.active, 4);

	/* every bool spelling */
	static const char *const t[] = { "true", "True", "yes", "on", "1" };
	static const char *const f[] = { "false", "FALSE", "no", "off", "0" };
	char text[64];

	for (size_t i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "enabled: %s\n", t[i]);
		assert_string_equal(load_text(&c, text), "");
		assert_int_equal(c.enabled, 1);
		snprintf(text, sizeof(text), "enabled: %s\n", f[i]);
		assert_string_equal(load_text(&c, text), "");
		assert_int_equal(c.enabled, 0);
	}
}

/* ------------------------------------------------------------ bad files */

struct bad {
	const char *yaml;
	const char *message;
};

static const struct bad bad_files[] = {
	/* unknown keys, with and without a suggestion */
	{ "step:\n  function: train_step\nschedule:\n  actve: 3\n",
	  "c.yaml:4:3: unknown key 'schedule.actve' (did you mean 'schedule.active'?)" },
	{ "schedul:\n  active: 3\n",
	  "c.yaml:1:1: unknown key 'schedul' (did you mean 'schedule'?)" },
	{ "active: 3\n",
	  "c.yaml:1:1: unknown key 'active' (did you mean 'schedule.active'?)" },
	{ "schedule:\n  active_steps: 3\n",
	  "c.yaml:2:3: unknown key 'schedule.active_steps' (did you mean 'schedule.active'?)" },
	{ "schedule:\n  foo: 1\n",
	  "c.yaml:2:3: unknown key 'schedule.foo' (docs/config.md lists the keys)" },
	{ "enabled: true\nprofiler: 1\n",
	  "c.yaml:2:1: unknown key 'profiler' (docs/config.md lists the keys)" },
	/* wrong types */
	{ "step:\n  function: train_step\nschedule:\n  wait: 1\n  active: three\n",
	  "c.yaml:5:11: schedule.active must be an integer, got 'three'" },
	{ "enabled: maybe\n",
	  "c.yaml:1:10: enabled must be true or false (or yes/no, on/off, 1/0), got 'maybe'" },
	{ "stats: all\n",
	  "c.yaml:1:8: stats must be 'window' or 'whole_run', got 'all'" },
	{ "step: train_step\n",
	  "c.yaml:1:7: step must be a mapping of keys (e.g. step: {function: ...}), got 'train_step'" },
	{ "schedule:\n  active: [1, 2]\n",
	  "c.yaml:2:11: schedule.active must be an integer, got a list" },
	{ "schedule:\n  active:\n",
	  "c.yaml:2:10: schedule.active must be an integer, got ''" },
	{ "max_trace_mb: 99999999999999999999\n",
	  "c.yaml:1:15: max_trace_mb is out of range, got '99999999999999999999'" },
	/* ranges */
	{ "step:\n  function: train_step\nschedule:\n  wait: 1\n  active: 0\n",
	  "c.yaml:5:11: schedule.active must be > 0, got 0" },
	{ "schedule:\n  wait: -1\n  active: 3\n",
	  "c.yaml:2:9: schedule.wait must be >= 0, got -1" },
	{ "buffer_kb: 10\n",
	  "c.yaml:1:12: buffer_kb must be between 64 and 65536, got 10" },
	{ "record:\n  stack_depth: 200\n",
	  "c.yaml:2:16: record.stack_depth must be between 1 and 128, got 200" },
	{ "memory: {interval_ms: 0}\n",
	  "c.yaml:1:23: memory.interval_ms must be between 1 and 60000, got 0" },
	{ "memory:\n  every_n_steps: 0\n",
	  "c.yaml:2:18: memory.every_n_steps must be > 0, got 0" },
	{ "log:\n  every_n_steps: -5\n",
	  "c.yaml:2:18: log.every_n_steps must be >= 0, got -5" },
	{ "output_dir: \"\"\n",
	  "c.yaml:1:13: output_dir must not be empty" },
	/* cross-key */
	{ "enabled: true\nschedule:\n  wait: 1\n  warmup: 1\n  active: 3\n  repeat: 2\nwindow:\n  start_step: 10\n  end_step: 20\n",
	  "c.yaml:7:1: schedule and window cannot both be given (choose one)" },
	{ "window: {start_step: 1, end_step: 2}\nschedule: {active: 3}\n",
	  "c.yaml:2:1: schedule and window cannot both be given (choose one)" },
	{ "window: {start_step: 1, end_step: 2}\nevery_n_steps: 5\n",
	  "c.yaml:2:1: window and every_n_steps cannot both be given (choose one)" },
	{ "window:\n  start_step: 10\n  end_step: 10\n",
	  "c.yaml:3:3: window.end_step must be > window.start_step (10), got 10" },
	{ "window: {start_step: 5}\n",
	  "c.yaml:1:1: window.end_step is required (the first step not recorded)" },
	{ "every_n_steps: 4\nschedule: {wait: 1, warmup: 1, active: 3}\n",
	  "c.yaml:1:1: every_n_steps must be >= schedule.wait + schedule.warmup + schedule.active (5), got 4" },
	{ "every_n_steps: 0\nschedule: {active: 3}\n",
	  "c.yaml:1:16: every_n_steps must be > 0, got 0" },
	{ "step:\n  function: f\nschedule:\n  wait: 1\n",
	  "c.yaml:3:1: schedule.active is required (how many steps each cycle records)" },
	{ "every_n_steps: 50\n",
	  "c.yaml:1:1: every_n_steps needs schedule.active (how many steps each cycle records, e.g. schedule: {active: 3})" },
	/* bytes: refused as flops: is, in its own name */
	{ "record: {args: [mm]}\nbytes:\n  mm: \"4*(m\"\n",
	  "c.yaml:3:7: bytes: mm: a '(' is not closed (at '')" },
	{ "record: {args: [mm]}\nbytes:\n  other: \"4*m\"\n",
	  "c.yaml:3: bytes: other: other is not listed in record.args, so its calls keep no arguments to count bytes from (add it to record.args)" },
	{ "bytes: [mm]\n",
	  "c.yaml:1:8: bytes must be a string, got a list" },
	/* structure */
	{ "schedule:\n  active: 3\n  active: 4\n",
	  "c.yaml:3:3: duplicate key 'schedule.active' (first given at 2:3)" },
	{ "schedule: {active: 3}\nenabled: true\nschedule: {wait: 1}\n",
	  "c.yaml:3:1: duplicate key 'schedule' (first given at 1:1)" },
	{ "- enabled\n- schedule\n",
	  "c.yaml:1:1: the config must be a mapping of keys (e.g. 'enabled: true'), got a list" },
	{ "just some words\n",
	  "c.yaml:1:1: the config must be a mapping of keys (e.g. 'enabled: true'), got a single value" },
	{ "enabled: true\n---\nenabled: false\n",
	  "c.yaml:2:1: only one YAML document is allowed in a config (remove the '---' and what follows)" },
	/* invalid YAML: libyaml's own problem text, at its mark */
	{ "schedule:\n  active: 3\n wait: 1\n",
	  "c.yaml:3:2: did not find expected key (while parsing a block mapping at 1:1)" },
	{ "step: [train_step\n",
	  "c.yaml:2:1: did not find expected ',' or ']' (while parsing a flow sequence at 1:7)" },
	{ "schedule:\n\tactive: 3\n",
	  "c.yaml:2:1: found character that cannot start any token (while scanning for the next token at 2:1) (tabs are not allowed in YAML indentation; use spaces)" },
	{ "step:\n  function: \"train_step\n",
	  "c.yaml:3:1: found unexpected end of stream (while scanning a quoted scalar at 2:13)" },
};

static void test_bad_files(void **state)
{
	struct ss_config c;
	size_t n = sizeof(bad_files) / sizeof(bad_files[0]);

	assert_true(n >= 12);
	for (size_t i = 0; i < n; i++) {
		const char *got = load_text(&c, bad_files[i].yaml);

		if (strcmp(got, bad_files[i].message))
			fail_msg("bad config #%zu:\n%s\n  expected: %s\n  got:      %s", i,
				 bad_files[i].yaml, bad_files[i].message, got);
	}
}

/* Nesting deeper than 64 is refused before the document is loaded (the
 * loader's time grows with the square of the depth); 64 levels are not. */
static void test_deep_nesting(void **state)
{
	struct ss_config c;
	size_t n = 100000;
	char *text = malloc(n + 2);

	assert_non_null(text);
	memset(text, '[', n);
	strcpy(text + n, "\n");
	assert_string_equal(load_text(&c, text),
			    "c.yaml:1:65: nested more than 64 levels deep (a config needs three)");
	/* a mapping of mappings, one deeper than allowed */
	text[0] = 0;
	for (int i = 0; i < 65; i++)
		sprintf(text + strlen(text), "%*sk%d:\n", i, "", i);
	assert_string_equal(load_text(&c, text),
			    "c.yaml:65:65: nested more than 64 levels deep (a config needs three)");
	/* 64 levels: the usual complaint about the key, not the depth */
	strcpy(text, "step: ");
	memset(text + 6, '[', 63);
	memset(text + 69, ']', 63);
	strcpy(text + 132, "\n");
	assert_string_equal(load_text(&c, text), "c.yaml:1:7: step must be a mapping of keys, got a list");
	free(text);
}

/* the sum wait + warmup + active must not wrap around and let a short
 * every_n_steps through (UBSan: signed overflow) */
static void test_every_n_overflow(void **state)
{
	struct ss_config c;
	char err[ERR_MAX];

	assert_string_equal(load_text(&c, "every_n_steps: 10\n"
					  "schedule: {wait: 9223372036854775807, warmup: 1, active: 1}\n"),
			    "c.yaml:1:1: every_n_steps must be >= schedule.wait + schedule.warmup + "
			    "schedule.active (more than 9223372036854775807), got 10");
	assert_string_equal(load_text(&c, "every_n_steps: 9223372036854775807\n"
					  "schedule: {wait: 4611686018427387904, warmup: 4611686018427387904, active: 1}\n"),
			    "c.yaml:1:1: every_n_steps must be >= schedule.wait + schedule.warmup + "
			    "schedule.active (more than 9223372036854775807), got 9223372036854775807");
	/* the largest cycle that fits is still accepted */
	assert_string_equal(load_text(&c, "every_n_steps: 9223372036854775807\n"
					  "schedule: {wait: 9223372036854775805, warmup: 1, active: 1}\n"),
			    "");
	/* the same through overrides */
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, "schedule.wait=9223372036854775807", "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_set(&c, "schedule.active=9223372036854775807", "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_set(&c, "every_n_steps=5", "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "--set every_n_steps=5: every_n_steps must be >= schedule.wait + "
			    "schedule.warmup + schedule.active (more than 9223372036854775807), got 5");
}

/* control bytes in keys and values: one line, the bytes escaped */
static const struct {
	const char *yaml;
	size_t len;             /* 0: strlen */
	const char *message;
} control_files[] = {
	{ "\"sched\\nule\": {active: 1}\n", 0,
	  "c.yaml:1:1: unknown key 'sched\\nule' (did you mean 'schedule'?)" },
	{ "\"\\e[31mred\": 1\n", 0,
	  "c.yaml:1:1: unknown key '\\x1b[31mred' (docs/config.md lists the keys)" },
	{ "step: {function: \"train\\r\\nstep\"}\n", 0,
	  "c.yaml:1:18: step.function must not contain control characters, got 'train\\r\\nstep'" },
	{ "output_dir: \"out\\e]0;title\\a\"\n", 0,
	  "c.yaml:1:13: output_dir must not contain control characters, got 'out\\x1b]0;title\\x07'" },
	{ "stats: \"win\\tdow\\x7f\"\n", 0,
	  "c.yaml:1:8: stats must be 'window' or 'whole_run', got 'win\\tdow\\x7f'" },
	{ "buffer_kb: \"64\\n\"\n", 0,
	  "c.yaml:1:12: buffer_kb must be an integer, got '64\\n'" },
	{ "step: {function: \"a\\0b\"}\n", 0,
	  "c.yaml:1:18: step.function must not contain a NUL byte, got 'a\\0b'" },
	{ "\"sched\\0ule\": 1\n", 0,
	  "c.yaml:1:1: a key must not contain a NUL byte, got 'sched\\0ule'" },
	/* raw bytes in the file: libyaml refuses them, still one line */
	{ "enabled: tr\033ue\n", 0,
	  "c.yaml: control characters are not allowed at byte 11" },
	{ "enabled: true\0\n", 15,
	  "c.yaml: control characters are not allowed at byte 13" },
};

static void test_control_bytes(void **state)
{
	struct ss_config c;
	char err[ERR_MAX];

	for (size_t i = 0; i < sizeof(control_files) / sizeof(control_files[0]); i++) {
		FILE *f = fopen("c.yaml", "wb");
		size_t n = control_files[i].len ? control_files[i].len : strlen(control_files[i].yaml);

		assert_non_null(f);
		assert_int_equal(fwrite(control_files[i].yaml, 1, n, f), n);
		fclose(f);
		ss_config_defaults(&c);
		err[0] = 0;
		if (ss_config_load_file(&c, "c.yaml", err, sizeof(err)) == 0)
			ss_config_check(&c, err, sizeof(err));
		if (strcmp(err, control_files[i].message))
			fail_msg("control config #%zu:\n  expected: %s\n  got:      %s", i,
				 control_files[i].message, err);
	}
	expect_set_error("schedule.act\nive=3", "--set",
			 "--set schedule.act\\nive=3: unknown key 'schedule.act\\nive' (did you mean 'schedule.active'?)");
	expect_set_error("buffer_kb=1\033[2J", "--set",
			 "--set buffer_kb=1\\x1b[2J: buffer_kb must be an integer, got '1\\x1b[2J'");
	expect_set_error("step.function=f\rg", "STEPSCOPE_SET",
			 "STEPSCOPE_SET step.function=f\\rg: step.function must not contain control characters, got 'f\\rg'");
	/* a small buffer keeps whole escapes only */
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, "\033\033=1", "--set", err, 12), -1);
	assert_string_equal(err, "--set \\x1b");
}

/* a refused file leaves the config as it was */
static void test_bad_file_changes_nothing(void **state)
{
	struct ss_config c, before;
	char err[ERR_MAX];

	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, "buffer_kb=128", "--set", err, sizeof(err)), 0);
	memcpy(&before, &c, sizeof(c));
	write_file("c.yaml", "buffer_kb: 512\noutput_dir: elsewhere\nschedule:\n  active: x\n");
	assert_int_equal(ss_config_load_file(&c, "c.yaml", err, sizeof(err)), -1);
	assert_memory_equal(&c, &before, sizeof(c));
}

static void test_unreadable_files(void **state)
{
	struct ss_config c;
	char err[ERR_MAX];

	ss_config_defaults(&c);
	assert_int_equal(ss_config_load_file(&c, "missing.yaml", err, sizeof(err)), -1);
	assert_string_equal(err, "missing.yaml: cannot read config: No such file or directory");

	assert_int_equal(mkdir("adir", 0700) == 0 || errno == EEXIST, 1);
	assert_int_equal(ss_config_load_file(&c, "adir", err, sizeof(err)), -1);
	assert_string_equal(err, "adir: cannot read config: Is a directory");
}

/* a tiny error buffer gets a truncated, terminated message */
static void test_small_err_buffer(void **state)
{
	struct ss_config c;
	char err[8];

	ss_config_defaults(&c);
	memset(err, 'x', sizeof(err));
	assert_int_equal(ss_config_set(&c, "nope=1", "--set", err, sizeof(err)), -1);
	assert_string_equal(err, "--set n");
	assert_int_equal(ss_config_set(&c, "nope=1", "--set", NULL, 0), -1);
}

/* ------------------------------------------------------------ overrides */

static void expect_set_error(const char *keyval, const char *origin, const char *message)
{
	struct ss_config c, before;
	char err[ERR_MAX] = "";

	ss_config_defaults(&c);
	memcpy(&before, &c, sizeof(c));
	assert_int_equal(ss_config_set(&c, keyval, origin, err, sizeof(err)), -1);
	assert_string_equal(err, message);
	assert_memory_equal(&c, &before, sizeof(c));
}

static void test_set_errors(void **state)
{
	expect_set_error("schedule.active=x", "--set",
			 "--set schedule.active=x: schedule.active must be an integer, got 'x'");
	expect_set_error("schedule.active=0", "STEPSCOPE_SET",
			 "STEPSCOPE_SET schedule.active=0: schedule.active must be > 0, got 0");
	expect_set_error("schedule.active", "--set",
			 "--set schedule.active: missing '=' (write key=value, e.g. schedule.active=3)");
	expect_set_error("=3", "--set",
			 "--set =3: missing key before '=' (write key=value, e.g. schedule.active=3)");
	expect_set_error("schedule.actve=3", "--set",
			 "--set schedule.actve=3: unknown key 'schedule.actve' (did you mean 'schedule.active'?)");
	expect_set_error("windw.end_step=3", "--set",
			 "--set windw.end_step=3: unknown key 'windw.end_step' (did you mean 'window.end_step'?)");
	expect_set_error("schedule=3", "--set",
			 "--set schedule=3: schedule is a group of keys, set one of them (e.g. schedule.active)");
	expect_set_error("record.stack=sometimes", "--set",
			 "--set record.stack=sometimes: record.stack must be true or false (or yes/no, on/off, 1/0), got 'sometimes'");
	expect_set_error("output_dir=", "--set",
			 "--set output_dir=: output_dir must not be empty");
	/* a NULL origin reads as --set */
	expect_set_error("buffer_kb=1", NULL,
			 "--set buffer_kb=1: buffer_kb must be between 64 and 65536, got 1");
}

static void test_set_values_and_modes(void **state)
{
	struct ss_config c;
	char err[ERR_MAX] = "";

	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, " output_dir = my dir ", "--set", err, sizeof(err)), 0);
	assert_string_equal(c.output_dir, "my dir");
	assert_int_equal(ss_config_set(&c, "step.function=", "--set", err, sizeof(err)), 0);
	assert_string_equal(c.step_function, "");
	assert_int_equal(c.mode, SS_SCHED_ALL);

	assert_int_equal(ss_config_set(&c, "schedule.active=5", "--set", err, sizeof(err)), 0);
	assert_int_equal(c.mode, SS_SCHED_TORCH);
	assert_int_equal(c.active, 5);
	assert_int_equal(ss_config_set(&c, "window.end_step=9", "--set", err, sizeof(err)), 0);
	assert_int_equal(c.mode, SS_SCHED_WINDOW);
	assert_int_equal(ss_config_set(&c, "every_n_steps=9", "--set", err, sizeof(err)), 0);
	assert_int_equal(c.mode, SS_SCHED_EVERY_N);
	/* schedule.* feeds every_n_steps mode and does not leave it */
	assert_int_equal(ss_config_set(&c, "schedule.wait=2", "--set", err, sizeof(err)), 0);
	assert_int_equal(c.mode, SS_SCHED_EVERY_N);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), 0);
	assert_string_equal(c.mark[13].origin, "--set every_n_steps=9");   /* every_n_steps */

	/* the override is named in cross-key errors */
	assert_int_equal(ss_config_set(&c, "every_n_steps=6", "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "--set every_n_steps=6: every_n_steps must be >= schedule.wait + schedule.warmup + schedule.active (7), got 6");
}

/* a file's schedule changed from the command line, the cross-key error
 * names the override and the file keeps its own positions */
static void test_override_on_file(void **state)
{
	struct ss_config c;
	char err[ERR_MAX] = "";
	const char *sets[] = { "every_n_steps=4" };
	const char *sets2[] = { "window.start_step=3" };

	write_file("a.yaml", "schedule:\n  wait: 1\n  warmup: 1\n  active: 3\n");
	assert_int_equal(ss_config_resolve(&c, "a.yaml", sets, 1, err, sizeof(err)), -1);
	assert_string_equal(err, "--set every_n_steps=4: every_n_steps must be >= schedule.wait + schedule.warmup + schedule.active (5), got 4");

	assert_int_equal(ss_config_resolve(&c, "a.yaml", sets2, 1, err, sizeof(err)), -1);
	assert_string_equal(err, "--set window.start_step=3: window.end_step is required (the first step not recorded)");

	write_file("b.yaml", "window: {start_step: 10, end_step: 20}\n");
	const char *sets3[] = { "window.start_step=30" };

	assert_int_equal(ss_config_resolve(&c, "b.yaml", sets3, 1, err, sizeof(err)), -1);
	assert_string_equal(err, "b.yaml:1:26: window.end_step must be > window.start_step (30), got 20");
}

static void test_stepscope_set_env(void **state)
{
	struct ss_config c;
	char err[ERR_MAX] = "";

	setenv("STEPSCOPE_SET", "schedule.active=5, schedule.repeat=2 ,,output_dir=o,", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(c.mode, SS_SCHED_TORCH);
	assert_int_equal(c.active, 5);
	assert_int_equal(c.repeat, 2);
	assert_string_equal(c.output_dir, "o");

	setenv("STEPSCOPE_SET", "schedule.active=5,schedule.wait=x", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "STEPSCOPE_SET schedule.wait=x: schedule.wait must be an integer, got 'x'");

	setenv("STEPSCOPE_SET", "memory.enabled", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "STEPSCOPE_SET memory.enabled: missing '=' (write key=value, e.g. schedule.active=3)");
}

/* ------------------------------------------------------------ lookup order */

static void test_precedence(void **state)
{
	struct ss_config c;
	char err[ERR_MAX] = "";
	const char *sets[] = { "schedule.active=4", "buffer_kb=128" };

	/* nothing anywhere: defaults */
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(c.mode, SS_SCHED_ALL);
	assert_string_equal(c.source, "");

	/* ./stepscope.yaml when nothing else names a file */
	write_file("stepscope.yaml", "schedule: {active: 1}\nbuffer_kb: 64\n");
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), 0);
	assert_string_equal(c.source, "stepscope.yaml");
	assert_int_equal(c.active, 1);

	/* STEPSCOPE_CONFIG beats ./stepscope.yaml */
	write_file("b.yaml", "schedule: {active: 2}\n");
	setenv("STEPSCOPE_CONFIG", "b.yaml", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), 0);
	assert_string_equal(c.source, "b.yaml");
	assert_int_equal(c.active, 2);
	assert_int_equal(c.buffer_kb, 1024);   /* stepscope.yaml not read at all */

	/* the cli path beats both */
	write_file("a.yaml", "schedule: {active: 3}\nmax_trace_mb: 7\n");
	assert_int_equal(ss_config_resolve(&c, "a.yaml", NULL, 0, err, sizeof(err)), 0);
	assert_string_equal(c.source, "a.yaml");
	assert_int_equal(c.active, 3);

	/* --set beats the file, STEPSCOPE_SET beats --set */
	assert_int_equal(ss_config_resolve(&c, "a.yaml", sets, 2, err, sizeof(err)), 0);
	assert_int_equal(c.active, 4);
	assert_int_equal(c.buffer_kb, 128);
	assert_int_equal(c.max_trace_mb, 7);
	setenv("STEPSCOPE_SET", "schedule.active=5", 1);
	assert_int_equal(ss_config_resolve(&c, "a.yaml", sets, 2, err, sizeof(err)), 0);
	assert_int_equal(c.active, 5);
	assert_int_equal(c.buffer_kb, 128);

	/* resolve runs the checks */
	setenv("STEPSCOPE_SET", "window.start_step=3", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "STEPSCOPE_SET window.start_step=3: window.end_step is required (the first step not recorded)");
}

static void test_missing_named_file(void **state)
{
	struct ss_config c;
	char err[ERR_MAX] = "";

	write_file("stepscope.yaml", "enabled: true\n");
	assert_int_equal(ss_config_resolve(&c, "nope.yaml", NULL, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "nope.yaml: cannot read config: No such file or directory");

	setenv("STEPSCOPE_CONFIG", "gone.yaml", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "gone.yaml: cannot read config: No such file or directory");

	/* an empty STEPSCOPE_CONFIG names nothing */
	setenv("STEPSCOPE_CONFIG", "", 1);
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), 0);
	assert_string_equal(c.source, "stepscope.yaml");

	/* a bad ./stepscope.yaml is an error, not silently skipped */
	write_file("stepscope.yaml", "enabled: perhaps\n");
	assert_int_equal(ss_config_resolve(&c, NULL, NULL, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "stepscope.yaml:1:10: enabled must be true or false (or yes/no, on/off, 1/0), got 'perhaps'");
}

/* ------------------------------------------------------------ dump */

/* configs equal apart from where their values came from */
static void assert_same_values(const struct ss_config *a, const struct ss_config *b)
{
	struct ss_config x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	memset(x.mark, 0, sizeof(x.mark));
	memset(y.mark, 0, sizeof(y.mark));
	memset(x.source, 0, sizeof(x.source));
	memset(y.source, 0, sizeof(y.source));
	assert_memory_equal(&x, &y, sizeof(x));
}

/* dump, then replay every line through ss_config_set on top of defaults */
static void round_trip(const struct ss_config *c)
{
	char dump[8192], dump2[8192], err[ERR_MAX] = "";
	struct ss_config r;
	size_t n = ss_config_dump(c, dump, sizeof(dump));

	assert_true(n > 0 && n < sizeof(dump));
	assert_int_equal(strlen(dump), n);
	ss_config_defaults(&r);
	for (char *line = dump, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = 0;
		if (ss_config_set(&r, line, "dump", err, sizeof(err)))
			fail_msg("dump line '%s' refused: %s", line, err);
		*nl = '\n';
	}
	assert_int_equal(ss_config_check(&r, err, sizeof(err)), 0);
	ss_config_dump(&r, dump2, sizeof(dump2));
	assert_string_equal(dump2, dump);
	assert_same_values(c, &r);
}

static void test_dump_round_trip(void **state)
{
	struct ss_config c;

	assert_string_equal(load_text(&c, full_yaml), "");
	round_trip(&c);
	assert_string_equal(load_text(&c, "window: {start_step: 3, end_step: 8}\nenabled: off\n"), "");
	round_trip(&c);
	assert_string_equal(load_text(&c, "every_n_steps: 20\nschedule: {skip_first: 1, wait: 2, warmup: 3, active: 4, repeat: 5}\n"), "");
	round_trip(&c);
	ss_config_defaults(&c);
	round_trip(&c);
}

/* filter: lists of globs from YAML lists, strings and --set; dumped only
 * when in use */
static void test_filter_keys(void **state)
{
	struct ss_config c;
	char buf[4096], err[ERR_MAX];

	assert_string_equal(load_text(&c, "filter:\n  exclude: [tiny, 'ad*']\n  include: step\n"
					  "  max_depth: 3\n  min_duration_us: 5\n"), "");
	assert_string_equal(c.filter_exclude, "tiny,ad*");
	assert_string_equal(c.filter_include, "step");
	assert_int_equal(c.filter_max_depth, 3);
	assert_int_equal(c.filter_min_duration_us, 5);
	ss_config_dump(&c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "filter.exclude=tiny,ad*\nfilter.include=step\n"
				    "filter.max_depth=3\nfilter.min_duration_us=5\n"));
	assert_string_equal(load_text(&c, "filter: {exclude: [{a: 1}]}\n"),
			    "c.yaml:1:20: filter.exclude must be a list of name globs, got a mapping");
	assert_string_equal(load_text(&c, "filter: {max_depth: -1}\n"),
			    "c.yaml:1:21: filter.max_depth must be between 0 and 1000000, got -1");
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, "filter.exclude=tiny helper", "--set", err, sizeof(err)), 0);
	assert_string_equal(c.filter_exclude, "tiny helper");
	ss_config_defaults(&c);
	ss_config_dump(&c, buf, sizeof(buf));
	assert_null(strstr(buf, "filter."));
}

static void test_dump_text(void **state)
{
	struct ss_config c;
	char buf[4096];
	static const char expect[] =
		"enabled=true\n"
		"output_dir=stepscope-out\n"
		"step.function=train_step\n"
		"schedule.skip_first=0\n"
		"schedule.wait=1\n"
		"schedule.warmup=1\n"
		"schedule.active=3\n"
		"schedule.repeat=1\n"
		"max_trace_mb=4096\n"
		"buffer_kb=1024\n"
		"record.stack=false\n"
		"record.stack_depth=16\n"
		"record.sched=false\n"
		"memory.enabled=false\n"
		"memory.interval_ms=10\n"
		"memory.every_n_steps=100\n"
		"memory.allocations=false\n"
		"gpu.enabled=false\n"
		"stats=window\n"
		"log.every_n_steps=0\n";

	assert_string_equal(load_text(&c, "step: {function: train_step}\nschedule: {wait: 1, warmup: 1, active: 3, repeat: 1}\n"), "");
	assert_int_equal(ss_config_dump(&c, buf, sizeof(buf)), strlen(expect));
	assert_string_equal(buf, expect);

	/* like snprintf: the needed length, a terminated prefix */
	assert_int_equal(ss_config_dump(&c, NULL, 0), strlen(expect));
	assert_int_equal(ss_config_dump(&c, buf, 10), strlen(expect));
	assert_string_equal(buf, "enabled=t");
}

/* ------------------------------------------------------------ configs/ */

static void test_shipped_configs(void **state)
{
	const char *dir = SS_SOURCE_DIR "/configs";
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0, quick = 0;

	if (!d)
		fail_msg("cannot open %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[PATH_MAX], err[ERR_MAX] = "";
		struct ss_config c;

		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (ss_config_resolve(&c, path, NULL, 0, err, sizeof(err)))
			fail_msg("shipped config refused: %s", err);
		n++;
		if (!strcmp(e->d_name, "quick-look.yaml")) {
			quick = 1;
			assert_string_equal(c.step_function, "train_step");
			assert_int_equal(c.mode, SS_SCHED_TORCH);
			assert_int_equal(c.wait, 1);
			assert_int_equal(c.warmup, 1);
			assert_int_equal(c.active, 3);
			assert_int_equal(c.repeat, 1);
		} else if (!strcmp(e->d_name, "default.yaml")) {
			struct ss_config d;

			ss_config_defaults(&d);
			assert_same_values(&c, &d);
		} else if (!strcmp(e->d_name, "long-run.yaml")) {
			assert_int_equal(c.mode, SS_SCHED_EVERY_N);
			assert_int_equal(c.repeat, 0);
		} else if (!strcmp(e->d_name, "memory.yaml")) {
			assert_int_equal(c.memory_enabled, 1);
		} else if (!strcmp(e->d_name, "allocations.yaml")) {
			assert_int_equal(c.memory_allocations, 1);
			assert_int_equal(c.start_step, 2);
		}
	}
	closedir(d);
	assert_true(n >= 4);
	assert_true(quick);
}

/* ------------------------------------------------------------ default.yaml names every key */

#define NAMES_MAX 128

struct names {
	char name[NAMES_MAX][SS_KEY_NAME_MAX];
	int n;
};

/* a line that is a commented-out key ("#schedule:", "#  active: 3"), not prose */
static int is_commented_key(const char *line)
{
	const char *p = line + 1;

	if (line[0] != '#')
		return 0;
	while (*p == ' ')
		p++;
	if (!(*p >= 'a' && *p <= 'z'))
		return 0;
	while ((*p >= 'a' && *p <= 'z') || *p == '_' || *p == '.')
		p++;
	return *p == ':' && (p[1] == ' ' || p[1] == '\n' || p[1] == 0);
}

/* every dotted key name of a mapping node (flops: maps function names, not keys) */
static void collect_names(yaml_document_t *doc, yaml_node_t *map, const char *prefix,
			  struct names *out)
{
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
	     pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(doc, pr->value);
		char name[SS_KEY_NAME_MAX];

		assert_non_null(k);
		assert_int_equal(k->type, YAML_SCALAR_NODE);
		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "",
			 (const char *)k->data.scalar.value);
		assert_true(out->n < NAMES_MAX);
		snprintf(out->name[out->n++], SS_KEY_NAME_MAX, "%s", name);
		if (v && v->type == YAML_MAPPING_NODE && strcmp(name, "flops"))
			collect_names(doc, v, name, out);
	}
}

static int names_has(const struct names *ns, const char *name)
{
	for (int i = 0; i < ns->n; i++)
		if (!strcmp(ns->name[i], name))
			return 1;
	return 0;
}

/*
 * configs/default.yaml says it holds every key: each key of the parser's
 * table (config-keys.h) is in it, set or commented out, and it names no
 * key the parser does not know.
 */
static void test_default_names_every_key(void **state)
{
	const char *path = SS_SOURCE_DIR "/configs/default.yaml";
	FILE *f = fopen(path, "r");
	char line[512], *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct names *ns = calloc(1, sizeof(*ns));
	int missing = 0;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	assert_non_null(mem);
	assert_non_null(ns);
	while (fgets(line, sizeof(line), f))
		fputs(is_commented_key(line) ? line + 1 : line, mem);
	fclose(f);
	fclose(mem);

	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc))
		fail_msg("%s with its commented keys uncommented is not YAML: %s (line %zu)", path,
			 parser.problem ? parser.problem : "?", parser.problem_mark.line + 1);
	root = yaml_document_get_root_node(&doc);
	assert_non_null(root);
	assert_int_equal(root->type, YAML_MAPPING_NODE);
	collect_names(&doc, root, "", ns);

	for (int k = 0; k < I_NKEYS; k++)
		if (!names_has(ns, ss_cfg_keys[k].name)) {
			print_error("%s does not name the key %s\n", path, ss_cfg_keys[k].name);
			missing++;
		}
	for (int i = 0; i < ns->n; i++)
		if (ss_cfg_key_find(ns->name[i]) < 0) {
			print_error("%s names %s, which is not a key\n", path, ns->name[i]);
			missing++;
		}
	assert_int_equal(missing, 0);

	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	free(ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, test_setup),
		cmocka_unit_test_setup(test_full_file, test_setup),
		cmocka_unit_test_setup(test_empty_and_comment_only, test_setup),
		cmocka_unit_test_setup(test_modes_from_file, test_setup),
		cmocka_unit_test_setup(test_bad_files, test_setup),
		cmocka_unit_test_setup(test_every_n_overflow, test_setup),
		cmocka_unit_test_setup(test_deep_nesting, test_setup),
		cmocka_unit_test_setup(test_control_bytes, test_setup),
		cmocka_unit_test_setup(test_bad_file_changes_nothing, test_setup),
		cmocka_unit_test_setup(test_unreadable_files, test_setup),
		cmocka_unit_test_setup(test_small_err_buffer, test_setup),
		cmocka_unit_test_setup(test_set_errors, test_setup),
		cmocka_unit_test_setup(test_set_values_and_modes, test_setup),
		cmocka_unit_test_setup(test_override_on_file, test_setup),
		cmocka_unit_test_setup(test_stepscope_set_env, test_setup),
		cmocka_unit_test_setup(test_precedence, test_setup),
		cmocka_unit_test_setup(test_missing_named_file, test_setup),
		cmocka_unit_test_setup(test_dump_round_trip, test_setup),
		cmocka_unit_test_setup(test_dump_text, test_setup),
		cmocka_unit_test_setup(test_filter_keys, test_setup),
		cmocka_unit_test_setup(test_shipped_configs, test_setup),
		cmocka_unit_test_setup(test_default_names_every_key, test_setup),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
