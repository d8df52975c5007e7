/*
 * check.h - what the proof kit's checkers (gpu-check.c, mem-check.c)
 * share: one line per check ("ok   LABEL: what[: why]" or "FAIL LABEL:
 * what: why", counted in passed and failed) and reading a whole file.
 * Header only (static functions): each checker is one file built with
 * plain cc where it runs (scripts/gpu-bundle.sh, test-cuda-mem).
 *
 * Never: count a check twice, or print a result without its label.
 */
#ifndef SS_GPU_CHECK_H
#define SS_GPU_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *label = "run";
static int passed, failed;

__attribute__((format(printf, 3, 4), unused))
static void result(int ok, const char *what, const char *fmt, ...)
{
	char why[2048] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	if (ok) {
		passed++;
		printf("ok   %s: %s%s%s\n", label, what, *why ? ": " : "", why);
	} else {
		failed++;
		printf("FAIL %s: %s: %s\n", label, what, *why ? why : "failed");
	}
}

/* The whole file, NUL-terminated (its length in *len when len is not
 * NULL); NULL when it cannot be read.  free() it. */
__attribute__((unused))
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

#endif /* SS_GPU_CHECK_H */
