/*
 * meta.c - variable-length records of the trace: memory maps and loaded
 * modules (so the symbolizer can resolve PIE and shared-library addresses,
 * even of libraries closed later), thread names, strings, calibration
 * points, steps.  All callers hold ss_rt.lock; none of this is on the hot
 * path.  Records go into META chunks, which grow like event chunks.
 */
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "internal.h"

int ss_meta_write(uint16_t type, const void *a, size_t alen, const void *b,
		  size_t blen)
{
	return ss_meta_write_ts(type, 0, a, alen, b, blen);
}

int ss_meta_write_ts(uint16_t type, uint64_t ts, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	if (ss_rt.fd < 0 && ss_buf_open_file() < 0)
		return -1;
	size_t size = (sizeof(struct ss_meta) + alen + blen + 7) & ~(size_t)7;
	/* keep room for the zero terminator record */
	if (!ss_rt.meta_pos ||
	    (size_t)(ss_rt.meta_end - ss_rt.meta_pos) < size + sizeof(struct ss_meta)) {
		uint64_t csize = SS_META_CHUNK;
		while (csize < size + sizeof(struct ss_chunk_header) + sizeof(struct ss_meta))
			csize *= 2;
		/* meta records are small and rare: let them pass a size cap
		 * that stopped events, so names and maps stay complete */
		uint64_t cap = ss_rt.cap_bytes;
		int stopped = ss_rt.stopped;
		if (cap)
			ss_rt.cap_bytes = cap + 16 * SS_META_CHUNK;
		ss_rt.stopped = 0;
		struct ss_chunk_header *c = ss_buf_chunk_alloc(csize);
		ss_rt.cap_bytes = cap;
		if (!ss_rt.stopped)
			ss_rt.stopped = stopped;
		if (!c)
			return -1;
		if (ss_rt.meta_base)
			munmap(ss_rt.meta_base, ((struct ss_chunk_header *)ss_rt.meta_base)->size);
		c->magic = SS_CHUNK_MAGIC;
		c->kind = SS_CHUNK_META;
		c->size = csize;
		ss_clock_pair(&c->calib_ticks, &c->calib_ns);
		ss_rt.meta_base = (char *)c;
		ss_rt.meta_pos = (char *)(c + 1);
		ss_rt.meta_end = (char *)c + csize;
	}
	struct ss_meta *m = (struct ss_meta *)ss_rt.meta_pos;
	char *p = (char *)(m + 1);
	if (alen)
		memcpy(p, a, alen);
	if (blen)
		memcpy(p + alen, b, blen);
	m->ts = ts ? ts : ss_clock_now();
	m->size = (uint32_t)size;
	atomic_signal_fence(memory_order_seq_cst);
	m->type = type; /* last: a record is valid once its type is set */
	ss_rt.meta_pos += size;
	return 0;
}

struct mod_ctx {
	unsigned long long adds;
	int write;
};

void ss_meta_build_id(struct dl_phdr_info *info, uint8_t *id, uint32_t *len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && n->n_descsz <= 64) {
				*len = n->n_descsz;
				memcpy(id, desc, n->n_descsz);
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mod_ctx *ctx = data;
	ctx->adds = info->dlpi_adds;
	if (!ctx->write)
		return 1; /* only wanted the counter */
	struct ss_meta_module m;
	memset(&m, 0, sizeof(m));
	m.load_bias = info->dlpi_addr;
	ss_meta_build_id(info, m.build_id, &m.build_id_len);
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name
							       : ss_rt.hdr.exe_path;
	ss_meta_write(SS_META_MODULE, &m, sizeof(m), name, strlen(name) + 1);
	return 0;
}

/* Snapshot /proc/self/maps (executable mappings only) and the modules. */
void ss_meta_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		static char raw[256 * 1024], keep[256 * 1024];
		size_t n = 0, k = 0;
		ssize_t r;
		while (n < sizeof(raw) - 1 &&
		       (r = read(fd, raw + n, sizeof(raw) - 1 - n)) > 0)
			n += (size_t)r;
		close(fd);
		raw[n] = 0;
		/* keep executable lines: the symbolizer needs nothing else */
		for (char *line = raw; *line;) {
			char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
			char *sp = memchr(line, ' ', len);
			if (sp && sp + 3 < line + len && sp[3] == 'x' && k + len < sizeof(keep)) {
				memcpy(keep + k, line, len);
				k += len;
			}
			line += len;
		}
		keep[k] = 0;
		ss_meta_write(SS_META_MAPS, keep, k + 1, NULL, 0);
	}
	struct mod_ctx ctx = { 0, 1 };
	dl_iterate_phdr(module_cb, &ctx);
	ss_rt.maps_adds = ctx.adds;
}

/* Re-snapshot when a library was loaded since the last snapshot. */
void ss_meta_maps_if_changed(void)
{
	struct mod_ctx ctx = { 0, 0 };
	dl_iterate_phdr(module_cb, &ctx);
	if (ctx.adds != ss_rt.maps_adds)
		ss_meta_maps();
}

void ss_meta_thread_name(uint64_t tid)
{
	struct ss_meta_thread t;
	memset(&t, 0, sizeof(t));
	t.tid = tid;
	if (tid == ss_gettid()) { /* one system call, not three */
		if (prctl(PR_GET_NAME, t.name) == 0 && t.name[0]) {
			t.name[sizeof(t.name) - 1] = 0;
			ss_meta_write(SS_META_THREAD, &t, sizeof(t), NULL, 0);
		}
		return;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%llu/comm",
		 (unsigned long long)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, t.name, sizeof(t.name) - 1);
	close(fd);
	if (n <= 0)
		return;
	t.name[n] = 0;
	char *nl = strchr(t.name, '\n');
	if (nl)
		*nl = 0;
	ss_meta_write(SS_META_THREAD, &t, sizeof(t), NULL, 0);
}

void ss_meta_calib(void)
{
	struct ss_meta_calib c;
	ss_clock_pair(&c.ticks, &c.ns);
	ss_meta_write(SS_META_CALIB, &c, sizeof(c), NULL, 0);
}
