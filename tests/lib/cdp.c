/*
 * cdp.c - a headless Chromium driven over --remote-debugging-pipe (see
 * cdp.h): the browser reads our commands on its fd 3 and writes replies
 * and events on its fd 4, each message a JSON text ended by NUL.
 *
 * Design: one page target, attached with flatten: true, so page commands
 * carry its sessionId on the same pipe.  Messages are built and read with
 * cJSON; a reply is matched by id and everything else (events) dropped.
 * The browser runs in its own process group, which ss_cdp_close ends if
 * Browser.close did not.
 *
 * Must never: wait without a deadline, or leave the browser running.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cdp.h"

static double ss_cdp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ss_cdp_write(struct ss_cdp *c, const char *s)
{
	size_t n = strlen(s) + 1, off = 0;  /* with its NUL */

	while (off < n) {
		ssize_t w = write(c->to, s + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(c->why, sizeof(c->why), "writing to the browser: %s",
				 strerror(errno));
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* The next whole message (parsed), waiting until deadline; NULL with
 * c->why set. */
static cJSON *ss_cdp_read(struct ss_cdp *c, double deadline)
{
	for (;;) {
		char *end = c->len ? memchr(c->buf, 0, c->len) : NULL;
		if (end) {
			cJSON *m = cJSON_Parse(c->buf);
			size_t used = (size_t)(end - c->buf) + 1;
			memmove(c->buf, c->buf + used, c->len - used);
			c->len -= used;
			if (m)
				return m;
			continue;  /* not JSON: skip it */
		}
		double left = deadline - ss_cdp_now();
		if (left <= 0) {
			snprintf(c->why, sizeof(c->why), "no reply from the browser in %d s",
				 SS_CDP_TIMEOUT_S);
			return NULL;
		}
		struct pollfd p = { c->from, POLLIN, 0 };
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (c->cap - c->len < 65536) {
			size_t cap = c->cap ? c->cap * 2 : 1 << 20;
			char *nb = realloc(c->buf, cap);
			if (!nb) {
				snprintf(c->why, sizeof(c->why), "out of memory");
				return NULL;
			}
			c->buf = nb;
			c->cap = cap;
		}
		ssize_t n = read(c->from, c->buf + c->len, c->cap - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(c->why, sizeof(c->why), "the browser closed its pipe "
				 "(see chrome.log)");
			return NULL;
		}
		c->len += (size_t)n;
	}
}

char *ss_cdp_call(struct ss_cdp *c, int page, const char *method, const char *params)
{
	cJSON *m = cJSON_CreateObject(), *p = params ? cJSON_Parse(params) : cJSON_CreateObject();
	int id = ++c->next_id;
	double deadline = ss_cdp_now() + SS_CDP_TIMEOUT_S;
	char *s, *res = NULL;

	if (!m || !p) {
		snprintf(c->why, sizeof(c->why), "%s: bad params %s", method,
			 params ? params : "");
		cJSON_Delete(m);
		cJSON_Delete(p);
		return NULL;
	}
	cJSON_AddNumberToObject(m, "id", id);
	cJSON_AddStringToObject(m, "method", method);
	cJSON_AddItemToObject(m, "params", p);
	if (page)
		cJSON_AddStringToObject(m, "sessionId", c->session);
	s = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	if (!s || ss_cdp_write(c, s)) {
		free(s);
		return NULL;
	}
	free(s);
	for (;;) {
		cJSON *r = ss_cdp_read(c, deadline), *rid, *err;
		if (!r)
			return NULL;
		rid = cJSON_GetObjectItem(r, "id");
		if (!cJSON_IsNumber(rid) || rid->valueint != id) {
			cJSON_Delete(r);
			continue;
		}
		err = cJSON_GetObjectItem(r, "error");
		if (err) {
			cJSON *msg = cJSON_GetObjectItem(err, "message");
			snprintf(c->why, sizeof(c->why), "%s: %s", method,
				 cJSON_IsString(msg) ? msg->valuestring : "error");
		} else {
			cJSON *result = cJSON_GetObjectItem(r, "result");
			res = result ? cJSON_PrintUnformatted(result) : strdup("{}");
		}
		cJSON_Delete(r);
		return res;
	}
}

/* The string member key of the JSON object text j (malloc'ed), or NULL. */
static char *ss_cdp_str(const char *j, const char *key)
{
	cJSON *o = cJSON_Parse(j), *v = o ? cJSON_GetObjectItem(o, key) : NULL;
	char *s = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;

	cJSON_Delete(o);
	return s;
}

char *ss_cdp_eval(struct ss_cdp *c, const char *expr)
{
	cJSON *p = cJSON_CreateObject(), *o, *v, *ex;
	char *ps, *r, *s = NULL;

	cJSON_AddStringToObject(p, "expression", expr);
	cJSON_AddBoolToObject(p, "returnByValue", 1);
	ps = cJSON_PrintUnformatted(p);
	cJSON_Delete(p);
	r = ps ? ss_cdp_call(c, 1, "Runtime.evaluate", ps) : NULL;
	free(ps);
	if (!r)
		return NULL;
	o = cJSON_Parse(r);
	free(r);
	ex = cJSON_GetObjectItem(o, "exceptionDetails");
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "result"), "value");
	if (ex) {
		cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(ex, "exception"), "description");
		snprintf(c->why, sizeof(c->why), "script threw: %s",
			 cJSON_IsString(d) ? d->valuestring : "(no description)");
	} else if (cJSON_IsString(v)) {
		s = strdup(v->valuestring);
	} else if (v) {
		s = cJSON_PrintUnformatted(v);  /* numbers, booleans */
	} else {
		s = strdup("undefined");
	}
	cJSON_Delete(o);
	return s;
}

