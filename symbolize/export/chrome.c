/*
 * chrome.c - write slices as Chrome trace-event JSON (the format
 * chrome://tracing and Perfetto open).
 *
 * Design: streaming and hand-formatted.  A function slice is three
 * precomputed pieces and two numbers: the head (`{"ph":"X",...,"name":"f",`)
 * and the args tail are JSON-escaped once per distinct symbol and kept in a
 * small hash table keyed by the symbol's strings; `"pid":P,"tid":T,"ts":` is
 * kept for the current thread; ts and dur are printed with a two-digit
 * table.  Output goes into 1 MiB buffers that a writer thread hands to
 * write(2) while the next one fills, so the kernel's copy of a large file
 * overlaps the formatting.  Times are microseconds with exactly three
 * decimals, so nanoseconds survive.
 *
 * Files: this one is the exporter (the symbol cache, events, GPU tracks);
 * chrome-write.c the buffers, writer thread and JSON pieces; chrome.h what
 * they share.
 *
 * Must never: go through cJSON or printf per event, keep events in
 * memory (the symbol table grows with distinct functions only), or emit
 * invalid JSON for any name (everything is escaped).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "outfile.h"
#include "version.h"
#include "chrome.h"

/* ---------------------------------------------------------------- symbols */

static size_t ss_chrome_hash(const struct ss_slice *s)
{
	uint64_t h = s->addr ^ (uint64_t)(uintptr_t)s->name * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(uintptr_t)s->file;

	h ^= h >> 31;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 29;
	return (size_t)h;
}

/* Head and tail of a function slice.  The key is the strings' addresses
 * plus the address: the symbolizer hands out one stable string per
 * distinct function; a name built on the stack (no symbols at all) is a
 * function of the address alone, so the pair still names one text. */
static struct ss_chrome_sym *ss_chrome_sym_make(struct ss_chrome *c,
						struct ss_chrome_sym *e,
						const struct ss_slice *s)
{
	static const char h1[] = "{\"ph\":\"X\",\"name\":\"";
	char addr[24];
	size_t nl = ss_chrome_escape(NULL, s->name ? s->name : "?");
	size_t fl = s->file ? ss_chrome_escape(NULL, s->file) : 0;
	size_t cl = s->clone ? ss_chrome_escape(NULL, s->clone) : 0;
	size_t hl = sizeof(h1) - 1 + nl + 2;
	size_t al, tl;
	char *p;

	{
		static const char hx[] = "0123456789abcdef";
		char tmp[16];
		uint64_t v = s->addr;
		int n = 0;
		do {
			tmp[n++] = hx[v & 15];
			v >>= 4;
		} while (v);
		al = 0;
		addr[al++] = '0';
		addr[al++] = 'x';
		while (n)
			addr[al++] = tmp[--n];
	}
	/* ,"args":{"file":"F","addr":"A","clone":"C" (file and addr with
	 * --details only) */
	tl = 10 + (s->file ? 10 + fl : 0) + 9 + al + (s->clone ? 11 + cl : 0);
	e->args = c->details || s->clone;
	p = malloc(hl + tl + 2);
	if (!p)
		return NULL;
	e->head = p;
	memcpy(p, h1, sizeof(h1) - 1);
	p += sizeof(h1) - 1;
	ss_chrome_escape(p, s->name ? s->name : "?");
	p += nl;
	memcpy(p, "\",", 2);
	p += 2;
	e->hlen = (unsigned)(p - e->head);
	e->tail = p;
	if (!e->args)
		goto done;
	memcpy(p, ",\"args\":{", 9);
	p += 9;
	if (!c->details)
		goto clone;
	if (s->file) {
		memcpy(p, "\"file\":\"", 8);
		p += 8;
		ss_chrome_escape(p, s->file);
		p += fl;
		memcpy(p, "\",", 2);
		p += 2;
	}
	memcpy(p, "\"addr\":\"", 8);
	p += 8;
	memcpy(p, addr, al);
	p += al;
	*p++ = '"';
clone:
	if (s->clone) {
		if (c->details)
			*p++ = ',';
		memcpy(p, "\"clone\":\"", 9);
		p += 9;
		ss_chrome_escape(p, s->clone);
		p += cl;
		*p++ = '"';
	}
done:
	e->tlen = (unsigned)(p - e->tail);
	e->name = s->name;
	e->file = s->file;
	e->clone = s->clone;
	e->addr = s->addr;
	return e;
}

