/*
 * chrome-args.c - record.args in trace.json: a listed function's slice
 * carries its parameters by source name in "args" (numbers; pointers as
 * "0x..." strings; "<optimized out>"), and "flops" when the run's flops:
 * config has an expression for it and every parameter it needs came back
 * ("flops (computed)" when a parameter is named flops).  A function
 * without named parameters writes nothing.
 *
 * Must never: write a value that is not valid JSON (nan and inf are
 * strings, names are escaped).
 */
#include <stdio.h>
#include <string.h>

#include "chrome.h"

int ss_chrome_call_args(struct ss_chrome *c, const struct ss_slice *s)
{
	char v[64];

	for (size_t i = 0; i < s->nargv; i++) {
		if (i)
			SS_CHROME_LIT(c, ",");
		SS_CHROME_LIT(c, "\"");
		ss_chrome_str(c, s->argv[i].name);
		SS_CHROME_LIT(c, "\":");
		ss_argv_json(&s->argv[i], v, sizeof(v));
		ss_chrome_lit(c, v, strlen(v));
	}
	if (s->has_flops == 1) {
		const char *key = ss_argv_flops_key(s->argv, s->nargv);
		snprintf(v, sizeof(v), "%.17g", s->flops);
		if (s->nargv)
			SS_CHROME_LIT(c, ",");
		SS_CHROME_LIT(c, "\"");
		ss_chrome_str(c, key);
		SS_CHROME_LIT(c, "\":");
		ss_chrome_lit(c, v, strlen(v));
	}
	return s->nargv || s->has_flops == 1;
}
