/*
 * config.c - the window config: defaults, a YAML file, key=value overrides,
 * cross-key checks and a key=value dump.
 *
 * One table (ss_cfg_keys[] below) lists every key with its dotted name, type, field
 * and range.  The YAML walker (libyaml's document API), the override parser,
 * the checker and the dumper are all driven by it, so a key added there is
 * parsed, range-checked, suggested on a typo and dumped the same way
 * everywhere.  Where each key got its value (file line:col, or the override
 * that set it) is kept in c->mark[], indexed like ss_cfg_keys[], so a later
 * cross-key error points at the key that caused it.  A file is loaded into a
 * heap copy and committed only when the whole file is good.
 *
 * Runs inside the profiled program before main and inside the stepscope
 * command: it must never print, exit, keep mutable global state or leak on
 * an error path.  Every error is one line in the caller's buffer, control
 * bytes escaped (\n, \x1b) by the public entry points.
 *
 * Files: this one holds the key table, the helpers, defaults, overrides,
 * checks, the lookup order and the dump; config-yaml.c reads a YAML file;
 * config-suggest.c names the known key nearest to a misspelt one;
 * config-keys.h is what they share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "config-keys.h"
#include "flops-expr.h"

#define F(field) offsetof(struct ss_config, field)
#define NOF 0, 0
#define BIG INT64_MAX

const struct key ss_cfg_keys[I_NKEYS] = {
	[I_ENABLED] = { "enabled", T_BOOL, F(enabled), 0, NOF, -1, ANY_MODE },
	[I_OUTPUT_DIR] = { "output_dir", T_STR, F(output_dir), SS_CONFIG_PATH_MAX, NOF, -1, ANY_MODE },
	[I_STEP] = { "step", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_STEP_FUNCTION] = { "step.function", T_STR, F(step_function), SS_CONFIG_NAME_MAX, NOF, I_STEP, ANY_MODE },
	[I_SCHEDULE] = { "schedule", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_SKIP_FIRST] = { "schedule.skip_first", T_INT, F(skip_first), 0, 0, BIG, I_SCHEDULE, ANY_MODE },
	[I_WAIT] = { "schedule.wait", T_INT, F(wait), 0, 0, BIG, I_SCHEDULE, ANY_MODE },
	[I_WARMUP] = { "schedule.warmup", T_INT, F(warmup), 0, 0, BIG, I_SCHEDULE, ANY_MODE },
	[I_ACTIVE] = { "schedule.active", T_INT, F(active), 0, 1, BIG, I_SCHEDULE,
		       MODE_BIT(SS_SCHED_TORCH) | MODE_BIT(SS_SCHED_EVERY_N) },
	[I_REPEAT] = { "schedule.repeat", T_INT, F(repeat), 0, 0, BIG, I_SCHEDULE, ANY_MODE },
	[I_WINDOW] = { "window", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_START_STEP] = { "window.start_step", T_INT, F(start_step), 0, 0, BIG, I_WINDOW, ANY_MODE },
	[I_END_STEP] = { "window.end_step", T_INT, F(end_step), 0, 0, BIG, I_WINDOW, ANY_MODE },
	[I_EVERY_N] = { "every_n_steps", T_INT, F(every_n_steps), 0, 1, BIG, -1, MODE_BIT(SS_SCHED_EVERY_N) },
	[I_MAX_TRACE_MB] = { "max_trace_mb", T_INT, F(max_trace_mb), 0, 0, BIG, -1, ANY_MODE },
	[I_BUFFER_KB] = { "buffer_kb", T_INT, F(buffer_kb), 0, 64, 65536, -1, ANY_MODE },
	[I_RECORD] = { "record", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_RECORD_STACK] = { "record.stack", T_BOOL, F(record_stack), 0, NOF, I_RECORD, ANY_MODE },
	[I_RECORD_DEPTH] = { "record.stack_depth", T_INT, F(record_stack_depth), 0, 1, 128, I_RECORD, ANY_MODE },
	[I_RECORD_SCHED] = { "record.sched", T_BOOL, F(record_sched), 0, NOF, I_RECORD, ANY_MODE },
	[I_RECORD_ARGS] = { "record.args", T_STR, F(record_args), SS_CONFIG_LIST_MAX, NOF, I_RECORD, ANY_MODE },
	[I_MEMORY] = { "memory", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_MEMORY_ENABLED] = { "memory.enabled", T_BOOL, F(memory_enabled), 0, NOF, I_MEMORY, ANY_MODE },
	[I_MEMORY_INTERVAL] = { "memory.interval_ms", T_INT, F(memory_interval_ms), 0, 1, 60000, I_MEMORY, ANY_MODE },
	[I_MEMORY_EVERY_N] = { "memory.every_n_steps", T_INT, F(memory_every_n_steps), 0, 1, BIG, I_MEMORY, ANY_MODE },
	[I_MEMORY_ALLOCATIONS] = { "memory.allocations", T_BOOL, F(memory_allocations), 0, NOF, I_MEMORY, ANY_MODE },
	[I_GPU] = { "gpu", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_GPU_ENABLED] = { "gpu.enabled", T_BOOL, F(gpu_enabled), 0, NOF, I_GPU, ANY_MODE },
	[I_STATS] = { "stats", T_STATS, F(stats), 0, NOF, -1, ANY_MODE },
	[I_LOG] = { "log", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_LOG_EVERY_N] = { "log.every_n_steps", T_INT, F(log_every_n_steps), 0, 0, BIG, I_LOG, ANY_MODE },
	[I_FILTER] = { "filter", T_SECTION, 0, 0, NOF, -1, ANY_MODE },
	[I_FILTER_EXCLUDE] = { "filter.exclude", T_STR, F(filter_exclude), SS_CONFIG_LIST_MAX, NOF, I_FILTER, ANY_MODE },
	[I_FILTER_INCLUDE] = { "filter.include", T_STR, F(filter_include), SS_CONFIG_LIST_MAX, NOF, I_FILTER, ANY_MODE },
	[I_FILTER_EXCLUDE_FILE] = { "filter.exclude_file", T_STR, F(filter_exclude_file), SS_CONFIG_PATH_MAX, NOF, I_FILTER, ANY_MODE },
	[I_FILTER_MAX_DEPTH] = { "filter.max_depth", T_INT, F(filter_max_depth), 0, 0, 1000000, I_FILTER, ANY_MODE },
	[I_FILTER_MIN_DURATION] = { "filter.min_duration_us", T_INT, F(filter_min_duration_us), 0, 0, 1000000000, I_FILTER, ANY_MODE },
	[I_FLOPS] = { "flops", T_STR, F(flops), SS_CONFIG_LIST_MAX, NOF, -1, ANY_MODE },
	[I_BYTES] = { "bytes", T_STR, F(bytes), SS_CONFIG_LIST_MAX, NOF, -1, ANY_MODE },
};

#undef F
#undef NOF
#undef BIG

/* ------------------------------------------------------------ small helpers */

