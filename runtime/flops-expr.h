/*
 * flops-expr.h - the `flops:` expressions (flops-expr.c): check, list the
 * names of, and evaluate "2*B*T*C*OC" over a call's parameters.  Shared by
 * the runtime's config reader and the stepscope command.
 */
#ifndef SS_FLOPS_EXPR_H
#define SS_FLOPS_EXPR_H

#include <stddef.h>

/* Bounds of one expression (flops-expr.c): its length, the levels of '('
 * and unary '-' inside each other, and a name's length. */
#define SS_FLOPS_EXPR_MAX 512
#define SS_FLOPS_DEPTH_MAX 64
#define SS_FLOPS_NAME_MAX 63
#define SS_FLOPS_STR_(x) #x
#define SS_FLOPS_STR(x) SS_FLOPS_STR_(x)

/* A name's value for ss_flops_eval: 0 and *v set, or non-zero when the
 * call has none (optimized out, not a number, not a parameter). */
typedef int ss_flops_lookup_fn(void *ctx, const char *name, size_t len, double *v);
typedef void ss_flops_name_fn(void *ctx, const char *name, size_t len);

/* 0 when expr[0..len) is a well-formed expression, else -1 and a one-line
 * reason in err. */
int ss_flops_check(const char *expr, size_t len, char *err, size_t errlen);
/* Call each() for every name the expression uses, in order; 0, or -1 on
 * a syntax error. */
int ss_flops_names(const char *expr, size_t len, ss_flops_name_fn *each, void *ctx);
/* 0 and *out: the value; 1: a name had no value, or the call's values
 * make a divisor 0 (no value either); -1: syntax error. */
int ss_flops_eval(const char *expr, size_t len, ss_flops_lookup_fn *look, void *ctx,
		  double *out);

/* One "fn=expr" entry of the config's flops text. */
struct ss_flops_entry {
	const char *fn, *expr;
	size_t fnlen, exprlen;
};
/* The next entry after *pos (start: the text itself): 1, or 0 at the end. */
int ss_flops_next(const char **pos, struct ss_flops_entry *e);
/* -1 when every entry is well formed, else the index of the first bad
 * one, with "flops: fn: why" in err. */
int ss_flops_check_all(const char *flops, char *err, size_t errlen);
/* -1 when every entry's function is one record.args lists (its globs,
 * separated by commas or blanks), else the index of the first that is
 * not, with the reason in err.  An entry named as C++ (not a plain C
 * identifier) is left to `stepscope record`, which has the symbols. */
int ss_flops_check_listed(const char *flops, const char *record_args, char *err,
			  size_t errlen);
/* The same for another key of the same form (bytes:), named in err. */
int ss_flops_check_all_as(const char *flops, const char *key, char *err, size_t errlen);
int ss_flops_check_listed_as(const char *flops, const char *key, const char *record_args,
			     char *err, size_t errlen);

#endif /* SS_FLOPS_EXPR_H */
