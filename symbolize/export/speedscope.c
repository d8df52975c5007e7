/*
 * speedscope.c - write slices in speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json): one "evented"
 * profile per thread, times in nanoseconds from the start of the run,
 * named after the thread, the frames shared.
 *
 * Design: speedscope wants each profile's open/close events in time order
 * and properly nested, with the training steps as the top level.  The
 * slices of the current thread are buffered (32 bytes each), then at the
 * thread's end every function and range is cut at the step boundaries (a
 * call that runs across steps 2 and 3 shows under both), the pieces and
 * steps sorted (begin, longer first, step first) and written with a stack;
 * a piece that would outlast its parent is cut to it.  Frames are interned
 * by name and file as they come and written at the end, after the
 * profiles; JSON readers do not care about key order.
 *
 * Must never: write a close before its open, an "at" that goes back in
 * time within a profile, or invalid UTF-8 (ss_export_json_escape).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "outfile.h"
#include "util.h"
#include "version.h"

struct ss_ss_slice {
	uint64_t begin, end;
	uint32_t frame;
	uint32_t depth;          /* 0 for steps: they come first */
	int step;
};

struct ss_ss_thread {
	uint64_t pid, tid;
	char *name;
};

struct ss_speedscope {
	struct ss_exporter ex;
	FILE *f;
	char *path;
	struct ss_out out;        /* outfile.h */
	uint64_t t0;
	int nprofiles;
	/* frames: "name\tfile:line" keys, hashed */
	char **frames;
	size_t nframes, capframes;
	uint32_t *fhash;
	size_t fhcap;
	struct ss_ss_thread *threads;
	size_t nthreads, capthreads;
	/* current thread */
	int have_cur;
	uint64_t cur_pid, cur_tid;
	struct ss_ss_slice *sl;
	size_t nsl, capsl;
	char *esc;               /* escape scratch */
	size_t capesc;
};

static void ss_ss_str(struct ss_speedscope *p, const char *s)
{
	size_t need = 6 * strlen(s) + 1;

	if (need > p->capesc) {
		char *n = realloc(p->esc, need);
		if (!n)
			return;
		p->esc = n;
		p->capesc = need;
	}
	fwrite(p->esc, 1, ss_export_json_escape(p->esc, s), p->f);
}

/* Frame index of (name, file); UINT32_MAX out of memory. */
static uint32_t ss_ss_frame(struct ss_speedscope *p, const char *name, const char *file)
{
	size_t nl = strlen(name), fl = file ? strlen(file) : 0, i;
	char *key = malloc(nl + fl + 2);

	if (!key)
		return UINT32_MAX;
	memcpy(key, name, nl);
	key[nl] = '\t';
	memcpy(key + nl + 1, file ? file : "", fl + 1);
	if ((p->nframes + 1) * 2 > p->fhcap) {
		size_t nc = p->fhcap ? p->fhcap * 2 : 256, k;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh) {
			free(key);
			return UINT32_MAX;
		}
		for (k = 0; k < p->nframes; k++) {
			size_t j = ss_hash_str(p->frames[k]) & (nc - 1);
			while (nh[j])
				j = (j + 1) & (nc - 1);
			nh[j] = (uint32_t)k + 1;
		}
		free(p->fhash);
		p->fhash = nh;
		p->fhcap = nc;
	}
	i = ss_hash_str(key) & (p->fhcap - 1);
	while (p->fhash[i]) {
		if (!strcmp(p->frames[p->fhash[i] - 1], key)) {
			free(key);
			return p->fhash[i] - 1;
		}
		i = (i + 1) & (p->fhcap - 1);
	}
	if (ss_grow((void **)&p->frames, &p->capframes, p->nframes, sizeof(char *), 64)) {
		free(key);
		return UINT32_MAX;
	}
	p->frames[p->nframes] = key;
	p->fhash[i] = (uint32_t)p->nframes + 1;
	return (uint32_t)p->nframes++;
}

static int ss_ss_cmp(const void *x, const void *y)
{
	const struct ss_ss_slice *a = x, *b = y;

	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	if (a->step != b->step)
		return a->step ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

static const char *ss_ss_thread_name(struct ss_speedscope *p, uint64_t pid, uint64_t tid)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].pid == pid && p->threads[i].tid == tid)
			return p->threads[i].name;
	return NULL;
}

static void ss_ss_event(struct ss_speedscope *p, int *first, char type, uint32_t frame,
			uint64_t at)
{
	fprintf(p->f, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%llu}", *first ? "" : ",",
		type, frame, (unsigned long long)at);
	*first = 0;
}

/* Append s cut to [b, e] to the *n pieces in *all, growing it: 0, or -1
 * out of memory. */
