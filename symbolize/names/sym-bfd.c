/*
 * sym-bfd.c - symbol backend on GNU libbfd (`--backend bfd`).
 *
 * Design: at open, the module's function symbols (static table, else the
 * dynamic one) are copied into an array sorted by address; a lookup is a
 * binary search for the last symbol at or below the vaddr.  Among symbols
 * at one address a global one wins over a weak one over a local one, the
 * same choice libdw makes, so both backends print the same names.
 * file:line is the function's declaration (bfd_find_line), else the line
 * of its entry address (bfd_find_nearest_line).  With a separate debug
 * file (found by sym.c) lines come from it, and so do symbols when the
 * file itself keeps only .dynsym.  An address past the ELF size of the
 * symbol below it is not that symbol's (libdw decides the same way).
 *
 * Must never: hand out a symbol of a non-code section, or keep a bfd
 * error state between lookups.
 */
#include <bfd.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"

struct ss_symbfd_fn {
	uint64_t vaddr;
	uint64_t size;        /* ELF st_size, 0 if unknown */
	int rank;             /* 0 global, 1 weak, 2 local */
	asymbol *sym;
};

struct ss_symbfd {
	bfd *abfd;
	bfd *dbfd;            /* separate debug file, or NULL */
	bfd *sbfd;            /* where syms come from: abfd or dbfd */
	asymbol **syms;
	struct ss_symbfd_fn *fns;
	size_t nfns;
};

/* The head of libbfd's elf_symbol_type (elf-bfd.h is not installed by
 * binutils-dev): the asymbol, then the ELF symbol as read.  Used only
 * for ELF bfds, and only when st_value agrees with the symbol's value. */
struct ss_symbfd_elfsym {
	asymbol symbol;
	bfd_vma st_value;
	bfd_vma st_size;
};

static uint64_t ss_symbfd_size(bfd *abfd, asymbol *s, uint64_t vaddr)
{
	const struct ss_symbfd_elfsym *e = (const void *)s;

	if (bfd_get_flavour(abfd) != bfd_target_elf_flavour ||
	    e->st_value != vaddr || e->st_size > (UINT64_C(1) << 32))
		return 0;
	return e->st_size;
}