void ss_cfg_fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, f);
	vsnprintf(buf, len, f, ap);
	va_end(ap);
}

/* how many characters byte b takes in a message: 1, 2 (\n \r \t \0) or 4 (\xNN) */
static size_t esc_width(unsigned char b)
{
	if (b >= 0x20 && b != 0x7f)
		return 1;
	return b == '\n' || b == '\r' || b == '\t' || !b ? 2 : 4;
}

/* write byte b escaped at p (esc_width(b) characters) */
static void esc_put(char *p, unsigned char b)
{
	static const char hex[] = "0123456789abcdef";

	if (esc_width(b) == 1) {
		*p = (char)b;
		return;
	}
	p[0] = '\\';
	if (esc_width(b) == 2) {
		p[1] = b == '\n' ? 'n' : b == '\r' ? 'r' : b == '\t' ? 't' : '0';
		return;
	}
	p[1] = 'x';
	p[2] = hex[b >> 4];
	p[3] = hex[b & 15];
}

/*
 * Escape the control bytes of the message in buf (newline, CR, ESC, DEL,
 * ...) in place, so an error is always one line that a terminal prints as
 * it is.  Backslashes stay as they are, so escaping twice changes nothing.
 * Truncated (whole escapes only) to fit len.
 */
static void escape_controls(char *buf, size_t len)
{
	size_t n, keep = 0, total = 0, i;

	if (!buf || !len)
		return;
	n = strlen(buf);
	while (keep < n && total + esc_width((unsigned char)buf[keep]) <= len - 1)
		total += esc_width((unsigned char)buf[keep++]);
	if (total == keep) {
		buf[keep] = 0;
		return;
	}
	buf[total] = 0;
	/* back to front: the output never overtakes the input still unread */
	for (i = keep; i-- > 0;) {
		unsigned char b = (unsigned char)buf[i];
		total -= esc_width(b);
		esc_put(buf + total, b);
	}
}