int ss_cdp_open(struct ss_cdp *c, const char *browser, const char *profile_dir,
		const char *url, int width, int height)
{
	int in[2], out[2];
	char prof[4200], logp[4200], size[64], params[8400], *r, *target;
	double deadline;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->to = c->from = -1;
	snprintf(prof, sizeof(prof), "--user-data-dir=%s", profile_dir);
	snprintf(logp, sizeof(logp), "%s/chrome.log", profile_dir);
	snprintf(size, sizeof(size), "--window-size=%d,%d", width, height);
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		snprintf(c->why, sizeof(c->why), "pipe: %s", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);  /* a dead browser is an error, not a signal */
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(c->why, sizeof(c->why), "fork: %s", strerror(errno));
		return -1;
	}
	if (!c->pid) {
		int a = fcntl(in[0], F_DUPFD, 10), b = fcntl(out[1], F_DUPFD, 10);
		int lg = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		setpgid(0, 0);
		if (a < 0 || b < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0)
			_exit(127);
		if (lg >= 0) {
			dup2(lg, 1);
			dup2(lg, 2);
		}
		execl(browser, browser, "--headless", "--no-sandbox", "--disable-gpu",
		      "--remote-debugging-pipe", prof, size, "--hide-scrollbars",
		      "--disable-background-networking", "--disable-component-update",
		      "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0",
		      "about:blank", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];
	snprintf(params, sizeof(params), "{\"url\":\"about:blank\"}");
	r = ss_cdp_call(c, 0, "Target.createTarget", params);
	target = r ? ss_cdp_str(r, "targetId") : NULL;
	free(r);
	if (!target)
		return -1;
	snprintf(params, sizeof(params), "{\"targetId\":\"%s\",\"flatten\":true}", target);
	free(target);
	r = ss_cdp_call(c, 0, "Target.attachToTarget", params);
	if (!r)
		return -1;
	{
		char *sid = ss_cdp_str(r, "sessionId");
		free(r);
		if (!sid || strlen(sid) >= sizeof(c->session)) {
			snprintf(c->why, sizeof(c->why), "Target.attachToTarget: no sessionId");
			free(sid);
			return -1;
		}
		strcpy(c->session, sid);
		free(sid);
	}
	snprintf(params, sizeof(params), "{\"width\":%d,\"height\":%d,"
		 "\"deviceScaleFactor\":1,\"mobile\":false}", width, height);
	if (!(r = ss_cdp_call(c, 1, "Emulation.setDeviceMetricsOverride", params)))
		return -1;
	free(r);
	{
		cJSON *p = cJSON_CreateObject();
		char *ps;
		cJSON_AddStringToObject(p, "url", url);
		ps = cJSON_PrintUnformatted(p);
		cJSON_Delete(p);
		r = ps ? ss_cdp_call(c, 1, "Page.navigate", ps) : NULL;
		free(ps);
		if (!r)
			return -1;
		free(r);
	}
	deadline = ss_cdp_now() + SS_CDP_TIMEOUT_S;
	for (;;) {  /* loaded: the document is complete and is the page asked for */
		char *st = ss_cdp_eval(c, "document.readyState + ' ' + location.href");
		int done = st && !strncmp(st, "complete ", 9) && strcmp(st + 9, "about:blank");
		free(st);
		if (done)
			return 0;
		if (ss_cdp_now() > deadline) {
			snprintf(c->why, sizeof(c->why), "%s did not load in %d s", url,
				 SS_CDP_TIMEOUT_S);
			return -1;
		}
		usleep(50000);
	}
}

