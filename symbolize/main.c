/*
 * main.c - entry of the stepscope command: dispatch to a subcommand.
 *
 * Design: one table {name, fn, one-line help}; adding a command is one
 * row here and one cmd/<name>.c.  Global options are only --help and
 * --version; everything else belongs to the subcommand.
 *
 * Must never: print usage text on stdout for an error (stdout is for
 * what the user asked for), or exit 0 on an unknown command.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "reader.h"
#include "version.h"

struct ss_main_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct ss_main_cmd ss_main_cmds[] = {
	{ "record", cmd_record, "run a program with the runtime preloaded and record a trace" },
	{ "steps", cmd_steps, "rank the functions that could be step.function, from a whole run" },
	{ "symbolize", cmd_symbolize, "turn a recorded run into a Chrome/Perfetto trace.json" },
	{ "report", cmd_report, "summary table of a recorded run (self/total time per function)" },
	{ "diff", cmd_diff, "compare two runs: what got slower per step, and whether it is noise" },
	{ "flame", cmd_flame, "SVG flame graph of a recorded run" },
	{ "html", cmd_html, "self-contained HTML report: table, step times, flame graph, memory" },
	{ "memory", cmd_memory, "SVG of host and CUDA memory over steps and time, with a leak hint" },
	{ "merge", cmd_merge, "merge the run directories of several hosts (MPI) into one run" },
	{ "filter", cmd_filter, "cost per function and a list of hot tiny functions to leave out" },
	{ "advise", cmd_advise, "where each step's time went, and what to do about it" },
};

#define SS_MAIN_NCMDS (sizeof(ss_main_cmds) / sizeof(ss_main_cmds[0]))

/* Commands that only read runs, some of them several times (html: the
 * tables, then each panel): each trace is indexed once while they run
 * (read/reader-cache.c). */
static const char *const ss_main_readers[] = { "symbolize", "report", "diff", "flame",
					       "html", "advise" };

static int ss_main_run(size_t i, int argc, char **argv)
{
	size_t k;
	int rc;

	for (k = 0; k < sizeof(ss_main_readers) / sizeof(ss_main_readers[0]); k++)
		if (!strcmp(ss_main_cmds[i].name, ss_main_readers[k]))
			ss_reader_cache_on();
	rc = ss_main_cmds[i].fn(argc, argv);
	ss_reader_cache_off();
	return rc;
}

static void ss_main_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: stepscope [--help | --version] <command> [<args>]\n\n");
	fprintf(f, "commands:\n");
	for (i = 0; i < SS_MAIN_NCMDS; i++)
		fprintf(f, "   %-12s %s\n", ss_main_cmds[i].name, ss_main_cmds[i].help);
	fprintf(f, "\n'stepscope <command> --help' describes a command\n");
}

int main(int argc, char **argv)
{
	const char *name;
	size_t i;

	if (argc < 2) {
		ss_main_usage(stderr);
		return 2;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		ss_main_usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("stepscope %s\n", SS_TOOL_VERSION);
		return 0;
	}
	if (!strcmp(name, "help")) {
		if (argc > 2) {
			for (i = 0; i < SS_MAIN_NCMDS; i++)
				if (!strcmp(argv[2], ss_main_cmds[i].name)) {
					char help[] = "--help";
					char *av[] = { argv[2], help, NULL };
					return ss_main_cmds[i].fn(2, av);
				}
			fprintf(stderr, "stepscope: '%s' is not a stepscope command; see 'stepscope --help'\n",
				argv[2]);
			return 2;
		}
		ss_main_usage(stdout);
		return 0;
	}
	if (name[0] == '-') {
		fprintf(stderr, "stepscope: unknown option '%s'; see 'stepscope --help'\n", name);
		return 2;
	}
	for (i = 0; i < SS_MAIN_NCMDS; i++)
		if (!strcmp(name, ss_main_cmds[i].name))
			return ss_main_run(i, argc - 1, argv + 1);
	fprintf(stderr, "stepscope: '%s' is not a stepscope command; see 'stepscope --help'\n", name);
	return 2;
}
