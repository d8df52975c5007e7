/*
 * cmds.h - the subcommands of the stepscope command, one per
 * symbolize/cmd/<name>.c.  Each takes its own argv (argv[0] is the command
 * name) and returns the process exit status: 0 ok, 2 usage or input error,
 * 1 internal failure.  Commands print to stderr only what the user needs.
 */
#ifndef SS_CMDS_H
#define SS_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_html(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_steps(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_advise(int argc, char **argv);
/* diff.c: `stepscope html --diff BASE NEW` (cmd_html hands it over) */
int cmd_diff_html(int argc, char **argv);

/* record-mpi.c: 1 when started as one rank of an MPI job (shared RUN dir);
 * add libstepscope-mpi (next to lib) to LD_PRELOAD for an MPI program or
 * launcher. */
int ss_record_mpi_rank(void);
void ss_record_mpi_preload(const char *lib, const char *prog_path);
int ss_record_mpi_launcher(const char *prog); /* mpirun, mpiexec, srun... */
int cmd_filter(int argc, char **argv);
struct ss_config;
/* record-step.c: 0 if prog_path (or a library it needs) defines
 * cfg->step_function, or that cannot be told; a C++ function given by its
 * demangled name ("f(int)", or "ns::f" when only one function has that
 * name) is replaced by its mangled symbol, which the runtime looks up.
 * 2 after one line on stderr (not a function, ambiguous); prog names the
 * program in it. */
/* record-flops.c: every flops: expression names parameters of its
 * function (the program's DWARF); 0, or -1 after a file:line message. */
int ss_record_check_flops(const struct ss_config *cfg, const char *prog_path);
int ss_record_step_function(struct ss_config *cfg, const char *prog_path,
			    const char *prog);
/* record-note.c: the first line of a run: which config (cli_path from -c,
 * else $STEPSCOPE_CONFIG, else ./stepscope.yaml, or none; nsets --set
 * options) and the keys it sets away from the defaults. */
void ss_record_note_config(const struct ss_config *cfg, const char *cli_path,
			   int nsets);
/* record-note.c: after a run into a new directory `dir` of `base`: how
 * many other runs (directories with traces) base holds and their size on
 * disk (nothing if none). */
void ss_record_note_earlier(const char *base, const char *dir);
/* record-step.c: 1 if neither prog nor a library it needs has the hooks of
 * -finstrument-functions; 0 if one has or that cannot be told */
int ss_record_lacks_hooks(const char *prog);

#endif /* SS_CMDS_H */
