/*
 * cmd-flame.c - `stepscope flame DIR -o flame.svg`: a self-contained SVG
 * flame graph of a recorded run (width = time, all threads merged, hover
 * a frame for its name, total, self and calls); --threads draws one
 * graph per thread, stacked.
 *
 * Design: walk the run into an aggregator, draw its merged tree with
 * svg.c.  The file is written to OUT.tmp and renamed, so a failed run never
 * leaves a half-written picture under the asked name.
 *
 * Must never: write anything but the SVG to the output file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg.h"
#include "cmds.h"
#include "svg.h"

static void ss_flame_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope flame [-o OUT] [--width PX] [--threads] [--backend dw|bfd] [-q] DIR\n"
		"\n"
		"   -o, --output OUT   write the SVG here (default DIR/flame.svg)\n"
		"   --width PX         picture width (default 1200)\n"
		"   --threads          one flame graph per thread, stacked\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n"
		"\n"
		"For flamegraph.pl or speedscope use 'stepscope symbolize --format folded'.\n");
}

int cmd_flame(int argc, char **argv)
{
	const char *dir = NULL, *out = NULL, *backend = NULL;
	int width = 1200, quiet = 0, threads = 0, i, rc;
	struct ss_agg *a;
	struct ss_exporter *ex;
	char err[1024], *defout = NULL, *tmp = NULL, title[256];
	FILE *f;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			ss_flame_usage(stdout);
			return 0;
		} else if (!strcmp(s, "-o") || !strcmp(s, "--output") ||
			   !strcmp(s, "--width") || !strcmp(s, "--backend")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "stepscope: flame: option '%s' needs a value\n", s);
				return 2;
			}
			if (!strcmp(s, "--width")) {
				width = atoi(argv[++i]);
				if (width < 200 || width > 100000) {
					fprintf(stderr, "stepscope: flame: --width wants 200..100000 pixels, not '%s'\n",
						argv[i]);
					return 2;
				}
			} else if (!strcmp(s, "--backend")) {
				backend = argv[++i];
			} else {
				out = argv[++i];
			}
		} else if (!strcmp(s, "-q") || !strcmp(s, "--quiet")) {
			quiet = 1;
		} else if (!strcmp(s, "--threads")) {
			threads = 1;
		} else if (s[0] == '-' && s[1]) {
			fprintf(stderr, "stepscope: flame: unknown option '%s'; see 'stepscope flame --help'\n", s);
			return 2;
		} else if (!dir) {
			dir = s;
		} else {
			fprintf(stderr, "stepscope: flame: one run directory expected, got '%s' too\n", s);
			return 2;
		}
	}
	if (!dir) {
		ss_flame_usage(stderr);
		return 2;
	}
	a = ss_agg_new();
	if (!a)
		return 1;
	ex = ss_agg_exporter(a);
	rc = ss_agg_walk(dir, backend, quiet, &ex, 1, err, sizeof(err));
	if (!rc && ex->end(ex->ctx, err, sizeof(err)))
		rc = 1;
	if (rc) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_agg_free(a);
		return rc;
	}
	if (!out) {
		if (asprintf(&defout, "%s/flame.svg", dir) < 0)
			goto oom;
		out = defout;
	}
	if (asprintf(&tmp, "%s.tmp", out) < 0)
		goto oom;
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "stepscope: %s: cannot create: %m\n", tmp);
		rc = 2;
		goto done;
	}
	snprintf(title, sizeof(title), "stepscope flame graph: %s", dir);
	if (threads)
		ss_svg_flame_threads(f, a, width, title, 1);
	else
		ss_svg_flame(f, a, width, title, 1);
	if (fflush(f) || ferror(f) | fclose(f) || rename(tmp, out)) {
		fprintf(stderr, "stepscope: %s: cannot write: %m\n", out);
		unlink(tmp);
		rc = 1;
		goto done;
	}
	fprintf(stderr, "stepscope: wrote %s\n", out);
	goto done;
oom:
	fprintf(stderr, "stepscope: flame: out of memory\n");
	rc = 1;
done:
	free(defout);
	free(tmp);
	ss_agg_free(a);
	return rc;
}
