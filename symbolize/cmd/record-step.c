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
 * C++: the runtime only compares symbol names, so a step.function given
 * demangled ("gpt2_backward(GPT2*, int)", or "gpt2_backward" alone) is
 * looked up here among the demangled names of the program's functions (its
 * libraries' when the program has none) and handed to the runtime as the
 * mangled symbol it stands for (docs/config.md, "C++ names").
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
#include "config.h"
#include "sym.h"

#define SS_RECORD_MAX_LIBS 256

#define SS_RECORD_MAX_CANDS 8

/* The look-up of a demangled step.function: what is asked (spaces taken
 * out) and the distinct mangled symbols whose demangled form matches. */
struct ss_record_dm {
	char want[SS_CONFIG_NAME_MAX];
	int full;                              /* want has its parameters */
	char *mangled[SS_RECORD_MAX_CANDS];
	char *shown[SS_RECORD_MAX_CANDS];      /* demangled, as printed */
	size_t n, more;                        /* kept, and past the 8 kept */
};

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

/* s without its spaces, into out (cut to len). */
static void ss_record_squeeze(const char *s, size_t n, char *out, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < n && s[i] && k + 1 < len; i++)
		if (s[i] != ' ')
			out[k++] = s[i];
	out[k] = 0;
}

/* Whether demangled name d is what dm asks for: the whole name, or with
 * no parameters asked, the qualified name before them (a template's
 * return type left out: "void ns::f<int>(int)" is "ns::f<int>"). */
static int ss_record_dm_match(const struct ss_record_dm *dm, const char *d)
{
	char b[SS_CONFIG_NAME_MAX * 2];
	size_t i, start = 0, op;
	int angle = 0;

	if (dm->full) {
		ss_record_squeeze(d, strlen(d), b, sizeof(b));
		return !strcmp(b, dm->want);
	}
	op = strstr(d, "operator") ? (size_t)(strstr(d, "operator") - d) : (size_t)-1;
	for (i = 0; d[i]; i++) {
		if (d[i] == '<')
			angle++;
		else if (d[i] == '>')
			angle--;
		else if (d[i] == ' ' && !angle && i < op)
			start = i + 1;
		else if (d[i] == '(' && !angle) {
			if (strncmp(d + i, "(anonymous namespace)", 21))
				break;
			i += 20;
		}
	}
	/* what follows the parameters: a function's qualifiers, or for
	 * "f(int)::{lambda(int)#1}::operator()(int) const" and other
	 * entities local to f, more of the name: not f itself */
	if (d[i] == '(') {
		size_t j = i;
		int depth = 0;
		for (; d[j]; j++) {
			if (d[j] == '(')
				depth++;
			else if (d[j] == ')' && --depth == 0)
				break;
		}
		if (d[j] && strstr(d + j + 1, "::"))
			return 0;
	}
	ss_record_squeeze(d + start, i - start, b, sizeof(b));
	return !strcmp(b, dm->want);
}

/* Symbol `s` (a defined function) against dm: kept when it matches. */
static void ss_record_dm_try(struct ss_record_dm *dm, const char *s)
{
	char *d;
	size_t i;

	/* clones (f.isra.0) are not what the runtime watches: their
	 * original's symbol is */
	if (s[0] != '_' || s[1] != 'Z' || strchr(s, '.') || !(d = ss_sym_demangle(s)))
		return;
	if (!ss_record_dm_match(dm, d)) {
		free(d);
		return;
	}
	for (i = 0; i < dm->n && strcmp(dm->mangled[i], s); i++)
		;
	if (i < dm->n) {
		free(d);
	} else if (dm->n < SS_RECORD_MAX_CANDS && (dm->mangled[dm->n] = strdup(s))) {
		dm->shown[dm->n++] = d;
	} else {
		dm->more++;
		free(d);
	}
}

/* 1 if the ELF file at path defines function `name` (or, with `refs`,
 * names it at all: defines it or calls it from another file); 0 if not,
 * with the libraries it needs added to libs; -1 if it is not a readable
 * ELF file.  With dm, name is not compared: every defined function is
 * tried against dm instead (0, or -1). */
static int ss_record_elf_scan(const char *path, const char *name, int refs,
			      struct ss_record_libs *libs, struct ss_record_dm *dm)
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
				if (dm && s)
					ss_record_dm_try(dm, s);
				else
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

/* The search of ss_record_step_function: 1 found, 0 surely not in
 * the program nor the libraries it needs, -1 cannot be told.  With dm,
 * the demangled look-up instead: it stops after the first file that has a
 * match (the program before its libraries). */
