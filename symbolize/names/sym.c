/*
 * sym.c - the backend-independent half of symbolization: parsing recorded
 * /proc/<pid>/maps text, mapping an address to a module's vaddr through
 * its PT_LOAD headers (read with libelf), the per-module cache, the
 * per-address cache and C++ demangling (libbfd's, no libstdc++).
 *
 * Design: modules are opened lazily on the first address that needs them
 * and kept until ss_sym_free; each space caches every distinct address in
 * an open-addressing hash table, so a trace of millions of events costs
 * one backend lookup per function.
 *
 * Separate debug files are found here, once per module, for both
 * backends: by build-id under each debug dir, then by .gnu_debuglink.
 *
 * Must never: abort on a missing or unreadable file (fall back to
 * module+0xoffset), or print more than one warning per module.
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

/* bfd_demangle's options, from libiberty's demangle.h (binutils-dev does
 * not install it): parameter lists, and the GNU v3 (Itanium C++ ABI) scheme
 * only, so it demangles exactly what libstdc++'s __cxa_demangle would. */
#define SS_DMGL_PARAMS (1 << 0)
#define SS_DMGL_ANSI   (1 << 1)
#define SS_DMGL_GNU_V3 (1 << 14)

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
	uint8_t want_id[64];   /* build-id the run recorded */
	uint32_t want_len;     /* 0: none recorded */
	char *debug;           /* separate debug file, or NULL */
};

struct ss_sym {
	const struct ss_sym_backend *be;
	struct ss_sym_module **mods;
	size_t nmods, capmods;
	int quiet;
	char *once;            /* file of the "stripped?" warnings given */
	char **dirs;           /* --debug-dir, then /usr/lib/debug */
	size_t ndirs;
};

/* A mapping as the snapshots of the run saw it: listed by every snapshot
 * from from_ns until (not including) the first one that left it out at
 * until_ns (UINT64_MAX: still listed by the latest).  A library closed and
 * another loaded at the same addresses gives two maps with disjoint
 * times; one loaded again after that gives a third. */
struct ss_sym_map {
	uint64_t start, end, offset;
	struct ss_sym_module *mod;     /* NULL: anonymous or pseudo ([vdso]) */
	char *label;                   /* basename or [name] for messages */
	uint64_t from_ns, until_ns;
	uint64_t seen;                 /* the last snapshot that listed it */
};

/* An address whose maps resolve it differently at different times keeps
 * one result per map. */
struct ss_sym_alt {
	struct ss_sym_alt *next;
	size_t map;
	struct ss_sym_info *info;
};

struct ss_sym_slot {
	uint64_t addr;
	struct ss_sym_info *info;      /* NULL = empty slot */
	size_t map;                    /* the map info came from, SIZE_MAX: none */
	uint64_t gen;                  /* sp->gen when `shared` was computed */
	int shared;                    /* maps disagree about addr: see alt */
	struct ss_sym_alt *alt;
};

