/*
 * sym-space.c - one process's address space for symbolization: the
 * recorded /proc/<pid>/maps text parsed into mappings, an address mapped
 * to its module and vaddr, named by the backend once and cached, and the
 * build-ids a trace expects of its modules (checked in sym-keep.c).
 *
 * Design: every distinct address is kept in an open-addressing hash table
 * per space, so a trace of millions of events costs one backend lookup
 * per function; an address in a module that several spaces share (the
 * same file mapped the same way) is named once for all of them.
 *
 * Must never: abort on an address outside every mapping (it is shown as
 * module+0xoffset or a bare address), or name one address twice.
 */
#include <bfd.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"
#include "sym.h"
#include "sym-int.h"

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
	for (i = 0; i < sp->nslots; i++) {
		struct ss_sym_alt *a = sp->slots[i].alt, *next;
		free(sp->slots[i].info);  /* strings live in the same block */
		for (; a; a = next) {
			next = a->next;
			free(a->info);
			free(a);
		}
	}
	for (i = 0; i < sp->nmaps; i++)
		free(sp->maps[i].label);
	free(sp->slots);
	free(sp->maps);
	free(sp);
}

static void ss_sym_space_add_line(struct ss_sym_space *sp, const char *line,
				  uint64_t ns)
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
	m->from_ns = ns;
	m->until_ns = UINT64_MAX;
	m->seen = sp->snaps;
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
	/* an identical mapping listed until now: it goes on */
	for (i = 0; i < sp->nmaps; i++) {
		struct ss_sym_map *o = &sp->maps[i];
		if (o->until_ns == UINT64_MAX && o->start == m->start &&
		    o->end == m->end && o->offset == m->offset &&
		    o->mod == m->mod && !strcmp(o->label, m->label)) {
			o->seen = sp->snaps;
			free(m->label);
			return;
		}
	}
	sp->nmaps++;
}

void ss_sym_space_add_maps(struct ss_sym_space *sp, const char *text, size_t len)
{
	ss_sym_space_add_maps_at(sp, text, len, SS_SYM_NO_TIME);
}

void ss_sym_space_add_maps_at(struct ss_sym_space *sp, const char *text,
			      size_t len, uint64_t ns)
{
	char line[4608];
	size_t i = 0;

	sp->snaps++;
	sp->gen++;

	while (i < len && text[i]) {
		size_t j = i, n;
		while (j < len && text[j] && text[j] != '\n')
			j++;
		n = j - i;
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, text + i, n);
		line[n] = 0;
		ss_sym_space_add_line(sp, line, ns == SS_SYM_NO_TIME ? 0 : ns);
		i = j < len && text[j] == '\n' ? j + 1 : j;
		if (j < len && !text[j])
			break;
	}
	/* a snapshot lists every executable mapping: those it leaves out
	 * were unmapped before it (a snapshot without a time ends none) */
	if (ns == SS_SYM_NO_TIME)
		return;
	for (i = 0; i < sp->nmaps; i++)
		if (sp->maps[i].until_ns == UINT64_MAX && sp->maps[i].seen != sp->snaps)
			sp->maps[i].until_ns = ns < sp->maps[i].from_ns ? sp->maps[i].from_ns : ns;
}

char *ss_sym_demangle(const char *name)
{
	/* bfd_demangle would cut a version suffix (@@GLIBCXX_3.4) off and put
	 * it back; such a name is no mangled name, and stays as it is */
	if (!name || name[0] != '_' || name[1] != 'Z' || strchr(name, '@'))
		return NULL;
	return bfd_demangle(NULL, name, SS_DMGL_PARAMS | SS_DMGL_ANSI | SS_DMGL_GNU_V3);
}

size_t ss_sym_clone_split(const char *name, const char **clone)
{
	static const char *const kinds[] = {
		"isra", "constprop", "part", "cold", "lto_priv", "clone",
		"localalias", "specialized", NULL,
	};
	const char *dot;

	*clone = NULL;
	for (dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
		size_t i;
		if (dot == name)
			continue;
		for (i = 0; kinds[i]; i++) {
			size_t kl = strlen(kinds[i]);
			if (!strncmp(dot + 1, kinds[i], kl) &&
			    (dot[1 + kl] == '.' || !dot[1 + kl])) {
				*clone = dot + 1;
				return (size_t)(dot - name);
			}
		}
	}
	return strlen(name);
}

