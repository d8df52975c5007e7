/*
 * sym-int.h - what sym.c (the modules: files, debug files, ELF load
 * headers) and sym-space.c (address spaces: maps, lookups, caches) share
 * beyond sym.h.  Not for use outside symbolize/names/sym*.c.
 */
#ifndef SS_SYM_INT_H
#define SS_SYM_INT_H

#include <libelf.h>
#include <stdint.h>

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
	uint64_t run_ns;       /* no build-id recorded: when the run began
	                        * (CLOCK_REALTIME ns; the earliest), else 0 */
	int checked;           /* ss_sym_check_files looked at it */
	char *file;            /* the kept copy read instead of path, or NULL */
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
	char *rundir;          /* the run: its kept binaries (sym-keep.c) */
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

int ss_sym_once(struct ss_sym *s, const char *path);
struct ss_sym_module *ss_sym_module_get(struct ss_sym *s, const char *path);
size_t ss_sym_elf_build_id(Elf *e, uint8_t *id, size_t max);
/* A build-id as lowercase hex into out (2 * len + 1 bytes). */
void ss_sym_build_id_hex(const uint8_t *id, size_t len, char *out);
void ss_sym_module_open(struct ss_sym *s, struct ss_sym_module *m);
/* The file read for m: its kept copy, else its path. */
#define SS_SYM_FILE(m) ((m)->file ? (m)->file : (m)->path)
int ss_sym_module_vaddr(const struct ss_sym_module *m, uint64_t off,
			uint64_t *vaddr);

#endif /* SS_SYM_INT_H */
