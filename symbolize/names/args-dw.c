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
 * in a caller's frame), plus the CFA rule there.  Evaluating a recipe is
 * a small DWARF stack machine over the capture: the callee-saved
 * registers, sp, the CFA, and memory only inside the copied windows.  A
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

enum { K_SKIP, K_INT, K_UINT, K_BOOL, K_FLOAT, K_PTR };

struct recipe_param {
	char *name;
	int kind;                 /* K_* */
	unsigned size;            /* bytes */
	const Dwarf_Op *ops;      /* at pc - 1, NULL: none */
	size_t nops;
	const Dwarf_Op *entry;    /* at the function's entry (fallback) */
	size_t nentry;
	const Dwarf_Op *after;    /* at pc, right after the hook returns */
	size_t nafter;
	int pro;                  /* clang, one location for the whole
	                           * function: args-prologue.c says where */
	int abi, abi_idx;         /* ABI_INT rdi.., ABI_SSE xmm.., ABI_STACK */
};

enum { ABI_NONE, ABI_INT, ABI_SSE, ABI_STACK };

struct recipe {
	uint64_t fn, pc;          /* file vaddrs */
	struct recipe *next;
	int ok;                   /* 0: no DWARF for fn */
	Dwarf_Op cfa[8];
	size_t ncfa;              /* 0: no CFI at pc */
	const Dwarf_Op *fbase;    /* DW_AT_frame_base */
	size_t nfbase;
	struct recipe_param p[SS_ARGS_MAX];
	size_t n;
	struct ss_prologue pro;   /* when a parameter has .pro */
};

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

/* The subprogram DIE whose entry is fn (file vaddr). */
static int find_subprogram(Dwarf *dw, uint64_t fn, Dwarf_Die *out)
{
	Dwarf_Die cu, *scopes = NULL;
	int n, i, found = 0;

	if (!cu_of(dw, fn, &cu))
		return 0;
	n = dwarf_getscopes(&cu, fn, &scopes);
	for (i = 0; i < n && !found; i++) {
		Dwarf_Addr lo;
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram &&
		    dwarf_entrypc(&scopes[i], &lo) == 0 && lo == fn) {
			*out = scopes[i];
			found = 1;
		}
	}
	free(scopes);
	return found;
}

/* The DIE of fn's instance that runs at pc - 1: its own body (*inl 0), or
 * a copy inlined into another function (*inl 1: -finstrument-functions
 * calls the hook with fn there too); *outer: the subprogram around
 * pc - 1, whose frame base the locations use. */
static int find_instance(Dwarf *dw, uint64_t fn, uint64_t pc, Dwarf_Die *inst,
			 Dwarf_Die *outer, int *inl)
{
	Dwarf_Die sp, cu, *scopes = NULL;
	int n, found = 0, have_outer = 0;

	if (!find_subprogram(dw, fn, &sp))
		return 0;
	if (dwarf_haspc(&sp, pc - 1) > 0) {
		*inst = *outer = sp;
		*inl = 0;
		return 1;
	}
	if (!cu_of(dw, pc - 1, &cu))
		return 0;
	n = dwarf_getscopes(&cu, pc - 1, &scopes);
	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine &&
		    origin_off(&scopes[i]) == origin_off(&sp)) {
			*inst = scopes[i];
			found = 1;
		}
	free(scopes);
	/* the function it was inlined into: the unit's subprogram holding
	 * pc - 1 (getscopes goes on through the abstract definition) */
	Dwarf_Die d;
	if (found && dwarf_child(&cu, &d) == 0) {
		do {
			if (dwarf_tag(&d) == DW_TAG_subprogram && dwarf_haspc(&d, pc - 1) > 0) {
				*outer = d;
				have_outer = 1;
			}
		} while (!have_outer && dwarf_siblingof(&d, &d) == 0);
	}
	*inl = 1;
	return found && have_outer;
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

static struct recipe *recipe_build(struct dwmod *m, uint64_t fn, uint64_t pc)
{
	struct recipe *r = calloc(1, sizeof(*r));
	Dwarf_Die sp, inst, abs, child;
	Dwarf_Attribute a;
	Dwarf_Frame *fr = NULL;
	const char *fname;
	int inl = 0;

