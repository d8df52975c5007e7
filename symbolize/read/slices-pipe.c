/*
 * slices-pipe.c - walk a process's threads into slices on a worker thread
 * while the calling thread hands them to the exporters (ss_slicer_walk):
 * reading, decoding, pairing and naming on one core, JSON, protobuf or
 * sums on another.
 *
 * Design: a two-stage pipeline over a fixed ring of chunks of slices.
 * The worker runs ss_slicer_thread for every thread in order with
 * callbacks that copy each slice (and each opening, for exporters that
 * take them) into the chunk it fills; a full chunk is handed over under
 * one mutex, so the lock is taken once per SS_PIPE_CHUNK slices, and a
 * side that must wait sleeps until half the ring is there for it.  The
 * calling thread takes the chunks in order and makes the callbacks the
 * serial walk would have made, in the same order: the outputs are the
 * same bytes.  Names that live in the walk's stack buffers (steps,
 * markers, ranges without a string, unnamed addresses) and record.args
 * values (one buffer of the walk's, reused) are copied with the slice;
 * everything else a slice points to (symbol names and files,
 * range strings, native stacks) belongs to the slicer and its symbol
 * space and outlives the walk.  Only the worker touches the slicer and
 * the symbol space while it runs.  STEPSCOPE_JOBS=1, a single CPU, CPUs
 * busy with other work, a command whose exporters are light (symbolize:
 * ss_slicer_pipe_default), or a worker that cannot start: the serial
 * walk, on the calling thread (STEPSCOPE_JOBS=2 asks for the worker
 * anyway).
 *
 * Memory: SS_PIPE_CHUNKS x SS_PIPE_CHUNK slices (about 0.5 MB, so that
 * the ring stays in the two cores' caches, and the
 * record.args values of those slices), whatever the trace's size.
 *
 * Must never: reorder, drop or duplicate a callback, or let the calling
 * thread touch the slicer or symbol space while the worker walks.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slices.h"
#include "slicer.h"

#define SS_PIPE_CHUNK 256
#define SS_PIPE_CHUNKS 8
#define SS_PIPE_NAMES (SS_PIPE_CHUNK * 24)    /* bytes of copied names */
#define SS_PIPE_NAME 96                         /* the longest kept */
/* a side that has to wait sleeps until this many chunks are there for it
 * (room for the worker, slices for the calling thread): one wake-up per
 * half ring, not per chunk */
#define SS_PIPE_HALF (SS_PIPE_CHUNKS / 2)

struct ss_pipe_ent {
	struct ss_slice s;
	uint64_t tid;
	int open;               /* an opening (open_fn), else a slice (fn) */
	size_t av;              /* s.argv: its index in the chunk's av */
};

struct ss_pipe_chunk {
	struct ss_pipe_ent e[SS_PIPE_CHUNK];
	size_t n;
	char names[SS_PIPE_NAMES];      /* the names the walk built */
	size_t nnames;
#ifdef SS_ARGS_MAX
	/* record.args: the walk reuses one argv buffer for every slice, so
	 * the values travel in the chunk */
	struct ss_argv *av;
	size_t nav, capav;
#endif
};

struct ss_pipe {
	struct ss_slicer *sl;
	pthread_mutex_t mu;
	pthread_cond_t cv_data, cv_room;        /* for the calling thread, the worker */
	int wait_data, wait_room;               /* which of them sleeps */
	struct ss_pipe_chunk *ch;       /* SS_PIPE_CHUNKS of them */
	/* chunks are used in turn: [taken, filled) wait for the calling
	 * thread, the one at `filled` is the worker's (counts, mod CHUNKS) */
	size_t taken, filled;
	size_t n;                       /* entries in the worker's chunk */
	int done;
};

/* The name of s, when the walk built it in a buffer of its own: step,
 * marker, range without a string, function without a symbol space. */
static int ss_pipe_own_name(const struct ss_slice *s)
{
	if (!s->name)
		return 0;
	if (s->cat != SS_SLICE_FUNCTION)
		return 1;
	return s->name[0] == '0' && s->name[1] == 'x';
}

#ifdef SS_ARGS_MAX
static const struct ss_argv ss_pipe_noargs;
#endif

