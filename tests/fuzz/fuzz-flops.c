/*
 * fuzz-flops.c - libFuzzer target for the flops: expressions
 * (runtime/flops-expr.c): whatever text comes in, checking, listing the
 * names of and evaluating it must not crash, recurse without bound, read
 * outside the text or divide by zero, and the three must agree.
 *
 * Design: the input is the expression, copied to a buffer of exactly its
 * length (ASan sees a read past it).  Names get values from their first
 * letter: some 0 (a divisor the call makes 0), some none (a missing
 * parameter).  Checked promises: check, names and eval accept the same
 * texts; a refusal has a reason; a value comes only when every name had
 * one and no divisor was 0.  The same text as a whole flops: list ("f=...;
 * g=...") goes through ss_flops_check_all and ss_flops_check_listed.
 *
 * Build and run: `make fuzz` (FUZZ_SECS=N each target, default 60).
 * Must never: keep state between inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops-expr.h"

struct look_ctx {
	int names, missing;
};

static int fuzz_look(void *ctx, const char *name, size_t len, double *v)
{
	struct look_ctx *c = ctx;

	c->names++;
	if (!len)
		abort();
	switch (name[0] % 4) {
	case 0:
		c->missing++;
		return -1;  /* <optimized out> */
	case 1:
		*v = 0;
		return 0;
	default:
		*v = (double)(len * 3 + (unsigned char)name[len - 1]);
		return 0;
	}
}

static void fuzz_name(void *ctx, const char *name, size_t len)
{
	int *n = ctx;

	if (!len || len > SS_FLOPS_NAME_MAX)
		abort();
	(*n)++;
}

static void fuzz_die(const char *what, const uint8_t *data, size_t size)
{
	fprintf(stderr, "fuzz-flops: %s: '%.*s'\n", what, (int)(size > 200 ? 200 : size), data);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], *text = malloc(size ? size : 1), *list = malloc(size + 1);
	struct look_ctx lc = { 0, 0 };
	int check, names, eval, nnames = 0;
	double v = 0;

	if (!text || !list)
		abort();
	memcpy(text, data, size);
	err[0] = 0;
	check = ss_flops_check(text, size, err, sizeof(err));
	if (check && !err[0])
		fuzz_die("refused without a reason", data, size);
	names = ss_flops_names(text, size, fuzz_name, &nnames);
	eval = ss_flops_eval(text, size, fuzz_look, &lc, &v);
	if ((check == 0) != (names == 0) || (check == 0) != (eval != -1))
		fuzz_die("check, names and eval disagree", data, size);
	if (!check && lc.names != nnames)
		fuzz_die("eval looked up other names than names listed", data, size);
	if (eval == 0 && lc.missing)
		fuzz_die("a value although a name had none", data, size);

	/* as a whole flops: list */
	memcpy(list, data, size);
	list[size] = 0;
	err[0] = 0;
	if (ss_flops_check_all(list, err, sizeof(err)) >= 0 && !err[0])
		fuzz_die("list refused without a reason", data, size);
	err[0] = 0;
	if (ss_flops_check_listed(list, "f* g, matmul_?", err, sizeof(err)) >= 0 && !err[0])
		fuzz_die("unlisted without a reason", data, size);
	free(text);
	free(list);
	return 0;
}
