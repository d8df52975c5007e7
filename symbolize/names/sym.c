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
 * Files: this one holds the modules (opening, debug files, load headers);
 * sym-space.c the address spaces, maps, caches and demangling; sym-int.h
 * what they share.
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
#include "sym-int.h"

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
int ss_sym_once(struct ss_sym *s, const char *path)
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
	free(s->rundir);
	for (i = 0; i < s->nmods; i++) {
		struct ss_sym_module *m = s->mods[i];
		if (m->handle)
			s->be->close(m->handle);
		free(m->loads);
		free(m->path);
		free(m->file);
		free(m->debug);
		free(m);
	}
	free(s->mods);
	for (i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	free(s);
}

struct ss_sym_module *ss_sym_module_get(struct ss_sym *s, const char *path)
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
size_t ss_sym_elf_build_id(Elf *e, uint8_t *id, size_t max)
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

void ss_sym_build_id_hex(const uint8_t *id, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * len] = 0;
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
	size_t idlen = ss_sym_elf_build_id(e, id, sizeof(id)), i;
	char *link, *dir, *p = NULL;
	const char *slash;

	for (i = 0; idlen >= 2 && i <= s->ndirs; i++) {
		const char *d = i < s->ndirs ? s->dirs[i] : sysdir;
		char hex[129];
		ss_sym_build_id_hex(id, idlen, hex);
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

	fd = open(SS_SYM_FILE(m), O_RDONLY | O_CLOEXEC);
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

void ss_sym_module_open(struct ss_sym *s, struct ss_sym_module *m)
{
	if (m->opened)
		return;
	m->opened = 1;
	ss_sym_module_read_loads(s, m);
	if (m->nloads)
		m->handle = s->be->open(SS_SYM_FILE(m), m->debug);
}

/* File offset -> vaddr through PT_LOAD; 0 and *vaddr, or -1. */
int ss_sym_module_vaddr(const struct ss_sym_module *m, uint64_t off,
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