/* n bytes of s, NULs and control bytes escaped, into out (for messages) */
void ss_cfg_show_bytes(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	for (size_t i = 0; i < n && o + esc_width((unsigned char)s[i]) < len; i++) {
		esc_put(out + o, (unsigned char)s[i]);
		o += esc_width((unsigned char)s[i]);
	}
	out[o] = 0;
}

static int64_t *int_field(struct ss_config *c, int k)
{
	return (int64_t *)((char *)c + ss_cfg_keys[k].off);
}

static int64_t int_value(const struct ss_config *c, int k)
{
	return *(const int64_t *)((const char *)c + ss_cfg_keys[k].off);
}

int ss_cfg_key_find(const char *name)
{
	for (int k = 0; k < I_NKEYS; k++)
		if (!strcmp(ss_cfg_keys[k].name, name))
			return k;
	return -1;
}

/* the key a section's example in messages uses */
int ss_cfg_first_child(int section)
{
	if (section == I_SCHEDULE)
		return I_ACTIVE;   /* the one it cannot do without */
	for (int k = 0; k < I_NKEYS; k++)
		if (ss_cfg_keys[k].section == section)
			return k;
	return -1;
}

const char *ss_cfg_type_words(enum key_type t)
{
	switch (t) {
	case T_BOOL: return "true or false";
	case T_INT: return "an integer";
	case T_STR: return "a string";
	case T_STATS: return "'window' or 'whole_run'";
	case T_SECTION: return "a mapping of keys";
	}
	return "?";
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* decimal integer with optional sign; 0, or -1 not a number, -2 overflow */
static int parse_int(const char *s, int64_t *out)
{
	const char *p = s;
	char *end;
	long long v;

	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end)
		return -1;
	if (errno == ERANGE)
		return -2;
	*out = v;
	return 0;
}

/* 0 if v is in key k's range, else -1 with a message */
static int int_range(int k, int64_t v, char *msg, size_t len)
{
	const struct key *key = &ss_cfg_keys[k];

	if (v >= key->min && v <= key->max)
		return 0;
	if (key->max != INT64_MAX)
		ss_cfg_fmt(msg, len, "%s must be between %lld and %lld, got %lld", key->name,
		    (long long)key->min, (long long)key->max, (long long)v);
	else if (key->min == 1)
		ss_cfg_fmt(msg, len, "%s must be > 0, got %lld", key->name, (long long)v);
	else
		ss_cfg_fmt(msg, len, "%s must be >= %lld, got %lld", key->name, (long long)key->min,
		    (long long)v);
	return -1;
}

/*
 * Parse `text` for key k and store it in *c.  0, or -1 with a message
 * (without position) in msg; *c is untouched on error.
 */
