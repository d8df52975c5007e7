/*
 * sym-bfd.c - symbol backend on GNU libbfd (`--backend bfd`).
 *
 * Design: at open, the module's function symbols (static table, else the
 * dynamic one) are copied into an array sorted by address; a lookup is a
 * binary search for the last symbol at or below the vaddr.  Among symbols
 * at one address a global one wins over a weak one over a local one, the
 * same choice libdw makes, so both backends print the same names.
 * file:line is the function's declaration (bfd_find_line), else the line
 * of its entry address (bfd_find_nearest_line).
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
	int rank;             /* 0 global, 1 weak, 2 local */
	asymbol *sym;
};

struct ss_symbfd {
	bfd *abfd;
	asymbol **syms;
	struct ss_symbfd_fn *fns;
	size_t nfns;
};

static int ss_symbfd_cmp(const void *a, const void *b)
{
	const struct ss_symbfd_fn *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

static long ss_symbfd_read_syms(struct ss_symbfd *b, int dynamic)
{
	long size, n;

	size = dynamic ? bfd_get_dynamic_symtab_upper_bound(b->abfd) :
			 bfd_get_symtab_upper_bound(b->abfd);
	if (size <= 0)
		return 0;
	b->syms = malloc((size_t)size);
	if (!b->syms)
		return 0;
	n = dynamic ? bfd_canonicalize_dynamic_symtab(b->abfd, b->syms) :
		      bfd_canonicalize_symtab(b->abfd, b->syms);
	if (n <= 0) {
		free(b->syms);
		b->syms = NULL;
		return 0;
	}
	return n;
}

static void *ss_symbfd_open(const char *path)
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
	n = ss_symbfd_read_syms(b, 0);
	if (!n)
		n = ss_symbfd_read_syms(b, 1);
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
		f->rank = (s->flags & BSF_GLOBAL) ? 0 : (s->flags & BSF_WEAK) ? 1 : 2;
		f->sym = s;
	}
	qsort(b->fns, b->nfns, sizeof(*b->fns), ss_symbfd_cmp);
	return b;
fail:
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
	/* dynamic symbols carry their version: qsort@@GLIBC_2.2.5 */
	hit->name = strndup(f->sym->name, strcspn(f->sym->name, "@"));
	if (!hit->name)
		return -1;
	hit->start = f->vaddr;
	/* the function's declaration line, else the line of its entry */
	if ((bfd_find_line(b->abfd, b->syms, f->sym, &file, &line) && file &&
	     line) ||
	    (bfd_find_nearest_line(b->abfd, sec, b->syms,
				   f->vaddr - bfd_section_vma(sec), &file,
				   &func, &line) && file && line)) {
		hit->file = strdup(file);
		hit->line = line;
	}
	bfd_set_error(bfd_error_no_error);
	return 0;
}

static void ss_symbfd_close(void *h)
{
	struct ss_symbfd *b = h;

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