static int ss_chrome_sym_grow(struct ss_chrome *c)
{
	size_t n = c->capsyms ? c->capsyms * 2 : 256, i;
	struct ss_chrome_sym *ns = calloc(n, sizeof(*ns));

	if (!ns)
		return -1;
	for (i = 0; i < c->capsyms; i++) {
		struct ss_chrome_sym *o = &c->syms[i];
		struct ss_slice k;
		size_t h;
		if (!o->head)
			continue;
		memset(&k, 0, sizeof(k));
		k.name = o->name;
		k.file = o->file;
		k.addr = o->addr;
		h = ss_chrome_hash(&k) & (n - 1);
		while (ns[h].head)
			h = (h + 1) & (n - 1);
		ns[h] = *o;
	}
	free(c->syms);
	c->syms = ns;
	c->capsyms = n;
	return 0;
}

static const struct ss_chrome_sym *ss_chrome_sym_get(struct ss_chrome *c,
						     const struct ss_slice *s)
{
	size_t h;

	if ((c->nsyms + 1) * 2 > c->capsyms && ss_chrome_sym_grow(c))
		return NULL;
	h = ss_chrome_hash(s) & (c->capsyms - 1);
	while (c->syms[h].head) {
		struct ss_chrome_sym *e = &c->syms[h];
		if (e->addr == s->addr && e->name == s->name && e->file == s->file &&
		    e->clone == s->clone)
			return e;
		h = (h + 1) & (c->capsyms - 1);
	}
	if (!ss_chrome_sym_make(c, &c->syms[h], s))
		return NULL;
	c->nsyms++;
	return &c->syms[h];
}

/* ---------------------------------------------------------------- events */

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

/* "pid":P,"tid":T,"ts": of the thread being written */
static void ss_chrome_set_thread(struct ss_chrome *c, uint64_t pid, uint64_t tid)
{
	char *p = c->pidtid;

	memcpy(p, "\"pid\":", 6);
	p += 6;
	p += ss_chrome_fmt_u64(p, pid);
	memcpy(p, ",\"tid\":", 7);
	p += 7;
	p += ss_chrome_fmt_u64(p, tid);
	memcpy(p, ",\"ts\":", 6);
	p += 6;
	c->pidtid_len = (unsigned)(p - c->pidtid);
	c->cur_pid = pid;
	c->cur_tid = tid;
	c->have_pidtid = 1;
}

/* How an unwound slice ended (args.unwound). */
static const char *ss_chrome_unwound(unsigned why)
{
	switch (why) {
	case SS_UNWIND_THREAD_EXIT: return "thread_exit";
	case SS_UNWIND_EXIT: return "exit";
	case SS_UNWIND_SUSPENDED: return "suspended";
	default: return "longjmp";
	}
}

/* Clip and unwind flags of s: appended inside an open args object. */
static void ss_chrome_flags(struct ss_chrome *c, const struct ss_slice *s, int args)
{
	static const char *const clips[] = { "", "begin", "end", "both" };
	unsigned flags = s->flags;
	unsigned clip = flags & (SS_SLICE_CLIPPED_BEGIN | SS_SLICE_CLIPPED_END);

	if (!clip && !(flags & SS_SLICE_UNWOUND)) {
		if (args)
			SS_CHROME_LIT(c, "}}");
		else
			SS_CHROME_LIT(c, "}");
		return;
	}
	if (!args)
		SS_CHROME_LIT(c, ",\"args\":{");
	else
		SS_CHROME_LIT(c, ",");
	if (clip) {
		SS_CHROME_LIT(c, "\"clipped\":\"");
		ss_chrome_str(c, clips[clip]);
		SS_CHROME_LIT(c, "\"");
		if (flags & SS_SLICE_UNWOUND)
			SS_CHROME_LIT(c, ",");
	}
	if (flags & SS_SLICE_UNWOUND) {
		SS_CHROME_LIT(c, "\"unwound\":\"");
		ss_chrome_str(c, ss_chrome_unwound(s->unwind));
		SS_CHROME_LIT(c, "\"");
	}
	SS_CHROME_LIT(c, "}}");
}

