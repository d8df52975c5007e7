/*
 * cli.c - the shared command line of the run-reading commands and the
 * aggregate-then-write path of flame and html (see cli.h).
 *
 * Design: one loop knows the options every command has; a command's own
 * options come first through its callback, so a command only says what
 * is its own.  Output files go through outfile.c: "-" is standard
 * output, a regular file is written beside OUT and renamed (a failed run
 * never leaves half a file under the asked name), a link or a device is
 * written in place.
 *
 * Must never: change a message of a command (each names its command and
 * keeps its exit status: 2 usage or input, 1 internal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

int ss_cli_value(const struct ss_cli *c, int argc, char **argv, int *i,
		 const char *opt, const char **v)
{
	const char *s = argv[*i];
	size_t l = strlen(opt);

	if (!strcmp(s, opt)) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "stepscope: %s: option '%s' needs a value\n",
				c->cmd, s);
			return -1;
		}
		*v = argv[++*i];
		return 1;
	}
	if (opt[1] == '-' && !strncmp(s, opt, l) &&
	    s[l] == '=') {
		*v = s + l + 1;
		return 1;
	}
	return 0;
}

int ss_cli_parse(struct ss_cli *c, int argc, char **argv, ss_cli_own_fn own,
		 void *ctx)
{
	int i, r;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i], *v;
		if (own) {
			enum ss_cli_took t = own(c, ctx, argc, argv, &i);
			if (t == SS_CLI_BAD)
				return 2;
			if (t == SS_CLI_TAKEN)
				continue;
		}
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			c->usage(stdout);
			return 0;
		}
		if ((r = ss_cli_value(c, argc, argv, &i, "-o", &v)) ||
		    (r = ss_cli_value(c, argc, argv, &i, "--output", &v))) {
			if (r < 0)
				return 2;
			c->out = v;
		} else if ((c->flags & SS_CLI_SYMBOLS) &&
			   (r = ss_cli_value(c, argc, argv, &i, "--backend", &v))) {
			if (r < 0)
				return 2;
			c->backend = v;
		} else if ((c->flags & SS_CLI_SYMBOLS) &&
			   (!strcmp(s, "-q") || !strcmp(s, "--quiet"))) {
			c->quiet = 1;
		} else if (s[0] == '-' && s[1]) {
			fprintf(stderr, "stepscope: %s: unknown option '%s'; see 'stepscope %s --help'\n",
				c->cmd, s, c->cmd);
			return 2;
		} else if (!c->dir) {
			c->dir = s;
		} else {
			fprintf(stderr, "stepscope: %s: one run directory expected, got '%s' too\n",
				c->cmd, s);
			return 2;
		}
	}
	if (!c->dir) {
		fprintf(stderr, "stepscope: %s: no run directory given (usage below)\n",
			c->cmd);
		c->usage(stderr);
		return 2;
	}
	return SS_CLI_GO;
}

/* out (outfile.c: "-", a file, or a device written in place), filled by
 * fill: the exit status. */
static int ss_cli_write_file(const struct ss_cli *c, const char *out,
			     ss_cli_write_fn fill, struct ss_agg *a, void *ctx)
{
	struct ss_out o;
	char err[1024];

	(void)c;
	if (ss_out_open(&o, out, err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		return 2;
	}
	fill(o.f, a, ctx);
	if (ss_out_commit(&o, 0, err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_out_abort(&o);
		return 1;
	}
	fprintf(stderr, "stepscope: wrote %s\n", o.name);
	ss_out_abort(&o);
	return 0;
}

int ss_cli_agg_write(const struct ss_cli *c, const char *defname,
		     ss_cli_write_fn fill, void *ctx)
{
	struct ss_agg *a = ss_agg_new();
	struct ss_exporter *ex;
	char err[1024];
	int rc;

	if (!a)
		return 1;
	ex = ss_agg_exporter(a);
	rc = ss_agg_walk(c->dir, c->backend, c->quiet, &ex, 1, err, sizeof(err));
	if (!rc && ex->end(ex->ctx, err, sizeof(err)))
		rc = 1;
	if (rc)
		fprintf(stderr, "stepscope: %s\n", err);
	else
		rc = ss_cli_write(c, defname, a, fill, ctx);
	ss_agg_free(a);
	return rc;
}

int ss_cli_write(const struct ss_cli *c, const char *defname, struct ss_agg *a,
		 ss_cli_write_fn fill, void *ctx)
{
	char *defout = NULL;
	int rc;

	if (!c->out && asprintf(&defout, "%s/%s", c->dir, defname) < 0) {
		fprintf(stderr, "stepscope: %s: out of memory\n", c->cmd);
		return 1;
	}
	rc = ss_cli_write_file(c, c->out ? c->out : defout, fill, a, ctx);
	free(defout);
	return rc;
}
