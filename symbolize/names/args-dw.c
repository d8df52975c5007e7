/*
 * args-dw.c - a recorded call's parameters from DWARF (record.args,
 * docs/shapes.md): for the function and the return address of its enter
 * hook call, find each DW_TAG_formal_parameter, evaluate its location
 * there against the registers and stack the runtime captured, and decode
 * the value by its type.
 *
 * Design: each module's DWARF (and its CFI, .eh_frame or .debug_frame)
 * is opened once and kept; each (module, function, pc) gets a compiled
 * recipe once: per parameter its name, type class and the location
 * expression valid at pc - 1 (the call instruction, as gdb looks it up
 * in a caller's frame), plus the CFA rule there; args-eval.c evaluates
 * a recipe against each capture.  A
 * stack-passed parameter whose location list ends before the hook
 * (gcc's variable tracking drops it once the value is in a register) is
 * read from its incoming argument slot, the location its list gives at
 * the function's entry: no statement of the function has run at the enter
 * hook, and nothing but the prologue, which never stores there, ran
 * before it.
 *
 * Must never: give a value it could not read exactly (a register the hook
 * clobbers, memory outside the copies, an entry value, a partial piece):
 * that is SS_ARGV_OUT; nor show the parameters of an OpenMP outlined body.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "args-int.h"

struct dwmod {
	char *path;
	int fd, dfd;
	Elf *elf, *delf;
	Dwarf *dw;
	Dwarf_CFI *cfi_eh, *cfi_dbg;
	struct recipe *recipes;
	struct dwmod *next;
};

static struct dwmod *ss_dwmods;

static struct dwmod *dwmod_get(const char *path, const char *debug)
{
	struct dwmod *m;

	for (m = ss_dwmods; m; m = m->next)
		if (!strcmp(m->path, path))
			return m;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return NULL;
	}
	m->fd = m->dfd = -1;
	elf_version(EV_CURRENT);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd >= 0)
		m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (debug && (m->dfd = open(debug, O_RDONLY | O_CLOEXEC)) >= 0)
		m->delf = elf_begin(m->dfd, ELF_C_READ_MMAP, NULL);
	if (m->delf)
		m->dw = dwarf_begin_elf(m->delf, DWARF_C_READ, NULL);
	if (!m->dw && m->elf)
		m->dw = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
	if (m->elf)
		m->cfi_eh = dwarf_getcfi_elf(m->elf);
	if (m->dw)
		m->cfi_dbg = dwarf_getcfi(m->dw);
	m->next = ss_dwmods;
	ss_dwmods = m;
	return m;
}

void ss_args_dw_release(void)
{
	while (ss_dwmods) {
		struct dwmod *m = ss_dwmods;
		ss_dwmods = m->next;
		while (m->recipes) {
			struct recipe *r = m->recipes;
			m->recipes = r->next;
			for (size_t i = 0; i < r->n; i++)
				free(r->p[i].name);
			free(r);
		}
		if (m->cfi_eh)
			dwarf_cfi_end(m->cfi_eh);
		if (m->dw)
			dwarf_end(m->dw);
		if (m->delf)
			elf_end(m->delf);
		if (m->elf)
			elf_end(m->elf);
		if (m->dfd >= 0)
			close(m->dfd);
		if (m->fd >= 0)
			close(m->fd);
		free(m->path);
		free(m);
	}
}

/* ------------------------------------------------------------ DIEs */

/* Was the function's unit compiled by clang? */
static int is_clang(Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Attribute a;
	const char *prod;

	if (!dwarf_diecu(die, &cu, NULL, NULL) || !dwarf_attr(&cu, DW_AT_producer, &a) ||
	    !(prod = dwarf_formstring(&a)))
		return 0;
	return strstr(prod, "clang") != NULL;
}

/* A struct or union result: returned through a hidden pointer in rdi
 * (or in registers): the argument registers are not worked out then. */