struct ss_sym_space {
	struct ss_sym *sym;
	struct ss_sym_map *maps;
	size_t nmaps, capmaps;
	struct ss_sym_slot *slots;
	size_t nslots, used;
	int warned_nomap;
	uint64_t snaps;                /* snapshots added */
	uint64_t gen;                  /* bumped whenever maps are added */
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

/* A module with symbols but none for some addresses (a system library
 * with only .dynsym, like libgomp) is the same on every reading of a run:
 * say it once per run.  1 when it was said before (its path is a line of
 * s->once); else it is added there and 0 is returned. */
static int ss_sym_once(struct ss_sym *s, const char *path)
{
	char line[4200];
	int seen = 0;
	FILE *f;

	if (!s->once)
		return 0;
	f = fopen(s->once, "r");
	while (f && !seen && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		seen = !strcmp(line, path);
	}
	if (f)
		fclose(f);
	if (!seen && (f = fopen(s->once, "a"))) {
		fprintf(f, "%s\n", path);
		fclose(f);
	}
	return seen;
}

void ss_sym_warn_once_file(struct ss_sym *s, const char *path)
{
	free(s->once);
	s->once = path ? strdup(path) : NULL;
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
	free(s->once);
	for (i = 0; i < s->nmods; i++) {
		struct ss_sym_module *m = s->mods[i];
		if (m->handle)
			s->be->close(m->handle);
		free(m->loads);
		free(m->path);
		free(m->debug);
		free(m);
	}
	free(s->mods);
	for (i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
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

int ss_sym_add_debug_dir(struct ss_sym *s, const char *dir)
{
	char **nd = realloc(s->dirs, (s->ndirs + 1) * sizeof(*nd));

	if (!nd)
		return -1;
	s->dirs = nd;
	nd[s->ndirs] = strdup(dir);
	if (!nd[s->ndirs])
		return -1;
	s->ndirs++;
	return 0;
}

/* The GNU build-id note of an ELF file; its length, 0 if none. */
static size_t ss_sym_elf_build_id(Elf *e, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) &&
			    nh.n_descsz <= max) {
				memcpy(id, (char *)d->d_buf + doff, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

/* The file name in .gnu_debuglink, or NULL. */
static char *ss_sym_elf_debuglink(Elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (elf_getshdrstrndx(e, &shstr))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *n;

		if (!gelf_getshdr(scn, &sh) ||
		    !(n = elf_strptr(e, shstr, sh.sh_name)) ||
		    strcmp(n, ".gnu_debuglink") || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_size)
			continue;
		return strndup(d->d_buf, d->d_size);
	}
	return NULL;
}

static int ss_sym_is_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* Where the debug info of module m lives when it is not in the file. */
static char *ss_sym_find_debug(struct ss_sym *s, const struct ss_sym_module *m,
			       Elf *e)
{
	static const char *const sysdir = "/usr/lib/debug";
	uint8_t id[64];
	size_t idlen = ss_sym_elf_build_id(e, id, sizeof(id)), i, k;
	char *link, *dir, *p = NULL;
	const char *slash;

	for (i = 0; idlen >= 2 && i <= s->ndirs; i++) {
		const char *d = i < s->ndirs ? s->dirs[i] : sysdir;
		char hex[129];
		for (k = 0; k < idlen; k++)
			snprintf(hex + 2 * k, 3, "%02x", id[k]);
		if (asprintf(&p, "%s/.build-id/%.2s/%s.debug", d, hex, hex + 2) < 0)
			return NULL;
		if (ss_sym_is_file(p))
			return p;
		free(p);
	}
	link = ss_sym_elf_debuglink(e);
	if (!link)
		return NULL;
	slash = strrchr(m->path, '/');
	dir = strndup(m->path, slash ? (size_t)(slash - m->path) : 0);
	for (i = 0; dir && i < s->ndirs + 3; i++) {
		int r;
		if (i == 0)
			r = asprintf(&p, "%s/%s", dir, link);
		else if (i == 1)
			r = asprintf(&p, "%s/.debug/%s", dir, link);
		else if (i < s->ndirs + 2)  /* DIR/<dir of file>/link, DIR/link */
			r = asprintf(&p, "%s%s/%s", s->dirs[i - 2], dir, link);
		else
			r = asprintf(&p, "%s%s/%s", sysdir, dir, link);
		if (r < 0)
			break;
		if (strcmp(p, m->path) && ss_sym_is_file(p))
			goto found;
		free(p);
		if (i >= 2 && i < s->ndirs + 2) {
			if (asprintf(&p, "%s/%s", s->dirs[i - 2], link) < 0)
				break;
			if (ss_sym_is_file(p))
				goto found;
			free(p);
		}
	}
	p = NULL;
found:
	free(link);
	free(dir);
	return p;
}

/* Does the ELF have DWARF of its own (.debug_info with contents)? */
static int ss_sym_elf_has_dwarf(Elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (elf_getshdrstrndx(e, &shstr))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (n = elf_strptr(e, shstr, sh.sh_name)) &&
		    (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info")))
			return 1;
	}
	return 0;
}

/* Read the PT_LOAD headers of a module, and find its debug file. */
static void ss_sym_module_read_loads(struct ss_sym *s, struct ss_sym_module *m)
{
	size_t n, i;
	Elf *e;
	int fd;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !ss_sym_elf_has_dwarf(e))
		m->debug = ss_sym_find_debug(s, m, e);
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
	ss_sym_module_read_loads(s, m);
	if (m->nloads)
		m->handle = s->be->open(m->path, m->debug);
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

const struct ss_sym_info *ss_sym_lookup(struct ss_sym_space *sp, uint64_t addr)
{
	return ss_sym_lookup_at(sp, addr, SS_SYM_NO_TIME);
}

void ss_sym_space_expect(struct ss_sym_space *sp, const char *path,
			 const uint8_t *build_id, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct ss_sym_module *m = NULL;
	size_t i;

	if (!len || len > sizeof(m->want_id) || !*base)
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
	memcpy(m->want_id, build_id, len);
	m->want_len = (uint32_t)len;
}

size_t ss_sym_check_build_ids(struct ss_sym *s, int force)
{
	size_t i, changed = 0;

	for (i = 0; i < s->nmods; i++) {
		struct ss_sym_module *m = s->mods[i];
		uint8_t id[64];
		size_t n = 0;
		Elf *e;
		int fd;

		/* the runtime itself is never instrumented: no address of the
		 * trace points into it, so a rebuilt one does not matter */
		if (!m->want_len || !strncmp(m->base, "libstepscope.", 13))
			continue;
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;  /* missing: warned about when resolving */
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (e && elf_kind(e) == ELF_K_ELF)
			n = ss_sym_elf_build_id(e, id, sizeof(id));
		if (e)
			elf_end(e);
		close(fd);
		if (n == m->want_len && !memcmp(id, m->want_id, n))
			continue;
		changed++;
		fprintf(stderr,
			"stepscope: %s%s: changed since the run (build-id differs)%s\n",
			force ? "warning: " : "", m->path,
			force ? "; names may be wrong (--force)" :
			"; rebuild or restore it, or pass --force to use it anyway");
	}
	return changed;
}

void ss_sym_space_expect_trace(struct ss_sym_space *sp, const struct ss_reader *r)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;

	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_module mod;
		char *path;
		if (m.type != SS_META_MODULE || m.len <= sizeof(mod))
			continue;
		memcpy(&mod, m.data, sizeof(mod));
		path = strndup((const char *)m.data + sizeof(mod), m.len - sizeof(mod));
		if (!path)
			continue;
		if (mod.build_id_len <= sizeof(mod.build_id))
			ss_sym_space_expect(sp, path, mod.build_id, mod.build_id_len);
		free(path);
	}
	if (r->hdr.exe_path[0] && r->hdr.build_id_len <= sizeof(r->hdr.build_id))
		ss_sym_space_expect(sp, r->hdr.exe_path, r->hdr.build_id,
				    r->hdr.build_id_len);
}
