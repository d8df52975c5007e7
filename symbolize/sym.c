/*
 * sym.c - the backend-independent half of symbolization: parsing recorded
 * /proc/<pid>/maps text, mapping an address to a module's vaddr through
 * its PT_LOAD headers (read with libelf), the per-module cache, the
 * per-address cache and C++ demangling.
 *
 * Design: modules are opened lazily on the first address that needs them
 * and kept until ss_sym_free; each space caches every distinct address in
 * an open-addressing hash table, so a trace of millions of events costs
 * one backend lookup per function.
 *
 * Must never: abort on a missing or unreadable file (fall back to
 * module+0xoffset), or print more than one warning per module.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct ss_sym_load {
	uint64_t offset, vaddr, filesz;
};

struct ss_sym_module {
	char *path;
	const char *base;      /* basename inside path */
	int opened;            /* open attempted */
	void *handle;          /* backend handle, NULL if unreadable */
	struct ss_sym_load *loads;
	size_t nloads;
	int warned;
};

struct ss_sym {
	const struct ss_sym_backend *be;
	struct ss_sym_module **mods;
	size_t nmods, capmods;
	int quiet;
};

struct ss_sym_map {
	uint64_t start, end, offset;
	struct ss_sym_module *mod;     /* NULL: anonymous or pseudo ([vdso]) */
	char *label;                   /* basename or [name] for messages */
};

struct ss_sym_slot {
	uint64_t addr;
	struct ss_sym_info *info;      /* NULL = empty slot */
};

struct ss_sym_space {
	struct ss_sym *sym;
	struct ss_sym_map *maps;
	size_t nmaps, capmaps;
	struct ss_sym_slot *slots;
	size_t nslots, used;
	int warned_nomap;
};

struct ss_sym *ss_sym_new(const char *backend, char *err, size_t errlen)
{
	struct ss_sym *s;
	const struct ss_sym_backend *be;

	if (!backend || !strcmp(backend, "dw"))
		be = &ss_sym_backend_dw;
	else if (!strcmp(backend, "bfd"))
		be = &ss_sym_backend_bfd;
	else {
		snprintf(err, errlen, "unknown symbol backend '%s' (use dw or bfd)",
			 backend);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->be = be;
	elf_version(EV_CURRENT);
	return s;
}

void ss_sym_set_quiet(struct ss_sym *s, int quiet)
{
	s->quiet = quiet;
}

void ss_sym_free(struct ss_sym *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++) {
		struct ss_sym_module *m = s->mods[i];
		if (m->handle)
			s->be->close(m->handle);
		free(m->loads);
		free(m->path);
		free(m);
	}
	free(s->mods);
	free(s);
}

static struct ss_sym_module *ss_sym_module_get(struct ss_sym *s, const char *path)
{
	struct ss_sym_module *m;
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (!strcmp(s->mods[i]->path, path))
			return s->mods[i];
	if (s->nmods == s->capmods) {
		size_t n = s->capmods ? s->capmods * 2 : 16;
		struct ss_sym_module **nm = realloc(s->mods, n * sizeof(*nm));
		if (!nm)
			return NULL;
		s->mods = nm;
		s->capmods = n;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return NULL;
	}
	m->base = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	s->mods[s->nmods++] = m;
	return m;
}

