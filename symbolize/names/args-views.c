/*
 * args-views.c - a parameter's location at an address's first view
 * (record.args, args-dw.c).  gcc (-gvariable-location-views, on by
 * default) gives a location list's entries view numbers: at one address
 * several source statements can begin (rows of the line table, views 0,
 * 1, ...), and a location that takes effect at view 1 is not yet the
 * variable's at view 0.  `long shift(long n, long k) { n += k; ...}` at
 * gcc -O2 computes n + k into rbx before the enter hook and says rbx is n
 * from the hook's return address view 1 on; at view 0, which is where the
 * hook returns to, n is still its entry value.  libdw's lookups by
 * address ignore views and answered rbx: n + k instead of n.
 *
 * Design: DW_AT_GNU_locviews points at a list of (begin view, end view)
 * ULEB128 pairs in the same section as the location list, one pair per
 * bounded entry of the list, in order; an entry [begin, end) with views
 * (vb, ve) holds at (addr, 0) when begin < addr, or begin == addr and vb
 * is 0, and addr < end, or addr == end and ve > 0.  Without the attribute
 * (clang, older gcc) the answer is libdw's by address.
 *
 * Must never: read past the section, or answer a location the views say
 * does not hold there (when they cannot be read, the answer is none).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <string.h>

#include "args-int.h"

#define SS_DW_AT_GNU_locviews 0x2137

/* The data of the section named `name` in dbg's ELF file, or NULL. */
static const uint8_t *section_data(Dwarf *dbg, const char *name, size_t *len)
{
	Elf *elf = dwarf_getelf(dbg);
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return NULL;
		*len = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

static int uleb(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

int ss_args_loc_at(Dwarf_Die *die, Dwarf_Attribute *loc, Dwarf_Addr addr, Dwarf_Op **ops,
		   size_t *n)
{
	Dwarf_Attribute va;
	Dwarf_Word voff;
	Dwarf_Die cu;
	Dwarf_Half version = 0;
	uint8_t asz, osz;
	size_t len;

	if (!dwarf_attr(die, SS_DW_AT_GNU_locviews, &va))
		return dwarf_getlocation_addr(loc, addr, ops, n, 1) == 1 && *n ? 1 : 0;
	if (dwarf_formudata(&va, &voff) || !dwarf_cu_die(loc->cu, &cu, &version, NULL, &asz, &osz,
							 NULL, NULL))
		return 0;
	const uint8_t *sec = section_data(dwarf_cu_getdwarf(loc->cu),
					  version >= 5 ? ".debug_loclists" : ".debug_loc", &len);
	if (!sec || voff >= len)
		return 0;
	const uint8_t *vp = sec + voff, *vend = sec + len;
	Dwarf_Addr base, start, end;
	Dwarf_Op *e;
	size_t ne;
	ptrdiff_t off = 0;
	while ((off = dwarf_getlocations(loc, off, &base, &start, &end, &e, &ne)) > 0) {
		uint64_t vb, ve;
		if (uleb(&vp, vend, &vb) || uleb(&vp, vend, &ve))
			return 0;
		if ((start < addr || (start == addr && vb == 0)) &&
		    (addr < end || (addr == end && ve > 0)) && ne) {
			*ops = e;
			*n = ne;
			return 1;
		}
	}
	return 0;
}