static int ss_symbfd_cmp(const void *a, const void *b)
{
	const struct ss_symbfd_fn *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

static long ss_symbfd_read_syms(struct ss_symbfd *b, bfd *abfd, int dynamic)
{
	long size, n;

	if (!abfd)
		return 0;
	b->sbfd = abfd;
	size = dynamic ? bfd_get_dynamic_symtab_upper_bound(abfd) :
			 bfd_get_symtab_upper_bound(abfd);
	if (size <= 0)
		return 0;
	b->syms = malloc((size_t)size);
	if (!b->syms)
		return 0;
	n = dynamic ? bfd_canonicalize_dynamic_symtab(abfd, b->syms) :
		      bfd_canonicalize_symtab(abfd, b->syms);
	if (n <= 0) {
		free(b->syms);
		b->syms = NULL;
		return 0;
	}
	return n;
}

static void *ss_symbfd_open(const char *path, const char *debug)
{
	static int inited;
	struct ss_symbfd *b;
	long n, i;

	if (!inited) {
		bfd_init();
		inited = 1;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->abfd = bfd_openr(path, NULL);
	if (!b->abfd || !bfd_check_format(b->abfd, bfd_object))
		goto fail;
	if (debug) {
		b->dbfd = bfd_openr(debug, NULL);
		if (b->dbfd && !bfd_check_format(b->dbfd, bfd_object)) {
			bfd_close(b->dbfd);
			b->dbfd = NULL;
		}
	}
	n = ss_symbfd_read_syms(b, b->abfd, 0);
	if (!n)
		n = ss_symbfd_read_syms(b, b->dbfd, 0);
	if (!n)
		n = ss_symbfd_read_syms(b, b->abfd, 1);
	if (!n)
		goto fail;
	b->fns = calloc((size_t)n, sizeof(*b->fns));
	if (!b->fns)
		goto fail;
	for (i = 0; i < n; i++) {
		asymbol *s = b->syms[i];
		struct ss_symbfd_fn *f;

		if (!s || !(s->flags & BSF_FUNCTION) || !s->section ||
		    !(s->section->flags & SEC_CODE) || !s->name || !*s->name)
			continue;
		f = &b->fns[b->nfns++];
		f->vaddr = bfd_asymbol_value(s);
		f->size = ss_symbfd_size(b->sbfd, s, f->vaddr);
		f->rank = (s->flags & BSF_GLOBAL) ? 0 : (s->flags & BSF_WEAK) ? 1 : 2;
		f->sym = s;
	}
	qsort(b->fns, b->nfns, sizeof(*b->fns), ss_symbfd_cmp);
	return b;
fail:
	if (b->dbfd)
		bfd_close(b->dbfd);
	if (b->abfd)
		bfd_close(b->abfd);
	free(b->syms);
	free(b);
	return NULL;
}

static int ss_symbfd_lookup(void *h, uint64_t vaddr, struct ss_sym_hit *hit)
{
	struct ss_symbfd *b = h;
	const char *file = NULL, *func = NULL;
	unsigned int line = 0;
	size_t lo = 0, hi = b->nfns;
	struct ss_symbfd_fn *f;
	asection *sec;

	/* first symbol above vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->fns[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	f = &b->fns[lo - 1];
	while (f > b->fns && f[-1].vaddr == f->vaddr)
		f--;  /* best rank of that address comes first */
	sec = f->sym->section;
	if (vaddr >= bfd_section_vma(sec) + bfd_section_size(sec))
		return -1;  /* past the end of the section: not this function */
	if (f->size) {
		/* the largest sized symbol at that address decides */
		const struct ss_symbfd_fn *g;
		uint64_t size = 0;
		for (g = f; g < b->fns + b->nfns && g->vaddr == f->vaddr; g++)
			if (g->size > size)
				size = g->size;
		if (vaddr - f->vaddr >= size)
			return -1;
	}
	/* dynamic symbols carry their version: qsort@@GLIBC_2.2.5 */
	hit->name = strndup(f->sym->name, strcspn(f->sym->name, "@"));
	if (!hit->name)
		return -1;
	hit->start = f->vaddr;
	{
		/* a clone (f.isra.0) is declared under its base name */
		const char *clone;
		asymbol base = *f->sym;
		size_t bl = ss_sym_clone_split(hit->name, &clone);
		char *bname = clone ? strndup(hit->name, bl) : NULL;
		if (bname)
			base.name = bname;
		/* the function's declaration line, else the line of its entry */
		bfd *lbfd = b->dbfd ? b->dbfd : b->sbfd;
		asection *lsec = lbfd == b->sbfd ? sec :
			bfd_get_section_by_name(lbfd, bfd_section_name(sec));
		if ((lbfd == b->sbfd &&
		     bfd_find_line(lbfd, b->syms, &base, &file, &line) && file &&
		     line) ||
		    (lsec && bfd_find_nearest_line(lbfd, lsec, lbfd == b->sbfd ? b->syms : NULL,
						   f->vaddr - bfd_section_vma(lsec),
						   &file, &func, &line) &&
		     file && line)) {
			hit->file = strdup(file);
			hit->line = line;
		}
		free(bname);
	}
	bfd_set_error(bfd_error_no_error);
	return 0;
}

static void ss_symbfd_close(void *h)
{
	struct ss_symbfd *b = h;

	if (b->dbfd)
		bfd_close(b->dbfd);
	bfd_close(b->abfd);
	free(b->syms);
	free(b->fns);
	free(b);
}

const struct ss_sym_backend ss_sym_backend_bfd = {
	.name = "bfd",
	.open = ss_symbfd_open,
	.lookup = ss_symbfd_lookup,
	.close = ss_symbfd_close,
};

/* LeakSanitizer hook (used only in ASAN=1 builds): libbfd 2.40's DWARF
 * line reader keeps one buffer that bfd_close does not free; it is not
 * ours and does not grow, so it is not reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:_bfd_elf_find_line\nleak:libbfd\n";
}