static int ss_ss_piece(struct ss_ss_slice **all, size_t *n, size_t *cap, struct ss_ss_slice s,
		       uint64_t b, uint64_t e)
{
	if (*n + 1 >= *cap) {
		struct ss_ss_slice *m = realloc(*all, *cap * 2 * sizeof(**all));
		if (!m)
			return -1;
		*all = m;
		*cap *= 2;
	}
	s.begin = b;
	s.end = e;
	(*all)[(*n)++] = s;
	return 0;
}

/* Cut the buffered slices at step boundaries and write the profile. */
static void ss_ss_flush(struct ss_speedscope *p)
{
	struct ss_ss_slice *steps = NULL, *all = NULL, *stack = NULL;
	size_t nsteps = 0, nall = 0, cap, i, k, sp = 0;
	uint64_t lo = UINT64_MAX, hi = 0, last = 0;
	const char *tn;
	int first = 1;

	if (!p->have_cur)
		return;
	p->have_cur = 0;
	if (!p->nsl)
		return;
	for (i = 0; i < p->nsl; i++)
		nsteps += p->sl[i].step;
	steps = malloc((nsteps + 1) * sizeof(*steps));
	if (!steps)
		goto out;
	for (i = 0, k = 0; i < p->nsl; i++)
		if (p->sl[i].step)
			steps[k++] = p->sl[i];
	qsort(steps, nsteps, sizeof(*steps), ss_ss_cmp);
	cap = p->nsl * 2 + nsteps * 2 + 16;
	all = malloc(cap * sizeof(*all));
	stack = malloc((p->nsl + nsteps + 1) * sizeof(*stack));
	if (!all || !stack)
		goto out;
	for (i = 0; i < nsteps; i++)
		all[nall++] = steps[i];
	for (i = 0; i < p->nsl; i++) {
		struct ss_ss_slice s = p->sl[i];
		uint64_t cur = s.begin;
		size_t a = 0, b = nsteps, pieces = 0;
		if (s.step)
			continue;
		while (a < b) {  /* first step ending after the slice begins */
			size_t m = a + (b - a) / 2;
			if (steps[m].end < s.begin)
				a = m + 1;
			else
				b = m;
		}
		for (k = a; k < nsteps && steps[k].begin < s.end; k++) {
			uint64_t pb, pe;
			if (steps[k].end < cur)
				continue;
			if (steps[k].begin > cur + SS_EXPORT_STEP_GAP) {
				/* before the step (the gap exporters leave
				 * between steps is not "before") */
				if (ss_ss_piece(&all, &nall, &cap, s, cur, steps[k].begin))
					goto out;
				pieces++;
			}
			pb = s.begin > steps[k].begin ? s.begin : steps[k].begin;
			pe = s.end < steps[k].end ? s.end : steps[k].end;
			if (pe < pb)
				pe = pb;
			if (pe == pb && s.end > s.begin)
				continue;  /* touches the step only at an end */
			if (ss_ss_piece(&all, &nall, &cap, s, pb, pe))
				goto out;
			pieces++;
			cur = pe;
		}
		if (s.end > cur + SS_EXPORT_STEP_GAP || !pieces) {  /* after the steps */
			if (ss_ss_piece(&all, &nall, &cap, s, pieces ? cur : s.begin, s.end))
				goto out;
		}
	}
	qsort(all, nall, sizeof(*all), ss_ss_cmp);
	for (i = 0; i < nall; i++) {
		if (all[i].begin < lo)
			lo = all[i].begin;
		if (all[i].end > hi)
			hi = all[i].end;
	}
	lo = lo > p->t0 ? lo - p->t0 : 0;
	hi = hi > p->t0 ? hi - p->t0 : 0;
	tn = ss_ss_thread_name(p, p->cur_pid, p->cur_tid);
	fprintf(p->f, "%s\n{\"type\":\"evented\",\"name\":\"", p->nprofiles ? "," : "");
	if (tn)
		ss_ss_str(p, tn);
	else
		fprintf(p->f, "thread %llu", (unsigned long long)p->cur_tid);
	fprintf(p->f, " (tid %llu)\",\"unit\":\"nanoseconds\",\"startValue\":%llu,"
		      "\"endValue\":%llu,\"events\":[",
		(unsigned long long)p->cur_tid, (unsigned long long)lo,
		(unsigned long long)hi);
	p->nprofiles++;
	for (i = 0; i < nall; i++) {
		struct ss_ss_slice s = all[i];
		s.begin = s.begin > p->t0 ? s.begin - p->t0 : 0;
		s.end = s.end > p->t0 ? s.end - p->t0 : 0;
		while (sp && stack[sp - 1].end <= s.begin && !(stack[sp - 1].end == s.begin &&
							       stack[sp - 1].begin == s.begin)) {
			sp--;
			ss_ss_event(p, &first, 'C', stack[sp].frame, stack[sp].end);
			last = stack[sp].end;
		}
		if (sp && s.end > stack[sp - 1].end)
			s.end = stack[sp - 1].end;  /* crossing: cut to the parent */
		if (s.begin < last)
			s.begin = last;
		if (s.end < s.begin)
			s.end = s.begin;
		ss_ss_event(p, &first, 'O', s.frame, s.begin);
		last = s.begin;
		stack[sp++] = s;
	}
	while (sp) {
		sp--;
		ss_ss_event(p, &first, 'C', stack[sp].frame, stack[sp].end);
	}
	fputs("]}", p->f);
out:
	free(steps);
	free(all);
	free(stack);
	p->nsl = 0;
}

