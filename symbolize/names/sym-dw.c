/*
 * sym-dw.c - symbol backend on elfutils' libdwfl (the default).
 *
 * Design: each module gets its own Dwfl with the file reported at base 0,
 * so Dwfl addresses are the file's own vaddrs (what sym.c hands us) for
 * PIE, non-PIE and shared objects alike.  A separate debug file found by
 * sym.c (build-id tree, debuglink, --debug-dir) is handed to libdwfl
 * through the module's userdata; without one, libdwfl's standard search
 * runs.  The function's
 * file:line is the declaration of its subprogram DIE, else the line-table
 * row at its entry address.  The subprograms are found through an index
 * of their entry addresses, built once per module on its first lookup (a
 * walk of every CU's DIE tree per lookup, as dwarf_getscopes does, made a
 * source of 10,000 functions take 36 s); an address the index does not
 * have (a nested function, a cold part) takes the walk.  Likewise the
 * symbol table (dwfl_module_addrinfo reads every symbol per call): an
 * address that is the start of exactly one sized symbol is named from a
 * sorted copy; any other (inside a function, symbols sharing an address)
 * goes to libdwfl, whose choice among them stays the rule.
 *
 * Must never: report a module at a guessed load address, or let a libdw
 * failure become anything but "not found".
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym.h"

/* One subprogram with code: its entry (module vaddr), DIE and CU. */
struct ss_symdw_fn {
	Dwarf_Addr pc;
	Dwarf_Die die;
	Dwarf_Die *cu;
	Dwarf_Addr bias;
};

/* One symbol libdwfl would consider: its address and name. */
struct ss_symdw_sym {
	Dwarf_Addr addr;
	const char *name;
	int sized;
};

struct ss_symdw {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char *debug;        /* separate debug file from sym.c, or NULL */
	struct ss_symdw_fn *fns;  /* by pc; built on the first lookup */
	size_t nfns, capfns;
	int indexed;
	struct ss_symdw_sym *syms;  /* by address; built on the first lookup */
	size_t nsyms;
	int syms_built;
};

static char *ss_symdw_debuginfo_path;

/* The debug file sym.c found, else libdwfl's own search. */
static int ss_symdw_find_debuginfo(Dwfl_Module *mod, void **userdata,
				   const char *modname, Dwarf_Addr base,
				   const char *file_name, const char *debuglink_file,
				   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *debug = *userdata;

	if (debug) {
		int fd = open(debug, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*debuginfo_file_name = strdup(debug);
			return fd;
		}
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks ss_symdw_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = ss_symdw_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &ss_symdw_debuginfo_path,
};

static void *ss_symdw_open(const char *path, const char *debug)
{
	struct ss_symdw *d = calloc(1, sizeof(*d));
	void **ud = NULL;

	if (!d)
		return NULL;
	if (debug && !(d->debug = strdup(debug)))
		goto fail;
	d->dwfl = dwfl_begin(&ss_symdw_callbacks);
	if (!d->dwfl)
		goto fail;
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_elf(d->dwfl, path, path, -1, 0, false);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod)
		goto fail;
	dwfl_module_info(d->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = d->debug;
	return d;
fail:
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->debug);
	free(d);
	return NULL;
}

/* The compile unit holding vaddr when the module has no .debug_aranges
 * (clang emits none by default, and libdw's lookup relies on them): walk the
 * CUs and ask each one for its own ranges. */
static Dwarf_Die *ss_symdw_cu_scan(struct ss_symdw *d, Dwarf_Addr vaddr,
				   Dwarf_Addr *bias)
{
	Dwarf_Die *cu = NULL;

	while ((cu = dwfl_module_nextcu(d->mod, cu, bias)))
		if (dwarf_haspc(cu, vaddr - *bias) > 0)
			return cu;
	return NULL;
}

/* The subprogram DIE whose code starts at pc, searched through
 * namespaces and classes (dwarf_getscopes of libdw 0.188 finds nothing
 * under a DWARF 5 namespace from clang).  1 and *out, or 0. */
static int ss_symdw_find_fn(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out,
			    int depth)
{
	Dwarf_Die child;
	Dwarf_Addr low;

	if (depth > 16 || dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram && !dwarf_lowpc(&child, &low) &&
		    low == pc) {
			*out = child;
			return 1;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
		     tag == DW_TAG_subprogram) &&
		    ss_symdw_find_fn(&child, pc, out, depth + 1))
			return 1;
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

/* The subprograms under parent (not inside another subprogram: a nested
 * function is left to the walk, which names its outer one). */
static void ss_symdw_index_dies(struct ss_symdw *d, Dwarf_Die *parent, Dwarf_Die *cu,
				Dwarf_Addr bias, int depth)
{
	Dwarf_Die child;
	Dwarf_Addr low;

	if (depth > 16 || dwarf_child(parent, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram && !dwarf_lowpc(&child, &low)) {
			if (d->nfns == d->capfns) {
				size_t cap = d->capfns ? d->capfns * 2 : 256;
				struct ss_symdw_fn *f = realloc(d->fns, cap * sizeof(*f));
				if (!f)
					return;
				d->fns = f;
				d->capfns = cap;
			}
			d->fns[d->nfns++] = (struct ss_symdw_fn){ low + bias, child, cu, bias };
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
			ss_symdw_index_dies(d, &child, cu, bias, depth + 1);
		}
	} while (!dwarf_siblingof(&child, &child));
}

