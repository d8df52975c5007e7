/*
 * flame.c - `stepscope flame DIR -o flame.svg`: a self-contained SVG
 * flame graph of a recorded run (width = time, all threads merged, hover
 * a frame for its name, total, self and calls); --threads draws one
 * graph per thread, stacked.
 *
 * Design: walk the run into an aggregator, draw its merged tree with
 * svg.c.  The file is written through outfile.c (cli.c), so a failed
 * run never leaves a half-written picture under the asked name.
 *
 * Must never: write anything but the SVG to the output file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "cli.h"
#include "cmds.h"
#include "svg.h"

static void ss_flame_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope flame [-o OUT] [--width PX] [--threads] [--backend dw|bfd] [-q] DIR\n"
		"\n"
		"   -o, --output OUT   write the SVG here (default DIR/flame.svg; - is stdout)\n"
		"   --width PX         picture width (default 1200)\n"
		"   --threads          one flame graph per thread, stacked\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n"
		"\n"
		"For flamegraph.pl or speedscope use 'stepscope symbolize --format folded'.\n");
}

struct ss_flame_opts {
	int width, threads;
	char title[256];
};

static enum ss_cli_took ss_flame_option(struct ss_cli *c, void *ctx, int argc,
					char **argv, int *i)
{
	struct ss_flame_opts *o = ctx;
	const char *v;
	int r;

	if (!strcmp(argv[*i], "--threads")) {
		o->threads = 1;
		return SS_CLI_TAKEN;
	}
	r = ss_cli_value(c, argc, argv, i, "--width", &v);
	if (r <= 0)
		return r ? SS_CLI_BAD : SS_CLI_NOT_MINE;
	o->width = atoi(v);
	if (o->width < 200 || o->width > 100000) {
		fprintf(stderr, "stepscope: flame: --width wants 200..100000 pixels, not '%s'\n", v);
		return SS_CLI_BAD;
	}
	return SS_CLI_TAKEN;
}

static void ss_flame_write(FILE *f, struct ss_agg *a, void *ctx)
{
	struct ss_flame_opts *o = ctx;

	if (o->threads)
		ss_svg_flame_threads(f, a, o->width, o->title, 1);
	else
		ss_svg_flame(f, a, o->width, o->title, 1);
}

int cmd_flame(int argc, char **argv)
{
	struct ss_cli c = { "flame", ss_flame_usage, SS_CLI_SYMBOLS, NULL, NULL, NULL, 0 };
	struct ss_flame_opts o = { 1200, 0, "" };
	int rc = ss_cli_parse(&c, argc, argv, ss_flame_option, &o);

	if (rc != SS_CLI_GO)
		return rc;
	snprintf(o.title, sizeof(o.title), "stepscope flame graph: %s", c.dir);
	return ss_cli_agg_write(&c, "flame.svg", ss_flame_write, &o);
}