/* One allocation holding the info and its strings. */
static struct ss_sym_info *ss_sym_info_make(const char *name, const char *file,
					    unsigned line, uint64_t start,
					    int resolved, const char *clone)
{
	char fbuf[32] = "";
	size_t nl = strlen(name) + 1, fl = 0, cl = clone ? strlen(clone) + 1 : 0;
	struct ss_sym_info *info;
	char *p;

	if (file) {
		snprintf(fbuf, sizeof(fbuf), ":%u", line);
		fl = strlen(file) + strlen(fbuf) + 1;
	}
	info = malloc(sizeof(*info) + nl + fl + cl);
	if (!info)
		return NULL;
	p = (char *)(info + 1);
	memcpy(p, name, nl);
	info->name = p;
	p += nl;
	info->file = NULL;
	if (file) {
		snprintf(p, fl, "%s%s", file, fbuf);
		info->file = p;
		p += fl;
	}
	info->clone = NULL;
	if (clone) {
		memcpy(p, clone, cl);
		info->clone = p;
	}
	info->start = start;
	info->resolved = resolved;
	return info;
}

/* The map that held addr at time ns: one listed then, else the one
 * listed nearest to ns, the newest on a tie; SIZE_MAX if none holds it. */
static size_t ss_sym_find_map(const struct ss_sym_space *sp, uint64_t addr,
			      uint64_t ns)
{
	size_t i, best = SIZE_MAX;
	uint64_t bestd = UINT64_MAX;

	for (i = sp->nmaps; i-- > 0;) {
		const struct ss_sym_map *m = &sp->maps[i];
		uint64_t d;
		if (addr < m->start || addr >= m->end)
			continue;
		if (ns < m->from_ns)
			d = m->from_ns - ns;
		else if (ns >= m->until_ns)
			d = ns - m->until_ns + 1;
		else
			return i;
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

/* Do the recorded maps holding addr name different things? */
static int ss_sym_shared(const struct ss_sym_space *sp, uint64_t addr)
{
	const struct ss_sym_map *first = NULL;
	size_t i;

	for (i = 0; i < sp->nmaps; i++) {
		const struct ss_sym_map *m = &sp->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		if (!first)
			first = m;
		else if (m->mod != first->mod || strcmp(m->label, first->label) ||
			 m->offset - m->start != first->offset - first->start)
			return 1;
	}
	return 0;
}

static struct ss_sym_info *ss_sym_resolve(struct ss_sym_space *sp, size_t mi,
					  uint64_t addr)
{
	struct ss_sym *s = sp->sym;
	struct ss_sym_map *map = mi == SIZE_MAX ? NULL : &sp->maps[mi];
	struct ss_sym_hit hit;
	uint64_t off, vaddr;
	char buf[512];

	if (!map) {
		if (!sp->warned_nomap && !s->quiet)
			fprintf(stderr,
				"stepscope: warning: address 0x%llx is in no recorded mapping; shown as a bare address\n",
				(unsigned long long)addr);
		sp->warned_nomap = 1;
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		return ss_sym_info_make(buf, NULL, 0, addr, 0, NULL);
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
				const char *clone;
				size_t bl;
				/* a symbol version (memcpy@@GLIBC_2.14,
				 * GOMP_parallel@GOMP_4.0) is not part of the name */
				char *at = strchr(hit.name, '@');
				if (at && at != hit.name)
					*at = 0;
				bl = ss_sym_clone_split(hit.name, &clone);
				char *base = strndup(hit.name, bl);
				char *dm = base ? ss_sym_demangle(base) : NULL;
				struct ss_sym_info *info = ss_sym_info_make(
					dm ? dm : base ? base : hit.name, hit.file,
					hit.line, addr - (vaddr - hit.start), 1, clone);
				free(dm);
				free(base);
				free(hit.name);
				free(hit.file);
				return info;
			}
			free(hit.name);
			free(hit.file);
		}
		if (!m->warned && !s->quiet && !(m->handle && ss_sym_once(s, m->path)))
			fprintf(stderr,
				"stepscope: warning: %s: %s; its functions are shown as %s+0xOFFSET\n",
				m->path,
				m->handle ? "no symbol for some addresses (stripped?)" :
				access(m->path, F_OK) ? "missing (deleted or moved since the run)" :
				access(m->path, R_OK) ? "cannot be read (permissions)" :
				m->nloads ? "cannot read symbols from this file" :
				"not an ELF file, or damaged",
				m->base);
		m->warned = 1;
	}
	snprintf(buf, sizeof(buf), "%s+0x%llx", map->label,
		 (unsigned long long)vaddr);
	return ss_sym_info_make(buf, NULL, 0, addr, 0, NULL);
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

/* An address the maps disagree about: the result for the map at ns. */
static const struct ss_sym_info *ss_sym_lookup_shared(struct ss_sym_space *sp,
						      struct ss_sym_slot *slot,
						      uint64_t ns)
{
	size_t mi = ss_sym_find_map(sp, slot->addr, ns);
	struct ss_sym_alt *a;

	if (mi == slot->map)
		return slot->info;
	for (a = slot->alt; a; a = a->next)
		if (a->map == mi)
			return a->info;
	a = calloc(1, sizeof(*a));
	if (!a)
		return slot->info;
	a->info = ss_sym_resolve(sp, mi, slot->addr);
	if (!a->info) {
		free(a);
		return slot->info;
	}
	a->map = mi;
	a->next = slot->alt;
	slot->alt = a;
	return a->info;
}

const struct ss_sym_info *ss_sym_lookup_at(struct ss_sym_space *sp, uint64_t addr,
					   uint64_t ns)
{
	static struct ss_sym_info oom = { "?", NULL, NULL, 0, 0 };
	size_t h = ss_sym_hash(addr) & (sp->nslots - 1), mi;
	struct ss_sym_slot *slot;
	struct ss_sym_info *info;

	while ((slot = &sp->slots[h])->info) {
		if (slot->addr == addr) {
			if (slot->gen != sp->gen) { /* maps added since */
				slot->shared = ss_sym_shared(sp, addr);
				slot->gen = sp->gen;
			}
			return slot->shared ? ss_sym_lookup_shared(sp, slot, ns)
					    : slot->info;
		}
		h = (h + 1) & (sp->nslots - 1);
	}
	mi = ss_sym_find_map(sp, addr, ns);
	info = ss_sym_resolve(sp, mi, addr);
	if (!info)
		return &oom;
	slot->addr = addr;
	slot->info = info;
	slot->map = mi;
	slot->gen = sp->gen;
	slot->shared = ss_sym_shared(sp, addr);
	if (++sp->used * 2 > sp->nslots)
		ss_sym_grow(sp);
	return info;
}

int ss_sym_where(struct ss_sym_space *sp, uint64_t addr, uint64_t ns,
		 const char **path, const char **debug, uint64_t *vaddr)
{
	size_t mi = ss_sym_find_map(sp, addr, ns);
	struct ss_sym_map *map = mi == SIZE_MAX ? NULL : &sp->maps[mi];

	if (!map || !map->mod)
		return -1;
	ss_sym_module_open(sp->sym, map->mod);
	if (ss_sym_module_vaddr(map->mod, addr - map->start + map->offset, vaddr))
		return -1;
	*path = SS_SYM_FILE(map->mod);
	*debug = map->mod->debug;
	return 0;
}

const struct ss_sym_info *ss_sym_lookup(struct ss_sym_space *sp, uint64_t addr)
{
	return ss_sym_lookup_at(sp, addr, SS_SYM_NO_TIME);
}

void ss_sym_space_expect(struct ss_sym_space *sp, const char *path,
			 const uint8_t *build_id, size_t len, uint64_t run_ns)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct ss_sym_module *m = NULL;
	size_t i;

	if ((!len && !run_ns) || len > sizeof(m->want_id) || !*base)
		return;
	/* the same path as a mapping; else one mapping of that file name
	 * (dlopen names may be relative) */
	for (i = 0; i < sp->nmaps && !m; i++)
		if (sp->maps[i].mod && !strcmp(sp->maps[i].mod->path, path))
			m = sp->maps[i].mod;
	for (i = 0; i < sp->nmaps && !m; i++)
		if (sp->maps[i].mod && !strcmp(sp->maps[i].mod->base, base))
			m = sp->maps[i].mod;
	if (!m)
		return;
	if (!len) {
		if (!m->run_ns || run_ns < m->run_ns)
			m->run_ns = run_ns;
		return;
	}
	memcpy(m->want_id, build_id, len);
	m->want_len = (uint32_t)len;
}

struct ss_expect_walk {
	struct ss_sym_space *sp;
	uint64_t run_ns;
};

static void ss_sym_space_expect_one(void *ctx, const char *path, const uint8_t *id, size_t len)
{
	struct ss_expect_walk *w = ctx;
	ss_sym_space_expect(w->sp, path, id, len, w->run_ns);
}

void ss_sym_space_expect_trace(struct ss_sym_space *sp, const struct ss_reader *r)
{
	struct ss_expect_walk w = { sp, r->hdr.realtime_ns };

	ss_reader_each_module(r, ss_sym_space_expect_one, &w);
}