int ss_cfg_key_apply(struct ss_config *c, int k, const char *text, char *msg, size_t len)
{
	const struct key *key = &ss_cfg_keys[k];
	const char *shown = *text ? text : "";
	int64_t v;
	int b, r;

	switch (key->type) {
	case T_BOOL:
		if (parse_bool(text, &b)) {
			ss_cfg_fmt(msg, len, "%s must be true or false (or yes/no, on/off, 1/0), got '%s'",
			    key->name, shown);
			return -1;
		}
		*(int *)((char *)c + key->off) = b;
		return 0;
	case T_INT:
		r = parse_int(text, &v);
		if (r == -1) {
			ss_cfg_fmt(msg, len, "%s must be an integer, got '%s'", key->name, shown);
			return -1;
		}
		if (r == -2) {
			ss_cfg_fmt(msg, len, "%s is out of range, got '%s'", key->name, shown);
			return -1;
		}
		if (int_range(k, v, msg, len))
			return -1;
		*int_field(c, k) = v;
		return 0;
	case T_STR:
		if (k == I_OUTPUT_DIR && !*text) {
			ss_cfg_fmt(msg, len, "%s must not be empty", key->name);
			return -1;
		}
		if (strlen(text) >= key->size) {
			ss_cfg_fmt(msg, len, "%s is too long (at most %zu characters)", key->name, key->size - 1);
			return -1;
		}
		for (const char *p = text; *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				ss_cfg_fmt(msg, len, "%s must not contain control characters, got '%s'",
				    key->name, text);
				return -1;
			}
		}
		memcpy((char *)c + key->off, text, strlen(text) + 1);
		return 0;
	case T_STATS:
		if (!strcmp(text, "window"))
			c->stats = SS_STATS_WINDOW;
		else if (!strcmp(text, "whole_run"))
			c->stats = SS_STATS_WHOLE_RUN;
		else {
			ss_cfg_fmt(msg, len, "stats must be 'window' or 'whole_run', got '%s'", shown);
			return -1;
		}
		return 0;
	case T_SECTION:
		break;
	}
	r = ss_cfg_first_child(k);
	ss_cfg_fmt(msg, len, "%s is a group of keys, set one of them (e.g. %s)", key->name,
	    r >= 0 ? ss_cfg_keys[r].name : "?");
	return -1;
}

/* "FILE:L:C: " / "ORIGIN: " / "FILE: " prefix for a message about key k */
static void key_where(const struct ss_config *c, int k, char *buf, size_t len)
{
	const struct ss_config_mark *m = k >= 0 ? &c->mark[k] : NULL;

	if (m && m->origin[0])
		ss_cfg_fmt(buf, len, "%s: ", m->origin);
	else if (m && m->line && c->source[0])
		ss_cfg_fmt(buf, len, "%s:%u:%u: ", c->source, m->line, m->col);
	else if (c->source[0])
		ss_cfg_fmt(buf, len, "%s: ", c->source);
	else
		ss_cfg_fmt(buf, len, "config: ");
}

void ss_config_where(const struct ss_config *c, const char *key, char *buf,
		     size_t len)
{
	int k;

	for (k = 0; k < I_NKEYS && strcmp(ss_cfg_keys[k].name, key); k++)
		;
	key_where(c, k < I_NKEYS ? k : -1, buf, len);
	escape_controls(buf, len);
}

/* was key k given (in a file or by an override)? */
static int key_given(const struct ss_config *c, int k)
{
	return c->mark[k].line || c->mark[k].origin[0];
}

/* ------------------------------------------------------------ defaults */

void ss_config_defaults(struct ss_config *c)
{
	memset(c, 0, sizeof(*c));
	c->enabled = 1;
	strcpy(c->output_dir, "stepscope-out");
	c->mode = SS_SCHED_ALL;
	c->max_trace_mb = 4096;
	c->buffer_kb = 1024;
	c->record_stack = 0;
	c->record_stack_depth = 16;
	c->record_sched = 0;
	c->memory_enabled = 0;
	c->memory_allocations = 0;
	c->memory_interval_ms = 10;
	c->memory_every_n_steps = 100;
	c->gpu_enabled = 0;
	c->stats = SS_STATS_WINDOW;
	c->log_every_n_steps = 0;
}

/* ------------------------------------------------------------ overrides */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

