/*
 * flops-expr.c - the `flops:` config (docs/shapes.md): a map from a
 * function's name to an arithmetic expression over its parameter names,
 * e.g. matmul_forward: "2*B*T*C*OC".  Kept in the config as
 * "fn=expr;fn=expr" (config-yaml.c builds it from the mapping).
 *
 * Design: one small recursive-descent parser over the text, used three
 * ways: to check the syntax when the config is read (runtime and the
 * `stepscope` command alike, so a bad expression is refused before the
 * program runs), to list the names an expression uses (record checks
 * them against the function's parameters in its DWARF), and to evaluate
 * it with the values of one call (symbolize).  Grammar:
 *   expr := term (('+' | '-') term)*      term := unary (('*' | '/') unary)*
 *   unary := '-' unary | '(' expr ')' | NUMBER | NAME
 * NUMBER: decimal digits with an optional fraction; NAME: a C identifier.
 * Bounded (flops-expr.h): SS_FLOPS_EXPR_MAX characters, SS_FLOPS_DEPTH_MAX
 * levels of '(' and unary '-' (the recursion's depth: the runtime checks
 * the config before main, on whatever stack the program starts with), and
 * SS_FLOPS_NAME_MAX characters a name.  A divisor with no name in it that
 * is 0 is refused at the check; one whose parameters make it 0 gives that
 * call no value, as a missing name does.
 *
 * Must never: allocate, recurse deeper than SS_FLOPS_DEPTH_MAX, read past
 * the text's end, or give a value for an expression one of whose names has
 * none, or that divides by zero.
 */
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops-expr.h"

struct fx {
	const char *p, *end;
	ss_flops_lookup_fn *look;  /* NULL: syntax only */
	void *ctx;
	ss_flops_name_fn *each;    /* NULL: names not wanted */
	void *each_ctx;
	int missing;               /* a name had no value, or a divisor was 0 */
	int depth;                 /* '(' and unary '-' open now */
	int named;                 /* a name was seen (since the caller cleared it) */
	const char *why;           /* syntax error */
	const char *at;
};

static void fx_space(struct fx *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
		x->p++;
}

static int fx_fail(struct fx *x, const char *why)
{
	if (!x->why) {
		x->why = why;
		x->at = x->p;
	}
	return -1;
}

static int fx_expr(struct fx *x, double *v);

static int fx_is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int fx_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int fx_unary(struct fx *x, double *v)
{
	fx_space(x);
	if (x->p >= x->end)
		return fx_fail(x, "the expression ends where a number, a name or '(' was expected");
	if ((*x->p == '-' || *x->p == '(') && x->depth >= SS_FLOPS_DEPTH_MAX)
		return fx_fail(x, "the expression nests deeper than " SS_FLOPS_STR(SS_FLOPS_DEPTH_MAX) " levels of '(' and '-'");
	if (*x->p == '-') {
		x->p++;
		x->depth++;
		if (fx_unary(x, v))
			return -1;
		x->depth--;
		*v = -*v;
		return 0;
	}
	if (*x->p == '(') {
		x->p++;
		x->depth++;
		if (fx_expr(x, v))
			return -1;
		x->depth--;
		fx_space(x);
		if (x->p >= x->end || *x->p != ')')
			return fx_fail(x, "a '(' is not closed");
		x->p++;
		return 0;
	}
	if (fx_is_digit(*x->p) || *x->p == '.') {
		char num[64];
		size_t n = 0;
		int dot = 0, digits = 0;
		while (x->p < x->end && (fx_is_digit(*x->p) || (*x->p == '.' && !dot))) {
			dot |= *x->p == '.';
			digits += fx_is_digit(*x->p);
			if (n + 1 < sizeof(num))
				num[n++] = *x->p;
			x->p++;
		}
		num[n] = 0;
		if (!digits || n + 1 >= sizeof(num))
			return fx_fail(x, "a number is malformed");
		*v = strtod(num, NULL);
		return 0;
	}
	if (fx_is_alpha(*x->p)) {
		const char *s = x->p;
		while (x->p < x->end && (fx_is_alpha(*x->p) || fx_is_digit(*x->p)))
			x->p++;
		if (x->p - s > SS_FLOPS_NAME_MAX) {
			x->p = s;
			return fx_fail(x, "a name is longer than " SS_FLOPS_STR(SS_FLOPS_NAME_MAX) " characters");
		}
		x->named = 1;
		*v = 0;
		if (x->each)
			x->each(x->each_ctx, s, (size_t)(x->p - s));
		if (x->look && x->look(x->ctx, s, (size_t)(x->p - s), v))
			x->missing = 1;
		return 0;
	}
	return fx_fail(x, "only + - * / ( ), numbers and parameter names may appear");
}

static int fx_term(struct fx *x, double *v)
{
	if (fx_unary(x, v))
		return -1;
	for (;;) {
		const char *at;
		double r;
		char op;
		int named = x->named;

		fx_space(x);
		if (x->p >= x->end || (*x->p != '*' && *x->p != '/'))
			return 0;
		at = x->p;
		op = *x->p++;
		x->named = 0;
		if (fx_unary(x, &r))
			return -1;
		if (op == '/' && !x->named && r == 0) {
			x->p = at;
			return fx_fail(x, "divides by zero");
		}
		x->named |= named;
		if (op == '*')
			*v *= r;
		else if (r != 0)
			*v /= r;
		else
			x->missing = 1;  /* this call's parameters make it 0 */
	}
}