/* The worker's chunk is full or the last: point its slices' argv into
 * the chunk's copies (no longer moved) and count it. */
static void ss_pipe_seal(struct ss_pipe *p)
{
	struct ss_pipe_chunk *c = &p->ch[p->filled % SS_PIPE_CHUNKS];
#ifdef SS_ARGS_MAX
	size_t i;

	for (i = 0; i < p->n; i++)
		if (c->e[i].s.argv)
			c->e[i].s.argv = c->e[i].av == SIZE_MAX ? &ss_pipe_noargs :
								 c->av + c->e[i].av;
#endif
	c->n = p->n;
}

/* Hand the worker's chunk over and wait for a free one. */
static void ss_pipe_publish(struct ss_pipe *p)
{
	ss_pipe_seal(p);
	pthread_mutex_lock(&p->mu);
	p->filled++;
	if (p->wait_data && p->filled - p->taken >= SS_PIPE_HALF)
		pthread_cond_signal(&p->cv_data);
	if (p->filled - p->taken >= SS_PIPE_CHUNKS) {
		p->wait_room = 1;
		while (p->filled - p->taken > SS_PIPE_CHUNKS - SS_PIPE_HALF)
			pthread_cond_wait(&p->cv_room, &p->mu);
		p->wait_room = 0;
	}
	pthread_mutex_unlock(&p->mu);
	p->n = 0;
	p->ch[p->filled % SS_PIPE_CHUNKS].nnames = 0;
#ifdef SS_ARGS_MAX
	p->ch[p->filled % SS_PIPE_CHUNKS].nav = 0;
#endif
}

static void ss_pipe_add(struct ss_pipe *p, uint64_t tid, const struct ss_slice *s,
			int open)
{
	struct ss_pipe_chunk *c = &p->ch[p->filled % SS_PIPE_CHUNKS];
	int own = ss_pipe_own_name(s);
	struct ss_pipe_ent *e;
	size_t sn = sizeof(*s);

	if (own && c->nnames + SS_PIPE_NAME > SS_PIPE_NAMES) {
		ss_pipe_publish(p);  /* its names are full (never empty) */
		c = &p->ch[p->filled % SS_PIPE_CHUNKS];
	}
	e = &c->e[p->n++];
	__asm__("" : "+r"(sn));  /* libc's vector copy, not `rep movs` */
	memcpy(&e->s, s, sn);
	e->tid = tid;
	e->open = open;
	if (own) {
		size_t l = strlen(s->name);
		if (l >= SS_PIPE_NAME)
			l = SS_PIPE_NAME - 1;
		memcpy(c->names + c->nnames, s->name, l);
		c->names[c->nnames + l] = 0;
		e->s.name = c->names + c->nnames;
		c->nnames += l + 1;
	}
#ifdef SS_ARGS_MAX
	if (s->argv && s->nargv) {
		struct ss_pipe_chunk *c = &p->ch[p->filled % SS_PIPE_CHUNKS];
		if (c->nav + s->nargv > c->capav) {
			size_t nc = c->capav ? c->capav : 256;
			struct ss_argv *na;
			while (nc < c->nav + s->nargv)
				nc *= 2;
			na = realloc(c->av, nc * sizeof(*na));
			if (na) {
				c->av = na;
				c->capav = nc;
			}
		}
		if (c->nav + s->nargv <= c->capav) {
			memcpy(c->av + c->nav, s->argv, s->nargv * sizeof(*s->argv));
			e->av = c->nav;
			c->nav += s->nargv;
		} else {  /* out of memory: the slice without its values */
			e->s.argv = NULL;
			e->s.nargv = 0;
		}
	} else if (s->argv) {
		e->av = SIZE_MAX;  /* listed, with no parameters */
	}
#endif
	if (p->n == SS_PIPE_CHUNK)
		ss_pipe_publish(p);
}

static void ss_pipe_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	ss_pipe_add(ctx, tid, s, 0);
}

static void ss_pipe_open(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	ss_pipe_add(ctx, tid, s, 1);
}

