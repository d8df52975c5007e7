/*
 * args.h - the parameters of one recorded call (record.args,
 * docs/shapes.md): what the runtime captured at the enter hook (struct
 * ss_args_cap, filled by read/args-read.c from an SS_EV_ARGS record) and
 * what DWARF makes of it (names/args-dw.c: struct ss_argv, one per formal
 * parameter, by source name).  A value that cannot be recovered exactly
 * at that point is SS_ARGV_OUT, shown "<optimized out>": never a guess.
 */
#ifndef SS_ARGS_H
#define SS_ARGS_H

#include <stddef.h>
#include <stdint.h>

#define SS_ARGS_MAX 32          /* parameters kept per call */

/* The capture of one call (format.h, struct ss_args_head), runtime
 * addresses. */
struct ss_args_cap {
	uint64_t fn, pc, sp;
	unsigned arch;              /* enum ss_args_arch */
	unsigned nregs;             /* x86-64: rbx rbp r12 r13 r14 r15 */
	const uint8_t *regs;        /* nregs little-endian words */
	unsigned nwin;
	uint64_t waddr[2], wlen[2]; /* stack windows: address, bytes */
	const uint8_t *wdata[2];
};

enum ss_argv_kind {
	SS_ARGV_OUT = 0,            /* "<optimized out>" */
	SS_ARGV_INT,                /* i: signed integers, enums, char */
	SS_ARGV_UINT,               /* u: unsigned integers, bool */
	SS_ARGV_FLOAT,              /* d holds a float exactly */
	SS_ARGV_DOUBLE,
	SS_ARGV_PTR,                /* u: pointers and references */
};

struct ss_argv {
	const char *name;           /* the parameter's source name (lives as
	                             * long as the module's DWARF cache) */
	enum ss_argv_kind kind;
	int64_t i;
	uint64_t u;
	double d;
};

/* Recover fn's parameters for one capture: how many (<= max) were filled
 * in, in declaration order; -1 when the module has no DWARF for fn (then
 * nothing is shown).  path/debug: the module's file and its separate
 * debug file (or NULL); bias: runtime address - file vaddr. */
int ss_args_dw_eval(const char *path, const char *debug, uint64_t bias,
		    const struct ss_args_cap *cap, struct ss_argv *out, size_t max);

/* fn's parameter names from the DWARF of the file at path (record's
 * flops check): how many (<= max), each copied into names[i]; -1 when
 * the file has no function of that name with DWARF. */
int ss_args_dw_params(const char *path, const char *fn, char names[][64], size_t max);

/* A value as JSON text: a number, or a string ("0x..." pointers,
 * "<optimized out>", "nan", "inf"). */
void ss_argv_json(const struct ss_argv *v, char *buf, size_t len);
/* The same for the Args column (no quotes). */
void ss_argv_text(const struct ss_argv *v, char *buf, size_t len);
/* The key a call's FLOPs are written under beside its n parameters:
 * "flops", or "flops (computed)" when one of them is named flops. */
const char *ss_argv_flops_key(const struct ss_argv *v, size_t n);
/* Its number for flops expressions: 0, or -1 when it has none. */
int ss_argv_number(const struct ss_argv *v, double *out);

/* Drop the DWARF of every module opened. */
void ss_args_dw_release(void);

#endif /* SS_ARGS_H */