static int ss_ss_begin(void *ctx, uint64_t t0_ns)
{
	struct ss_speedscope *p = ctx;

	p->t0 = t0_ns;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"profiles\":[", p->f);
	return 0;
}

static void ss_ss_thread(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_speedscope *p = ctx;
	struct ss_ss_thread *t;

	if (ss_ss_thread_name(p, pid, tid) ||
	    ss_grow((void **)&p->threads, &p->capthreads, p->nthreads, sizeof(*t), 16))
		return;
	t = &p->threads[p->nthreads];
	t->pid = pid;
	t->tid = tid;
	if ((t->name = strdup(name)))
		p->nthreads++;
}

static void ss_ss_slice(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	struct ss_speedscope *p = ctx;
	struct ss_ss_slice *o;
	uint32_t fr;

	if (s->cat == SS_SLICE_MARKER)
		return;
	if (!p->have_cur || p->cur_pid != pid || p->cur_tid != tid) {
		ss_ss_flush(p);
		p->have_cur = 1;
		p->cur_pid = pid;
		p->cur_tid = tid;
	}
	fr = ss_ss_frame(p, s->name ? s->name : "?",
			 s->cat == SS_SLICE_FUNCTION ? s->file : NULL);
	if (fr == UINT32_MAX ||
	    ss_grow((void **)&p->sl, &p->capsl, p->nsl, sizeof(*o), 256))
		return;
	o = &p->sl[p->nsl++];
	o->begin = s->begin_ns;
	o->end = s->end_ns > s->begin_ns ? s->end_ns : s->begin_ns;
	o->frame = fr;
	o->step = s->cat == SS_SLICE_STEP;
	if (o->step && o->end - o->begin >= SS_EXPORT_STEP_GAP)
		o->end -= SS_EXPORT_STEP_GAP;
	o->depth = o->step ? 0 : s->depth + 1;
	p->ex.events++;
}


static int ss_ss_end(void *ctx, char *err, size_t errlen)
{
	struct ss_speedscope *p = ctx;
	size_t i;
	int rc = 0;

	ss_ss_flush(p);
	fputs("\n],\"shared\":{\"frames\":[", p->f);
	for (i = 0; i < p->nframes; i++) {
		char *tab = strchr(p->frames[i], '\t'), *colon;
		*tab = 0;
		fputs(i ? ",\n{\"name\":\"" : "\n{\"name\":\"", p->f);
		ss_ss_str(p, p->frames[i]);
		fputc('"', p->f);
		colon = strrchr(tab + 1, ':');
		if (tab[1]) {
			unsigned line = 0;
			if (colon && sscanf(colon + 1, "%u", &line) == 1)
				*colon = 0;
			fputs(",\"file\":\"", p->f);
			ss_ss_str(p, tab + 1);
			fputc('"', p->f);
			if (line)
				fprintf(p->f, ",\"line\":%u", line);
		}
		fputc('}', p->f);
	}
	fputs("]},\"name\":\"stepscope trace\",\"activeProfileIndex\":0,"
	      "\"exporter\":\"stepscope " SS_TOOL_VERSION "\"}\n", p->f);
	rc = ss_out_commit(&p->out, ferror(p->f) ? (errno ? errno : EIO) : 0, err, errlen) ||
	     rc ? -1 : 0;
	p->f = NULL;
	return rc;
}

static void ss_ss_release(void *ctx)
{
	struct ss_speedscope *p = ctx;
	size_t i;

	ss_out_abort(&p->out);
	for (i = 0; i < p->nframes; i++)
		free(p->frames[i]);
	for (i = 0; i < p->nthreads; i++)
		free(p->threads[i].name);
	free(p->frames);
	free(p->fhash);
	free(p->threads);
	free(p->sl);
	free(p->esc);
	free(p->path);
	free(p);
}

struct ss_exporter *ss_export_speedscope_open(const char *path, char *err,
					      size_t errlen)
{
	struct ss_speedscope *p = calloc(1, sizeof(*p));

	if (!p || !(p->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(p);
		return NULL;
	}
	if (ss_out_open(&p->out, path, err, errlen)) {
		ss_ss_release(p);
		return NULL;
	}
	p->f = p->out.f;
	p->ex.ctx = p;
	p->ex.begin = ss_ss_begin;
	p->ex.thread = ss_ss_thread;
	p->ex.slice = ss_ss_slice;
	p->ex.end = ss_ss_end;
	p->ex.release = ss_ss_release;
	ss_exporter_nops(&p->ex); /* processes and counters: none in the format */
	return &p->ex;
}