	if (!r)
		return NULL;
	r->fn = fn;
	r->pc = pc;
	r->next = m->recipes;
	m->recipes = r;
	if (!m->dw || !find_instance(m->dw, fn, pc, &inst, &sp, &inl))
		return r;
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
	int clang = !inl && is_clang(&sp), nint = 0, nsse = 0, pro = 0;
	int abi_ok = !inl && !returns_memory(&abs);
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
		if (kind == K_SKIP)
			abi_ok = 0;  /* a struct by value: the registers after it are unknown */
		if (!name || kind == K_SKIP)
			continue;
		p = &r->p[r->n];
		p->kind = kind;
		p->size = size;
		if (!(p->name = strdup(name)))
			continue;
		r->n++;
		if (abi_ok && kind == K_FLOAT) {
			p->abi = nsse < 8 ? ABI_SSE : ABI_STACK;
			p->abi_idx = nsse++;
		} else if (abi_ok) {
			p->abi = nint < 6 ? ABI_INT : ABI_STACK;
			p->abi_idx = nint++;
		}
		if (same)
			conc = child;
		else if (!concrete_param(&inst, &child, &conc))
			continue;  /* this instance has no trace of it */
		if (!dwarf_attr(&conc, DW_AT_location, &a))
			continue;
		if (clang && dwarf_whatform(&a) != DW_FORM_sec_offset &&
		    dwarf_whatform(&a) != DW_FORM_loclistx) {
			p->pro = pro = 1;
			if (dwarf_getlocation_addr(&a, pc, &ops, &n, 1) == 1 && n) {
				p->ops = ops;  /* stack arguments: their incoming slot */
				p->nops = n;
			}
			continue;
		}
		if (dwarf_getlocation_addr(&a, pc, &ops, &n, 1) == 1 && n) {
			p->after = ops;
			p->nafter = n;
		}
		if (dwarf_getlocation_addr(&a, pc - 1, &ops, &n, 1) == 1 && n) {
			p->ops = ops;
			p->nops = n;
		}
		if (!inl && dwarf_getlocation_addr(&a, fn, &ops, &n, 1) == 1 && n) {
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

/* ------------------------------------------------------------ evaluation */

struct ctx {
	const struct ss_args_cap *cap;
	const struct recipe *r;
	uint64_t bias;
	int have_cfa;
	uint64_t cfa;
};

/* x86-64 DWARF register numbers the capture holds */
static int reg_value(const struct ctx *c, unsigned reg, uint64_t *v)
{
	int idx;

	switch (reg) {
	case 3: idx = 0; break;   /* rbx */
	case 6: idx = 1; break;   /* rbp */
	case 12: idx = 2; break;
	case 13: idx = 3; break;
	case 14: idx = 4; break;
	case 15: idx = 5; break;
	case 7:
		*v = c->cap->sp;
		return 0;
	default:
		return -1;
	}
	if ((unsigned)idx >= c->cap->nregs)
		return -1;
	memcpy(v, c->cap->regs + 8 * idx, 8);
	return 0;
}

static int mem_read(const struct ctx *c, uint64_t addr, unsigned size, void *out)
{
	for (unsigned w = 0; w < c->cap->nwin; w++) {
		uint64_t lo = c->cap->waddr[w], len = c->cap->wlen[w];
		if (addr >= lo && addr - lo <= len && len - (addr - lo) >= size) {
			memcpy(out, c->cap->wdata[w] + (addr - lo), size);
			return 0;
		}
	}
	return -1;
}

enum loc { L_NONE, L_MEM, L_REG, L_VALUE, L_BYTES };

struct result {
	enum loc kind;
	uint64_t v;               /* address, register number or value */
	const uint8_t *bytes;     /* implicit_value */
	size_t nbytes;
};

static int eval_ops(struct ctx *c, const Dwarf_Op *ops, size_t n, struct result *res,
		    int depth);

static int frame_base(struct ctx *c, uint64_t *v, int depth)
{
	struct result fb;

	if (!c->r->fbase || depth > 2)
		return -1;
	if (eval_ops(c, c->r->fbase, c->r->nfbase, &fb, depth + 1))
		return -1;
	if (fb.kind == L_REG)
		return reg_value(c, (unsigned)fb.v, v);
	if (fb.kind == L_MEM || fb.kind == L_VALUE) {
		*v = fb.v;  /* call_frame_cfa, breg: the address is the base */
		return 0;
	}
	return -1;
}

#define PUSH(x) do { if (sp >= 64) return -1; st[sp++] = (x); } while (0)
#define NEED(k) do { if (sp < (k)) return -1; } while (0)

static int eval_ops(struct ctx *c, const Dwarf_Op *ops, size_t n, struct result *res,
		    int depth)
{
	uint64_t st[64], v;
	size_t sp = 0, i;
	int stack_value = 0;

	res->kind = L_NONE;
	for (i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
		} else if (op >= DW_OP_reg0 && op <= DW_OP_reg31) {
			if (n != 1)
				return -1;
			res->kind = L_REG;
			res->v = op - DW_OP_reg0;
			return 0;
		} else if (op == DW_OP_regx) {
			if (n != 1)
				return -1;
			res->kind = L_REG;
			res->v = ops[i].number;
			return 0;
		} else if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			if (reg_value(c, op - DW_OP_breg0, &v))
				return -1;
			PUSH(v + (uint64_t)(int64_t)ops[i].number);
		} else if (op == DW_OP_bregx) {
			if (reg_value(c, (unsigned)ops[i].number, &v))
				return -1;
			PUSH(v + (uint64_t)(int64_t)ops[i].number2);
		} else if (op == DW_OP_fbreg) {
			if (frame_base(c, &v, depth))
				return -1;
			PUSH(v + (uint64_t)(int64_t)ops[i].number);
		} else if (op == DW_OP_call_frame_cfa) {
			if (!c->have_cfa)
				return -1;
			PUSH(c->cfa);
		} else {
			switch (op) {
			case DW_OP_addr:
				PUSH(ops[i].number + c->bias);
				break;
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
			case DW_OP_const8u: case DW_OP_constu:
			case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
			case DW_OP_const8s: case DW_OP_consts:
				PUSH(ops[i].number);
				break;
			case DW_OP_dup: NEED(1); v = st[sp - 1]; PUSH(v); break;
			case DW_OP_drop: NEED(1); sp--; break;
			case DW_OP_over: NEED(2); v = st[sp - 2]; PUSH(v); break;
			case DW_OP_swap: NEED(2); v = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = v; break;
			case DW_OP_plus_uconst: NEED(1); st[sp - 1] += ops[i].number; break;
			case DW_OP_neg: NEED(1); st[sp - 1] = -st[sp - 1]; break;
			case DW_OP_not: NEED(1); st[sp - 1] = ~st[sp - 1]; break;
#define BIN(o, e) case o: NEED(2); v = st[--sp]; st[sp - 1] = (e); break;
			BIN(DW_OP_plus, st[sp - 1] + v)
			BIN(DW_OP_minus, st[sp - 1] - v)
			BIN(DW_OP_mul, st[sp - 1] * v)
			BIN(DW_OP_and, st[sp - 1] & v)
			BIN(DW_OP_or, st[sp - 1] | v)
			BIN(DW_OP_xor, st[sp - 1] ^ v)
			BIN(DW_OP_shl, v < 64 ? st[sp - 1] << v : 0)
			BIN(DW_OP_shr, v < 64 ? st[sp - 1] >> v : 0)
			BIN(DW_OP_shra, v < 64 ? (uint64_t)((int64_t)st[sp - 1] >> v) : 0)
#undef BIN
			case DW_OP_deref:
			case DW_OP_deref_size: {
				unsigned size = op == DW_OP_deref ? 8 : (unsigned)ops[i].number;
				uint64_t w = 0;
				NEED(1);
				if (size > 8 || mem_read(c, st[sp - 1], size, &w))
					return -1;
				st[sp - 1] = w;
				break;
			}
			case DW_OP_stack_value:
				stack_value = 1;
				i = n; /* ends the expression */
				break;
			case DW_OP_implicit_value:
				res->kind = L_BYTES;
				res->nbytes = ops[i].number;
				res->bytes = (const uint8_t *)(uintptr_t)ops[i].number2;
				return n == 1 ? 0 : -1;
			case DW_OP_piece:
				/* one piece holding the whole value only */
				if (i != n - 1)
					return -1;
				i = n;
				break;
			case DW_OP_nop:
				break;
			default:
				return -1; /* entry values, TLS, pieces, ...: not exact here */
			}
		}
	}
	if (!sp)
		return -1;
	res->kind = stack_value ? L_VALUE : L_MEM;
	res->v = st[sp - 1];
	return 0;
}

