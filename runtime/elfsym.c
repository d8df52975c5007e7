/*
 * elfsym.c - find a function of the running program by name, for
 * `step.function`.  Reads the symbol tables (.symtab, else .dynsym) of the
 * executable and each loaded module from disk, once, before main.  Bounds
 * are checked everywhere: a strange file means "not found", never a crash.
 * Also tells which loaded modules were built with -finstrument-functions
 * (they refer to __cyg_profile_func_enter without defining it, or, with
 * the hooks stepscope-cc links in, to stepscope__hook_enter), for the
 * frame walk of window.c.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#if UINTPTR_MAX == 0xffffffffffffffffu
typedef Elf64_Ehdr Ehdr;
typedef Elf64_Shdr Shdr;
typedef Elf64_Sym Sym;
#define ST_TYPE ELF64_ST_TYPE
#else
typedef Elf32_Ehdr Ehdr;
typedef Elf32_Shdr Shdr;
typedef Elf32_Sym Sym;
#define ST_TYPE ELF32_ST_TYPE
#endif

/* Call fn(sym, name, ctx) for each named symbol of the ELF file at `path`,
 * .symtab first, then .dynsym, until fn returns non-zero; returns that
 * value, 0 when no symbol matched or the file is not a readable ELF file.
 * Every offset is checked: a strange file matches nothing. */
static int each_symbol(const char *path,
		       int (*fn)(const Sym *sym, const char *name, void *ctx),
		       void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(Ehdr)) {
		close(fd);
		return 0;
	}
	size_t size = (size_t)st.st_size;
	const unsigned char *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return 0;
	int found = 0;
	const Ehdr *eh = (const Ehdr *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shentsize != sizeof(Shdr) ||
	    eh->e_shoff == 0 || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Shdr) < eh->e_shnum)
		goto out;
	const Shdr *sh = (const Shdr *)(f + eh->e_shoff);
	for (int pass = 0; pass < 2 && !found; pass++) {
		unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
			if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum)
				continue;
			const Shdr *str = &sh[sh[i].sh_link];
			if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
			    str->sh_offset > size || str->sh_size > size - str->sh_offset)
				continue;
			const Sym *sym = (const Sym *)(f + sh[i].sh_offset);
			size_t n = sh[i].sh_size / sizeof(Sym);
			const char *strs = (const char *)(f + str->sh_offset);
			for (size_t k = 0; k < n && !found; k++) {
				if (sym[k].st_name >= str->sh_size)
					continue;
				const char *name = strs + sym[k].st_name;
				size_t max = str->sh_size - sym[k].st_name;
				if (strnlen(name, max) < max)
					found = fn(&sym[k], name, ctx);
			}
		}
	}
out:
	munmap((void *)f, size);
	return found;
}

struct by_name {
	const char *name;
	int undef;
	uint64_t value, size;
};

static int match_name(const Sym *sym, const char *name, void *ctx)
{
	struct by_name *q = ctx;
	if (q->undef ? sym->st_shndx != SHN_UNDEF :
		       ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF)
		return 0;
	if (strcmp(name, q->name))
		return 0;
	q->value = q->undef ? 1 : sym->st_value;
	q->size = sym->st_size;
	return 1;
}

/* Value of FUNC symbol `name` in the ELF file at `path`, 0 if none, its
 * size in *size when size is not NULL; with `undef`, 1 if the file refers
 * to `name` without defining it, else 0. */
static uint64_t find_in_file(const char *path, const char *name, int undef, uint64_t *size)
{
	struct by_name q = { name, undef, 0, 0 };
	if (!each_symbol(path, match_name, &q))
		return 0;
	if (size)
		*size = q.size;
	return q.value;
}

struct lookup {
	const char *name;
	void *addr;
	uint64_t size;
};

static int lookup_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lookup *l = data;
	const char *path = info->dlpi_name;
	if (!path || !*path)
		path = "/proc/self/exe";
	if (!strncmp(path, "linux-vdso", 10))
		return 0;
	uint64_t v = find_in_file(path, l->name, 0, &l->size);
	if (v) {
		l->addr = (void *)(info->dlpi_addr + v);
		return 1;
	}
	return 0;
}

/* The defined function nearest to a misspelt step.function (config.c's
 * ss_config_near), among the modules built with -finstrument-functions:
 * only those can have a step function.  Run once, on the error path. */
