/*
 * direct.c - an instrumented program run on its own: no `stepscope
 * record` (no STEPSCOPE_DIR from it), no config file and no STEPSCOPE_SET.
 * Such a run is usually a quick check, so it records something small and
 * useful instead of a trace of everything up to 4 GB: the whole run, with
 * the trace bounded at SS_DIRECT_TRACE_MB and whole-run statistics
 * (`stats: whole_run`), and says in one line at exit what it wrote and how
 * to go on (pick a step function with `stepscope steps`).  A run that has a
 * config says at exit which one, and where it was found (a ./stepscope.yaml
 * in the working directory changes what a bare run records: never
 * silently); the words are made before main, while the working directory
 * is still the one the file was found in.
 *
 * Processes the direct run starts (fork + exec) inherit STEPSCOPE_DIR; the
 * mark STEPSCOPE__DIRECT tells them they belong to a direct run too.
 *
 * Must never: change a run that has a config, --set or STEPSCOPE_SET, or
 * one started by `stepscope record`.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "internal.h"

#define SS_DIRECT_TRACE_MB 128
#define SS_DIRECT_STR2(x) #x
#define SS_DIRECT_STR(x) SS_DIRECT_STR2(x)

static int ss_direct;
/* "config ./stepscope.yaml, found in the working directory /w/mlp", ... */
static char ss_direct_cfg[SS_CONFIG_PATH_MAX + PATH_MAX + 96];

/* Before main, the run's first process: the config's words for the exit
 * line (none without a file or STEPSCOPE_SET). */
void ss_direct_note_config(const struct ss_config *c)
{
	const char *env = secure_getenv("STEPSCOPE_CONFIG"), *set = secure_getenv("STEPSCOPE_SET");
	char cwd[PATH_MAX], abs[PATH_MAX];
	size_t n = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "?");
	if (c->source[0] && env && *env && realpath(c->source, abs))
		n = (size_t)snprintf(ss_direct_cfg, sizeof(ss_direct_cfg),
				     "config STEPSCOPE_CONFIG=%s (%s)", env, abs);
	else if (c->source[0] && env && *env)
		n = (size_t)snprintf(ss_direct_cfg, sizeof(ss_direct_cfg),
				     "config STEPSCOPE_CONFIG=%s", env);
	else if (c->source[0])
		n = (size_t)snprintf(ss_direct_cfg, sizeof(ss_direct_cfg),
				     "config ./%s, found in the working directory %s", c->source,
				     cwd);
	if (n >= sizeof(ss_direct_cfg))
		n = sizeof(ss_direct_cfg) - 1;
	if (set && *set)
		snprintf(ss_direct_cfg + n, sizeof(ss_direct_cfg) - n, "%s",
			 n ? " + STEPSCOPE_SET" : "no config file, STEPSCOPE_SET");
}

void ss_direct_defaults(struct ss_config *c)
{
	const char *dir = secure_getenv("STEPSCOPE_DIR"), *set = secure_getenv("STEPSCOPE_SET");
	const char *mark = secure_getenv("STEPSCOPE__DIRECT");

	if (dir && *dir && !(mark && *mark))
		return; /* `stepscope record` chose the config */
	if (c->source[0] || (set && *set))
		return; /* the user chose it */
	ss_direct = 1;
	c->max_trace_mb = SS_DIRECT_TRACE_MB;
	c->stats = SS_STATS_WHOLE_RUN;
	setenv("STEPSCOPE__DIRECT", "1", 1);
}

/* Lock held, at exit of the process that made the run directory. */
void ss_direct_say_exit(void)
{
	if (!ss_direct) {
		if (ss_direct_cfg[0])
			ss_warn("trace written to %s; %s; next: stepscope symbolize %s", ss_rt.dir,
				ss_direct_cfg, ss_rt.dir);
		else
			ss_warn("trace written to %s (next: stepscope symbolize %s)", ss_rt.dir,
				ss_rt.dir);
		return;
	}
	/* the disk it takes: the rings and chunks prepared ahead are mostly
	 * holes by now (ring.c, pool.c) */
	struct stat st;
	int fd = ss_buf_fd();
	double mb = fd >= 0 && !fstat(fd, &st) ? (double)st.st_blocks * 512 / (1 << 20)
					       : (double)ss_rt.file_off / (1 << 20);
	ss_warn("recorded the whole run into %s (%.1f MB of trace%s, whole-run statistics); "
		"next: 'stepscope steps %s' picks the step function; "
		"STEPSCOPE_DISABLE=1 runs the program without recording",
		ss_rt.dir, mb,
		ss_rt.stopped ? ", cut at max_trace_mb=" SS_DIRECT_STR(SS_DIRECT_TRACE_MB) : "",
		ss_rt.dir);
}
