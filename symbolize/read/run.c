/*
 * run.c - list, open and feed the raw traces of a run directory (run.h).
 *
 * Design: traces are sorted by file name so every command sees the
 * processes of a run in the same order.  ss_run_open opens them all first
 * (cheap: mmap and a chunk index) because t0, the earliest time of the
 * run, must be known before the first exporter call; ss_run_feed then
 * streams one process at a time, thread by thread, through its slicer.
 *
 * Must never: print an error itself (the command does, with its prefix),
 * or hold slices: they go to the exporters as the slicer closes them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ranks.h"
#include "run.h"
#include "util.h"

int ss_run_check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", dir,
			 errno == ENOENT || !errno ? "no such directory" : strerror(errno));
		return 2;
	}
	return 0;
}

void ss_run_sym_once(struct ss_sym *sym, const char *dir)
{
	char once[4200];

	snprintf(once, sizeof(once), "%s/.stepscope-warned", dir);
	ss_sym_warn_once_file(sym, once);
	ss_sym_set_run_dir(sym, dir);
}

struct ss_sym *ss_run_sym(const char *dir, const char *backend, int quiet,
			  char *err, size_t errlen)
{
	struct ss_sym *sym;

	if (ss_run_check_dir(dir, err, errlen))
		return NULL;
	sym = ss_sym_new(backend, err, errlen);
	if (sym) {
		ss_sym_set_quiet(sym, quiet);
		ss_run_sym_once(sym, dir);
	}
	return sym;
}

void ss_run_keep(const char *dir)
{
	char **paths, err[512];
	size_t n, i;

	if (ss_run_list(dir, ss_run_is_trace, &paths, &n))
		return;
	for (i = 0; i < n; i++) {
		struct ss_reader *r = ss_reader_open(paths[i], err, sizeof(err));
		if (!r)
			continue;  /* the reading commands say what is wrong */
		ss_sym_keep_trace(dir, r);
		ss_reader_free(r);
	}
	ss_run_list_free(paths, n);
}

static int ss_run_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ss_run_list(const char *dir, int (*match)(const char *name), char ***paths,
		size_t *n)
{
	size_t cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*paths = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *p;
		if (!match(de->d_name))
			continue;
		if (ss_grow((void **)paths, &cap, *n, sizeof(char *), 16) ||
		    asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			break;
		(*paths)[(*n)++] = p;
	}
	closedir(d);
	if (*n)
		qsort(*paths, *n, sizeof(char *), ss_run_cmp_str);
	return 0;
}

void ss_run_list_free(char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int ss_run_is_trace(const char *name)
{
	size_t l = strlen(name), sl = strlen(SS_FILE_SUFFIX);

	return l > sl && !strcmp(name + l - sl, SS_FILE_SUFFIX);
}

int ss_run_list_traces(const char *dir, char ***paths, size_t *n, char *err,
		       size_t errlen)
{
	if (ss_run_list(dir, ss_run_is_trace, paths, n) || !*n) {
		snprintf(err, errlen, "%s: no stepscope traces here (*%s)", dir,
			 SS_FILE_SUFFIX);
		return 2;
	}
	return 0;
}

int ss_run_config_has(const struct ss_reader *r, const char *text)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m))
		if (m.type == SS_META_CONFIG)
			return memmem(m.data, m.len, text, strlen(text)) != NULL;
	return 0;
}