struct nearest {
	const char *want;
	char best[SS_CONFIG_NAME_MAX];
	int dist;
};

static int nearest_sym(const Sym *sym, const char *name, void *ctx)
{
	struct nearest *q = ctx;
	int d;
	if (ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    strchr(name, '.') || (name[0] == '_' && q->want[0] != '_') ||
	    strlen(name) >= sizeof(q->best) || !ss_config_near(q->want, name, &d))
		return 0;
	if (d < q->dist || (d == q->dist && strcmp(name, q->best) < 0)) {
		q->dist = d;
		memcpy(q->best, name, strlen(name) + 1);
	}
	return 0;
}

static const char *instrumented_path(const struct dl_phdr_info *info);

static int nearest_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *path = instrumented_path(info);
	if (path)
		each_symbol(path, nearest_sym, data);
	return 0;
}

void *ss_elfsym_lookup(const char *name, uint64_t *size, char *err, size_t errlen)
{
	struct lookup l = { name, NULL, 0 };
	dl_iterate_phdr(lookup_cb, &l);
	if (l.addr) {
		if (size)
			*size = l.size;
		return l.addr;
	}
	struct nearest q = { name, "", 1000 };
	dl_iterate_phdr(nearest_cb, &q);
	if (q.best[0])
		snprintf(err, errlen,
			 "step.function '%s' is not a function in this program "
			 "(did you mean '%s'?)", name, q.best);
	else
		snprintf(err, errlen,
			 "step.function '%s' is not a function in this program "
			 "(check the name, and that the program was built with "
			 "symbols)", name);
	return NULL;
}

struct inst_ranges {
	uintptr_t *lo, *hi;
	size_t n, max;
};

/* The file of a loaded module built with -finstrument-functions, or NULL. */
static const char *instrumented_path(const struct dl_phdr_info *info)
{
	const char *path = info->dlpi_name;
	if (!path || !*path)
		path = "/proc/self/exe";
	if (!strncmp(path, "linux-vdso", 10) ||
	    (!find_in_file(path, "__cyg_profile_func_enter", 1, NULL) &&
	     !find_in_file(path, "stepscope__hook_enter", 1, NULL)))
		return NULL;
	return path;
}

static int inst_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct inst_ranges *r = data;
	if (!instrumented_path(info))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && r->n < r->max; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		r->lo[r->n] = info->dlpi_addr + ph->p_vaddr;
		r->hi[r->n] = r->lo[r->n] + ph->p_memsz;
		r->n++;
	}
	return 0;
}

size_t ss_elfsym_instrumented(uintptr_t *lo, uintptr_t *hi, size_t max)
{
	struct inst_ranges r = { lo, hi, 0, max };
	dl_iterate_phdr(inst_cb, &r);
	return r.n;
}

/* ---------------------------------------------------------------- names
 * (stats.c: log.every_n_steps) address -> function name: the dynamic
 * symbol dladdr finds when it starts exactly there, else the FUNC symbol
 * of the module's .symtab (static functions of the executable). */
struct name_find {
	uintptr_t addr;
	uintptr_t bias;
	const char *path;
};

static int name_module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct name_find *n = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && n->addr >= lo && n->addr < lo + ph->p_memsz) {
			n->bias = info->dlpi_addr;
			n->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name
								      : "/proc/self/exe";
			return 1;
		}
	}
	return 0;
}

struct by_value {
	uint64_t value;
	char *buf;
	size_t len;
};

static int match_value(const Sym *sym, const char *name, void *ctx)
{
	struct by_value *q = ctx;
	if (ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    sym->st_value != q->value || !*name)
		return 0;
	snprintf(q->buf, q->len, "%s", name);
	return 1;
}

/* The FUNC symbol of file `path` whose value is `value`, into buf. */
static int name_in_file(const char *path, uint64_t value, char *buf, size_t len)
{
	struct by_value q = { value, buf, len };
	return each_symbol(path, match_value, &q) ? 0 : -1;
}

int ss_elfsym_name(uintptr_t addr, char *buf, size_t len)
{
	Dl_info info;
	if (dladdr((void *)addr, &info) && info.dli_sname &&
	    (uintptr_t)info.dli_saddr == addr) {
		snprintf(buf, len, "%s", info.dli_sname);
		return 0;
	}
	struct name_find n = { addr, 0, NULL };
	dl_iterate_phdr(name_module_cb, &n);
	if (!n.path || !strncmp(n.path, "linux-vdso", 10))
		return -1;
	return name_in_file(n.path, addr - n.bias, buf, len);
}

