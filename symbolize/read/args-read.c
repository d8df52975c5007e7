/*
 * args-read.c - the SS_EV_ARGS records of record.args (format.h, struct
 * ss_args_head): parse one into a struct ss_args_cap and resolve it, with
 * the module that holds the function at that time, into the call's
 * parameters (names/args-dw.c).  The slicer attaches the result to the
 * call's slice (slices.h: argv).
 *
 * Must never: read past the record's n words, or trust a window's length
 * beyond them (a damaged record is no arguments, not a crash).
 */
#include <string.h>

#include "args-read.h"
#include "format.h"
#include "reader.h"
#include "compact.h"
#include "flops-expr.h"

int ss_args_parse(const uint8_t *p, unsigned n, struct ss_args_cap *cap)
{
	struct ss_args_head h;
	uint64_t at, w;

	memset(cap, 0, sizeof(*cap));
	if (n < 4)
		return -1;
	memcpy(&h, p, sizeof(h));
	if (h.arch != SS_ARGS_X86_64 || h.nregs > 16 || h.nwin > 2 || 4u + h.nregs > n)
		return -1;
	cap->fn = h.fn;
	cap->pc = h.pc;
	cap->sp = h.sp;
	cap->arch = h.arch;
	cap->nregs = h.nregs;
	cap->regs = p + 32;
	at = 4 + h.nregs;
	for (w = 0; w < h.nwin; w++) {
		uint64_t len;
		if (at + 2 > n)
			return -1;
		cap->waddr[w] = ss_reader_word(p + 8 * at);
		len = ss_reader_word(p + 8 * at + 8);
		at += 2;
		if ((len & 7) || len / 8 > n - at)
			return -1;
		cap->wlen[w] = len;
		cap->wdata[w] = p + 8 * at;
		at += len / 8;
	}
	cap->nwin = h.nwin;
	return 0;
}

int ss_args_resolve(struct ss_sym_space *sp, const uint8_t *p, unsigned n, uint64_t ns,
		    struct ss_argv *out, size_t max)
{
	struct ss_args_cap cap;
	const char *path, *debug;
	uint64_t vaddr;

	if (!sp || ss_args_parse(p, n, &cap) ||
	    ss_sym_where(sp, cap.fn, ns, &path, &debug, &vaddr))
		return -1;
	return ss_args_dw_eval(path, debug, cap.fn - vaddr, &cap, out, max);
}

char *ss_args_flops_config(const char *text, size_t len)
{
	return ss_args_config_key(text, len, "flops");
}

char *ss_args_config_key(const char *text, size_t len, const char *key)
{
	const char *p = text, *end = text + len;
	size_t kl = strlen(key);

	while (p < end && *p) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : strnlen(p, (size_t)(end - p));
		if (ll > kl + 1 && !strncmp(p, key, kl) && p[kl] == '=')
			return strndup(p + kl + 1, ll - kl - 1);
		if (!nl)
			break;
		p = nl + 1;
	}
	return NULL;
}

struct flops_vals {
	const struct ss_argv *v;
	size_t n;
};

static int flops_look(void *ctx, const char *name, size_t len, double *out)
{
	const struct flops_vals *fv = ctx;

	for (size_t i = 0; i < fv->n; i++)
		if (strlen(fv->v[i].name) == len && !memcmp(fv->v[i].name, name, len))
			return ss_argv_number(&fv->v[i], out);
	return -1;
}

int ss_args_flops(const char *flops, const char *fn, const struct ss_argv *v, size_t n,
		  double *out)
{
	struct ss_flops_entry e;
	struct flops_vals fv = { v, n };
	const char *p = flops;

	if (!flops || !fn)
		return -1;
	while (ss_flops_next(&p, &e)) {
		int rc;
		if (e.fnlen != strlen(fn) || memcmp(e.fn, fn, e.fnlen))
			continue;
		rc = ss_flops_eval(e.expr, e.exprlen, flops_look, &fv, out);
		return rc < 0 ? -1 : rc;
	}
	return -1;
}