/* Read the PT_LOAD headers of a module. */
static void ss_sym_module_read_loads(struct ss_sym_module *m)
{
	size_t n, i;
	Elf *e;
	int fd;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &n) && n < 65536) {
		m->loads = calloc(n + 1, sizeof(*m->loads));
		for (i = 0; m->loads && i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			m->loads[m->nloads].offset = ph.p_offset;
			m->loads[m->nloads].vaddr = ph.p_vaddr;
			m->loads[m->nloads].filesz = ph.p_filesz;
			m->nloads++;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

static void ss_sym_module_open(struct ss_sym *s, struct ss_sym_module *m)
{
	if (m->opened)
		return;
	m->opened = 1;
	ss_sym_module_read_loads(m);
	if (m->nloads)
		m->handle = s->be->open(m->path);
}

/* File offset -> vaddr through PT_LOAD; 0 and *vaddr, or -1. */
static int ss_sym_module_vaddr(const struct ss_sym_module *m, uint64_t off,
			       uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < m->nloads; i++) {
		const struct ss_sym_load *l = &m->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -1;
}

struct ss_sym_space *ss_sym_space_new(struct ss_sym *s)
{
	struct ss_sym_space *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->sym = s;
	sp->nslots = 1024;
	sp->slots = calloc(sp->nslots, sizeof(*sp->slots));
	if (!sp->slots) {
		free(sp);
		return NULL;
	}
	return sp;
}

void ss_sym_space_free(struct ss_sym_space *sp)
{
	size_t i;

	if (!sp)
		return;
	for (i = 0; i < sp->nslots; i++)
		free(sp->slots[i].info);  /* strings live in the same block */
	for (i = 0; i < sp->nmaps; i++)
		free(sp->maps[i].label);
	free(sp->slots);
	free(sp->maps);
	free(sp);
}

static void ss_sym_space_add_line(struct ss_sym_space *sp, const char *line)
{
	unsigned long long start, end, off;
	char perms[8];
	int pos = 0;
	const char *path, *label;
	struct ss_sym_map *m;
	size_t i, plen;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms,
		   &off, &pos) < 4 || !pos || end <= start)
		return;
	if (!strchr(perms, 'x'))
		return;
	path = line + pos;
	while (*path == ' ' || *path == '\t')
		path++;
	plen = strlen(path);
	while (plen && (path[plen - 1] == '\n' || path[plen - 1] == ' '))
		plen--;
	if (sp->nmaps == sp->capmaps) {
		size_t n = sp->capmaps ? sp->capmaps * 2 : 64;
		struct ss_sym_map *nm = realloc(sp->maps, n * sizeof(*nm));
		if (!nm)
			return;
		sp->maps = nm;
		sp->capmaps = n;
	}
	m = &sp->maps[sp->nmaps];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->offset = off;
	{
		char *p = strndup(path, plen);
		if (!p)
			return;
		/* " (deleted)" stays in the name: the file is gone anyway */
		if (p[0] == '/')
			m->mod = ss_sym_module_get(sp->sym, p);
		label = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		m->label = strdup(*label ? label : "[anon]");
		free(p);
	}
	if (!m->label)
		return;
	/* an identical mapping seen before: keep the newest only */
	for (i = 0; i < sp->nmaps; i++) {
		struct ss_sym_map *o = &sp->maps[i];
		if (o->start == m->start && o->end == m->end &&
		    o->offset == m->offset && o->mod == m->mod &&
		    !strcmp(o->label, m->label)) {
			free(m->label);
			return;
		}
	}
	sp->nmaps++;
}

void ss_sym_space_add_maps(struct ss_sym_space *sp, const char *text, size_t len)
{
	char line[4608];
	size_t i = 0;

	while (i < len && text[i]) {
		size_t j = i, n;
		while (j < len && text[j] && text[j] != '\n')
			j++;
		n = j - i;
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, text + i, n);
		line[n] = 0;
		ss_sym_space_add_line(sp, line);
		i = j < len && text[j] == '\n' ? j + 1 : j;
		if (j < len && !text[j])
			break;
	}
}

char *ss_sym_demangle(const char *name)
{
	int status = 0;
	char *d;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	return d;
}

/* One allocation holding the info and its strings. */
static struct ss_sym_info *ss_sym_info_make(const char *name, const char *file,
					    unsigned line, uint64_t start,
					    int resolved)
{
	char fbuf[32] = "";
	size_t nl = strlen(name) + 1, fl = 0;
	struct ss_sym_info *info;
	char *p;

	if (file) {
		snprintf(fbuf, sizeof(fbuf), ":%u", line);
		fl = strlen(file) + strlen(fbuf) + 1;
	}
	info = malloc(sizeof(*info) + nl + fl);
	if (!info)
		return NULL;
	p = (char *)(info + 1);
	memcpy(p, name, nl);
	info->name = p;
	info->file = NULL;
	if (file) {
		p += nl;
		snprintf(p, fl, "%s%s", file, fbuf);
		info->file = p;
	}
	info->start = start;
	info->resolved = resolved;
	return info;
}

