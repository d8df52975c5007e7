/*
 * memory-parse.c - the pure pieces of the memory poller (memory.c):
 * VmRSS and VmHWM out of /proc/self/status, the entries of
 * CUDA_VISIBLE_DEVICES, this process's line in NVML's process list (v1
 * or v2 layout), and one memory_profile.json entry as text.
 *
 * Design: plain functions over text and buffers the caller owns; no
 * state, no allocation, no system call, so they run on the poller thread
 * and in unit tests alike.
 *
 * Must never: read past the text or write past `len`, or use stdio.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "nvml.h"
#include "memory-parse.h"

/* ------------------------------------------------------------ pure parts */

/* The number after `key` at the start of a line of /proc/self/status
 * ("VmRSS:\t  123 kB"), in bytes; -1 when the line is missing. */
static int status_field(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, key, klen)) {
			const char *q = p + klen;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q < '0' || *q > '9')
				return -1;
			uint64_t v = 0;
			while (*q >= '0' && *q <= '9')
				v = v * 10 + (uint64_t)(*q++ - '0');
			while (*q == ' ' || *q == '\t')
				q++;
			/* the kernel always says kB; refuse anything else */
			if (strncmp(q, "kB", 2))
				return -1;
			*out = v * 1024;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* RSS and its peak from the text of /proc/self/status.  0, or -1 when
 * either is missing (kernel threads, odd kernels). */
int ss_memory_parse_status(const char *text, struct ss_mem_host *out)
{
	struct ss_mem_host h;
	if (status_field(text, "VmRSS:", &h.rss) ||
	    status_field(text, "VmHWM:", &h.hwm))
		return -1;
	*out = h;
	return 0;
}

/* Entries of CUDA_VISIBLE_DEVICES as CUDA reads them: comma-separated
 * indices or UUIDs ("GPU-...", "MIG-..."), blanks around them ignored; the
 * list ends at the first entry that is neither (so "" and "-1" hide every
 * device).  Returns the number of entries copied into out. */
int ss_memory_parse_visible(const char *env, char out[][SS_MEM_ID_MAX],
			    int max)
{
	int n = 0;
	const char *p = env;
	while (n < max && *p) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		const char *last = end;
		while (last > p && (last[-1] == ' ' || last[-1] == '\t'))
			last--;
		size_t len = (size_t)(last - p);
		int digits = len > 0;
		for (size_t i = 0; i < len; i++)
			if (p[i] < '0' || p[i] > '9')
				digits = 0;
		int uuid = len > 4 && (!strncmp(p, "GPU-", 4) || !strncmp(p, "MIG-", 4));
		if ((!digits && !uuid) || len >= SS_MEM_ID_MAX || (digits && len > 6))
			break;
		memcpy(out[n], p, len);
		out[n][len] = 0;
		n++;
		if (!*end)
			break;
		p = end + 1;
	}
	return n;
}

/* The pid of record i of an NVML process list (either layout; copied out,
 * not read through the other layout's type). */
unsigned ss_memory_proc_pid(const void *infos, size_t stride, unsigned i)
{
	unsigned pid;
	memcpy(&pid, (const char *)infos + (size_t)i * stride +
		       offsetof(struct ss_nvml_proc_v1, pid), sizeof(pid));
	return pid;
}

/* This process's memory in an NVML process list (`n` records `stride`
 * bytes apart: v1 or v2 layout).  1: listed, *used = the sum of its
 * records (MIG can list a pid once per instance); 0: listed, but the
 * driver gives no value; -1: not listed. */
int ss_memory_proc_used(const void *infos, size_t stride, unsigned n,
			unsigned pid, uint64_t *used)
{
	int found = -1;
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned long long bytes;
		if (ss_memory_proc_pid(infos, stride, i) != pid)
			continue;
		memcpy(&bytes, (const char *)infos + (size_t)i * stride +
			       offsetof(struct ss_nvml_proc_v1, used_gpu_memory),
		       sizeof(bytes));
		if (bytes == SS_NVML_VALUE_NOT_AVAILABLE) {
			if (found < 0)
				found = 0;
			continue;
		}
		found = 1;
		sum += bytes;
	}
	if (found == 1)
		*used = sum;
	return found;
}

/* One memory_profile.json entry, one line, no separator.  `step` -1 means
 * "no step" (the program never began one).  Returns the length needed, like
 * snprintf; the text is cut short when that is >= len. */
size_t ss_memory_json_entry(char *buf, size_t len, int64_t step,
			    int pid, const struct ss_mem_sample *s)
{
	size_t n = 0;
#define PUT(...)                                                            \
	do {                                                                \
		int k_ = snprintf(buf + (n < len ? n : len),                \
				  n < len ? len - n : 0, __VA_ARGS__);      \
		n += k_ > 0 ? (size_t)k_ : 0;                               \
	} while (0)
	PUT("{\"step\": %lld, \"timestamp_ns\": %llu, \"pid\": %d, \"memory\": {",
	    (long long)step, (unsigned long long)s->ts_ns, pid);
	const char *sep = "";
	for (int i = 0; i < s->ndev; i++) {
		const struct ss_mem_dev *d = &s->dev[i];
		if (!d->ok)
			continue;
		PUT("%s\"cuda:%d\": {\"bytes_in_use\": %llu, "
		    "\"peak_bytes_in_use\": %llu, \"bytes_limit\": %llu}",
		    sep, d->index, (unsigned long long)d->in_use,
		    (unsigned long long)d->peak, (unsigned long long)d->total);
		sep = ", ";
	}
	if (s->host_ok)
		PUT("%s\"host\": {\"bytes_in_use\": %llu, \"peak_bytes_in_use\": %llu}",
		    sep, (unsigned long long)s->host.rss,
		    (unsigned long long)s->host.hwm);
	PUT("}}");
#undef PUT
	return n;
}