/* ,"args":{"k":v,...  from "k=v k=v" (numbers bare, the rest as strings);
 * the object is left open for ss_chrome_flags. */
static void ss_chrome_args(struct ss_chrome *c, const char *args)
{
	char buf[256];
	int first = 1;
	snprintf(buf, sizeof(buf), "%s", args);
	SS_CHROME_LIT(c, ",\"args\":{");
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), *end;
		if (!eq || eq == w)
			continue;
		*eq = 0;
		if (!first)
			SS_CHROME_LIT(c, ",");
		first = 0;
		SS_CHROME_LIT(c, "\"");
		ss_chrome_str(c, w);
		SS_CHROME_LIT(c, "\":");
		strtoll(eq + 1, &end, 10);
		if (eq[1] && !*end && (eq[1] != '0' || !eq[2] || eq[1] == '-')) {
			ss_chrome_str(c, eq + 1);
		} else {
			SS_CHROME_LIT(c, "\"");
			ss_chrome_str(c, eq + 1);
			SS_CHROME_LIT(c, "\"");
		}
	}
	if (first) /* nothing usable: keep the object valid */
		SS_CHROME_LIT(c, "\"args\":\"\"");
}

/* What every event says after '"name":"': the rest of the name (a slice
 * without one is "?"), then its pid, tid and ts (ns since t0). */
static void ss_chrome_where(struct ss_chrome *c, const char *name, uint64_t pid,
			    uint64_t tid, uint64_t ts_ns)
{
	ss_chrome_str(c, name ? name : "?");
	SS_CHROME_LIT(c, "\",\"pid\":");
	ss_chrome_u64(c, pid);
	SS_CHROME_LIT(c, ",\"tid\":");
	ss_chrome_u64(c, tid);
	SS_CHROME_LIT(c, ",\"ts\":");
	ss_chrome_us(c, ts_ns);
}

/* Steps, ranges and functions with a native stack: field by field.  Only
 * steps and ranges say their "cat"; a slice without one is a function. */
static void ss_chrome_slice_other(struct ss_chrome *c, uint64_t pid, uint64_t tid,
				  const struct ss_slice *s)
{
	uint64_t b = s->begin_ns > c->t0 ? s->begin_ns - c->t0 : 0;
	int args = 0;

	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"X\",");
	if (s->cat == SS_SLICE_STEP)
		SS_CHROME_LIT(c, "\"cat\":\"step\",");
	else if (s->cat == SS_SLICE_RANGE)
		SS_CHROME_LIT(c, "\"cat\":\"user_range\",");
	SS_CHROME_LIT(c, "\"name\":\"");
	ss_chrome_where(c, s->name, pid, tid, b);
	SS_CHROME_LIT(c, ",\"dur\":");
	{
		uint64_t d = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
		if (s->cat == SS_SLICE_STEP && d >= SS_EXPORT_STEP_GAP)
			d -= SS_EXPORT_STEP_GAP;
		ss_chrome_us(c, d);
	}
	if (s->stack && s->stack->leaf) {  /* record.stack: "P.N" in stackFrames */
		SS_CHROME_LIT(c, ",\"sf\":\"");
		ss_chrome_u64(c, pid);
		SS_CHROME_LIT(c, ".");
		ss_chrome_u64(c, s->stack->leaf);
		SS_CHROME_LIT(c, "\"");
	}
	if (s->args) { /* MPI calls: "bytes=4096 comm_size=4" as args */
		ss_chrome_args(c, s->args);
		args = 1;
	} else if (s->cat == SS_SLICE_FUNCTION && (c->details || s->clone || s->argv)) {
		char addr[24];
		SS_CHROME_LIT(c, ",\"args\":{");
		/* record.args: chrome-args.c (nothing for a function without
		 * named parameters) */
		if (s->argv && ss_chrome_call_args(c, s) && (c->details || s->clone))
			SS_CHROME_LIT(c, ",");
		if (c->details) {
			if (s->file) {
				SS_CHROME_LIT(c, "\"file\":\"");
				ss_chrome_str(c, s->file);
				SS_CHROME_LIT(c, "\",");
			}
			snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)s->addr);
			SS_CHROME_LIT(c, "\"addr\":\"");
			ss_chrome_lit(c, addr, strlen(addr));
			SS_CHROME_LIT(c, "\"");
		}
		if (s->clone) {
			if (c->details)
				SS_CHROME_LIT(c, ",");
			SS_CHROME_LIT(c, "\"clone\":\"");
			ss_chrome_str(c, s->clone);
			SS_CHROME_LIT(c, "\"");
		}
		args = 1;
	}
	ss_chrome_flags(c, s, args);
}

