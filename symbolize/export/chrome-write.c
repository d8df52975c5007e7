/*
 * chrome-write.c - the text layer of the Chrome exporter: two 1 MiB
 * buffers, one filled while a writer thread writes the other, and the
 * pieces of JSON written into them (literals, numbers, microseconds with
 * three decimals, escaped strings that are always valid UTF-8).
 *
 * Design: the exporter only appends to c->buf; a full buffer is handed to
 * the writer thread and the other one is filled meanwhile (without a
 * thread, it is written inline).  The first failed write is kept in werr
 * and reported when the file is committed.
 *
 * Must never: write a byte that is not valid UTF-8, or a control byte
 * unescaped; block the exporter on more than one buffer in flight.
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

/* ---------------------------------------------------------------- output */

static void ss_chrome_write_all(struct ss_chrome *c, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(c->fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (!c->werr)
				c->werr = errno;
			return;
		}
		p += k;
		n -= (size_t)k;
	}
}

void *ss_chrome_writer_main(void *arg)
{
	struct ss_chrome *c = arg;
	struct ss_chrome_writer *w = &c->w;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->pending && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->pending)
			break;
		pthread_mutex_unlock(&w->mu);
		ss_chrome_write_all(c, w->pending, w->plen);
		pthread_mutex_lock(&w->mu);
		w->pending = NULL;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Wait until the writer holds no buffer. */
static void ss_chrome_writer_wait(struct ss_chrome *c)
{
	struct ss_chrome_writer *w = &c->w;

	pthread_mutex_lock(&w->mu);
	while (w->pending)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* Hand the filled buffer to the writer and go on in the other one. */
void ss_chrome_flush(struct ss_chrome *c)
{
	struct ss_chrome_writer *w = &c->w;

	if (!c->len)
		return;
	if (!w->started) {
		ss_chrome_write_all(c, c->buf, c->len);
		c->len = 0;
		return;
	}
	ss_chrome_writer_wait(c);
	pthread_mutex_lock(&w->mu);
	w->pending = c->buf;
	w->plen = c->len;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	c->buf = c->buf == c->bufs[0] ? c->bufs[1] : c->bufs[0];
	c->len = 0;
}

void ss_chrome_lit(struct ss_chrome *c, const char *s, size_t n)
{
	while (n) {
		size_t k;
		ss_chrome_reserve(c, n < 4096 ? n : 4096);
		k = SS_CHROME_BUF - c->len;
		if (k > n)
			k = n;
		memcpy(c->buf + c->len, s, k);
		c->len += k;
		s += k;
		n -= k;
	}
}

void ss_chrome_u64(struct ss_chrome *c, uint64_t v)
{
	ss_chrome_reserve(c, 24);
	c->len += ss_chrome_fmt_u64(c->buf + c->len, v);
}

void ss_chrome_us(struct ss_chrome *c, uint64_t ns)
{
	ss_chrome_reserve(c, 28);
	c->len += ss_chrome_fmt_us(c->buf + c->len, ns);
}

/* Length of the valid UTF-8 sequence at s (2 to 4), or 0 when the bytes
 * there are not one (stray continuation, overlong form, surrogate, past
 * U+10FFFF, cut short). */
static unsigned ss_chrome_utf8_len(const unsigned char *s)
{
	unsigned c = s[0], n, i;
	uint32_t cp;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* JSON string body of s (without quotes) into dst (room for 6 * len), or
 * just its length when dst is NULL.  Always valid UTF-8: a byte that
 * starts no valid sequence becomes \ufffd (paths on Linux are bytes). */
size_t ss_chrome_escape(char *dst, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch >= 0x80) {
			unsigned k = ss_chrome_utf8_len((const unsigned char *)s);
			if (!k) {
				if (dst)
					memcpy(dst + n, "\\ufffd", 6);
				n += 6;
				continue;
			}
			if (dst)
				memcpy(dst + n, s, k);
			n += k;
			s += k - 1;
		} else if (ch == '"' || ch == '\\') {
			if (dst) {
				dst[n] = '\\';
				dst[n + 1] = (char)ch;
			}
			n += 2;
		} else if (ch < 0x20 || ch == 0x7f) {
			if (dst) {
				memcpy(dst + n, "\\u00", 4);
				dst[n + 4] = hex[ch >> 4];
				dst[n + 5] = hex[ch & 15];
			}
			n += 6;
		} else {
			if (dst)
				dst[n] = (char)ch;
			n++;
		}
	}
	return n;
}

void ss_chrome_str(struct ss_chrome *c, const char *s)
{
	size_t n = ss_chrome_escape(NULL, s);

	if (n + 8 > SS_CHROME_BUF) {
		char *tmp = malloc(n + 1);
		if (tmp) {
			ss_chrome_escape(tmp, s);
			ss_chrome_lit(c, tmp, n);
			free(tmp);
		}
		return;
	}
	ss_chrome_reserve(c, n);
	ss_chrome_escape(c->buf + c->len, s);
	c->len += n;
}

void ss_chrome_sep(struct ss_chrome *c)
{
	if (c->first) {
		c->first = 0;
		SS_CHROME_LIT(c, "\n");
	} else {
		SS_CHROME_LIT(c, ",\n");
	}
}
