/*
 * args-int.h - what args-dw.c and args-prologue.c share: the argument
 * registers' spill slots an unoptimized prologue stores before the enter
 * hook call (x86-64 SysV: integer arguments rdi rsi rdx rcx r8 r9, then
 * xmm0..7).
 */
#ifndef SS_ARGS_INT_H
#define SS_ARGS_INT_H

#include <stddef.h>
#include <stdint.h>

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

#endif /* SS_ARGS_INT_H */
