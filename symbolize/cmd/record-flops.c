/*
 * record-flops.c - `stepscope record` checks the flops: and bytes: config
 * against the program before it starts (docs/shapes.md): every name an expression uses
 * must be a parameter of its function, as the program's DWARF declares it.
 * A name that is not is a one-line error naming the config's file and the
 * entry's line, exit 2, and nothing runs.
 *
 * A function it cannot find in the executable is said in one warning line
 * and not refused: it may live in a shared library (then the expression
 * is judged per call, and a name with no value gives that call no FLOPs).
 * config.c already refused an entry for a function record.args does not
 * list.
 *
 * Must never: refuse a function only because the executable lacks it.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "config.h"
#include "flops-expr.h"

struct flops_check {
	char (*params)[64];
	int n;
	char bad[64];
};

static void flops_name(void *ctx, const char *name, size_t len)
{
	struct flops_check *fc = ctx;

	if (fc->bad[0])
		return;
	for (int i = 0; i < fc->n; i++)
		if (strlen(fc->params[i]) == len && !memcmp(fc->params[i], name, len))
			return;
	snprintf(fc->bad, sizeof(fc->bad), "%.*s", (int)len, name);
}

/* One key's entries (flops: or bytes:, their lines) against prog_path */
static int ss_record_check_formulas(const struct ss_config *cfg, const char *text,
				    const uint32_t *lines, const char *key, const char *prog_path)
{
	static char params[SS_ARGS_MAX][64];
	struct ss_flops_entry e;
	const char *p = text;
	int idx = 0, rc = 0;

	while (!rc && ss_flops_next(&p, &e)) {
		struct flops_check fc = { params, 0, "" };
		char fn[256], where[SS_CONFIG_PATH_MAX + 64], list[1024];
		size_t used = 0;

		snprintf(fn, sizeof(fn), "%.*s", (int)e.fnlen, e.fn);
		fc.n = ss_args_dw_params(prog_path, fn, params, SS_ARGS_MAX);
		if (fc.n >= 0)
			ss_flops_names(e.expr, e.exprlen, flops_name, &fc);
		if (idx < SS_FLOPS_MAX && lines[idx] && cfg->source[0])
			snprintf(where, sizeof(where), "%s:%u: ", cfg->source, lines[idx]);
		else
			ss_config_where(cfg, key, where, sizeof(where));
		if (fc.n < 0)
			fprintf(stderr, "stepscope: warning: %s%s: %s: %s has no function %s with debug info (its calls have %s only if a library defines it)\n",
				where, key, fn, prog_path, fn, strcmp(key, "flops") ? "bytes" : "FLOPs");
		if (fc.n >= 0 && fc.bad[0]) {
			list[0] = 0;
			for (int i = 0; i < fc.n && used + 1 < sizeof(list); i++)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							 i ? " " : "", params[i]);
			fprintf(stderr, "stepscope: %s%s: %s: '%s' is not a parameter of %s (its parameters: %s)\n",
				where, key, fn, fc.bad, fn, fc.n ? list : "none");
			rc = -1;
		}
		idx++;
	}
	return rc;
}

int ss_record_check_flops(const struct ss_config *cfg, const char *prog_path)
{
	int rc = ss_record_check_formulas(cfg, cfg->flops, cfg->flops_line, "flops", prog_path);

	if (!rc)
		rc = ss_record_check_formulas(cfg, cfg->bytes, cfg->bytes_line, "bytes", prog_path);
	ss_args_dw_release();
	return rc;
}
