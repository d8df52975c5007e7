/*
 * envcode.h - the run's config as one line in the environment.
 *
 * `stepscope record` and a run's first process hand the resolved config to
 * every process of the run in STEPSCOPE__CONFIG: ss_config_dump's
 * "key=value" lines, joined into one line so that tools that read the
 * environment a line at a time (env | grep, /proc/PID/environ parsers,
 * job schedulers) see one variable.  A line break is written "%n" and a
 * percent sign "%%"; nothing else changes, so the value stays readable.
 */
#ifndef SS_ENVCODE_H
#define SS_ENVCODE_H

#include <stddef.h>

/* Encode the n bytes of src into dst (room: len); returns the length the
 * whole encoding needs, as snprintf does (dst is cut if len is short). */
static inline size_t ss_envcode_put(char *dst, size_t len, const char *src, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = src[i], e = c == '\n' ? 'n' : c == '%' ? '%' : 0;
		if (e) {
			if (o + 1 < len)
				dst[o] = '%';
			o++;
			c = e;
		}
		if (o + 1 < len)
			dst[o] = c;
		o++;
	}
	if (len)
		dst[o < len ? o : len - 1] = 0;
	return o;
}

/* Decode src in place: "%n" is a line break, "%%" a percent sign. */
static inline void ss_envcode_get(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (*s == '%' && (s[1] == 'n' || s[1] == '%')) {
			*o++ = s[1] == 'n' ? '\n' : '%';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

#endif /* SS_ENVCODE_H */