static int ss_record_find(const char *prog, const char *name, int refs,
			  struct ss_record_dm *dm)
{
	struct ss_record_libs libs;
	int r;
	size_t i;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	memset(&libs, 0, sizeof(libs));
	r = ss_record_elf_scan(prog, name, refs, &libs, dm);
	for (i = 0; r == 0 && i < libs.n && !(dm && dm->n); i++) {
		if (!libs.path[i])
			continue;
		/* glibc defines the hooks as no-ops: no program's sign */
		if (refs && !strncmp(libs.name[i], "libc.so", 7))
			continue;
		r = ss_record_elf_scan(libs.path[i], name, refs, &libs, dm);
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

/* The function of the program's own symbol table nearest to a misspelt
 * step.function (ss_config_near: one edit in three characters at most),
 * into best; "" when none is near.  Clones and names beginning with '_'
 * (unless the name asked for does) are not suggested. */
static void ss_record_nearest(const char *prog, const char *want, char *best, size_t len)
{
	Elf_Scn *scn = NULL;
	int fd, dist = 1000, d;
	Elf *e;

	best[0] = 0;
	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(prog, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && elf_kind(e) == ELF_K_ELF && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *s;
			if (!gelf_getsym(data, (int)k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !(s = elf_strptr(e, sh.sh_link, sym.st_name)) ||
			    strchr(s, '.') || (s[0] == '_' && want[0] != '_') || strlen(s) >= len ||
			    !ss_config_near(want, s, &d))
				continue;
			if (d < dist || (d == dist && strcmp(s, best) < 0)) {
				dist = d;
				snprintf(best, len, "%s", s);
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

int ss_record_step_function(struct ss_config *cfg, const char *prog_path,
			    const char *prog)
{
	struct ss_record_dm dm;
	char where[1024];
	int r, rc = 0, exact = ss_record_find(prog_path, cfg->step_function, 0, NULL);
	size_t i;

	if (exact == 1)
		return 0; /* the symbol itself */
	memset(&dm, 0, sizeof(dm));
	ss_record_squeeze(cfg->step_function, strlen(cfg->step_function), dm.want,
			  sizeof(dm.want));
	dm.full = strchr(dm.want, '(') != NULL;
	r = ss_record_find(prog_path, NULL, 0, &dm);
	ss_config_where(cfg, "step.function", where, sizeof(where));
	if (dm.n == 1 && strlen(dm.mangled[0]) < sizeof(cfg->step_function)) {
		snprintf(cfg->step_function, sizeof(cfg->step_function), "%s", dm.mangled[0]);
	} else if (dm.n == 1) {
		fprintf(stderr, "stepscope: %sstep.function '%s' is %s, whose symbol is longer than "
			"the %zu bytes a name may have\n", where, cfg->step_function, dm.shown[0],
			sizeof(cfg->step_function) - 1);
		rc = 2;
	} else if (dm.n) {
		fprintf(stderr, "stepscope: %sstep.function '%s' is ambiguous in %s: ", where,
			cfg->step_function, prog);
		for (i = 0; i < dm.n; i++)
			fprintf(stderr, "%s'%s' (%s)", i ? ", " : "", dm.shown[i], dm.mangled[i]);
		if (dm.more)
			fprintf(stderr, " and %zu more", dm.more);
		fprintf(stderr, "; give one with its parameters, e.g. '%s', or its mangled name\n",
			dm.shown[0]);
		rc = 2;
	} else if (r == 0 && exact == 0) { /* else: cannot be told, the runtime will */
		char near[SS_CONFIG_NAME_MAX];
		ss_record_nearest(prog_path, cfg->step_function, near, sizeof(near));
		if (near[0])
			fprintf(stderr, "stepscope: %sstep.function '%s' is not a function in %s "
				"(did you mean '%s'?)\n", where, cfg->step_function, prog, near);
		else
			fprintf(stderr, "stepscope: %sstep.function '%s' is not a function in %s "
				"(check the name, and that the program was built with symbols)\n",
				where, cfg->step_function, prog);
		rc = 2;
	}
	for (i = 0; i < dm.n; i++) {
		free(dm.mangled[i]);
		free(dm.shown[i]);
	}
	return rc;
}

/* 1 if neither the program nor a library it needs calls the entry hook
 * that -finstrument-functions adds (a program built without it, which
 * records nothing); 0 if one does or that cannot be told (a script). */
int ss_record_lacks_hooks(const char *prog)
{
	return ss_record_find(prog, "__cyg_profile_func_enter", 1, NULL) == 0;
}
