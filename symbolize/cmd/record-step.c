/*
 * record-step.c - `stepscope record`'s look for step.function in the
 * program's files before it starts it.  The runtime looks step.function up
 * in every module loaded before main and refuses to start without it; the
 * same look-up is done here on the files: the executable, then the
 * libraries it needs (DT_NEEDED, transitively), found through
 * RPATH/RUNPATH ($ORIGIN), LD_LIBRARY_PATH and the usual system
 * directories.  The same search tells a program built without
 * -finstrument-functions (nothing calls __cyg_profile_func_enter) when a
 * run recorded nothing.
 *
 * Design: the symbol tables are read with libelf, each file once; the
 * search stops at the first definition.
 *
 * Must never: refuse on anything but a definite "not there": a file that
 * is not ELF (a script) or a library that cannot be found leaves the
 * decision to the runtime.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

#define SS_RECORD_MAX_LIBS 256

struct ss_record_libs {
	char *name[SS_RECORD_MAX_LIBS];  /* DT_NEEDED names seen */
	char *path[SS_RECORD_MAX_LIBS];  /* where found, NULL if not */
	size_t n;
	int unknown;                     /* something could not be read */
};

/* Append the directories of a search path (':'-separated, $ORIGIN = origin)
 * where `lib` exists to out; 0 if found. */
static int ss_record_search(const char *list, const char *origin, const char *lib,
			    char *out, size_t len)
{
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char dir[PATH_MAX];
		if (n >= 7 && !strncmp(p, "$ORIGIN", 7))
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(n - 7), p + 7);
		else if (n >= 9 && !strncmp(p, "${ORIGIN}", 9))
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(n - 9), p + 9);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		if (n && snprintf(out, len, "%s/%s", dir, lib) < (int)len &&
		    !access(out, R_OK))
			return 0;
		p = e ? e + 1 : NULL;
	}
	return -1;
}

#if defined(__x86_64__)
#define SS_RECORD_TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define SS_RECORD_TRIPLET "aarch64-linux-gnu"
#else
#define SS_RECORD_TRIPLET "unknown"
#endif

/* 1 if the ELF file at path defines function `name` (or, with `refs`,
 * names it at all: defines it or calls it from another file); 0 if not,
 * with the libraries it needs added to libs; -1 if it is not a readable
 * ELF file. */
static int ss_record_elf_scan(const char *path, const char *name, int refs,
			      struct ss_record_libs *libs)
{
	char origin[PATH_MAX], rpath[PATH_MAX] = "", runpath[PATH_MAX] = "";
	char *needed[64];
	size_t nneeded = 0, k;
	Elf_Scn *scn = NULL;
	int found = 0, fd;
	Elf *e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;
		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) ||
		    !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			for (k = 0; k < n && !found; k++) {
				GElf_Sym sym;
				const char *s;
				if (!gelf_getsym(d, (int)k, &sym) ||
				    (!refs && (GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
					       sym.st_shndx == SHN_UNDEF)))
					continue;
				s = elf_strptr(e, sh.sh_link, sym.st_name);
				found = s && !strcmp(s, name);
			}
		} else if (sh.sh_type == SHT_DYNAMIC) {
			for (k = 0; k < n; k++) {
				GElf_Dyn dyn;
				const char *s;
				if (!gelf_getdyn(d, (int)k, &dyn))
					continue;
				s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
				if (!s)
					continue;
				if (dyn.d_tag == DT_NEEDED && nneeded < 64)
					needed[nneeded++] = strdup(s);
				else if (dyn.d_tag == DT_RPATH)
					snprintf(rpath, sizeof(rpath), "%s", s);
				else if (dyn.d_tag == DT_RUNPATH)
					snprintf(runpath, sizeof(runpath), "%s", s);
			}
		}
	}
	elf_end(e);
	close(fd);

	snprintf(origin, sizeof(origin), "%s", path);
	if (strrchr(origin, '/'))
		*strrchr(origin, '/') = 0;
	else
		snprintf(origin, sizeof(origin), ".");
	for (k = 0; k < nneeded; k++) {
		char lib[PATH_MAX];
		const char *llp = getenv("LD_LIBRARY_PATH");
		size_t j;
		int ok;
		if (!needed[k])
			continue;
		for (j = 0; j < libs->n && strcmp(libs->name[j], needed[k]); j++)
			;
		if (j < libs->n || libs->n == SS_RECORD_MAX_LIBS) {
			libs->unknown |= libs->n == SS_RECORD_MAX_LIBS;
			free(needed[k]);
			continue;
		}
		if (strchr(needed[k], '/'))
			ok = snprintf(lib, sizeof(lib), "%s", needed[k]) < (int)sizeof(lib) &&
			     !access(lib, R_OK);
		else
			ok = (!runpath[0] && !ss_record_search(rpath, origin, needed[k],
							       lib, sizeof(lib))) ||
			     !ss_record_search(llp, origin, needed[k], lib, sizeof(lib)) ||
			     !ss_record_search(runpath, origin, needed[k], lib, sizeof(lib)) ||
			     !ss_record_search("/lib/" SS_RECORD_TRIPLET ":/usr/lib/" SS_RECORD_TRIPLET
					       ":/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib",
					       origin, needed[k], lib, sizeof(lib));
		libs->name[libs->n] = needed[k];
		libs->path[libs->n++] = ok ? strdup(lib) : NULL;
		if (!ok)
			libs->unknown = 1;
	}
	return found;
}

/* The search of ss_record_check_step_function: 1 found, 0 surely not in
 * the program nor the libraries it needs, -1 cannot be told. */
static int ss_record_find(const char *prog, const char *name, int refs)
{
	struct ss_record_libs libs;
	int r;
	size_t i;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	memset(&libs, 0, sizeof(libs));
	r = ss_record_elf_scan(prog, name, refs, &libs);
	for (i = 0; r == 0 && i < libs.n; i++) {
		if (!libs.path[i])
			continue;
		/* glibc defines the hooks as no-ops: no program's sign */
		if (refs && !strncmp(libs.name[i], "libc.so", 7))
			continue;
		r = ss_record_elf_scan(libs.path[i], name, refs, &libs);
		if (r < 0) {
			libs.unknown = 1;
			r = 0;
		}
	}
	for (i = 0; i < libs.n; i++) {
		free(libs.name[i]);
		free(libs.path[i]);
	}
	if (r < 0)
		return -1;
	return r ? 1 : libs.unknown ? -1 : 0;
}

/* 0 if the program (or a library it needs) defines `name` or that cannot be
 * told from its files; -1 if it surely does not. */
int ss_record_check_step_function(const char *prog, const char *name)
{
	return ss_record_find(prog, name, 0) == 0 ? -1 : 0;
}

/* 1 if neither the program nor a library it needs calls the entry hook
 * that -finstrument-functions adds (a program built without it, which
 * records nothing); 0 if one does or that cannot be told (a script). */
int ss_record_lacks_hooks(const char *prog)
{
	return ss_record_find(prog, "__cyg_profile_func_enter", 1) == 0;
}
