/*
 * args-eval.c - evaluate a compiled recipe (args-dw.c) against one
 * recorded call's capture (record.args, docs/shapes.md): a small DWARF
 * expression machine over the callee-saved registers, sp, the CFA and
 * memory inside the copied stack windows, then the value decoded by the
 * parameter's type; and the values as JSON and report text.
 *
 * Must never: read outside the capture, or give a value for a register
 * the hook may have changed, memory it did not copy, an entry value or a
 * partial piece: those are SS_ARGV_OUT.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "args-int.h"


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
			case DW_OP_implicit_value: {
				/* libdw: number2 points at the block, its
				 * ULEB128 length first, then the bytes */
				const uint8_t *b = (const uint8_t *)(uintptr_t)ops[i].number2;
				while (*b & 0x80)
					b++;
				res->kind = L_BYTES;
				res->nbytes = ops[i].number;
				res->bytes = b + 1;
				return n == 1 ? 0 : -1;
			}
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

int ss_args_recipe_eval(const struct recipe *r, const struct ss_args_cap *cap, uint64_t bias,
			struct ss_argv *out, size_t max)
{
	struct ctx c = { cap, r, bias, 0, 0 };
	size_t i;

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

const char *ss_argv_flops_key(const struct ss_argv *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].name && !strcmp(v[i].name, "flops"))
			return "flops (computed)";
	return "flops";
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