static void decode(const struct recipe_param *p, const uint8_t *b, struct ss_argv *out)
{
	uint64_t u = 0;

	memcpy(&u, b, p->size);
	switch (p->kind) {
	case K_INT:
		out->kind = SS_ARGV_INT;
		out->i = p->size < 8 ? (int64_t)(u << (64 - 8 * p->size)) >> (64 - 8 * p->size)
				     : (int64_t)u;
		break;
	case K_UINT:
	case K_BOOL:
		out->kind = SS_ARGV_UINT;
		out->u = p->kind == K_BOOL ? u != 0 : u;
		break;
	case K_PTR:
		out->kind = SS_ARGV_PTR;
		out->u = u;
		break;
	case K_FLOAT:
		if (p->size == 4) {
			float f;
			memcpy(&f, b, 4);
			out->kind = SS_ARGV_FLOAT;
			out->d = f;
		} else {
			memcpy(&out->d, b, 8);
			out->kind = SS_ARGV_DOUBLE;
		}
		break;
	}
}

/* Can res be read with what the capture holds? */
static int readable(struct ctx *c, const struct recipe_param *p, const struct result *res)
{
	uint8_t b[8];
	uint64_t v;

	switch (res->kind) {
	case L_MEM:
		return p->size <= 8 && !mem_read(c, res->v, p->size, b);
	case L_REG:
		return !reg_value(c, (unsigned)res->v, &v);
	case L_VALUE:
		return p->kind != K_FLOAT;
	case L_BYTES:
		return res->nbytes >= p->size && res->nbytes <= 16;
	default:
		return 0;
	}
}