/* A MARKER: an instant on its thread ("s":"t"), events lost in args. */
static void ss_chrome_marker(struct ss_chrome *c, uint64_t pid, uint64_t tid,
			     const struct ss_slice *s)
{
	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"stepscope\",\"name\":\"");
	ss_chrome_where(c, s->name, pid, tid, s->begin_ns > c->t0 ? s->begin_ns - c->t0 : 0);
	if (s->marker == SS_EV_LOST) {
		SS_CHROME_LIT(c, ",\"args\":{\"count\":");
		ss_chrome_u64(c, s->marker_arg);
		SS_CHROME_LIT(c, "}");
	}
	SS_CHROME_LIT(c, "}");
	if (s->marker == SS_EV_STOP && (!c->stopped || s->begin_ns < c->stop_ns)) {
		c->stopped = 1;
		c->stop_ns = s->begin_ns;
		c->stop_pid = pid;
		c->stop_tid = tid;
		c->stop_reason = s->marker_arg;
		c->stop_has_step = s->has_step;
		c->stop_step = s->step;
	}
}

static void ss_chrome_slice(void *ctx, uint64_t pid, uint64_t tid,
			    const struct ss_slice *s)
{
	struct ss_chrome *c = ctx;
	const struct ss_chrome_sym *e;
	uint64_t b, d;
	size_t need;
	char *p;

	c->ex.events++;
	if (s->cat == SS_SLICE_MARKER) {
		ss_chrome_marker(c, pid, tid, s);
		return;
	}
	if (s->cat != SS_SLICE_FUNCTION || s->stack || s->argv ||
	    !(e = ss_chrome_sym_get(c, s))) {
		ss_chrome_slice_other(c, pid, tid, s);
		return;
	}
	if (!c->have_pidtid || pid != c->cur_pid || tid != c->cur_tid)
		ss_chrome_set_thread(c, pid, tid);
	b = s->begin_ns > c->t0 ? s->begin_ns - c->t0 : 0;
	d = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
	need = 2 + e->hlen + c->pidtid_len + 24 + 8 + 24 + e->tlen + 2;
	if (need > SS_CHROME_BUF / 2) {  /* a name of half a megabyte */
		ss_chrome_slice_other(c, pid, tid, s);
		return;
	}
	ss_chrome_reserve(c, need);
	p = c->buf + c->len;
	if (c->first) {
		c->first = 0;
		*p++ = '\n';
	} else {
		*p++ = ',';
		*p++ = '\n';
	}
	memcpy(p, e->head, e->hlen);
	p += e->hlen;
	memcpy(p, c->pidtid, c->pidtid_len);
	p += c->pidtid_len;
	p += ss_chrome_fmt_us(p, b);
	memcpy(p, ",\"dur\":", 7);
	p += 7;
	p += ss_chrome_fmt_us(p, d);
	memcpy(p, e->tail, e->tlen);
	p += e->tlen;
	if (!(s->flags & (SS_SLICE_CLIPPED_BEGIN | SS_SLICE_CLIPPED_END |
			  SS_SLICE_UNWOUND))) {
		p[0] = '}';
		p[1] = '}';
		c->len = (size_t)(p + 1 + e->args - c->buf);
		return;
	}
	c->len = (size_t)(p - c->buf);
	ss_chrome_flags(c, s, e->args);
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

static void ss_chrome_writer_stop(struct ss_chrome *c)
{
	struct ss_chrome_writer *w = &c->w;

	if (!w->started)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	w->started = 0;
}

/* record.stack: the frame tree of one process, kept for the end as
 * "P.N":{"name":"f","parent":"P.M"} entries. */
static void ss_chrome_stack_nodes(void *ctx, uint64_t pid,
				  const struct ss_stack_node *nodes, size_t n)
{
	struct ss_chrome *c = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *name = nodes[i].name ? nodes[i].name : "?";
		size_t need = c->sflen + 6 * strlen(name) + 128;
		char *p;
		if (need > c->sfcap) {
			size_t nc = c->sfcap ? c->sfcap : 4096;
			while (nc < need)
				nc *= 2;
			p = realloc(c->sf, nc);
			if (!p)
				return;
			c->sf = p;
			c->sfcap = nc;
		}
		p = c->sf + c->sflen;
		p += sprintf(p, "%s\"%llu.%zu\":{\"name\":\"", c->sflen ? ",\n" : "\n",
			     (unsigned long long)pid, i + 1);
		p += ss_chrome_escape(p, name);
		*p++ = '"';
		if (nodes[i].parent)
			p += sprintf(p, ",\"parent\":\"%llu.%u\"",
				     (unsigned long long)pid, nodes[i].parent);
		*p++ = '}';
		c->sflen = (size_t)(p - c->sf);
	}
}