static void *ss_pipe_main(void *arg)
{
	struct ss_pipe *p = arg;
	size_t t;

	for (t = 0; t < p->sl->r->nthreads; t++)
		ss_slicer_thread(p->sl, t, ss_pipe_slice, p);
	ss_pipe_seal(p);
	pthread_mutex_lock(&p->mu);
	p->filled++;
	p->done = 1;
	pthread_cond_signal(&p->cv_data);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int ss_pipe_default = 1;

void ss_slicer_pipe_default(int on)
{
	ss_pipe_default = on;
}

/* Whether a second CPU is there to walk on: STEPSCOPE_JOBS, else the
 * command's choice (ss_slicer_pipe_default), the CPUs this process may
 * run on and the machine's load (the last minute's run queue,
 * /proc/loadavg): with more runnable tasks than CPUs plus one, the two
 * threads mostly take turns, and the handing over costs a quarter more
 * CPU time than the serial walk.  (report on 4x10^7 events, 2 CPUs at
 * load 1.7-2.3: 1.39-1.48 s serial, 0.95 s with the worker.) */
static int ss_pipe_wanted(void)
{
	const char *j = getenv("STEPSCOPE_JOBS");
	double ncpu = (double)sysconf(_SC_NPROCESSORS_ONLN), load;
	cpu_set_t cs;
	FILE *f;

	if (j && *j)
		return atoi(j) > 1;
	if (!ss_pipe_default)
		return 0;
	if (!sched_getaffinity(0, sizeof(cs), &cs))
		ncpu = CPU_COUNT(&cs);
	if (ncpu < 2)
		return 0;
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) == 1 && load > ncpu + 1)
			ncpu = 1;
		fclose(f);
	}
	return ncpu >= 2;
}

void ss_slicer_walk(struct ss_slicer *sl, ss_slice_fn fn, void *ctx)
{
	ss_slice_fn open_fn = sl->open_fn;
	void *open_ctx = sl->open_ctx;
	struct ss_pipe p;
	pthread_t th;
	size_t t, i;

	memset(&p, 0, sizeof(p));
	if (sl->r->nthreads && ss_pipe_wanted())
		p.ch = calloc(SS_PIPE_CHUNKS, sizeof(*p.ch));
	if (!p.ch) {
		for (t = 0; t < sl->r->nthreads; t++)
			ss_slicer_thread(sl, t, fn, ctx);
		return;
	}
	p.sl = sl;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv_data, NULL);
	pthread_cond_init(&p.cv_room, NULL);
	if (open_fn) {
		sl->open_fn = ss_pipe_open;
		sl->open_ctx = &p;
	}
	if (pthread_create(&th, NULL, ss_pipe_main, &p)) {
		sl->open_fn = open_fn;
		sl->open_ctx = open_ctx;
		for (t = 0; t < sl->r->nthreads; t++)
			ss_slicer_thread(sl, t, fn, ctx);
		goto out;
	}
	for (;;) {
		struct ss_pipe_chunk *c;
		int last;
		pthread_mutex_lock(&p.mu);
		if (p.taken == p.filled) {
			p.wait_data = 1;
			while (!p.done && p.filled - p.taken < SS_PIPE_HALF)
				pthread_cond_wait(&p.cv_data, &p.mu);
			p.wait_data = 0;
		}
		last = p.done && p.taken + 1 == p.filled;
		pthread_mutex_unlock(&p.mu);
		c = &p.ch[p.taken % SS_PIPE_CHUNKS];
		for (i = 0; i < c->n; i++) {
			const struct ss_pipe_ent *e = &c->e[i];
			if (e->open)
				open_fn(open_ctx, e->tid, &e->s);
			else
				fn(ctx, e->tid, &e->s);
		}
		pthread_mutex_lock(&p.mu);
		p.taken++;
		if (p.wait_room && p.filled - p.taken <= SS_PIPE_CHUNKS - SS_PIPE_HALF)
			pthread_cond_signal(&p.cv_room);
		pthread_mutex_unlock(&p.mu);
		if (last)
			break;
	}
	pthread_join(th, NULL);
	sl->open_fn = open_fn;
	sl->open_ctx = open_ctx;
out:
#ifdef SS_ARGS_MAX
	for (i = 0; i < SS_PIPE_CHUNKS; i++)
		free(p.ch[i].av);
#endif
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv_data);
	pthread_cond_destroy(&p.cv_room);
	free(p.ch);
}