static struct ss_sym_info *ss_sym_resolve(struct ss_sym_space *sp, uint64_t addr)
{
	struct ss_sym *s = sp->sym;
	struct ss_sym_map *map = NULL;
	struct ss_sym_hit hit;
	uint64_t off, vaddr;
	char buf[512];
	size_t i;

	/* newest mapping wins where recorded mappings overlap */
	for (i = sp->nmaps; i-- > 0;)
		if (addr >= sp->maps[i].start && addr < sp->maps[i].end) {
			map = &sp->maps[i];
			break;
		}
	if (!map) {
		if (!sp->warned_nomap && !s->quiet)
			fprintf(stderr,
				"stepscope: warning: address 0x%llx is in no recorded mapping; shown as a bare address\n",
				(unsigned long long)addr);
		sp->warned_nomap = 1;
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		return ss_sym_info_make(buf, NULL, 0, addr, 0);
	}
	off = addr - map->start + map->offset;
	vaddr = off;
	if (map->mod) {
		struct ss_sym_module *m = map->mod;
		ss_sym_module_open(s, m);
		if (!ss_sym_module_vaddr(m, off, &vaddr) && m->handle) {
			memset(&hit, 0, sizeof(hit));
			if (!s->be->lookup(m->handle, vaddr, &hit) && hit.name &&
			    hit.start <= vaddr) {
				char *dm = ss_sym_demangle(hit.name);
				struct ss_sym_info *info = ss_sym_info_make(
					dm ? dm : hit.name, hit.file, hit.line,
					addr - (vaddr - hit.start), 1);
				free(dm);
				free(hit.name);
				free(hit.file);
				return info;
			}
			free(hit.name);
			free(hit.file);
		}
		if (!m->warned && !s->quiet)
			fprintf(stderr,
				"stepscope: warning: %s: %s; its functions are shown as %s+0xOFFSET\n",
				m->path,
				m->handle ? "no symbol for some addresses (stripped?)" :
				"cannot read symbols from this file",
				m->base);
		m->warned = 1;
	}
	snprintf(buf, sizeof(buf), "%s+0x%llx", map->label,
		 (unsigned long long)vaddr);
	return ss_sym_info_make(buf, NULL, 0, addr, 0);
}

static size_t ss_sym_hash(uint64_t a)
{
	a ^= a >> 33;
	a *= UINT64_C(0xff51afd7ed558ccd);
	a ^= a >> 33;
	return (size_t)a;
}

static void ss_sym_grow(struct ss_sym_space *sp)
{
	size_t n = sp->nslots * 2, i;
	struct ss_sym_slot *ns = calloc(n, sizeof(*ns));

	if (!ns)
		return;
	for (i = 0; i < sp->nslots; i++) {
		size_t h;
		if (!sp->slots[i].info)
			continue;
		h = ss_sym_hash(sp->slots[i].addr) & (n - 1);
		while (ns[h].info)
			h = (h + 1) & (n - 1);
		ns[h] = sp->slots[i];
	}
	free(sp->slots);
	sp->slots = ns;
	sp->nslots = n;
}

const struct ss_sym_info *ss_sym_lookup(struct ss_sym_space *sp, uint64_t addr)
{
	static struct ss_sym_info oom = { "?", NULL, 0, 0 };
	size_t h = ss_sym_hash(addr) & (sp->nslots - 1);
	struct ss_sym_info *info;

	while (sp->slots[h].info) {
		if (sp->slots[h].addr == addr)
			return sp->slots[h].info;
		h = (h + 1) & (sp->nslots - 1);
	}
	info = ss_sym_resolve(sp, addr);
	if (!info)
		return &oom;
	sp->slots[h].addr = addr;
	sp->slots[h].info = info;
	if (++sp->used * 2 > sp->nslots)
		ss_sym_grow(sp);
	return info;
}