static int ss_chrome_end(void *ctx, char *err, size_t errlen)
{
	struct ss_chrome *c = ctx;
	int rc = 0;

	SS_CHROME_LIT(c, "\n]");
	if (c->sflen) {
		SS_CHROME_LIT(c, ",\"stackFrames\":{");
		ss_chrome_lit(c, c->sf, c->sflen);
		SS_CHROME_LIT(c, "}");
	}
	SS_CHROME_LIT(c, ",\"otherData\":{\"stepscope_version\":\"" SS_TOOL_VERSION
			 "\",\"trace_format\":");
	ss_chrome_u64(c, SS_VERSION);
	if (c->stopped) {  /* the trace ends there, though the run went on */
		static const char *const why[] = { "unknown", "max_trace_mb reached",
						   "disk full", "write error" };
		SS_CHROME_LIT(c, ",\"recording_stopped\":{\"why\":\"");
		ss_chrome_lit(c, why[c->stop_reason < 4 ? c->stop_reason : 0],
			      strlen(why[c->stop_reason < 4 ? c->stop_reason : 0]));
		SS_CHROME_LIT(c, "\",\"pid\":");
		ss_chrome_u64(c, c->stop_pid);
		SS_CHROME_LIT(c, ",\"tid\":");
		ss_chrome_u64(c, c->stop_tid);
		SS_CHROME_LIT(c, ",\"ts_ns\":");
		ss_chrome_u64(c, c->stop_ns > c->t0 ? c->stop_ns - c->t0 : 0);
		if (c->stop_has_step) {
			SS_CHROME_LIT(c, ",\"step\":");
			ss_chrome_u64(c, c->stop_step);
		}
		SS_CHROME_LIT(c, "}");
	}
	SS_CHROME_LIT(c, "}}\n");
	ss_chrome_flush(c);
	ss_chrome_writer_stop(c);
	c->fd = -1;
	if (ss_out_commit(&c->out, c->werr, err, errlen))
		rc = -1;
	return rc;
}

static void ss_chrome_release(void *ctx)
{
	struct ss_chrome *c = ctx;
	size_t i;

	ss_chrome_writer_stop(c);
	ss_out_abort(&c->out);
	for (i = 0; i < c->capsyms; i++)
		free(c->syms[i].head);
	free(c->syms);
	free(c->bufs[0]);
	free(c->bufs[1]);
	free(c->path);
	free(c->sf);
	pthread_mutex_destroy(&c->w.mu);
	pthread_cond_destroy(&c->w.cv);
	free(c);
}