static int config_set(struct ss_config *c, const char *keyval, const char *origin, char *err,
		      size_t errlen)
{
	char line[SS_CONFIG_PATH_MAX + SS_KEY_NAME_MAX], where[SS_CONFIG_ORIGIN_MAX + 8];
	char msg[SS_MSG_MAX], *eq, *key, *val, *p;
	int k;

	if (!origin || !*origin)
		origin = "--set";
	if (!keyval)
		keyval = "";
	ss_cfg_fmt(line, sizeof(line), "%s", keyval);
	p = trim(line);
	if (strlen(keyval) >= sizeof(line)) {
		ss_cfg_fmt(err, errlen, "%s: override too long", origin);
		return -1;
	}
	eq = strchr(p, '=');
	if (!eq) {
		ss_cfg_fmt(err, errlen, "%s %s: missing '=' (write key=value, e.g. schedule.active=3)", origin, p);
		return -1;
	}
	*eq = 0;
	key = trim(p);
	val = trim(eq + 1);
	if (!*key) {
		ss_cfg_fmt(err, errlen, "%s %s: missing key before '=' (write key=value, e.g. schedule.active=3)",
		    origin, keyval);
		return -1;
	}
	k = ss_cfg_key_find(key);
	if (k < 0) {
		ss_cfg_unknown_key_msg(msg, sizeof(msg), key);
		ss_cfg_fmt(err, errlen, "%s %s: %s", origin, keyval, msg);
		return -1;
	}
	if (ss_cfg_key_apply(c, k, val, msg, sizeof(msg))) {
		ss_cfg_fmt(err, errlen, "%s %s: %s", origin, keyval, msg);
		return -1;
	}
	/* an override switches the schedule the way the file would */
	if (k == I_EVERY_N)
		c->mode = SS_SCHED_EVERY_N;
	else if (ss_cfg_keys[k].section == I_WINDOW)
		c->mode = SS_SCHED_WINDOW;
	else if (ss_cfg_keys[k].section == I_SCHEDULE && c->mode != SS_SCHED_EVERY_N)
		c->mode = SS_SCHED_TORCH;

	ss_cfg_fmt(where, sizeof(where), "%s %s=%s", origin, key, val);
	memset(&c->mark[k], 0, sizeof(c->mark[k]));
	ss_cfg_fmt(c->mark[k].origin, sizeof(c->mark[k].origin), "%s", where);
	if (ss_cfg_keys[k].section >= 0 && !key_given(c, ss_cfg_keys[k].section))
		c->mark[ss_cfg_keys[k].section] = c->mark[k];
	return 0;
}

/* ------------------------------------------------------------ checks */

static int check_fail(const struct ss_config *c, int k, char *err, size_t errlen, const char *msg)
{
	char where[SS_CONFIG_PATH_MAX + 32];

	key_where(c, k, where, sizeof(where));
	ss_cfg_fmt(err, errlen, "%s%s", where, msg);
	return -1;
}

