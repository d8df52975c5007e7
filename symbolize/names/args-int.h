/*
 * args-int.h - what args-dw.c, args-views.c and args-prologue.c share:
 * the argument registers' spill slots an unoptimized prologue stores
 * before the enter hook call (x86-64 SysV: integer arguments rdi rsi rdx
 * rcx r8 r9, then xmm0..7); and the compiled recipe of one (function,
 * pc): what args-dw.c finds in DWARF once and args-eval.c evaluates per
 * call.
 */
#ifndef SS_ARGS_INT_H
#define SS_ARGS_INT_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"

struct ss_prologue {
	int ok;                     /* the code up to the call was understood */
	int64_t int_disp[6];        /* rbp-relative slot of integer argument i */
	unsigned int_size[6];       /* bytes stored there, 0: not stored */
	int64_t sse_disp[8];
	unsigned sse_size[8];       /* 4 movss, 8 movsd, 0 not stored */
};

/* Scan code[0..len) (the function from its entry) up to the hook call:
 * 1 and *out, or 0 when an instruction was not understood. */
int ss_args_prologue(const uint8_t *code, size_t len, struct ss_prologue *out);

/* The location loc (die's DW_AT_location) gives at addr's first view
 * (args-views.c: gcc's DW_AT_GNU_locviews honoured): 1 and *ops, *n, or
 * 0 when none holds there. */
int ss_args_loc_at(Dwarf_Die *die, Dwarf_Attribute *loc, Dwarf_Addr addr, Dwarf_Op **ops,
		   size_t *n);

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
	Dwarf_Op cval[2];         /* DW_AT_const_value as ops (a clone's
	                           * constant parameter) */
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

/* Evaluate r for one capture (args-eval.c): parameters filled, <= max. */
int ss_args_recipe_eval(const struct recipe *r, const struct ss_args_cap *cap, uint64_t bias,
			struct ss_argv *out, size_t max);

#endif /* SS_ARGS_INT_H */