/* ------------------------------------------------------------ GPU */

/* The Chrome pid of device `dev` of process `pid`: one track group per
 * device ("GPU 0"), never a real pid. */
static uint64_t ss_chrome_gpu_pid(uint64_t pid, uint32_t dev)
{
	return (UINT64_C(1) << 40) + (pid << 8) + (dev & 0xff);
}

static void ss_chrome_gpu_head(struct ss_chrome *c, const char *ph, uint64_t pid,
			       uint64_t tid, uint64_t ns)
{
	ss_chrome_sep(c);
	SS_CHROME_LIT(c, "{\"ph\":\"");
	ss_chrome_where(c, ph, pid, tid, ns > c->t0 ? ns - c->t0 : 0);
}

/* Names of the device groups and stream tracks, once each. */
static void ss_chrome_gpu_tracks(struct ss_chrome *c, uint64_t pid,
				 const struct ss_gpu_data *g)
{
	char text[96];
	for (size_t i = 0; i < g->n; i++) {
		const struct ss_gpu_op *o = &g->ops[i], *p = NULL;
		if (o->type == SS_GPU_API)
			continue;
		for (size_t j = 0; j < i && !p; j++)
			if (g->ops[j].type != SS_GPU_API && g->ops[j].device == o->device &&
			    g->ops[j].stream == o->stream)
				p = &g->ops[j];
		if (p)
			continue;
		uint64_t gp = ss_chrome_gpu_pid(pid, o->device);
		int dev_seen = 0;
		for (size_t j = 0; j < i && !dev_seen; j++)
			dev_seen = g->ops[j].type != SS_GPU_API && g->ops[j].device == o->device;
		if (!dev_seen) {
			snprintf(text, sizeof(text), "GPU %u", o->device);
			ss_chrome_process(c, gp, text);
			ss_chrome_sep(c);
			SS_CHROME_LIT(c, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":");
			ss_chrome_u64(c, gp);
			snprintf(text, sizeof(text), ",\"args\":{\"labels\":\"pid %llu\"}}",
				 (unsigned long long)pid);
			ss_chrome_lit(c, text, strlen(text));
		}
		snprintf(text, sizeof(text), "stream %u", o->stream);
		ss_chrome_thread(c, gp, o->stream, text);
	}
}

/* Kernels and copies on their device and stream, CUDA API calls on the
 * host thread that made them, and a flow arrow from each launch to the
 * work it started (id: the correlation id, per process). */