static int config_check(const struct ss_config *c, char *err, size_t errlen)
{
	char msg[SS_MSG_MAX];
	int at;

	if (c->mode < SS_SCHED_ALL || c->mode > SS_SCHED_EVERY_N)
		return check_fail(c, -1, err, errlen, "unknown schedule mode");
	/* flops and bytes given with --set (the YAML mapping was checked per
	 * entry) */
	for (int b = 0; b < 2; b++) {
		const char *text = b ? c->bytes : c->flops, *key = b ? "bytes" : "flops";
		const uint32_t *line = b ? c->bytes_line : c->flops_line;
		int k = b ? I_BYTES : I_FLOPS;
		if (text[0] && ss_flops_check_all_as(text, key, msg, sizeof(msg)) >= 0)
			return check_fail(c, k, err, errlen, msg);
		/* an entry of a function record.args does not list: its calls
		 * have no arguments; said at the entry's line */
		if (text[0] && (at = ss_flops_check_listed_as(text, key, c->record_args, msg,
							       sizeof(msg))) >= 0) {
			if (at < SS_FLOPS_MAX && line[at] && c->source[0] && !c->mark[k].origin[0]) {
				ss_cfg_fmt(err, errlen, "%s:%u: %s", c->source, line[at], msg);
				return -1;
			}
			return check_fail(c, k, err, errlen, msg);
		}
	}

	/* a schedule needs active steps; say so before "must be > 0, got 0" */
	if ((c->mode == SS_SCHED_TORCH || c->mode == SS_SCHED_EVERY_N) && c->active == 0) {
		if (c->mode == SS_SCHED_TORCH || key_given(c, I_SCHEDULE)) {
			at = key_given(c, I_SCHEDULE) ? I_SCHEDULE : -1;
			return check_fail(c, at, err, errlen,
					  "schedule.active is required (how many steps each cycle records)");
		}
		return check_fail(c, I_EVERY_N, err, errlen,
				  "every_n_steps needs schedule.active (how many steps each cycle records, e.g. schedule: {active: 3})");
	}

	/* ranges again: the struct may have been filled by hand */
	for (int k = 0; k < I_NKEYS; k++) {
		if (ss_cfg_keys[k].type != T_INT)
			continue;
		if (ss_cfg_keys[k].modes && !(ss_cfg_keys[k].modes & MODE_BIT(c->mode)))
			continue;
		if (int_range(k, int_value(c, k), msg, sizeof(msg)))
			return check_fail(c, k, err, errlen, msg);
	}
	if (!c->output_dir[0])
		return check_fail(c, I_OUTPUT_DIR, err, errlen, "output_dir must not be empty");
	if (c->stats != SS_STATS_WINDOW && c->stats != SS_STATS_WHOLE_RUN)
		return check_fail(c, I_STATS, err, errlen, "stats must be 'window' or 'whole_run'");

	if (c->mode == SS_SCHED_WINDOW) {
		if (c->end_step == 0 && !key_given(c, I_END_STEP)) {
			at = key_given(c, I_WINDOW) ? I_WINDOW : -1;
			return check_fail(c, at, err, errlen,
					  "window.end_step is required (the first step not recorded)");
		}
		if (c->end_step <= c->start_step) {
			ss_cfg_fmt(msg, sizeof(msg), "window.end_step must be > window.start_step (%lld), got %lld",
			    (long long)c->start_step, (long long)c->end_step);
			return check_fail(c, I_END_STEP, err, errlen, msg);
		}
	}
	if (c->mode == SS_SCHED_EVERY_N) {
		int64_t need;

		/* the three may each be up to INT64_MAX: a sum past it is a
		 * cycle no every_n_steps can hold */
		if (__builtin_add_overflow(c->wait, c->warmup, &need) ||
		    __builtin_add_overflow(need, c->active, &need)) {
			ss_cfg_fmt(msg, sizeof(msg),
			    "every_n_steps must be >= schedule.wait + schedule.warmup + schedule.active (more than %lld), got %lld",
			    (long long)INT64_MAX, (long long)c->every_n_steps);
			return check_fail(c, I_EVERY_N, err, errlen, msg);
		}
		if (c->every_n_steps < need) {
			ss_cfg_fmt(msg, sizeof(msg),
			    "every_n_steps must be >= schedule.wait + schedule.warmup + schedule.active (%lld), got %lld",
			    (long long)need, (long long)c->every_n_steps);
			return check_fail(c, I_EVERY_N, err, errlen, msg);
		}
	}
	return 0;
}

/* The public entry points: every message they leave in err is one line. */
int ss_config_load_file(struct ss_config *c, const char *path, char *err, size_t errlen)
{
	int rc = ss_cfg_load_file(c, path, err, errlen);

	if (rc)
		escape_controls(err, errlen);
	return rc;
}

int ss_config_set(struct ss_config *c, const char *keyval, const char *origin, char *err,
		  size_t errlen)
{
	int rc = config_set(c, keyval, origin, err, errlen);

	if (rc)
		escape_controls(err, errlen);
	return rc;
}

int ss_config_check(const struct ss_config *c, char *err, size_t errlen)
{
	int rc = config_check(c, err, errlen);

	if (rc)
		escape_controls(err, errlen);
	return rc;
}

