/*
 * args-read.h - SS_EV_ARGS records (record.args) to a call's parameters
 * (args-read.c).
 */
#ifndef SS_ARGS_READ_H
#define SS_ARGS_READ_H

#include <stdint.h>

#include "args.h"
#include "sym.h"

/* The n payload words at p as a capture (pointers into p): 0, or -1 when
 * damaged or of another architecture. */
int ss_args_parse(const uint8_t *p, unsigned n, struct ss_args_cap *cap);
/* Parse and evaluate: the number of parameters in out, or -1 when the
 * record or the function's DWARF is missing.  ns: when the call began
 * (which mapping held the function). */
int ss_args_resolve(struct ss_sym_space *sp, const uint8_t *p, unsigned n, uint64_t ns,
		    struct ss_argv *out, size_t max);

/* The flops: text of a run's SS_META_CONFIG record (its "flops=" line),
 * malloc'ed, or NULL when it has none. */
char *ss_args_flops_config(const char *text, size_t len);
/* The same for any key ("bytes"): its line's value, malloc'ed, or NULL. */
char *ss_args_config_key(const char *text, size_t len, const char *key);
/* fn's FLOPs for these values: 0 and *out, 1 when a parameter the
 * expression needs has no value, -1 when flops has no expression for fn. */
int ss_args_flops(const char *flops, const char *fn, const struct ss_argv *v, size_t n,
		  double *out);

#endif /* SS_ARGS_READ_H */
