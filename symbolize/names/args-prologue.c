/*
 * args-prologue.c - where an unoptimized clang function keeps its register
 * arguments at the enter hook (record.args, args-dw.c).  clang -O0 calls
 * the hook before it copies the parameters to the homes its DWARF names
 * (a single location for the whole function), so at the hook those homes
 * hold stale stack bytes; the values are in the slots its prologue spilled
 * the argument registers to, which no DWARF describes.  This reads the
 * prologue's machine code, from the function's entry to the hook call, and
 * says which register went to which rbp-relative slot.
 *
 * Design: a decoder of the few x86-64 instruction forms such a prologue
 * is made of (push, mov %rsp,%rbp, sub $n,%rsp, mov/movss/movsd of a
 * register to disp(%rbp), loads and lea); anything else stops it and the
 * answer is "unknown", so the parameters come back "<optimized out>".
 *
 * Must never: read past the code given, or name a slot it did not see
 * the register stored to.
 */
#include <stdint.h>
#include <string.h>

#include "args-int.h"

/* DWARF-order general register (0 rax, 1 rcx, 2 rdx, 3 rbx, 4 rsp, 5 rbp,
 * 6 rsi, 7 rdi, 8..15) to its integer argument index, or -1. */
static int int_arg(unsigned reg)
{
	switch (reg) {
	case 7: return 0;
	case 6: return 1;
	case 2: return 2;
	case 1: return 3;
	case 8: return 4;
	case 9: return 5;
	default: return -1;
	}
}

/* Length of a ModRM operand at p (after the ModRM byte itself), and its
 * rbp displacement when it is disp(%rbp); -1 when it runs past end. */
static int modrm_len(const uint8_t *p, const uint8_t *end, int *rbp, int64_t *disp)
{
	unsigned mod = p[0] >> 6, rm = p[0] & 7;
	int n = 1;

	*rbp = 0;
	if (mod == 3)
		return 1;
	if (rm == 4)
		n++;  /* SIB: never an rbp slot we trust */
	if (mod == 0 && rm == 5)
		n += 4;  /* rip-relative */
	else if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	if (p + n > end)
		return -1;
	if (rm == 5 && mod != 0) {
		*rbp = 1;
		if (mod == 1)
			*disp = (int8_t)p[1];
		else {
			int32_t d;
			memcpy(&d, p + 1, 4);
			*disp = d;
		}
	}
	return n;
}

int ss_args_prologue(const uint8_t *code, size_t len, struct ss_prologue *out)
{
	const uint8_t *p = code, *end = code + len;
	unsigned clobbered = 0;  /* integer argument registers written */

	memset(out, 0, sizeof(*out));
	while (p < end) {
		unsigned rex = 0, op;
		int opsize16 = 0, sse = 0, rbp, n;
		int64_t disp = 0;

		if (*p == 0xe8)  /* the hook call */
			return out->ok = 1;
		if (*p == 0x66) {
			opsize16 = 1;
			p++;
		} else if (*p == 0xf3 || *p == 0xf2) {
			sse = *p == 0xf3 ? 4 : 8;
			p++;
		}
		if (p < end && (*p & 0xf0) == 0x40)
			rex = *p++;
		if (p >= end)
			return 0;
		op = *p++;
		if (!sse && !opsize16 && op >= 0x50 && op <= 0x57)
			continue;  /* push */
		if (sse) {
			/* movss / movsd: 0f 11 store, 0f 10 load */
			if (op != 0x0f || p + 2 > end || (p[0] != 0x11 && p[0] != 0x10))
				return 0;
			int store = p[0] == 0x11;
			p++;
			n = modrm_len(p, end, &rbp, &disp);
			if (n < 0)
				return 0;
			unsigned x = ((p[0] >> 3) & 7) | ((rex & 4) << 1);
			if (!store)
				return 0;  /* a load into an argument register */
			if (rbp && x < 8 && !out->sse_size[x]) {
				out->sse_disp[x] = disp;
				out->sse_size[x] = (unsigned)sse;
			}
			p += n;
			continue;
		}
		if (p >= end)
			return 0;
		switch (op) {
		case 0x89:  /* mov r, r/m */
		case 0x88: {
			unsigned r = ((p[0] >> 3) & 7) | ((rex & 4) << 1);
			n = modrm_len(p, end, &rbp, &disp);
			if (n < 0)
				return 0;
			int a = int_arg(r);
			if ((p[0] >> 6) == 3 && int_arg((p[0] & 7) | ((rex & 1) << 3)) >= 0)
				clobbered |= 1u << int_arg((p[0] & 7) | ((rex & 1) << 3));
			if (rbp && a >= 0 && !out->int_size[a] && !(clobbered & (1u << a))) {
				out->int_disp[a] = disp;
				out->int_size[a] = op == 0x88 ? 1 : opsize16 ? 2 : (rex & 8) ? 8 : 4;
			}
			p += n;
			break;
		}
		case 0x8b:  /* mov r/m, r */
		case 0x8d:  /* lea */
			n = modrm_len(p, end, &rbp, &disp);
			if (n < 0)
				return 0;
			if (int_arg(((p[0] >> 3) & 7) | ((rex & 4) << 1)) >= 0)
				clobbered |= 1u << int_arg(((p[0] >> 3) & 7) | ((rex & 4) << 1));
			p += n;
			break;
		case 0x83:  /* sub/and $imm8, r */
		case 0x81:  /* sub $imm32, r */
			if ((p[0] >> 6) != 3)
				return 0;
			p += 1 + (op == 0x83 ? 1 : 4);
			break;
		default:
			return 0;
		}
	}
	return 0;  /* no call found */
}