int ss_run_traces_config_has(const char *dir, const char *text, int all)
{
	char **paths = NULL, err[256];
	size_t n = 0;
	int yes = 0;
	if (ss_run_list_traces(dir, &paths, &n, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < (all ? n : 1) && !yes; i++) {
		struct ss_reader *r = ss_run_reader(paths[i], err, sizeof(err));
		if (r) {
			yes = ss_run_config_has(r, text);
			ss_reader_free(r);
		}
	}
	ss_run_list_free(paths, n);
	return yes;
}

/* Readers that ss_run_peek opened, kept for the ss_run_reader of the same
 * file that follows: each file is scanned once, not once to see whether
 * anything was recorded and again to read it. */
static struct ss_run_kept {
	char *path;
	struct ss_reader *r;
} *ss_run_kept;
static size_t ss_run_nkept, ss_run_capkept;

struct ss_reader *ss_run_peek(const char *path, char *err, size_t errlen)
{
	struct ss_reader *r = ss_reader_open(path, err, errlen);
	char *p = NULL;

	if (!r)
		return NULL;
	if (ss_grow((void **)&ss_run_kept, &ss_run_capkept, ss_run_nkept,
		    sizeof(*ss_run_kept), 16) || !(p = strdup(path))) {
		ss_reader_free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ss_run_kept[ss_run_nkept].path = p;
	ss_run_kept[ss_run_nkept++].r = r;
	return r;
}

void ss_run_peek_drop(void)
{
	size_t i;

	for (i = 0; i < ss_run_nkept; i++) {
		ss_reader_free(ss_run_kept[i].r);
		free(ss_run_kept[i].path);
	}
	free(ss_run_kept);
	ss_run_kept = NULL;
	ss_run_nkept = ss_run_capkept = 0;
}

static struct ss_reader *ss_run_reader_as(const char *path, int say, char *err, size_t errlen);

struct ss_reader *ss_run_reader(const char *path, char *err, size_t errlen)
{
	return ss_run_reader_as(path, 1, err, errlen);
}

/* `say`: print the reader's warning (a damaged or truncated trace); 0 for
 * a command that says in its own words what the damage cost it. */
static struct ss_reader *ss_run_reader_as(const char *path, int say, char *err, size_t errlen)
{
	struct ss_reader *r = NULL;
	size_t i;

	for (i = 0; i < ss_run_nkept && !r; i++)
		if (!strcmp(ss_run_kept[i].path, path)) {
			r = ss_run_kept[i].r;
			free(ss_run_kept[i].path);
			ss_run_kept[i] = ss_run_kept[--ss_run_nkept];
		}
	if (!r)
		r = ss_reader_open(path, err, errlen);
	if (r && r->warning[0] && say)
		fprintf(stderr, "stepscope: warning: %s\n", r->warning);
	return r;
}

int ss_run_open(struct ss_run *run, const char *dir, struct ss_sym *sym,
		unsigned flags, char *err, size_t errlen)
{
	size_t i;
	int rc;

	memset(run, 0, sizeof(*run));
	rc = ss_run_list_traces(dir, &run->paths, &run->n, err, errlen);
	if (rc)
		return rc;
	run->rs = calloc(run->n, sizeof(*run->rs));
	run->sps = calloc(run->n, sizeof(*run->sps));
	run->sls = calloc(run->n, sizeof(*run->sls));
	if (!run->rs || !run->sps || !run->sls)
		goto oom;
	for (i = 0; i < run->n; i++) {
		run->rs[i] = ss_run_reader_as(run->paths[i], !(flags & SS_RUN_OWN_DAMAGE), err, errlen);
		if (!run->rs[i])
			return 2;
	}
	/* MPI ranks of several hosts: one clock (mpi-clock.c) */
	ss_ranks_align(run->rs, run->n, NULL, 0);
	for (i = 0; i < run->n; i++) {
		uint64_t f;
		run->sps[i] = ss_sym_space_new(sym);
		if (!run->sps[i] || !(run->sls[i] = ss_slicer_new(run->rs[i], run->sps[i])))
			goto oom;
		if (flags & SS_RUN_MARKERS)
			ss_slicer_markers(run->sls[i], 1);
		ss_sym_space_expect_trace(run->sps[i], run->rs[i]);
		f = ss_slicer_first_ns(run->sls[i]);
		if (f && (!run->t0 || f < run->t0))
			run->t0 = f;
	}
	/* never a name from another build than the run's */
	if (ss_sym_check_files(sym, !!(flags & SS_RUN_FORCE), err, errlen))
		return 2;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return 1;
}

void ss_run_release(struct ss_run *run)
{
	size_t i;

	for (i = 0; i < run->n; i++) {
		if (run->sls)
			ss_slicer_free(run->sls[i]);
		if (run->sps)
			ss_sym_space_free(run->sps[i]);
		if (run->rs)
			ss_reader_free(run->rs[i]);
	}
	ss_run_list_free(run->paths, run->n);
	free(run->sls);
	free(run->sps);
	free(run->rs);
	memset(run, 0, sizeof(*run));
}

struct ss_run_route {
	struct ss_exporter **ex;
	size_t nex;
	uint64_t pid;
};

static void ss_run_route_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct ss_run_route *rt = ctx;
	size_t e;

	for (e = 0; e < rt->nex; e++)
		rt->ex[e]->slice(rt->ex[e]->ctx, rt->pid, tid, s);
}

/* gpu.enabled: the GPU tracks of one process */
static void run_feed_gpu(struct ss_reader *r, struct ss_exporter **ex, size_t nex)
{
	struct ss_gpu_data g;
	if (ss_gpu_read(r, &g))
		return;
	for (size_t e = 0; g.n && e < nex; e++)
		if (ex[e]->gpu)
			ex[e]->gpu(ex[e]->ctx, r->hdr.pid, &g);
	ss_gpu_release(&g);  /* also without GPU work: its index was made */
}

void ss_run_feed(struct ss_run *run, size_t i, struct ss_exporter **ex, size_t nex,
		 ss_slice_fn fn, void *ctx)
{
	struct ss_reader *r = run->rs[i];
	struct ss_slicer *sl = run->sls[i];
	struct ss_run_route rt = { ex, nex, r->hdr.pid };
	const struct ss_stack_node *nodes;
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	char pname[1200], tname[64];
	size_t t, u, e, nn;

	if (!fn) {
		fn = ss_run_route_slice;
		ctx = &rt;
	}
	ss_ranks_pname(r, pname, sizeof(pname)); /* "rank N (host, pid P)" */
	for (e = 0; e < nex; e++)
		ex[e]->process(ex[e]->ctx, r->hdr.pid, pname);
	for (t = 0; t < r->nthreads; t++) {
		const char *tn = ss_slicer_thread_name(sl, r->threads[t].tid);
		for (u = 0; u < t && r->threads[u].tid != r->threads[t].tid; u++)
			;
		if (u < t)
			continue;  /* tid reused: one name is enough */
		if (!tn) {
			snprintf(tname, sizeof(tname), "thread %llu",
				 (unsigned long long)r->threads[t].tid);
			tn = tname;
		}
		for (e = 0; e < nex; e++)
			ex[e]->thread(ex[e]->ctx, r->hdr.pid, r->threads[t].tid, tn);
	}
	/* GPU activity before the slices: a consumer can then place each
	 * launch in the host functions as they come (gpu-report.c) */
	run_feed_gpu(r, ex, nex);
	/* record.sched: off-CPU intervals, which consumers sum per slice */
	struct ss_offcpu off;
	int have_off = !ss_offcpu_read(r, &off);
	/* a process recorded with record.sched that wrote no SWITCH_END died
	 * before its rings were read to the end: consumers say so even when
	 * nothing was read at all (three 3 ms sleeps, then SIGKILL) */
	if (have_off && !off.nrecords && !off.ended &&
	    ss_run_config_has(r, "record.sched=true"))
		off.cut = 1;
	for (e = 0; have_off && (off.nrecords || off.cut) && e < nex; e++)
		if (ex[e]->offcpu)
			ex[e]->offcpu(ex[e]->ctx, r->hdr.pid, &off);
	/* memory.allocations: read only when an exporter takes them */
	struct ss_alloc_data al;
	int have_al = 0;
	for (e = 0; e < nex && !have_al; e++)
		have_al = ex[e]->alloc != NULL;
	/* a walk of every event: only where the scan saw allocations */
	have_al = have_al && (ss_reader_has_kind(r, SS_EV_ALLOC) ||
			      ss_reader_has_kind(r, SS_EV_FREE)) &&
		  !ss_alloc_read(r, sl, &al);
	for (e = 0; have_al && al.nev && e < nex; e++)
		if (ex[e]->alloc)
			ex[e]->alloc(ex[e]->ctx, r->hdr.pid, &al);
	ss_slicer_walk(sl, fn, ctx);  /* on a worker, callbacks here */
	if (have_al)
		ss_alloc_release(&al);
	if (have_off)
		ss_offcpu_release(&off);
	/* record.stack: the frames the slices' stacks name */
	nn = ss_slicer_stack_nodes(sl, &nodes);
	for (e = 0; nn && e < nex; e++)
		if (ex[e]->stack_nodes)
			ex[e]->stack_nodes(ex[e]->ctx, r->hdr.pid, nodes, nn);
	/* memory samples: counter tracks of the process */
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_counter c;
		if (m.type != SS_META_COUNTER || m.len < sizeof(c))
			continue;
		memcpy(&c, m.data, sizeof(c));
		c.track[sizeof(c.track) - 1] = 0;
		for (e = 0; e < nex; e++)
			ex[e]->counter(ex[e]->ctx, r->hdr.pid, c.track,
				       ss_reader_ns(r, m.ts), (double)c.value);
	}
}