static int returns_memory(Dwarf_Die *sp)
{
	Dwarf_Attribute a;
	Dwarf_Die t, p;
	int tag;

	if (!dwarf_attr_integrate(sp, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
	    dwarf_peel_type(&t, &p) != 0)
		return 0;
	tag = dwarf_tag(&p);
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_class_type || tag == DW_TAG_array_type;
}

/* The bytes [fn, pc) of the module's code, or NULL. */
static const uint8_t *code_at(struct dwmod *m, uint64_t fn, uint64_t pc, size_t *len)
{
	Elf_Scn *scn = NULL;

	if (!m->elf || pc <= fn || pc - fn > 4096)
		return NULL;
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || fn < sh.sh_addr ||
		    pc > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || fn - sh.sh_addr + (pc - fn) > d->d_size)
			return NULL;
		*len = (size_t)(pc - fn);
		return (const uint8_t *)d->d_buf + (fn - sh.sh_addr);
	}
	return NULL;
}

/* The compile unit holding addr. */
static int cu_of(Dwarf *dw, uint64_t fn, Dwarf_Die *out)
{
	Dwarf_Die cu;

	if (!dwarf_addrdie(dw, fn, &cu)) {
		/* no .debug_aranges (clang): look at each CU's ranges */
		Dwarf_Off off = 0, next;
		size_t hsize;
		int hit = 0;
		while (!hit && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			hit = dwarf_offdie(dw, off + hsize, &cu) && dwarf_haspc(&cu, fn) > 0;
			off = next;
		}
		if (!hit)
			return 0;
	}
	*out = cu;
	return 1;
}

/* The offset of the DIE a concrete one stands for (its abstract
 * origin), or its own. */
static Dwarf_Off origin_off(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Die o;

	if (dwarf_attr(d, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &o))
		return dwarf_dieoffset(&o);
	return dwarf_dieoffset(d);
}

/* Does the subprogram's code begin at pc?  Its entry pc, or, for a
 * function split hot/cold (DW_AT_ranges and no low_pc, where
 * dwarf_entrypc fails: gcc's f and f.cold), the start of one of its
 * ranges: the hook's fn is the hot part's first byte. */
static int begins_at(Dwarf_Die *d, uint64_t pc)
{
	Dwarf_Addr lo, base, ps, pe;
	ptrdiff_t off = 0;

	if (dwarf_entrypc(d, &lo) == 0)
		return lo == pc;
	while ((off = dwarf_ranges(d, off, &base, &ps, &pe)) > 0)
		if (ps == pc)
			return 1;
	return 0;
}

/* The first byte of the subprogram's code: its entry pc, or the start of
 * its first range (gcc lists the hot part, which holds the entry, first). */
static int entry_of(Dwarf_Die *d, uint64_t *out)
{
	Dwarf_Addr lo, base, pe;

	if (dwarf_entrypc(d, &lo) == 0 || dwarf_ranges(d, 0, &base, &lo, &pe) > 0) {
		*out = lo;
		return 1;
	}
	return 0;
}

/* The concrete subprogram under parent (through namespaces, classes and
 * modules: dwarf_getscopes does not enter a namespace) whose entry is fn
 * (entry 1), or that holds pc (entry 0). */