static void eval_param(struct ctx *c, const struct recipe_param *p, struct ss_argv *out)
{
	struct result res;
	uint8_t b[16];
	uint64_t v;

	out->kind = SS_ARGV_OUT;
	if (p->pro) {
		/* clang -O0: the argument registers' spill slots */
		const struct ss_prologue *pr = &c->r->pro;
		uint64_t rbp;
		if (!pr->ok || reg_value(c, 6, &rbp))
			return;
		if (p->abi == ABI_INT && pr->int_size[p->abi_idx] >= p->size) {
			res.v = rbp + (uint64_t)pr->int_disp[p->abi_idx];
		} else if (p->abi == ABI_SSE && pr->sse_size[p->abi_idx] == p->size) {
			res.v = rbp + (uint64_t)pr->sse_disp[p->abi_idx];
		} else if (p->abi == ABI_STACK && p->ops && c->have_cfa &&
			   !eval_ops(c, p->ops, p->nops, &res, 0) && res.kind == L_MEM &&
			   res.v >= c->cfa) {
			/* an incoming stack slot: there from the call on */
		} else {
			return;
		}
		res.kind = L_MEM;
	} else if (p->ops || p->after) {
		/* where the call instruction says, else right after the hook
		 * returns (no instruction of the function ran in between):
		 * clang keeps an argument register valid through the call */
		if ((!p->ops || eval_ops(c, p->ops, p->nops, &res, 0) || !readable(c, p, &res)) &&
		    (!p->after || eval_ops(c, p->after, p->nafter, &res, 0) ||
		     !readable(c, p, &res)))
			return;
	} else if (p->entry && c->have_cfa) {
		/* the incoming stack slot, at entry DW_OP_fbreg k (frame base
		 * the CFA) or rsp + k, k past the return address */
		const Dwarf_Op *e = p->entry;
		int cfa_base = c->r->nfbase == 1 && c->r->fbase[0].atom == DW_OP_call_frame_cfa;
		if (p->nentry != 1)
			return;
		if (e[0].atom == DW_OP_fbreg && cfa_base && (int64_t)e[0].number >= 0)
			res.v = c->cfa + e[0].number;
		else if (e[0].atom == DW_OP_breg7 && (int64_t)e[0].number >= 8)
			res.v = c->cfa - 8 + e[0].number;
		else
			return;
		res.kind = L_MEM;
	} else {
		return;
	}
	switch (res.kind) {
	case L_MEM:
		if (mem_read(c, res.v, p->size, b))
			return;
		break;
	case L_REG:
		if (reg_value(c, (unsigned)res.v, &v))
			return;  /* not callee-saved: the hook may have changed it */
		memcpy(b, &v, 8);
		break;
	case L_VALUE:
		memcpy(b, &res.v, 8);
		if (p->kind == K_FLOAT)
			return;  /* a float computed on the DWARF stack: no */
		break;
	case L_BYTES:
		if (res.nbytes < p->size || res.nbytes > sizeof(b))
			return;
		memcpy(b, res.bytes, p->size);
		break;
	default:
		return;
	}
	decode(p, b, out);
}

