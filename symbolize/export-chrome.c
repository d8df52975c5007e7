/*
 * export-chrome.c - write slices as Chrome trace-event JSON (the format
 * chrome://tracing and Perfetto open).
 *
 * Design: streaming and hand-formatted.  Every event is printed with
 * integer-only formatting into a 1 MiB buffer that is written out when
 * full, so the cost per slice is a few hundred byte stores.  Times are
 * microseconds with exactly three decimals, so nanoseconds survive.
 *
 * Must never: go through cJSON or printf per event, keep events in
 * memory, or emit invalid JSON for any name (everything is escaped).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "version.h"

#define SS_CHROME_BUF (1u << 20)
#define SS_CHROME_SLACK 512      /* room for the fixed parts of one event */

struct ss_chrome {
	struct ss_exporter ex;
	FILE *f;
	char *path;
	char *buf;
	size_t len;
	uint64_t t0;
	int first;
	int werr;                /* errno of the first failed write */
};

static void ss_chrome_flush(struct ss_chrome *c)
{
	if (c->len && fwrite(c->buf, 1, c->len, c->f) != c->len && !c->werr)
		c->werr = errno ? errno : EIO;
	c->len = 0;
}

static inline void ss_chrome_reserve(struct ss_chrome *c, size_t n)
{
	if (c->len + n > SS_CHROME_BUF)
		ss_chrome_flush(c);
}

static inline void ss_chrome_lit(struct ss_chrome *c, const char *s, size_t n)
{
	if (n > SS_CHROME_BUF) {
		ss_chrome_flush(c);
		if (fwrite(s, 1, n, c->f) != n && !c->werr)
			c->werr = errno ? errno : EIO;
		return;
	}
	ss_chrome_reserve(c, n);
	memcpy(c->buf + c->len, s, n);
	c->len += n;
}

#define SS_CHROME_LIT(c, s) ss_chrome_lit((c), (s), sizeof(s) - 1)

static inline void ss_chrome_u64(struct ss_chrome *c, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ss_chrome_reserve(c, 24);
	while (n)
		c->buf[c->len++] = tmp[--n];
}

static inline void ss_chrome_hex(struct ss_chrome *c, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	ss_chrome_reserve(c, 20);
	c->buf[c->len++] = '0';
	c->buf[c->len++] = 'x';
	while (n)
		c->buf[c->len++] = tmp[--n];
}

/* ns relative to t0 as microseconds with three decimals */
static inline void ss_chrome_us(struct ss_chrome *c, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);

	ss_chrome_u64(c, ns / 1000);
	ss_chrome_reserve(c, 4);
	c->buf[c->len++] = '.';
	c->buf[c->len++] = (char)('0' + frac / 100);
	c->buf[c->len++] = (char)('0' + frac / 10 % 10);
	c->buf[c->len++] = (char)('0' + frac % 10);
}

/* A JSON string body (without quotes), escaped. */
static void ss_chrome_str(struct ss_chrome *c, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		ss_chrome_reserve(c, 6);
		if (ch == '"' || ch == '\\') {
			c->buf[c->len++] = '\\';
			c->buf[c->len++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			memcpy(c->buf + c->len, "\\u00", 4);
			c->len += 4;
			c->buf[c->len++] = hex[ch >> 4];
			c->buf[c->len++] = hex[ch & 15];
		} else {
			c->buf[c->len++] = (char)ch;
		}
	}
}

static void ss_chrome_sep(struct ss_chrome *c)
{
	if (c->first) {
		c->first = 0;
		SS_CHROME_LIT(c, "\n");
	} else {
		SS_CHROME_LIT(c, ",\n");
	}
}