int ss_cdp_mouse_move(struct ss_cdp *c, double x, double y)
{
	char params[200], *r;

	snprintf(params, sizeof(params), "{\"type\":\"mouseMoved\",\"x\":%.2f,\"y\":%.2f,"
		 "\"button\":\"none\"}", x, y);
	r = ss_cdp_call(c, 1, "Input.dispatchMouseEvent", params);
	free(r);
	return r ? 0 : -1;
}

static int ss_cdp_b64(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

int ss_cdp_screenshot(struct ss_cdp *c, double x, double y, double w, double h,
		      const char *path)
{
	char params[300], *r, *data;
	unsigned char *png;
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0, ok;
	FILE *f;

	snprintf(params, sizeof(params), "{\"format\":\"png\",\"clip\":{\"x\":%.2f,\"y\":%.2f,"
		 "\"width\":%.2f,\"height\":%.2f,\"scale\":1}}", x, y, w, h);
	r = ss_cdp_call(c, 1, "Page.captureScreenshot", params);
	data = r ? ss_cdp_str(r, "data") : NULL;
	free(r);
	if (!data) {
		if (r)
			snprintf(c->why, sizeof(c->why), "Page.captureScreenshot: no data");
		return -1;
	}
	png = malloc(strlen(data) * 3 / 4 + 3);
	for (const char *p = data; png && *p && *p != '='; p++) {
		int v = ss_cdp_b64((unsigned char)*p);
		if (v < 0)
			continue;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			png[n++] = (unsigned char)(acc >> bits);
		}
	}
	free(data);
	f = png ? fopen(path, "wb") : NULL;
	ok = f && fwrite(png, 1, n, f) == n;
	if (f && fclose(f))
		ok = 0;
	free(png);
	if (!ok)
		snprintf(c->why, sizeof(c->why), "%s: cannot write the screenshot", path);
	return ok ? 0 : -1;
}

void ss_cdp_close(struct ss_cdp *c)
{
	if (c->pid > 0) {
		double deadline = ss_cdp_now() + 10;
		int st;
		if (c->to >= 0) {  /* ask; no wait for the reply, it may never come */
			char m[64];
			snprintf(m, sizeof(m), "{\"id\":%d,\"method\":\"Browser.close\"}",
				 ++c->next_id);
			ss_cdp_write(c, m);
		}
		while (waitpid(c->pid, &st, WNOHANG) == 0) {
			if (ss_cdp_now() > deadline) {
				kill(-c->pid, SIGKILL);
				waitpid(c->pid, &st, 0);
				break;
			}
			usleep(50000);
		}
		c->pid = -1;
	}
	if (c->to >= 0)
		close(c->to);
	if (c->from >= 0)
		close(c->from);
	c->to = c->from = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}