int ss_args_dw_eval(const char *path, const char *debug, uint64_t bias,
		    const struct ss_args_cap *cap, struct ss_argv *out, size_t max)
{
	struct dwmod *m = dwmod_get(path, debug);
	uint64_t fn = cap->fn - bias, pc = cap->pc - bias;
	struct recipe *r;
	struct ctx c = { cap, NULL, bias, 0, 0 };
	size_t i;

	if (!m || cap->arch != 1)
		return -1;
	for (r = m->recipes; r; r = r->next)
		if (r->fn == fn && r->pc == pc)
			break;
	if (!r && !(r = recipe_build(m, fn, pc)))
		return -1;
	if (!r->ok)
		return -1;
	c.r = r;
	if (r->ncfa) {
		struct result cr;
		if (!eval_ops(&c, r->cfa, r->ncfa, &cr, 0) && cr.kind == L_MEM) {
			c.cfa = cr.v;
			c.have_cfa = 1;
		}
	}
	for (i = 0; i < r->n && i < max; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].name = r->p[i].name;
		eval_param(&c, &r->p[i], &out[i]);
	}
	return (int)i;
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
				Dwarf_Addr lo;
				if (dwarf_tag(&d) != DW_TAG_subprogram ||
				    !(name = dwarf_diename(&d)) || strcmp(name, fn) ||
				    dwarf_entrypc(&d, &lo) != 0)
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

/* ------------------------------------------------------------ output */

static void nonfinite(double d, char *buf, size_t len, const char *q)
{
	snprintf(buf, len, "%s%s%s", q, isnan(d) ? "nan" : d > 0 ? "inf" : "-inf", q);
}

void ss_argv_json(const struct ss_argv *v, char *buf, size_t len)
{
	switch (v->kind) {
	case SS_ARGV_INT:
		snprintf(buf, len, "%lld", (long long)v->i);
		break;
	case SS_ARGV_UINT:
		snprintf(buf, len, "%llu", (unsigned long long)v->u);
		break;
	case SS_ARGV_FLOAT:
	case SS_ARGV_DOUBLE:
		if (!isfinite(v->d))
			nonfinite(v->d, buf, len, "\"");
		else
			snprintf(buf, len, v->kind == SS_ARGV_FLOAT ? "%.9g" : "%.17g", v->d);
		break;
	case SS_ARGV_PTR:
		snprintf(buf, len, "\"0x%llx\"", (unsigned long long)v->u);
		break;
	default:
		snprintf(buf, len, "\"<optimized out>\"");
	}
}

void ss_argv_text(const struct ss_argv *v, char *buf, size_t len)
{
	if (v->kind == SS_ARGV_PTR)
		snprintf(buf, len, "0x%llx", (unsigned long long)v->u);
	else if (v->kind == SS_ARGV_OUT)
		snprintf(buf, len, "<optimized out>");
	else if ((v->kind == SS_ARGV_FLOAT || v->kind == SS_ARGV_DOUBLE) && !isfinite(v->d))
		nonfinite(v->d, buf, len, "");
	else
		ss_argv_json(v, buf, len);
}

int ss_argv_number(const struct ss_argv *v, double *out)
{
	switch (v->kind) {
	case SS_ARGV_INT: *out = (double)v->i; return 0;
	case SS_ARGV_UINT: *out = (double)v->u; return 0;
	case SS_ARGV_FLOAT:
	case SS_ARGV_DOUBLE: *out = v->d; return 0;
	default: return -1;
	}
}