static int ss_chrome_begin(void *ctx, uint64_t t0_ns)
{
	struct ss_chrome *c = ctx;

	c->t0 = t0_ns;
	c->first = 1;
	SS_CHROME_LIT(c, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	return 0;
}

static void ss_chrome_process(void *ctx, uint64_t pid, const char *name)
{
	struct ss_chrome *c = ctx;

	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	ss_chrome_u64(c, pid);
	SS_CHROME_LIT(c, ",\"args\":{\"name\":\"");
	ss_chrome_str(c, name);
	SS_CHROME_LIT(c, "\"}}");
}

static void ss_chrome_thread(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_chrome *c = ctx;

	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
	ss_chrome_u64(c, pid);
	SS_CHROME_LIT(c, ",\"tid\":");
	ss_chrome_u64(c, tid);
	SS_CHROME_LIT(c, ",\"args\":{\"name\":\"");
	ss_chrome_str(c, name);
	SS_CHROME_LIT(c, "\"}}");
}

static void ss_chrome_slice(void *ctx, uint64_t pid, uint64_t tid,
			    const struct ss_slice *s)
{
	static const char *const cats[] = { "function", "step", "user_range" };
	static const char *const clips[] = { "", "begin", "end", "both" };
	struct ss_chrome *c = ctx;
	uint64_t b = s->begin_ns > c->t0 ? s->begin_ns - c->t0 : 0;
	unsigned clip = s->flags & (SS_SLICE_CLIPPED_BEGIN | SS_SLICE_CLIPPED_END);
	int args = 0;

	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"X\",\"cat\":\"");
	ss_chrome_str(c, cats[s->cat <= SS_SLICE_RANGE ? s->cat : 0]);
	SS_CHROME_LIT(c, "\",\"name\":\"");
	ss_chrome_str(c, s->name ? s->name : "?");
	SS_CHROME_LIT(c, "\",\"pid\":");
	ss_chrome_u64(c, pid);
	SS_CHROME_LIT(c, ",\"tid\":");
	ss_chrome_u64(c, tid);
	SS_CHROME_LIT(c, ",\"ts\":");
	ss_chrome_us(c, b);
	SS_CHROME_LIT(c, ",\"dur\":");
	ss_chrome_us(c, s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0);
	if (s->cat == SS_SLICE_FUNCTION) {
		SS_CHROME_LIT(c, ",\"args\":{");
		if (s->file) {
			SS_CHROME_LIT(c, "\"file\":\"");
			ss_chrome_str(c, s->file);
			SS_CHROME_LIT(c, "\",");
		}
		SS_CHROME_LIT(c, "\"addr\":\"");
		ss_chrome_hex(c, s->addr);
		SS_CHROME_LIT(c, "\"");
		args = 1;
	}
	if (clip || (s->flags & SS_SLICE_UNWOUND)) {
		if (!args)
			SS_CHROME_LIT(c, ",\"args\":{");
		else
			SS_CHROME_LIT(c, ",");
		if (clip) {
			SS_CHROME_LIT(c, "\"clipped\":\"");
			ss_chrome_str(c, clips[clip]);
			SS_CHROME_LIT(c, "\"");
			if (s->flags & SS_SLICE_UNWOUND)
				SS_CHROME_LIT(c, ",");
		}
		if (s->flags & SS_SLICE_UNWOUND)
			SS_CHROME_LIT(c, "\"unwound\":true");
		args = 1;
	}
	if (args)
		SS_CHROME_LIT(c, "}}");
	else
		SS_CHROME_LIT(c, "}");
	c->ex.events++;
}

static void ss_chrome_counter(void *ctx, uint64_t pid, const char *name,
			      uint64_t ns, double value)
{
	struct ss_chrome *c = ctx;
	char num[64];

	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"C\",\"name\":\"");
	ss_chrome_str(c, name);
	SS_CHROME_LIT(c, "\",\"pid\":");
	ss_chrome_u64(c, pid);
	SS_CHROME_LIT(c, ",\"ts\":");
	ss_chrome_us(c, ns > c->t0 ? ns - c->t0 : 0);
	SS_CHROME_LIT(c, ",\"args\":{\"value\":");
	snprintf(num, sizeof(num), "%.17g", value);
	ss_chrome_lit(c, num, strlen(num));
	SS_CHROME_LIT(c, "}}");
	c->ex.events++;
}

static int ss_chrome_end(void *ctx, char *err, size_t errlen)
{
	struct ss_chrome *c = ctx;
	int rc = 0;

	SS_CHROME_LIT(c, "\n],\"otherData\":{\"stepscope_version\":\"" SS_TOOL_VERSION
			 "\",\"trace_format\":");
	ss_chrome_u64(c, SS_VERSION);
	SS_CHROME_LIT(c, "}}\n");
	ss_chrome_flush(c);
	if (fflush(c->f) && !c->werr)
		c->werr = errno ? errno : EIO;
	if (fclose(c->f) && !c->werr)
		c->werr = errno ? errno : EIO;
	c->f = NULL;
	if (c->werr) {
		snprintf(err, errlen, "%s: cannot write: %s", c->path,
			 strerror(c->werr));
		rc = -1;
	}
	return rc;
}

static void ss_chrome_release(void *ctx)
{
	struct ss_chrome *c = ctx;

	if (c->f)
		fclose(c->f);
	free(c->buf);
	free(c->path);
	free(c);
}

struct ss_exporter *ss_export_chrome_open(const char *path, char *err,
					  size_t errlen)
{
	struct ss_chrome *c = calloc(1, sizeof(*c));

	if (!c || !(c->buf = malloc(SS_CHROME_BUF)) || !(c->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		if (c)
			free(c->buf);
		free(c);
		return NULL;
	}
	c->f = fopen(path, "w");
	if (!c->f) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		ss_chrome_release(c);
		return NULL;
	}
	setvbuf(c->f, NULL, _IONBF, 0);
	c->ex.ctx = c;
	c->ex.begin = ss_chrome_begin;
	c->ex.process = ss_chrome_process;
	c->ex.thread = ss_chrome_thread;
	c->ex.slice = ss_chrome_slice;
	c->ex.counter = ss_chrome_counter;
	c->ex.end = ss_chrome_end;
	c->ex.release = ss_chrome_release;
	return &c->ex;
}

void ss_exporter_free(struct ss_exporter *e)
{
	if (e)
		e->release(e->ctx);
}