static int fx_expr(struct fx *x, double *v)
{
	if (fx_term(x, v))
		return -1;
	for (;;) {
		double r;
		char op;
		fx_space(x);
		if (x->p >= x->end || (*x->p != '+' && *x->p != '-'))
			return 0;
		op = *x->p++;
		if (fx_term(x, &r))
			return -1;
		*v = op == '+' ? *v + r : *v - r;
	}
}

static int fx_run(struct fx *x, const char *expr, size_t len, double *v)
{
	x->p = expr;
	x->end = expr + len;
	if (len > SS_FLOPS_EXPR_MAX) {
		x->p = expr + SS_FLOPS_EXPR_MAX;
		return fx_fail(x, "the expression is longer than " SS_FLOPS_STR(SS_FLOPS_EXPR_MAX) " characters");
	}
	if (fx_expr(x, v))
		return -1;
	fx_space(x);
	if (x->p < x->end)
		return fx_fail(x, *x->p == ')' ? "a ')' has no '('" :
			       "only + - * / ( ), numbers and parameter names may appear");
	return 0;
}

int ss_flops_check(const char *expr, size_t len, char *err, size_t errlen)
{
	struct fx x = { 0 };
	double v;

	if (!fx_run(&x, expr, len, &v))
		return 0;
	snprintf(err, errlen, "%s (at '%.*s')", x.why,
		 (int)(x.end - x.at > 20 ? 20 : x.end - x.at), x.at);
	return -1;
}

int ss_flops_names(const char *expr, size_t len, ss_flops_name_fn *each, void *ctx)
{
	struct fx x = { 0 };
	double v;

	x.each = each;
	x.each_ctx = ctx;
	return fx_run(&x, expr, len, &v);
}

int ss_flops_eval(const char *expr, size_t len, ss_flops_lookup_fn *look, void *ctx,
		  double *out)
{
	struct fx x = { 0 };

	x.look = look;
	x.ctx = ctx;
	if (fx_run(&x, expr, len, out))
		return -1;
	return x.missing ? 1 : 0;
}

int ss_flops_next(const char **pos, struct ss_flops_entry *e)
{
	const char *p = *pos, *semi, *eq;

	while (*p == ';' || *p == ' ' || *p == '\n')
		p++;
	if (!*p)
		return 0;
	semi = strchr(p, ';');
	if (!semi)
		semi = p + strlen(p);
	eq = memchr(p, '=', (size_t)(semi - p));
	e->fn = p;
	e->fnlen = eq ? (size_t)(eq - p) : (size_t)(semi - p);
	while (e->fnlen && e->fn[e->fnlen - 1] == ' ')
		e->fnlen--;
	e->expr = eq ? eq + 1 : semi;
	e->exprlen = (size_t)(semi - e->expr);
	*pos = semi;
	return 1;
}

int ss_flops_check_all(const char *flops, char *err, size_t errlen)
{
	return ss_flops_check_all_as(flops, "flops", err, errlen);
}

int ss_flops_check_all_as(const char *flops, const char *key, char *err, size_t errlen)
{
	struct ss_flops_entry e;
	const char *p = flops;
	char why[256];
	int i = 0;

	while (ss_flops_next(&p, &e)) {
		if (!e.fnlen) {
			snprintf(err, errlen, "%s: an entry has no function name ('%.*s')", key,
				 (int)(e.exprlen + 1), e.fn);
			return i;
		}
		if (ss_flops_check(e.expr, e.exprlen, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %.*s: %s", key, (int)e.fnlen, e.fn, why);
			return i;
		}
		i++;
	}
	return -1;
}

/* A plain C name (a C++ function's entry is its demangled name, which
 * record.args's globs of symbols may not match as text: record judges it). */
static int fx_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fx_is_alpha(s[i]) && !fx_is_digit(s[i]))
			return 0;
	return n > 0;
}

int ss_flops_check_listed(const char *flops, const char *record_args, char *err,
			  size_t errlen)
{
	return ss_flops_check_listed_as(flops, "flops", record_args, err, errlen);
}

int ss_flops_check_listed_as(const char *flops, const char *key, const char *record_args,
			     char *err, size_t errlen)
{
	struct ss_flops_entry e;
	const char *p = flops;
	int i = 0;

	while (ss_flops_next(&p, &e)) {
		char fn[SS_FLOPS_NAME_MAX + 1], pat[256];
		const char *a = record_args;
		int listed = 0;

		if (!fx_plain(e.fn, e.fnlen) || e.fnlen > SS_FLOPS_NAME_MAX) {
			i++;
			continue;
		}
		memcpy(fn, e.fn, e.fnlen);
		fn[e.fnlen] = 0;
		while (*a && !listed) {
			size_t n;

			a += strspn(a, ", \t");
			n = strcspn(a, ", \t");
			if (n && n < sizeof(pat)) {
				memcpy(pat, a, n);
				pat[n] = 0;
				listed = !fnmatch(pat, fn, 0);
			}
			a += n;
		}
		if (!listed) {
			snprintf(err, errlen, "%s: %s: %s is not listed in record.args, so its calls keep no arguments to count %s from (add it to record.args)",
				 key, fn, fn, strcmp(key, "flops") ? "bytes" : "FLOPs");
			return i;
		}
		i++;
	}
	return -1;
}