/* ------------------------------------------------------------ lookup order */

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int ss_config_resolve(struct ss_config *c, const char *cli_path, const char *const *sets,
		      size_t nsets, char *err, size_t errlen)
{
	const char *path = NULL, *env;

	ss_config_defaults(c);
	if (cli_path && *cli_path)
		path = cli_path;
	else if ((env = secure_getenv("STEPSCOPE_CONFIG")) && *env)
		path = env;
	else if (!getauxval(AT_SECURE) && file_exists("stepscope.yaml"))
		path = "stepscope.yaml"; /* not the caller's, in a setuid program */
	if (path && ss_config_load_file(c, path, err, errlen))
		return -1;

	for (size_t i = 0; i < nsets; i++)
		if (sets[i] && ss_config_set(c, sets[i], "--set", err, errlen))
			return -1;

	env = secure_getenv("STEPSCOPE_SET");
	if (env && *env) {
		char *copy = strdup(env), *save = NULL, *item;

		if (!copy) {
			ss_cfg_fmt(err, errlen, "STEPSCOPE_SET: out of memory");
			return -1;
		}
		for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
			if (!*trim(item))
				continue;
			if (ss_config_set(c, item, "STEPSCOPE_SET", err, errlen)) {
				free(copy);
				return -1;
			}
		}
		free(copy);
	}
	return ss_config_check(c, err, errlen);
}

/* ------------------------------------------------------------ dump */

struct out {
	char *buf;
	size_t len, need;
};

static void out_put(struct out *o, const char *f, ...) __attribute__((format(printf, 2, 3)));

static void out_put(struct out *o, const char *f, ...)
{
	va_list ap;
	size_t room = o->need < o->len ? o->len - o->need : 0;
	int n;

	va_start(ap, f);
	n = vsnprintf(o->buf ? o->buf + (o->need < o->len ? o->need : 0) : NULL,
		      o->buf ? room : 0, f, ap);
	va_end(ap);
	if (n > 0)
		o->need += (size_t)n;
}

static int dump_key(const struct ss_config *c, int k)
{
	int sec = ss_cfg_keys[k].section;

	if (ss_cfg_keys[k].type == T_SECTION)
		return 0;
	if (sec == I_SCHEDULE)
		return c->mode == SS_SCHED_TORCH || c->mode == SS_SCHED_EVERY_N;
	if (sec == I_WINDOW)
		return c->mode == SS_SCHED_WINDOW;
	if (k == I_EVERY_N)
		return c->mode == SS_SCHED_EVERY_N;
	if (k == I_RECORD_ARGS || k == I_FLOPS || k == I_BYTES) /* only when given */
		return *((const char *)c + ss_cfg_keys[k].off) != 0;
	if (sec == I_FILTER) /* only the filters in use */
		return ss_cfg_keys[k].type == T_INT ? int_value(c, k) != 0
					     : *((const char *)c + ss_cfg_keys[k].off) != 0;
	return 1;
}

size_t ss_config_dump(const struct ss_config *c, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (buf && len)
		buf[0] = 0;
	for (int k = 0; k < I_NKEYS; k++) {
		if (!dump_key(c, k))
			continue;
		switch (ss_cfg_keys[k].type) {
		case T_BOOL:
			out_put(&o, "%s=%s\n", ss_cfg_keys[k].name,
				*(const int *)((const char *)c + ss_cfg_keys[k].off) ? "true" : "false");
			break;
		case T_INT:
			out_put(&o, "%s=%lld\n", ss_cfg_keys[k].name, (long long)int_value(c, k));
			break;
		case T_STR:
			out_put(&o, "%s=%s\n", ss_cfg_keys[k].name, (const char *)c + ss_cfg_keys[k].off);
			break;
		case T_STATS:
			out_put(&o, "%s=%s\n", ss_cfg_keys[k].name,
				c->stats == SS_STATS_WHOLE_RUN ? "whole_run" : "window");
			break;
		case T_SECTION:
			break;
		}
	}
	return o.need;
}
