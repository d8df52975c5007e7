/*
 * run.h - a recorded run directory as the commands read it: its raw traces
 * (DIR/ *.sstrace, one per process) in file-name order, each opened with a
 * reader, a symbol space and a slicer, and handed to exporters.
 *
 * symbolize, report, flame and html open a run with ss_run_open and feed
 * each process with ss_run_feed; report --whole-run and memory, which read
 * only meta records, use the listing and ss_run_reader alone.  Every error
 * message is written into err (the caller prints it with its own prefix);
 * status codes are the commands' exit codes: 2 bad input, 1 internal.
 */
#ifndef SS_RUN_H
#define SS_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "reader.h"
#include "slices.h"
#include "sym.h"

/* 0 when dir is a directory; else 2 and "DIR: no such directory" (or why
 * it cannot be looked at) in err. */
int ss_run_check_dir(const char *dir, char *err, size_t errlen);

/* The symbolizer for the run in dir: ss_run_check_dir, then a struct
 * ss_sym of backend ("dw", "bfd" or NULL) warning on stderr unless quiet.
 * NULL with a message in err (exit status 2). */
struct ss_sym *ss_run_sym(const char *dir, const char *backend, int quiet,
			  char *err, size_t errlen);

/* Keep a copy of every binary the traces of dir mapped in dir, so the run
 * stays readable when they are rebuilt (ss_sym_keep_trace; `record` does
 * this once the program has exited).  Failures are warnings. */
void ss_run_keep(const char *dir);

/* Warnings about a module whose symbols miss some addresses are given
 * once per run directory (listed in DIR/.stepscope-warned); ss_run_sym
 * does this already. */
void ss_run_sym_once(struct ss_sym *sym, const char *dir);

/* Paths "dir/NAME" of the entries NAME of dir that match accepts, sorted;
 * malloc'ed (ss_run_list_free).  -1 with errno when dir cannot be opened.
 * An entry that does not fit in memory ends the list. */
int ss_run_list(const char *dir, int (*match)(const char *name), char ***paths,
		size_t *n);
void ss_run_list_free(char **paths, size_t n);
/* The match of raw traces: NAME ends in SS_FILE_SUFFIX. */
int ss_run_is_trace(const char *name);
/* The raw traces of dir, at least one: 0, or 2 with "DIR: no stepscope
 * traces here (*.sstrace)" in err. */
int ss_run_list_traces(const char *dir, char ***paths, size_t *n, char *err,
		       size_t errlen);

/* r was recorded with a config (SS_META_CONFIG: its "key=value" lines)
 * that holds text, such as "memory.allocations=true". */
int ss_run_config_has(const struct ss_reader *r, const char *text);
/* The same of dir's first raw trace (all: of any of them); 0 when dir has
 * none or they do not open. */
int ss_run_traces_config_has(const char *dir, const char *text, int all);

/* Open one raw trace; its warning (a damaged tail) goes to stderr.  NULL
 * with the reader's message in err. */
struct ss_reader *ss_run_reader(const char *path, char *err, size_t errlen);
/* Open one raw trace and keep it for the ss_run_reader (ss_run_open) of
 * the same path that follows: not to be freed by the caller.  NULL with
 * the reader's message in err.  ss_run_peek_drop frees what no
 * ss_run_reader took. */
struct ss_reader *ss_run_peek(const char *path, char *err, size_t errlen);
void ss_run_peek_drop(void);

enum ss_run_flags {
	SS_RUN_MARKERS = 1 << 0,  /* slicers hand out stop/lost markers too */
	SS_RUN_FORCE = 1 << 1,    /* read files not of the run's build (warned) */
	SS_RUN_OWN_DAMAGE = 1 << 2, /* the caller says what a damaged trace cost (diff) */
};

struct ss_run {
	size_t n;                    /* processes (raw traces) */
	char **paths;
	struct ss_reader **rs;
	struct ss_sym_space **sps;
	struct ss_slicer **sls;
	uint64_t t0;                 /* earliest ns of the run (0: none) */
};

/* Open every raw trace of dir (ss_run_list_traces) with spaces of sym.
 * Every module with a recorded build-id is read from a file of that build
 * (ss_sym_check_files): the file at its path, else the copy kept in dir;
 * where there is none, 2 with that one line in err (with SS_RUN_FORCE: a
 * warning, and the file as it is now).
 * 0; 2 (no traces, an unreadable trace, a binary changed since the run:
 * message in err) or 1 (out of memory, "out of memory" in err).  Release
 * the run in every case. */
int ss_run_open(struct ss_run *run, const char *dir, struct ss_sym *sym,
		unsigned flags, char *err, size_t errlen);
void ss_run_release(struct ss_run *run);

/* Process i to exporters: its name ("PROG (pid P)"), its thread names
 * (one per tid, "thread T" when it had none), every slice, the stack frame
 * tree, every SS_META_COUNTER sample.  Slices go to fn(ctx) when fn is
 * given, else to every exporter. */
void ss_run_feed(struct ss_run *run, size_t i, struct ss_exporter **ex, size_t nex,
		 ss_slice_fn fn, void *ctx);

#endif /* SS_RUN_H */
