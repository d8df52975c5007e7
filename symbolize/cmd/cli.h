/*
 * cli.h - what the commands that read a run share on the command line:
 * the run directory, -o/--output, --backend and -q/--quiet, -h/--help,
 * the messages for a missing value, an unknown option or a second
 * directory; and, for flame and html, loading the run into an aggregator
 * and writing the output through outfile.h.
 *
 * A command describes itself in a struct ss_cli (its name for messages,
 * its usage, which shared options it takes) and passes its own options
 * in a callback that sees every argument first.
 */
#ifndef SS_CLI_H
#define SS_CLI_H

#include <stdio.h>

#include "agg.h"

enum ss_cli_flags {
	SS_CLI_SYMBOLS = 1 << 0,  /* --backend NAME and -q/--quiet */
	SS_CLI_EQUALS = 1 << 1,   /* (every command's long options take
	                           * --opt=VALUE now: kept for old callers) */
};

struct ss_cli {
	const char *cmd;          /* "flame": messages say "stepscope: flame: ..." */
	void (*usage)(FILE *f);
	unsigned flags;           /* enum ss_cli_flags */
	/* parsed */
	const char *dir, *out, *backend;
	int quiet;
};

/* What a command's own-option callback did with argv[*i]. */
enum ss_cli_took {
	SS_CLI_NOT_MINE = 0,
	SS_CLI_TAKEN = 1,         /* *i moved over any value it used */
	SS_CLI_BAD = 2,           /* it printed why; the command exits 2 */
};

typedef enum ss_cli_took (*ss_cli_own_fn)(struct ss_cli *c, void *ctx, int argc,
					  char **argv, int *i);

/* ss_cli_parse's answer when the command should go on. */
#define SS_CLI_GO (-1)

/* Parse argv[1..]: own (may be NULL) first, then the shared options.
 * SS_CLI_GO with c->dir set, or the exit status: 0 after --help (usage on
 * stdout), 2 on a usage error (a message; without DIR the line
 * "stepscope: CMD: no run directory given (usage below)" and the usage). */
int ss_cli_parse(struct ss_cli *c, int argc, char **argv, ss_cli_own_fn own,
		 void *ctx);

/* Whether argv[*i] is option opt ("--width"), as "opt VALUE" or, for a
 * long option, "opt=VALUE": 1 with the
 * value in *v (*i moved past it), 0 if it is another argument, -1 when
 * the value is missing ("option 'opt' needs a value" printed). */
int ss_cli_value(const struct ss_cli *c, int argc, char **argv, int *i,
		 const char *opt, const char **v);

/* Receives the output file of ss_cli_agg_write. */
typedef void (*ss_cli_write_fn)(FILE *f, struct ss_agg *a, void *ctx);

/* Load c->dir into an aggregator and write it with fill(ctx) to c->out
 * (default DIR/defname) through outfile.h ("-" is standard output, a
 * regular file is replaced when complete, a link or device written in
 * place); says "wrote OUT".  The exit status. */
int ss_cli_agg_write(const struct ss_cli *c, const char *defname,
		     ss_cli_write_fn fill, void *ctx);

/* ss_cli_agg_write for an aggregator already loaded (html: the one of
 * ss_adv_build). */
int ss_cli_write(const struct ss_cli *c, const char *defname, struct ss_agg *a,
		 ss_cli_write_fn fill, void *ctx);

#endif /* SS_CLI_H */
