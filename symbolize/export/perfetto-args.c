/*
 * perfetto-args.c - record.args in .perfetto-trace: a listed function's
 * parameters (and its flops) as debug annotations on the END of its slice,
 * which Perfetto's UI shows among the slice's arguments: integers as
 * int_value/uint_value, floats as double_value, pointers as pointer_value,
 * "<optimized out>" as a string.  The slice's values are only known when
 * it closes (the slicer evaluates them then), hence the END.
 *
 * Must never: write an annotation without its name.
 */
#include <stdlib.h>
#include <string.h>

#include "perfetto.h"

enum {
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_POINTER = 7,
	DA_NAME = 10,
};

static void da_double(struct ss_pf_msg *m, unsigned field, double v)
{
	uint8_t b[8];
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
	ss_pf_varint(m, (uint64_t)field << 3 | 1);
	ss_pf_bytes(m, b, sizeof(b));
}

void ss_pf_call_args(struct ss_pf_msg *te, const struct ss_slice *s)
{
	for (size_t i = 0; i <= s->nargv; i++) {
		struct ss_pf_msg da = { 0 };
		if (i == s->nargv) {
			if (s->has_flops != 1)
				break;
			ss_pf_str(&da, DA_NAME, ss_argv_flops_key(s->argv, s->nargv));
			da_double(&da, DA_DOUBLE, s->flops);
		} else {
			const struct ss_argv *v = &s->argv[i];
			ss_pf_str(&da, DA_NAME, v->name);
			switch (v->kind) {
			case SS_ARGV_INT: ss_pf_uint(&da, DA_INT, (uint64_t)v->i); break;
			case SS_ARGV_UINT: ss_pf_uint(&da, DA_UINT, v->u); break;
			case SS_ARGV_FLOAT:
			case SS_ARGV_DOUBLE: da_double(&da, DA_DOUBLE, v->d); break;
			case SS_ARGV_PTR: ss_pf_uint(&da, DA_POINTER, v->u); break;
			default: ss_pf_str(&da, DA_STRING, "<optimized out>"); break;
			}
		}
		ss_pf_sub(te, SS_PF_TE_DEBUG_ANNOTATIONS, &da);
		free(da.p);
	}
}
