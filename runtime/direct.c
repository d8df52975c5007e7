/*
 * direct.c - an instrumented program run on its own: no `stepscope
 * record` (no STEPSCOPE_DIR from it), no config file and no STEPSCOPE_SET.
 * Such a run is usually a quick check, so it records something small and
 * useful instead of a trace of everything up to 4 GB: the whole run, with
 * the trace bounded at SS_DIRECT_TRACE_MB and whole-run statistics
 * (`stats: whole_run`), and says in one line at exit what it wrote and how
 * to go on (pick a step function with `stepscope steps`).
 *
 * Processes the direct run starts (fork + exec) inherit STEPSCOPE_DIR; the
 * mark STEPSCOPE__DIRECT tells them they belong to a direct run too.
 *
 * Must never: change a run that has a config, --set or STEPSCOPE_SET, or
 * one started by `stepscope record`.
 */
#include <stdlib.h>

#include <sys/stat.h>

#include "internal.h"

#define SS_DIRECT_TRACE_MB 128
#define SS_DIRECT_STR2(x) #x
#define SS_DIRECT_STR(x) SS_DIRECT_STR2(x)

static int ss_direct;

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
