/*
 * sym.h - turn runtime addresses of a recorded process into function names
 * and file:line, through one of two backends (libdw, default; libbfd).
 *
 * A `struct ss_sym` owns the backend and the modules (each ELF file opened
 * once, shared by every process of a run).  A `struct ss_sym_space` is one
 * process: the mappings from its MAPS records and a cache of resolved
 * addresses (each distinct address resolved once).
 *
 * address -> mapping -> file offset -> ELF vaddr through PT_LOAD -> symbol.
 * This never guesses: what cannot be resolved is named `module+0xoffset`
 * and the module is reported once on stderr.
 *
 * Debug info is looked for where distributions put it: in the file, in
 * DIR/.build-id/xx/rest.debug for each --debug-dir DIR and /usr/lib/debug,
 * and through .gnu_debuglink (next to the file, in .debug/, in each debug
 * dir).  A GCC clone (`f.isra.0`, `f.constprop.1`, `f.part.0`, `f.cold`)
 * is named `f` with the clone kind beside it.
 */
#ifndef SS_SYM_H
#define SS_SYM_H

#include <stddef.h>
#include <stdint.h>

struct ss_sym;
struct ss_sym_space;
struct ss_reader;

/* What an address resolved to.  Strings live as long as the space. */
struct ss_sym_info {
	const char *name;   /* demangled function name, or module+0xoff */
	const char *file;   /* "path:line", or NULL when unknown */
	const char *clone;  /* GCC clone kind ("isra.0"), or NULL */
	uint64_t start;     /* runtime address of the function (addr if unknown) */
	int resolved;       /* 1 if a symbol was found */
};

/* backend: "dw" or "bfd" (NULL = "dw").  NULL with err on a bad name. */
struct ss_sym *ss_sym_new(const char *backend, char *err, size_t errlen);
void ss_sym_free(struct ss_sym *s);
/* Warnings (unresolvable modules) go to stderr unless quiet is set. */
void ss_sym_set_quiet(struct ss_sym *s, int quiet);
/* Give the warning about a module whose symbols miss some addresses once
 * per run: the modules warned about are listed in file path (the run
 * directory's .stepscope-warned), read and appended by every command. */
void ss_sym_warn_once_file(struct ss_sym *s, const char *path);

/* Also look for separate debug files under dir (build-id tree and
 * debuglink names); repeatable, searched before /usr/lib/debug. */
int ss_sym_add_debug_dir(struct ss_sym *s, const char *dir);

struct ss_sym_space *ss_sym_space_new(struct ss_sym *s);
void ss_sym_space_free(struct ss_sym_space *sp);
/* "When" unknown, for the two calls below. */
#define SS_SYM_NO_TIME UINT64_MAX

/* Add the mappings of one /proc/<pid>/maps text (need not be terminated). */
void ss_sym_space_add_maps(struct ss_sym_space *sp, const char *text, size_t len);
/* The same for a snapshot taken at ns (run time, in the reader's ns): it
 * lists every executable mapping, so a mapping it leaves out ends there.
 * Snapshots come in time order. */
void ss_sym_space_add_maps_at(struct ss_sym_space *sp, const char *text,
			      size_t len, uint64_t ns);
/* What the run recorded of a module: its build-id, or (len 0) that it
 * had none and when the run began, run_ns (CLOCK_REALTIME ns): a file
 * modified after that is not the one that ran.  Call after the maps are
 * added; paths that match no mapping are ignored. */
void ss_sym_space_expect(struct ss_sym_space *sp, const char *path,
			 const uint8_t *build_id, size_t len, uint64_t run_ns);
/* ss_sym_space_expect for every SS_META_MODULE record of r and for the
 * executable (build-id in the file header). */
void ss_sym_space_expect_trace(struct ss_sym_space *sp, const struct ss_reader *r);
/* Where a run keeps its binaries: RUN/SS_SYM_KEEP_DIR/<build-id>/<name>. */
#define SS_SYM_KEEP_DIR ".stepscope-bin"
/* The run directory whose kept binaries (dir/.stepscope-bin) stand in for
 * files rebuilt or deleted since the run (sym-keep.c). */
void ss_sym_set_run_dir(struct ss_sym *s, const char *dir);
/* For every module the run recorded (call after the spaces'
 * ss_sym_space_expect): the file at its path when it is still that build
 * (with no build-id: not modified since the run began), kept into the run
 * directory now if it was not, else the kept copy.
 * Returns how many modules have neither, with one line in err naming the
 * first, its path and both build-ids; with force they are read as they
 * are now, each with a warning on stderr, and 0 is returned. */
size_t ss_sym_check_files(struct ss_sym *s, int force, char *err, size_t errlen);
/* Keep a copy of the module at path, build-id id (len 0: none, and the
 * run began at run_ns), in the run directory dir (see sym-keep.c for
 * how): 0 when kept (or kept before, or path is no longer that build), 1
 * when not kept on purpose (a system file on another filesystem), -1
 * with the reason in err. */
int ss_sym_keep(const char *dir, const char *path, const uint8_t *id, size_t len,
		uint64_t run_ns, char *err, size_t errlen);
/* ss_sym_keep for every module r recorded and its executable; a failure
 * is one warning on stderr. */
void ss_sym_keep_trace(const char *dir, const struct ss_reader *r);
/* Resolve a runtime address; never fails (falls back to module+0xoff).
 * Where the run mapped different files at the address (a library closed,
 * another loaded in its place), the latest mapping counts... */
const struct ss_sym_info *ss_sym_lookup(struct ss_sym_space *sp, uint64_t addr);
/* ...and here the one mapped at time ns (the nearest in time when no
 * snapshot of that moment holds the address). */
const struct ss_sym_info *ss_sym_lookup_at(struct ss_sym_space *sp, uint64_t addr,
					   uint64_t ns);

/* The file that held addr at time ns, for readers of its DWARF beyond
 * names (names/args-dw.c): 0 with its path, its separate debug file (or
 * NULL) and addr's vaddr in it; -1 when no module holds addr. */
int ss_sym_where(struct ss_sym_space *sp, uint64_t addr, uint64_t ns,
		 const char **path, const char **debug, uint64_t *vaddr);

/* ---- backend interface (sym-dw.c, sym-bfd.c) ---- */

/* A symbol found by a backend, in the module's own vaddrs. */
struct ss_sym_hit {
	char *name;         /* raw (mangled) name, malloc'ed */
	uint64_t start;     /* vaddr of the symbol */
	char *file;         /* source path of the function's entry, malloc'ed or NULL */
	unsigned line;
};

struct ss_sym_backend {
	const char *name;
	/* Open a module, with its separate debug file when one was found
	 * (debug NULL otherwise); NULL if it cannot be read. */
	void *(*open)(const char *path, const char *debug);
	/* Function containing vaddr: 0 and *hit filled, or -1. */
	int (*lookup)(void *mod, uint64_t vaddr, struct ss_sym_hit *hit);
	void (*close)(void *mod);
};

extern const struct ss_sym_backend ss_sym_backend_dw;
extern const struct ss_sym_backend ss_sym_backend_bfd;

/* Demangle a C++ name (malloc'ed result, or NULL if not mangled). */
char *ss_sym_demangle(const char *name);
/* Split a GCC clone suffix off a raw symbol name: "f.isra.0" gives 3 (the
 * length of "f") and *clone = "isra.0" (pointing into name); a name that
 * is no clone gives strlen(name) and *clone = NULL. */
size_t ss_sym_clone_split(const char *name, const char **clone);

#endif /* SS_SYM_H */