static int ss_symdw_fn_cmp(const void *a, const void *b)
{
	const struct ss_symdw_fn *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x < y ? -1 : x > y;  /* the first found first */
}

static void ss_symdw_index(struct ss_symdw *d)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias = 0;

	d->indexed = 1;
	while ((cu = dwfl_module_nextcu(d->mod, cu, &bias)))
		ss_symdw_index_dies(d, cu, cu, bias, 0);
	if (d->nfns > 1)
		qsort(d->fns, d->nfns, sizeof(*d->fns), ss_symdw_fn_cmp);
}

/* The indexed subprogram entered at pc (the first found), or NULL. */
static struct ss_symdw_fn *ss_symdw_index_find(struct ss_symdw *d, Dwarf_Addr pc)
{
	size_t lo = 0, hi = d->nfns;

	if (!d->indexed)
		ss_symdw_index(d);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->fns[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nfns && d->fns[lo].pc == pc ? &d->fns[lo] : NULL;
}

/* decl_file:decl_line of the subprogram at the function's entry; 1 if found */
static int ss_symdw_decl(struct ss_symdw *d, struct ss_sym_hit *hit)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu, *scopes = NULL, *fn = NULL, found;
	const char *file;
	struct ss_symdw_fn *ix = ss_symdw_index_find(d, hit->start);
	int n, i, line = 0;

	if (ix) {
		found = ix->die;
		fn = &found;
		cu = ix->cu;
		bias = ix->bias;
	} else {
		cu = dwfl_module_addrdie(d->mod, hit->start, &bias);
		if (!cu)
			cu = ss_symdw_cu_scan(d, hit->start, &bias);
		if (!cu)
			return 0;
		n = dwarf_getscopes(cu, hit->start - bias, &scopes);
		for (i = 0; i < n; i++)
			if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
				fn = &scopes[i];  /* the outermost one: not an inlined callee */
		if (!fn && ss_symdw_find_fn(cu, hit->start - bias, &found, 0))
			fn = &found;
	}
	if (fn && !dwarf_decl_line(fn, &line) && line > 0) {
		file = dwarf_decl_file(fn);
		if (!file) {
			/* libdw 0.188 cannot name the decl_file of some DWARF 5
			 * units (clang 14): the file of the entry address is the
			 * file the function is defined in */
			Dwarf_Line *l = dwarf_getsrc_die(cu, hit->start - bias);
			file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		}
		if (file) {
			hit->file = strdup(file);
			hit->line = (unsigned)line;
		}
	}
	free(scopes);
	return hit->file != NULL;
}

static int ss_symdw_sym_cmp(const void *a, const void *b)
{
	const struct ss_symdw_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ss_symdw_syms(struct ss_symdw *d)
{
	int n = dwfl_module_getsymtab(d->mod);

	d->syms_built = 1;
	if (n <= 1 || !(d->syms = calloc((size_t)n, sizeof(*d->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type;

		if (!name)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		d->syms[d->nsyms++] = (struct ss_symdw_sym){ addr, name, sym.st_size != 0 };
	}
	if (d->nsyms > 1)
		qsort(d->syms, d->nsyms, sizeof(*d->syms), ss_symdw_sym_cmp);
}

/* The name of the one sized symbol that starts at vaddr, or NULL (none,
 * or several there: libdwfl chooses). */
static const char *ss_symdw_sym_at(struct ss_symdw *d, Dwarf_Addr vaddr)
{
	size_t lo = 0, hi;

	if (!d->syms_built)
		ss_symdw_syms(d);
	hi = d->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->syms[mid].addr < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= d->nsyms || d->syms[lo].addr != vaddr || !d->syms[lo].sized ||
	    !*d->syms[lo].name || (lo + 1 < d->nsyms && d->syms[lo + 1].addr == vaddr))
		return NULL;
	return d->syms[lo].name;
}

static int ss_symdw_lookup(void *h, uint64_t vaddr, struct ss_sym_hit *hit)
{
	struct ss_symdw *d = h;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name, *src;
	Dwfl_Line *line;
	int lineno = 0;

	name = ss_symdw_sym_at(d, vaddr);
	if (!name)
		name = dwfl_module_addrinfo(d->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	if (!name || !*name)
		return -1;
	hit->name = strdup(name);
	if (!hit->name)
		return -1;
	hit->start = vaddr - off;
	if (ss_symdw_decl(d, hit))
		return 0;
	line = dwfl_module_getsrc(d->mod, hit->start);
	if (!line) {
		Dwarf_Addr bias = 0;
		Dwarf_Die *cu = ss_symdw_cu_scan(d, hit->start, &bias);
		Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, hit->start - bias) : NULL;
		int ln = 0;
		if (l && (src = dwarf_linesrc(l, NULL, NULL)) && !dwarf_lineno(l, &ln) &&
		    ln > 0) {
			hit->file = strdup(src);
			hit->line = (unsigned)ln;
		}
		return 0;
	}
	if (line) {
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (src && lineno > 0) {
			hit->file = strdup(src);
			hit->line = (unsigned)lineno;
		}
	}
	return 0;
}

static void ss_symdw_close(void *h)
{
	struct ss_symdw *d = h;

	dwfl_end(d->dwfl);
	free(d->fns);
	free(d->syms);
	free(d->debug);
	free(d);
}

const struct ss_sym_backend ss_sym_backend_dw = {
	.name = "dw",
	.open = ss_symdw_open,
	.lookup = ss_symdw_lookup,
	.close = ss_symdw_close,
};