static int find_sub(Dwarf_Die *parent, uint64_t pc, int entry, Dwarf_Die *out)
{
	Dwarf_Die d;

	if (dwarf_child(parent, &d) != 0)
		return 0;
	do {
		switch (dwarf_tag(&d)) {
		case DW_TAG_subprogram:
			if (entry ? begins_at(&d, pc) : dwarf_haspc(&d, pc) > 0) {
				*out = d;
				return 1;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			if (find_sub(&d, pc, entry, out))
				return 1;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return 0;
}

/* The innermost inlined copy of the function whose abstract DIE is at
 * `want` that holds pc, under die (blocks and inlined copies). */
static int find_inlined(Dwarf_Die *die, uint64_t pc, Dwarf_Off want, Dwarf_Die *out)
{
	Dwarf_Die d;
	int found = 0;

	if (dwarf_child(die, &d) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&d);
		if ((tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) ||
		    dwarf_haspc(&d, pc) <= 0)
			continue;
		if (tag == DW_TAG_inlined_subroutine && origin_off(&d) == want) {
			*out = d;
			found = 1;
		}
		if (find_inlined(&d, pc, want, out))
			return 1;  /* deeper is inner */
		if (found)
			return 1;
	} while (dwarf_siblingof(&d, &d) == 0);
	return found;
}

/* The subprogram DIE whose entry is fn (file vaddr). */
static int find_subprogram(Dwarf *dw, uint64_t fn, Dwarf_Die *out)
{
	Dwarf_Die cu;

	return cu_of(dw, fn, &cu) && find_sub(&cu, fn, 1, out);
}

/* The DIE of fn's instance that runs at pc - 1: its own body (*inl 0), a
 * clone of it (*inl 0, *clone 1: gcc's f.constprop.N, f.isra.N, f.part.N
 * call the hook with the original's address, and their parameters are
 * not the original's registers), or a copy inlined into another function
 * or into a clone of it (*inl 1: -finstrument-functions calls the hook
 * with fn there too); *outer: the subprogram around pc - 1, whose frame
 * base the locations use; *entry: the instance's first byte (fn, or the
 * clone's). */
static int find_instance(Dwarf *dw, uint64_t fn, uint64_t pc, Dwarf_Die *inst,
			 Dwarf_Die *outer, int *inl, int *clone, uint64_t *entry)
{
	Dwarf_Die sp, cu;

	*clone = 0;
	*entry = fn;
	if (!find_subprogram(dw, fn, &sp))
		return 0;
	if (dwarf_haspc(&sp, pc - 1) > 0) {
		*inst = *outer = sp;
		*inl = 0;
		return 1;
	}
	if (!cu_of(dw, pc - 1, &cu) || !find_sub(&cu, pc - 1, 0, outer))
		return 0;
	/* inlined: the innermost copy around pc - 1, in the function there
	 * or in a clone of it */
	*inl = 1;
	if (find_inlined(outer, pc - 1, origin_off(&sp), inst))
		return 1;
	/* a clone: another concrete body of the same abstract function */
	if (origin_off(outer) != origin_off(&sp) || !entry_of(outer, entry))
		return 0;
	*inst = *outer;
	*inl = 0;
	*clone = 1;
	return 1;
}

/* The concrete DIE of abstract parameter p among inst's children, or 0. */
static int concrete_param(Dwarf_Die *inst, Dwarf_Die *p, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (dwarf_child(inst, &c) != 0)
		return 0;
	do {
		if (dwarf_tag(&c) == DW_TAG_formal_parameter &&
		    origin_off(&c) == dwarf_dieoffset(p)) {
			*out = c;
			return 1;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* An inlined copy's location at pc begins inside the piece of the copy's
 * code that holds pc (or before the copy: a value kept from its caller's
 * registers would then hold for another copy too, so no).  clang gives the
 * copies of an unrolled loop one DIE, and a location can run on from one
 * copy into the next with the first one's value (s-args' residual at -O3:
 * a = 0.5 still at the second copy's hook, whose a is 1.5).  gcc gives each
 * copy a DIE of its own (own_die), its code scattered in pieces among the
 * caller's: there a location may begin in any piece of the copy (the
 * constant C = 64 set in the copy's first piece, 0x1617, is the value at
 * the hook in its third, 0x1628: s-args-clone's matmul at gcc -O2). */
static int local_range(Dwarf_Attribute *a, Dwarf_Die *inst, uint64_t pc, int own_die)
{
	Dwarf_Addr base, start, end, piece = 0, ps, pe;
	Dwarf_Op *ops;
	size_t n;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(inst, off, &base, &ps, &pe)) > 0)
		if (pc >= ps && pc < pe)
			piece = ps;
	if (!piece)
		return 0;
	off = 0;
	while ((off = dwarf_getlocations(a, off, &base, &start, &end, &ops, &n)) > 0) {
		if (pc < start || pc >= end)
			continue;
		if (start >= piece || !own_die)
			return start >= piece;
		off = 0;  /* in an earlier piece of the same copy */
		while ((off = dwarf_ranges(inst, off, &base, &ps, &pe)) > 0)
			if (start >= ps && start < pe)
				return 1;
		return 0;
	}
	return 0;
}

/* A single location (not a list) that names memory: a home on the
 * stack, which unoptimized clang code fills only after the hook. */
static int single_memory(Dwarf_Attribute *a)
{
	Dwarf_Op *ops;
	size_t n;

	if (dwarf_getlocation(a, &ops, &n) != 0 || !n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom == DW_OP_stack_value)
			return 0;
	return ops[0].atom == DW_OP_fbreg || (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) ||
	       ops[0].atom == DW_OP_bregx;
}

/* The parameter's type class and size. */
static int param_type(Dwarf_Die *param, unsigned *size)
{
	Dwarf_Attribute a;
	Dwarf_Die t, p;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(param, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return K_SKIP;
	if (dwarf_peel_type(&t, &p) != 0)
		return K_SKIP;
	switch (dwarf_tag(&p)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		*size = 8;
		return K_PTR;
	case DW_TAG_enumeration_type: {
		int k = K_INT;
		Dwarf_Die u;
		if (dwarf_attr_integrate(&p, DW_AT_type, &a) && dwarf_formref_die(&a, &u) &&
		    dwarf_attr_integrate(&u, DW_AT_encoding, &a) && !dwarf_formudata(&a, &w) &&
		    (w == DW_ATE_unsigned || w == DW_ATE_unsigned_char))
			k = K_UINT;
		*size = (unsigned)dwarf_bytesize(&p);
		return *size >= 1 && *size <= 8 ? k : K_SKIP;
	}
	case DW_TAG_base_type:
		break;
	default:
		return K_SKIP;  /* structs, arrays: not scalars */
	}
	*size = (unsigned)dwarf_bytesize(&p);
	if (!dwarf_attr_integrate(&p, DW_AT_encoding, &a) || dwarf_formudata(&a, &w))
		return K_SKIP;
	switch (w) {
	case DW_ATE_signed:
	case DW_ATE_signed_char:
		return *size >= 1 && *size <= 8 ? K_INT : K_SKIP;
	case DW_ATE_unsigned:
	case DW_ATE_unsigned_char:
	case DW_ATE_UTF:
		return *size >= 1 && *size <= 8 ? K_UINT : K_SKIP;
	case DW_ATE_boolean:
		return *size >= 1 && *size <= 8 ? K_BOOL : K_SKIP;
	case DW_ATE_float:
		return *size == 4 || *size == 8 ? K_FLOAT : K_SKIP;
	default:
		return K_SKIP;
	}
}

/* A parameter the compiler made a constant (gcc's f.constprop.N gives
 * the clone's copy DW_AT_const_value): the value as ops, for integers,
 * enums, bools and pointers (a float's bytes are left out). */
static void const_param(Dwarf_Die *conc, struct recipe_param *p)
{
	Dwarf_Attribute a;
	Dwarf_Word u;
	Dwarf_Sword v;

	if (p->kind == K_FLOAT || !dwarf_attr(conc, DW_AT_const_value, &a))
		return;
	switch (dwarf_whatform(&a)) {
	case DW_FORM_sdata:
	case DW_FORM_implicit_const:
		if (dwarf_formsdata(&a, &v) != 0)
			return;
		u = (Dwarf_Word)v;
		break;
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_udata:
		if (dwarf_formudata(&a, &u) != 0)
			return;
		break;
	default:
		return;  /* blocks, strings */
	}
	p->cval[0] = (Dwarf_Op){ .atom = DW_OP_constu, .number = u };
	p->cval[1] = (Dwarf_Op){ .atom = DW_OP_stack_value };
	p->ops = p->after = p->cval;
	p->nops = p->nafter = 2;
}

static struct recipe *recipe_build(struct dwmod *m, uint64_t fn, uint64_t pc)
{
	struct recipe *r = calloc(1, sizeof(*r));
	Dwarf_Die sp, inst, abs, child;
	Dwarf_Attribute a;
	Dwarf_Frame *fr = NULL;
	const char *fname;
	uint64_t entry = fn;
	int inl = 0, clone = 0, names_only = 0;

	if (!r)
		return NULL;
	r->fn = fn;
	r->pc = pc;
	r->next = m->recipes;
	m->recipes = r;
	if (!m->dw)
		return r;
	if (!find_instance(m->dw, fn, pc, &inst, &sp, &inl, &clone, &entry)) {
		/* fn is known, the code around the hook is not one of its
		 * instances: its parameters by name, each <optimized out>,
		 * never an empty args */
		if (!find_subprogram(m->dw, fn, &inst))
			return r;
		sp = inst;
		inl = names_only = 1;
	}
	/* declaration order: the abstract DIE's parameters, when there is one */
	if (!dwarf_attr(&inst, DW_AT_abstract_origin, &a) || !dwarf_formref_die(&a, &abs))
		abs = inst;
	fname = dwarf_diename(&abs);
	if (fname && (strstr(fname, "._omp_fn.") || strstr(fname, "omp_outlined")))
		return r;  /* OpenMP's outlined bodies are not the user's */
	r->ok = 1;
	if (dwarf_attr_integrate(&sp, DW_AT_frame_base, &a)) {
		Dwarf_Op *ops;
		size_t n;
		if (dwarf_getlocation_addr(&a, pc - 1, &ops, &n, 1) == 1) {
			r->fbase = ops;
			r->nfbase = n;
		}
	}
	if ((m->cfi_eh && !dwarf_cfi_addrframe(m->cfi_eh, pc - 1, &fr)) ||
	    (m->cfi_dbg && !dwarf_cfi_addrframe(m->cfi_dbg, pc - 1, &fr))) {
		Dwarf_Op *ops;
		size_t n;
		if (!dwarf_frame_cfa(fr, &ops, &n) && n <= 8) {
			memcpy(r->cfa, ops, n * sizeof(*ops));
			r->ncfa = n;
		}
		free(fr);
	}
	if (dwarf_child(&abs, &child) != 0)
		return r;
	/* a clone's registers are its own (parameters dropped or split):
	 * only its DWARF says where each one is */
	int clang = !inl && !clone && is_clang(&sp), nint = 0, nsse = 0, pro = 0;
	int abi_ok = !inl && !clone && !returns_memory(&abs);
	int same = dwarf_dieoffset(&abs) == dwarf_dieoffset(&inst);
	do {
		struct recipe_param *p;
		const char *name;
		Dwarf_Op *ops;
		Dwarf_Die conc;
		size_t n;
		unsigned size = 0;
		int kind;
		if (dwarf_tag(&child) != DW_TAG_formal_parameter || r->n >= SS_ARGS_MAX)
			continue;
		name = dwarf_diename(&child);
		kind = param_type(&child, &size);
		if (kind == K_SKIP) {
			abi_ok = 0;  /* a struct by value: the registers after it are unknown */
			continue;
		}
		/* its argument register, taken whether it has a name or not:
		 * `int pick(int, int b)` passes b in rsi */
		int abi = ABI_NONE, abi_idx = 0;
		if (abi_ok && kind == K_FLOAT) {
			abi = nsse < 8 ? ABI_SSE : ABI_STACK;
			abi_idx = nsse++;
		} else if (abi_ok) {
			abi = nint < 6 ? ABI_INT : ABI_STACK;
			abi_idx = nint++;
		}
		if (!name)
			continue;
		p = &r->p[r->n];
		p->kind = kind;
		p->size = size;
		if (!(p->name = strdup(name)))
			continue;
		r->n++;
		p->abi = abi;
		p->abi_idx = abi_idx;
		if (names_only)
			continue;
		if (same)
			conc = child;
		else if (!concrete_param(&inst, &child, &conc))
			continue;  /* this instance has no trace of it */
		if (!dwarf_attr(&conc, DW_AT_location, &a)) {
			const_param(&conc, p);
			continue;
		}
		int single = dwarf_whatform(&a) != DW_FORM_sec_offset &&
			     dwarf_whatform(&a) != DW_FORM_loclistx;
		if (inl && single && is_clang(&sp) && single_memory(&a))
			continue;  /* clang: a home its code writes after the hook */
		if (clang && single) {
			p->pro = pro = 1;
			if (dwarf_getlocation_addr(&a, pc, &ops, &n, 1) == 1 && n) {
				p->ops = ops;  /* stack arguments: their incoming slot */
				p->nops = n;
			}
			continue;
		}
		if (inl && !single && !local_range(&a, &inst, pc - 1, !is_clang(&sp)))
			continue;  /* a range begun in another copy's code */
		if (ss_args_loc_at(&conc, &a, pc, &ops, &n)) {
			p->after = ops;  /* at pc's view 0: where the hook returns */
			p->nafter = n;
		}
		if (dwarf_getlocation_addr(&a, pc - 1, &ops, &n, 1) == 1 && n) {
			p->ops = ops;
			p->nops = n;
		}
		if (!inl && ss_args_loc_at(&conc, &a, entry, &ops, &n)) {
			p->entry = ops;  /* its incoming slot: out-of-line only */
			p->nentry = n;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	if (pro) {
		size_t len;
		const uint8_t *code = code_at(m, fn, pc, &len);
		if (!code || !ss_args_prologue(code, len, &r->pro))
			r->pro.ok = 0;
	}
	return r;
}

int ss_args_dw_eval(const char *path, const char *debug, uint64_t bias,
		    const struct ss_args_cap *cap, struct ss_argv *out, size_t max)
{
	struct dwmod *m = dwmod_get(path, debug);
	uint64_t fn = cap->fn - bias, pc = cap->pc - bias;
	struct recipe *r;

	if (!m || cap->arch != 1)
		return -1;
	for (r = m->recipes; r; r = r->next)
		if (r->fn == fn && r->pc == pc)
			break;
	if (!r && !(r = recipe_build(m, fn, pc)))
		return -1;
	if (!r->ok)
		return -1;
	return ss_args_recipe_eval(r, cap, bias, out, max);
}
int ss_args_dw_params(const char *path, const char *fn, char names[][64], size_t max)
{
	struct dwmod *m = dwmod_get(path, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize;
	int n = -1;

	if (!m || !m->dw)
		return -1;
	while (n < 0 && dwarf_nextcu(m->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		if (dwarf_offdie(m->dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				const char *name;
				Dwarf_Die child;
				uint64_t lo;
				if (dwarf_tag(&d) != DW_TAG_subprogram ||
				    !(name = dwarf_diename(&d)) || strcmp(name, fn) ||
				    !entry_of(&d, &lo))
					continue;
				n = 0;
				if (dwarf_child(&d, &child) == 0) {
					do {
						const char *pn = dwarf_diename(&child);
						if (dwarf_tag(&child) == DW_TAG_formal_parameter &&
						    pn && (size_t)n < max)
							snprintf(names[n++], 64, "%s", pn);
					} while (dwarf_siblingof(&child, &child) == 0);
				}
				break;
			} while (dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
	return n;
}
