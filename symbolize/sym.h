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
 */
#ifndef SS_SYM_H
#define SS_SYM_H

#include <stddef.h>
#include <stdint.h>

struct ss_sym;
struct ss_sym_space;

/* What an address resolved to.  Strings live as long as the space. */
struct ss_sym_info {
	const char *name;   /* demangled function name, or module+0xoff */
	const char *file;   /* "path:line", or NULL when unknown */
	uint64_t start;     /* runtime address of the function (addr if unknown) */
	int resolved;       /* 1 if a symbol was found */
};

/* backend: "dw" or "bfd" (NULL = "dw").  NULL with err on a bad name. */
struct ss_sym *ss_sym_new(const char *backend, char *err, size_t errlen);
void ss_sym_free(struct ss_sym *s);
/* Warnings (unresolvable modules) go to stderr unless quiet is set. */
void ss_sym_set_quiet(struct ss_sym *s, int quiet);

struct ss_sym_space *ss_sym_space_new(struct ss_sym *s);
void ss_sym_space_free(struct ss_sym_space *sp);
/* Add the mappings of one /proc/<pid>/maps text (need not be terminated). */
void ss_sym_space_add_maps(struct ss_sym_space *sp, const char *text, size_t len);
/* Resolve a runtime address; never fails (falls back to module+0xoff). */
const struct ss_sym_info *ss_sym_lookup(struct ss_sym_space *sp, uint64_t addr);

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
	/* Open a module; NULL if it cannot be read. */
	void *(*open)(const char *path);
	/* Function containing vaddr: 0 and *hit filled, or -1. */
	int (*lookup)(void *mod, uint64_t vaddr, struct ss_sym_hit *hit);
	void (*close)(void *mod);
};

extern const struct ss_sym_backend ss_sym_backend_dw;
extern const struct ss_sym_backend ss_sym_backend_bfd;

/* Demangle a C++ name (malloc'ed result, or NULL if not mangled). */
char *ss_sym_demangle(const char *name);

#endif /* SS_SYM_H */