static void ss_chrome_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g)
{
	struct ss_chrome *c = ctx;
	char text[256];

	ss_chrome_gpu_tracks(c, pid, g);
	for (size_t i = 0; i < g->n; i++) {
		const struct ss_gpu_op *o = &g->ops[i];
		int api = o->type == SS_GPU_API;
		uint64_t gp = ss_chrome_gpu_pid(pid, o->device);
		ss_chrome_gpu_head(c, "X", api ? pid : gp, api ? o->tid : o->stream,
				   o->start_ns);
		SS_CHROME_LIT(c, ",\"dur\":");
		ss_chrome_us(c, o->end_ns - o->start_ns);
		SS_CHROME_LIT(c, ",\"name\":\"");
		ss_chrome_str(c, o->name);
		if (o->type == SS_GPU_KERNEL)
			snprintf(text, sizeof(text),
				 "\",\"cat\":\"kernel\",\"args\":{\"grid\":[%d,%d,%d],"
				 "\"block\":[%d,%d,%d],\"device\":%u,\"stream\":%u,"
				 "\"correlation\":%u}}",
				 o->grid[0], o->grid[1], o->grid[2], o->block[0],
				 o->block[1], o->block[2], o->device, o->stream,
				 o->correlation);
		else if (o->type == SS_GPU_COPY)
			snprintf(text, sizeof(text),
				 "\",\"cat\":\"%s\",\"args\":{\"bytes\":%llu,"
				 "\"GB/s\":%.3f,\"device\":%u,\"stream\":%u,"
				 "\"correlation\":%u}}",
				 o->kind == SS_GPU_MEMSET ? "memset" : "memcpy",
				 (unsigned long long)o->bytes,
				 o->end_ns > o->start_ns
					 ? (double)o->bytes / (double)(o->end_ns - o->start_ns)
					 : 0.0,
				 o->device, o->stream, o->correlation);
		else
			snprintf(text, sizeof(text),
				 "\",\"cat\":\"%s\",\"args\":{\"cbid\":%u,"
				 "\"correlation\":%u}}",
				 o->kind ? "cuda_driver" : "cuda_runtime", o->cbid,
				 o->correlation);
		ss_chrome_lit(c, text, strlen(text));
		c->ex.events++;
		const struct ss_gpu_op *l = api ? NULL : ss_gpu_launch(g, o->correlation);
		if (!l)
			continue;
		uint64_t id = (pid << 32) | o->correlation;
		snprintf(text, sizeof(text),
			 ",\"name\":\"launch\",\"cat\":\"cuda_flow\",\"id\":%llu,"
			 "\"bind_id\":%llu}",
			 (unsigned long long)id, (unsigned long long)id);
		ss_chrome_gpu_head(c, "s", pid, l->tid, l->start_ns);
		ss_chrome_lit(c, text, strlen(text));
		ss_chrome_gpu_head(c, "f", gp, o->stream, o->start_ns);
		SS_CHROME_LIT(c, ",\"bp\":\"e\"");
		ss_chrome_lit(c, text, strlen(text));
	}
}

struct ss_exporter *ss_export_chrome_open(const char *path, char *err,
					  size_t errlen)
{
	struct ss_chrome *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	c->fd = -1;
	pthread_mutex_init(&c->w.mu, NULL);
	pthread_cond_init(&c->w.cv, NULL);
	c->bufs[0] = malloc(SS_CHROME_BUF);
	c->bufs[1] = malloc(SS_CHROME_BUF);
	c->path = strdup(path);
	if (!c->bufs[0] || !c->bufs[1] || !c->path) {
		snprintf(err, errlen, "%s: out of memory", path);
		ss_chrome_release(c);
		return NULL;
	}
	c->buf = c->bufs[0];
	if (ss_out_open(&c->out, path, err, errlen)) {
		ss_chrome_release(c);
		return NULL;
	}
	c->fd = fileno(c->out.f);  /* written with write(2) only */
	/* without a writer thread the buffers are written inline */
	if (!pthread_create(&c->w.th, NULL, ss_chrome_writer_main, c))
		c->w.started = 1;
	c->ex.ctx = c;
	c->ex.begin = ss_chrome_begin;
	c->ex.process = ss_chrome_process;
	c->ex.thread = ss_chrome_thread;
	c->ex.slice = ss_chrome_slice;
	c->ex.counter = ss_chrome_counter;
	c->ex.gpu = ss_chrome_gpu;
	c->ex.offcpu = ss_chrome_offcpu;
	c->ex.alloc = ss_chrome_alloc;
	c->ex.stack_nodes = ss_chrome_stack_nodes;
	c->ex.end = ss_chrome_end;
	c->ex.release = ss_chrome_release;
	return &c->ex;
}

size_t ss_export_json_escape(char *dst, const char *s)
{
	return ss_chrome_escape(dst, s);
}

void ss_export_json_fputs(FILE *f, const char *s)
{
	char small[256], *e = small;
	size_t n = ss_chrome_escape(NULL, s);

	if (n >= sizeof(small) && !(e = malloc(n + 1))) {
		fputs("\"\"", f);
		return;
	}
	ss_chrome_escape(e, s);
	fputc('"', f);
	fwrite(e, 1, n, f);
	fputc('"', f);
	if (e != small)
		free(e);
}

void ss_export_chrome_details(struct ss_exporter *e, int on)
{
	struct ss_chrome *c = e->ctx;

	c->details = on;
}

void ss_exporter_free(struct ss_exporter *e)
{
	if (e)
		e->release(e->ctx);
}
