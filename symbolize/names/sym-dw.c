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
 * row at its entry address.
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

struct ss_symdw {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char *debug;        /* separate debug file from sym.c, or NULL */
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

/* decl_file:decl_line of the subprogram at the function's entry; 1 if found */
static int ss_symdw_decl(struct ss_symdw *d, struct ss_sym_hit *hit)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu, *scopes = NULL, *fn = NULL, found;
	const char *file;
	int n, i, line = 0;

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

static int ss_symdw_lookup(void *h, uint64_t vaddr, struct ss_sym_hit *hit)
{
	struct ss_symdw *d = h;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name, *src;
	Dwfl_Line *line;
	int lineno = 0;

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
	free(d->debug);
	free(d);
}

const struct ss_sym_backend ss_sym_backend_dw = {
	.name = "dw",
	.open = ss_symdw_open,
	.lookup = ss_symdw_lookup,
	.close = ss_symdw_close,
};