/* ---------------------------------------------------------------- all
 * (filter.c) every function of the instrumented modules, by name */
struct each_fn {
	int (*fn)(uintptr_t addr, const char *name, void *ctx);
	void *ctx;
	uintptr_t bias;
};

static int each_fn_sym(const Sym *sym, const char *name, void *ctx)
{
	struct each_fn *e = ctx;
	if (ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    !sym->st_value || !*name)
		return 0;
	return e->fn(e->bias + sym->st_value, name, e->ctx);
}

static int each_fn_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct each_fn *e = data;
	const char *path = instrumented_path(info);
	if (!path)
		return 0;
	e->bias = info->dlpi_addr;
	each_symbol(path, each_fn_sym, e);
	return 0;
}

void ss_elfsym_each_function(int (*fn)(uintptr_t addr, const char *name, void *ctx),
			     void *ctx)
{
	struct each_fn e = { fn, ctx, 0 };
	dl_iterate_phdr(each_fn_cb, &e);
}

/* ------------------------------------------------------------ inlined step */

struct inlined {
	uintptr_t fn, pc;   /* the step function, a pc calling its entry hook */
	uintptr_t base;     /* load address of the module holding fn */
	int inside;         /* pc is in fn's own code */
	int seen;           /* fn's symbol was found */
	char name[256];     /* fn's symbol */
	char at[256];       /* the symbol pc is in, "" if none */
};

static int match_fn(const Sym *sym, const char *name, void *ctx)
{
	struct inlined *q = ctx;
	uintptr_t lo = q->base + sym->st_value;
	if (ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF)
		return 0;
	if (lo == q->fn && !q->seen) {
		q->seen = 1;
		q->inside = q->pc >= q->fn && q->pc < q->fn + sym->st_size;
		snprintf(q->name, sizeof(q->name), "%s", name);
	}
	if (q->pc >= lo && q->pc < lo + sym->st_size && !q->at[0])
		snprintf(q->at, sizeof(q->at), "%s", name);
	return 0;
}

/* Is `at` a gcc clone of function `name` (name.constprop.1, name.isra.0,
 * name.part.0, name.cold, ...)?  gcc adds the hooks before it clones, so
 * the hooks in a clone pass the function's own address: the clone is the
 * function's frame, not a caller it was inlined into. */
static int is_clone_of(const char *at, const char *name)
{
	static const char *const kinds[] = { "constprop", "isra", "part", "cold",
					     "clone", "lto_priv", "specialized" };
	size_t n = strlen(name);
	if (!*name || strncmp(at, name, n) || at[n] != '.')
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(at + n + 1, kinds[i], strlen(kinds[i])))
			return 1;
	return 0;
}

static int inlined_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct inlined *q = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || q->fn < lo || q->fn >= lo + ph->p_memsz)
			continue;
		const char *path = info->dlpi_name;
		if (!path || !*path)
			path = "/proc/self/exe";
		q->base = info->dlpi_addr;
		each_symbol(path, match_fn, q);
		return 1;
	}
	return 0;
}

/* Is the step function `fn` inlined where its entry hook was called from
 * `pc` (the hook's return address)?  gcc and clang add the hooks before
 * inlining, so an inlined copy still calls them with fn's address, from
 * the caller's code: then the innermost open frame is the caller's, not
 * the step function's.  Said once, on the program's stderr, with how to
 * keep the function out of line.  Unknown (no symbol) counts as not
 * inlined, as before; a pc in a gcc clone of fn (fn.constprop.1, where
 * the hooks still pass fn) is fn's own code. */
int ss_elfsym_step_inlined(const char *name, void *fn, uintptr_t pc)
{
	struct inlined q = { (uintptr_t)fn, pc, 0, 0, 0, "", "" };
	dl_iterate_phdr(inlined_cb, &q);
	if (!q.seen || q.inside || is_clone_of(q.at, q.name))
		return 0;
	ss_warn("step.function '%s' is inlined into its caller: steps are "
		"counted, but it has no frame of its own; to keep it, mark it "
		"__attribute__((noinline)) or build with "
		"-fno-inline-functions-called-once", name);
	return 1;
}
