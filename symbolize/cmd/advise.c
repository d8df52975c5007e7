/*
 * advise.c - `stepscope advise DIR`: where each recorded step's time went
 * (categories that add up to the step) and what to do about it (findings
 * ranked by the time they would save per step), as text, CSV or JSON.
 *
 * Design: the command only parses and writes; analyze/advise.c walks the
 * run and runs the checks, analyze/advise-print.c formats.  docs/advise.md
 * says what each category holds and how each saving is computed.
 *
 * Must never: print anything but the advice on stdout, or exit 0 when the
 * run could not be read.
 */
#include <stdio.h>
#include <string.h>

#include "advise.h"
#include "cli.h"
#include "cmds.h"
#include "outfile.h"

struct ss_advise_opts {
	const char *format;
	unsigned flags;
};

static void ss_advise_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope advise [--format text|csv|json] [--steps] [-o FILE] [--backend dw|bfd] [-q] DIR\n"
		"\n"
		"   --format FMT       text (default), csv (the per-step table) or json\n"
		"   --steps            text: a row per recorded step too\n"
		"   -o, --output FILE  write there instead of stdout (- is stdout)\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n"
		"\n"
		"Each recorded step is split into categories that add up to it: the\n"
		"operators on the CPU, the OpenMP team's waits, off the CPU (preempted,\n"
		"blocked; record.sched), allocation calls, stepscope's hooks, the GPU wait\n"
		"and CUDA API calls.  Then each check looks for a known problem; findings\n"
		"are ranked by the time per step their advice would save (docs/advise.md).\n");
}

static enum ss_cli_took ss_advise_option(struct ss_cli *c, void *ctx, int argc, char **argv,
					 int *i)
{
	struct ss_advise_opts *o = ctx;
	const char *v;
	int r;

	if (!strcmp(argv[*i], "--steps")) {
		o->flags |= SS_ADV_PRINT_STEPS;
		return SS_CLI_TAKEN;
	}
	r = ss_cli_value(c, argc, argv, i, "--format", &v);
	if (r <= 0)
		return r ? SS_CLI_BAD : SS_CLI_NOT_MINE;
	if (strcmp(v, "text") && strcmp(v, "csv") && strcmp(v, "json")) {
		fprintf(stderr, "stepscope: advise: unknown format '%s' (use text, csv or json)\n", v);
		return SS_CLI_BAD;
	}
	o->format = v;
	return SS_CLI_TAKEN;
}

int cmd_advise(int argc, char **argv)
{
	struct ss_cli c = { "advise", ss_advise_usage, SS_CLI_SYMBOLS, NULL, NULL, NULL, 0 };
	struct ss_advise_opts o = { "text", 0 };
	struct ss_adv_result r;
	struct ss_out out;
	char err[1024];
	int rc = ss_cli_parse(&c, argc, argv, ss_advise_option, &o);

	if (rc != SS_CLI_GO)
		return rc;
	rc = ss_adv_build(c.dir, c.backend, c.quiet, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: advise: %s\n", err);
		return rc;
	}
	if (ss_out_open(&out, c.out ? c.out : "-", err, sizeof(err))) {
		fprintf(stderr, "stepscope: advise: %s\n", err);
		ss_adv_release(&r);
		return 2;
	}
	rc = ss_adv_print_opts(out.f, &r, o.format, o.flags) ? 1 : 0;
	if (ss_out_commit(&out, 0, err, sizeof(err))) {
		fprintf(stderr, "stepscope: advise: %s\n", err);
		rc = 1;
	}
	ss_out_abort(&out);
	ss_adv_release(&r);
	return rc;
}
