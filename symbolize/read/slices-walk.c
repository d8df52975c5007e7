/*
 * slices-walk.c - one thread of a trace walked into slices
 * (ss_slicer_thread): its events in time order pushed on and popped off
 * a stack of open frames (functions, and user ranges on their own stack),
 * each slice handed to the callback as it closes, clipped to the windows
 * and marked unwound where the runtime saw frames vanish; then the
 * thread's steps.
 *
 * Design: the walk keeps only the open frames of the thread; names,
 * steps, windows and stacks are looked up in the slicer built by
 * slices.c.  slices.c's opening comment gives the rules.
 *
 * Must never: keep closed slices in memory, or emit a slice that ends
 * before it begins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slices.h"
#include "util.h"
#include "slicer.h"
#include "args-read.h"

const struct ss_slices_string *ss_slices_string(const struct ss_slicer *sl,
						uint64_t id)
{
	size_t lo = 0, hi = sl->nstrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sl->strs[mid].id == id)
			return &sl->strs[mid];
		if (sl->strs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The step record at or before ns; NULL if ns precedes every step. */
static const struct ss_slices_step *ss_slices_step_at(const struct ss_slicer *sl,
						      uint64_t ns)
{
	size_t lo = 0, hi = sl->nsteps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sl->steps[mid].ns <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &sl->steps[lo - 1] : NULL;
}

static int ss_slices_step_is(const struct ss_slices_step *s, const struct ss_rthread *t)
{
	if (s->serial && t->serial)
		return s->serial == t->serial;
	return s->tid == t->tid;
}

/* ss_slices_step_at for w's slices, which come mostly in time order:
 * the step of the last answer or the one after it are tried before a
 * search. */
static const struct ss_slices_step *ss_slices_step_near(struct ss_slices_walk *w,
							uint64_t ns)
{
	const struct ss_slicer *sl = w->sl;
	const struct ss_slices_step *st;
	size_t h = w->step_hint, k;

	for (k = h; k < h + 2 && k < sl->nsteps && sl->steps[k].ns <= ns; k++)
		if (k + 1 >= sl->nsteps || ns < sl->steps[k + 1].ns) {
			w->step_hint = k;
			return &sl->steps[k];
		}
	st = ss_slices_step_at(sl, ns);
	if (st)
		w->step_hint = (size_t)(st - sl->steps);
	return st;
}

/* Whether [begin, end] lies inside one of the ProfilerStep slices that
 * ss_slicer_thread hands out for w's thread: the step record at or before
 * begin (st) is a RECORD step of this thread and the next record (the
 * step's end) is at or after end.  A slice clipped at its begin began
 * before its window, so before any step in it. */
static int ss_slices_in_step(const struct ss_slices_walk *w,
			     const struct ss_slices_step *st, uint64_t end,
			     unsigned flags)
{
	const struct ss_slicer *sl = w->sl;
	size_t i;

	if (!w->t || (flags & SS_SLICE_CLIPPED_BEGIN))
		return 0;
	if (!st || st->action != SS_STEP_RECORD || !ss_slices_step_is(st, w->t))
		return 0;
	if (w->stop_ns && st->ns >= w->stop_ns)
		return 0;
	i = (size_t)(st - sl->steps);
	return i + 1 >= sl->nsteps || end <= sl->steps[i + 1].ns;
}

/* The innermost frame of stack st (from 1) that is one of the `depth`
 * open calls below the slice, matched by function address; 0 if none.
 * When frame 0 is not the slice's function `self` but one of the open
 * calls, the function was inlined into that caller (its hooks run from the
 * caller's code): 1, nothing goes between them. */
static size_t ss_slices_stack_caller(const struct ss_slicer *sl,
				     const struct ss_stack *st,
				     const struct ss_slices_fstack *calls, size_t depth,
				     uint64_t self)
{
	uint32_t node = st->leaf;
	size_t k, j;

	if (!node || node > sl->nnodes || depth > calls->n)
		return 0;
	if (sl->nodes[node - 1].start != self)
		for (j = depth; j-- > 0;)
			if (calls->f[j].key == sl->nodes[node - 1].start)
				return 1;
	node = sl->nodes[node - 1].parent;
	for (k = 1; k < st->n && node && node <= sl->nnodes; k++) {
		uint64_t start = sl->nodes[node - 1].start;
		for (j = depth; j-- > 0;)
			if (calls->f[j].key == start)
				return k;
		node = sl->nodes[node - 1].parent;
	}
	return 0;
}

/* The slice of frame `key` (or step) into s; buf (48 bytes) may hold its
 * name. */
static void ss_slices_fill(struct ss_slices_walk *w, struct ss_slice *sp,
			   char *buf, enum ss_slice_cat cat, uint64_t key,
			   uint64_t begin, uint64_t end, unsigned flags, size_t depth,
			   unsigned other)
{
	struct ss_slicer *sl = w->sl;
	const struct ss_slices_step *st;

	/* a size the compiler cannot see, so that libc's memset (vector
	 * stores) clears the slice: the inlined `rep stos` of a constant
	 * size was half of this function's time, twice per call */
	size_t zn = sizeof(*sp);
	__asm__("" : "+r"(zn));
	memset(sp, 0, zn);
	sp->cat = cat;
	sp->begin_ns = begin;
	sp->end_ns = end < begin ? begin : end;
	sp->flags = flags;
	sp->depth = (unsigned)depth;
	sp->nest = (unsigned)depth + other;
	if (cat == SS_SLICE_FUNCTION) {
		const struct ss_sym_info *info = w->info;
		if (!info && sl->sp)
			info = ss_sym_lookup_at(sl->sp, key, begin);
		w->last_info = info;
		if (info) {
			sp->name = info->name;
			sp->file = info->file;
			sp->clone = info->clone;
		} else {
			snprintf(buf, 48, "0x%llx", (unsigned long long)key);
			sp->name = buf;
		}
		sp->addr = key;
		if (w->stack) {  /* of a closing frame; openings set their own
				  * (read back from sp, not: a load right after
				  * the memset stalls on its stores) */
			sp->stack = ss_slices_stack(sl, w->stack);
			if (sp->stack)
				sp->stack_caller = ss_slices_stack_caller(sl, sp->stack,
									&w->calls, depth, key);
		}
		if (flags & SS_SLICE_UNWOUND)
			sp->unwind = w->why;
		if (w->args) {  /* record.args */
			int n = ss_args_resolve(sl->sp, w->args, w->nargs, begin, w->argv,
						SS_ARGS_MAX);
			if (n >= 0) {
				sp->argv = w->argv;
				sp->nargv = (size_t)n;
				n = ss_args_flops(sl->flops, sp->name, w->argv, (size_t)n,
						  &sp->flops);
				sp->has_flops = n < 0 ? 0 : n ? 2 : 1;
			}
		}
	} else if (cat == SS_SLICE_RANGE) {
		const struct ss_slices_string *str = ss_slices_string(sl, key);
		sp->name = str ? str->text : NULL;
		sp->args = str ? str->args : NULL;
		if (!sp->name) {
			snprintf(buf, 48, "range#%llu",
				 (unsigned long long)key);
			sp->name = buf;
		}
	} else {
		snprintf(buf, 48, "ProfilerStep#%llu",
			 (unsigned long long)key);
		sp->name = buf;
	}
	st = ss_slices_step_near(w, begin);
	if (cat == SS_SLICE_FUNCTION || cat == SS_SLICE_RANGE)
		sp->in_step = ss_slices_in_step(w, st, end, flags);
	if (st) {
		sp->has_step = 1;
		sp->step = st->step;
		sp->cycle = st->cycle;
	}
}

/* Tell open_fn about the frame on top of w->pend (pushed, not closed). */
static void ss_slices_announce(struct ss_slices_walk *w)
{
	struct ss_slices_fstack *st = w->pend;
	struct ss_slices_frame *f;
	struct ss_slice s;
	char buf[48];

	w->pend = NULL;
	if (!st || !st->n || !w->sl->open_fn)
		return;
	f = &st->f[st->n - 1];
	ss_slices_fill(w, &s, buf, w->pend_cat, f->key, f->begin, f->begin, f->flags,
		       st->n - 1, f->other);
	if (w->pend_cat == SS_SLICE_FUNCTION)
		f->info = w->last_info;  /* its slice need not look it up again */
	if (w->pend_cat == SS_SLICE_FUNCTION && f->stack) {
		s.stack = ss_slices_stack(w->sl, f->stack);
		if (s.stack)
			s.stack_caller = ss_slices_stack_caller(w->sl, s.stack,
								&w->calls, st->n - 1, f->key);
	}
	w->sl->open_fn(w->sl->open_ctx, w->tid, &s);
}

/* A frame was pushed on st: announce it once its stack is known. */
static void ss_slices_opened(struct ss_slices_walk *w, struct ss_slices_fstack *st,
			     enum ss_slice_cat cat, size_t before)
{
	if (!w->sl->open_fn || st->n == before)
		return;
	w->pend = st;
	w->pend_cat = cat;
}

static void ss_slices_emit(struct ss_slices_walk *w, enum ss_slice_cat cat,
			   uint64_t key, uint64_t begin, uint64_t end,
			   unsigned flags, size_t depth, unsigned other)
{
	struct ss_slice s;
	char buf[48];

	ss_slices_fill(w, &s, buf, cat, key, begin, end, flags, depth, other);
	if (cat != SS_SLICE_FUNCTION)
		s.stack = NULL;
	w->stack = 0;
	w->fn(w->ctx, w->tid, &s);
	w->emitted++;
}

/* A STOP or LOST event as a MARKER slice, at its time. */
static void ss_slices_mark(struct ss_slices_walk *w, unsigned kind, uint64_t arg,
			   uint64_t ns)
{
	static const char *const why[] = { NULL, "max_trace_mb", "disk full",
					   "write error" };
	const struct ss_slices_step *st = ss_slices_step_at(w->sl, ns);
	struct ss_slice s;
	char buf[96];

	memset(&s, 0, sizeof(s));
	s.cat = SS_SLICE_MARKER;
	s.begin_ns = s.end_ns = ns;
	s.depth = (unsigned)w->calls.n;
	s.marker = kind;
	s.marker_arg = arg;
	if (kind == SS_EV_LOST)
		snprintf(buf, sizeof(buf), "stepscope: events lost");
	else if (arg < sizeof(why) / sizeof(why[0]) && why[arg])
		snprintf(buf, sizeof(buf), "stepscope: recording stopped (%s)",
			 why[arg]);
	else
		snprintf(buf, sizeof(buf), "stepscope: recording stopped (reason %llu)",
			 (unsigned long long)arg);
	s.name = buf;
	if (st) {
		s.has_step = 1;
		s.step = st->step;
		s.cycle = st->cycle;
	}
	w->fn(w->ctx, w->tid, &s);
	w->emitted++;
}

static void ss_slices_push(struct ss_slices_fstack *st, uint64_t key,
			   uint64_t begin, unsigned flags)
{
	if (ss_grow((void **)&st->f, &st->cap, st->n, sizeof(*st->f), 16))
		return;
	st->f[st->n].key = key;
	st->f[st->n].begin = begin;
	st->f[st->n].flags = flags;
	st->f[st->n].stack = 0;
	st->f[st->n].other = 0;
	st->f[st->n].args = NULL;
	st->f[st->n].info = NULL;
	st->f[st->n].nargs = 0;
	st->n++;
}

/* The frame just pushed on st (it held `before`) opened inside `other`
 * frames of the other kind: a slice's nest (slices.h). */
static void ss_slices_other(struct ss_slices_fstack *st, size_t before, size_t other)
{
	if (st->n > before)
		st->f[st->n - 1].other = (unsigned)other;
}

/* A call (SS_SLICE_FUNCTION) or range opens at ns: pushed on its stack
 * with the frames of the other kind it opened inside, and announced. */
static void ss_slices_open(struct ss_slices_walk *w, enum ss_slice_cat cat, uint64_t key,
			   uint64_t ns, unsigned flags)
{
	int range = cat == SS_SLICE_RANGE;
	struct ss_slices_fstack *st = range ? &w->ranges : &w->calls;
	size_t before = st->n;

	ss_slices_push(st, key, ns, flags);
	ss_slices_other(st, before, range ? w->calls.n : w->ranges.n);
	ss_slices_opened(w, st, cat, before);
}

/* Close the frames [from, st->n) at ns, outermost first: `first` flags
 * for the one at `from`, `rest` for those above it.  Viewers nest two
 * slices of equal begin and end by their order in the file, so frames
 * that close together go parent first.  The frame at `from` closes before
 * the one below it, which may end in the same clock tick (a 10 ns clock, a
 * handler's first call): when it also began in its caller's tick, it
 * begins 1 ns later, if it lasts that long.  The same holds across the two
 * stacks: a range a function opens as it starts (or a call made as a range
 * opens) ends in the same tick as its caller and closes first, so any
 * frame that began in the tick of the frame of the other kind below it
 * (f->other) begins 1 ns later too.  A slice only ever shrinks, inside a
 * tick the clock could not split, and stays inside all around it.
 * Frames clipped at a window's begin keep it: they close together,
 * parent first, at the window's end. */
static void ss_slices_close_group(struct ss_slices_walk *w, struct ss_slices_fstack *st,
				  enum ss_slice_cat cat, size_t from, uint64_t ns,
				  unsigned first, unsigned rest)
{
	const struct ss_slices_fstack *o = st == &w->calls ? &w->ranges : &w->calls;
	size_t n = st->n, k;

	st->n = from;
	for (k = from; k < n; k++) {
		const struct ss_slices_frame *f = &st->f[k];
		uint64_t begin = f->begin;
		int tie = (k == from && k && st->f[k - 1].begin == begin) ||
			  (f->other && f->other <= o->n && o->f[f->other - 1].begin == begin);
		if (tie && ns > begin && !(f->flags & SS_SLICE_CLIPPED_BEGIN))
			begin++;
		w->stack = f->stack;
		w->args = f->args;
		w->nargs = f->nargs;
		/* the announcement's lookup, made at the same time */
		w->info = cat == SS_SLICE_FUNCTION && begin == f->begin ? f->info : NULL;
		ss_slices_emit(w, cat, f->key, begin, ns,
			       f->flags | (k == from ? first : rest), k, f->other);
		w->info = NULL;
		w->args = NULL;
		free(st->f[k].args);
		st->f[k].args = NULL;
	}
}

/* Close frames above `keep` (left open) at ns with extra flags. */
static void ss_slices_close_to(struct ss_slices_walk *w, struct ss_slices_fstack *st,
			       enum ss_slice_cat cat, size_t keep, uint64_t ns,
			       unsigned flags)
{
	if (st->n > keep)
		ss_slices_close_group(w, st, cat, keep, ns, flags, flags);
}

/* Close every frame at a window's end (or a stop), outermost first: frames
 * clipped at the window's start begin and end together, and viewers take
 * the first of two slices with equal times as the parent. */
static void ss_slices_close_all(struct ss_slices_walk *w, struct ss_slices_fstack *st,
				enum ss_slice_cat cat, uint64_t ns)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		w->stack = st->f[i].stack;
		ss_slices_emit(w, cat, st->f[i].key, st->f[i].begin, ns,
			       st->f[i].flags | SS_SLICE_CLIPPED_END, i, st->f[i].other);
	}
	st->n = 0;
}

/* 1 + the index of the innermost frame of st that `key` closes at ns, 0
 * if none.  A call frame taken from a native stack when a window opened
 * (ss_slices_push_stack) holds the start of the code the return address
 * is in; where that is a gcc clone of the function (f.constprop.1,
 * f.isra.0, f.part.0, f.cold), the hooks in it name the function itself
 * (gcc adds them before it clones), so the frame is the function's: it
 * takes the hooks' address and is closed, not left open under a phantom
 * clipped copy. */
static size_t ss_slices_find(struct ss_slices_walk *w, struct ss_slices_fstack *st,
			     enum ss_slice_cat cat, uint64_t key, uint64_t ns)
{
	const struct ss_sym_info *want, *have;
	size_t i = st->n;

	while (i > 0 && st->f[i - 1].key != key)
		i--;
	if (i || cat != SS_SLICE_FUNCTION || !w->sl->sp)
		return i;
	want = ss_sym_lookup_at(w->sl->sp, key, ns);
	if (!want || !want->resolved)
		return 0;
	for (i = st->n; i > 0; i--) {
		struct ss_slices_frame *f = &st->f[i - 1];
		if (!(f->flags & SS_SLICE_CLIPPED_BEGIN))
			continue;
		have = ss_sym_lookup_at(w->sl->sp, f->key, ns);
		if (have && have->resolved && have->clone && !want->clone &&
		    !strcmp(have->name, want->name)) {
			f->key = key;
			return i;
		}
	}
	return 0;
}

/* An SS_EV_ARGS record: kept with the call it follows (the innermost
 * open frame, which must be its function) until the call's slice. */
static void ss_slices_args(struct ss_slices_walk *w, const struct ss_revent *ev)
{
	struct ss_slices_frame *f;
	struct ss_args_head h;

	if (ev->n < 4 || !w->calls.n)
		return;
	f = &w->calls.f[w->calls.n - 1];
	memcpy(&h, ev->payload, sizeof(h));
	if (f->args || f->key != h.fn || !(f->args = malloc(8 * (size_t)ev->n)))
		return;
	memcpy(f->args, ev->payload, 8 * (size_t)ev->n);
	f->nargs = ev->n;
}

/* An EXIT / POP: close the matching frame, or emit a clipped one. */
static void ss_slices_pop(struct ss_slices_walk *w, struct ss_slices_fstack *st,
			  enum ss_slice_cat cat, uint64_t key, uint64_t ns,
			  uint64_t win_begin, unsigned flags)
{
	size_t i = ss_slices_find(w, st, cat, key, ns);

	w->why = SS_UNWIND_SKIPPED;  /* frames above it were jumped over */
	if (i) {
		ss_slices_close_group(w, st, cat, i - 1, ns, flags, SS_SLICE_UNWOUND);
		return;
	}
	ss_slices_close_to(w, st, cat, 0, ns, SS_SLICE_UNWOUND);
	ss_slices_emit(w, cat, key, win_begin, ns, SS_SLICE_CLIPPED_BEGIN | flags, 0, 0);
}

/* An UNWIND: the runtime found frame `key` gone without its EXIT; it and
 * the frames above it end here, unwound.  One the stack does not hold
 * (it began before the window) changes nothing. */
static void ss_slices_unwind(struct ss_slices_walk *w, uint64_t key, uint64_t ns,
			     unsigned why)
{
	struct ss_slices_fstack *st = &w->calls;
	size_t i = st->n;

	w->why = why;
	while (i > 0 && st->f[i - 1].key != key)
		i--;
	if (i)
		ss_slices_close_to(w, st, SS_SLICE_FUNCTION, i - 1, ns,
				   SS_SLICE_UNWOUND);
}

static void ss_slices_close_window(struct ss_slices_walk *w, uint64_t ns)
{
	ss_slices_close_all(w, &w->ranges, SS_SLICE_RANGE, ns);
	ss_slices_close_all(w, &w->calls, SS_SLICE_FUNCTION, ns);
}

/* Frames open on this thread when window `wi` opened. */
static void ss_slices_push_stack(struct ss_slices_walk *w, size_t wi,
				 const struct ss_rthread *t)
{
	struct ss_slicer *sl = w->sl;
	const struct ss_slices_window *win = &sl->wins[wi];
	const struct ss_slices_stack *best = NULL;
	uint64_t bestd = UINT64_MAX;
	size_t i;

	if (sl->whole_run || !sl->sp)
		return;
	for (i = 0; i < sl->nstacks; i++) {
		const struct ss_slices_stack *s = &sl->stacks[i];
		uint64_t d;
		int same = (s->serial && t->serial) ? s->serial == t->serial :
						     s->tid == t->tid;
		if (!same || s->ns >= win->close_ns)
			continue;
		d = s->ns > win->open_ns ? s->ns - win->open_ns : win->open_ns - s->ns;
		if (d < bestd) {
			bestd = d;
			best = s;
		}
	}
	if (!best)
		return;
	/* a stack closer to another window's open belongs to that window */
	for (i = 0; i < sl->nwins; i++) {
		uint64_t o = sl->wins[i].open_ns;
		uint64_t d = best->ns > o ? best->ns - o : o - best->ns;
		if (i != wi && d < bestd)
			return;
	}
	for (i = best->n; i-- > 0;) {
		uint64_t ret = best->addrs[i];
		const struct ss_sym_info *info;
		if (!ret)
			continue;
		info = ss_sym_lookup_at(sl->sp, ret - 1, best->ns);
		ss_slices_open(w, SS_SLICE_FUNCTION, info->start, win->open_ns,
			       SS_SLICE_CLIPPED_BEGIN);
		ss_slices_announce(w);
	}
}

uint64_t ss_slicer_thread(struct ss_slicer *sl, size_t thread, ss_slice_fn fn,
			  void *ctx)
{
	const struct ss_reader *r = sl->r;
	const struct ss_rthread *t;
	struct ss_slices_walk w;
	struct ss_event_iter it;
	struct ss_revent ev;
	size_t wi = 0, i;
	int in_win = 0;
	uint64_t first_ns = 0, last_ns = 0, win_begin = 0;

	if (thread >= r->nthreads)
		return 0;
	t = &r->threads[thread];
	memset(&w, 0, sizeof(w));
	w.sl = sl;
	w.tid = t->tid;
	w.t = t;
	w.fn = fn;
	w.ctx = ctx;
	ss_reader_events_begin(r, thread, &it);
	while (ss_reader_events_get(&it, &ev)) {
		if (w.pend && ev.kind != SS_EV_STACK) {
			struct ss_slices_frame *top = w.pend == &w.calls && w.calls.n ?
							      &w.calls.f[w.calls.n - 1] : NULL;
			/* ss_slicer_open_leaves(sl, 0): the EXIT of the call
			 * just pushed, inside its window: its slice comes
			 * next, unannounced */
			if (top && sl->no_leaf_open && ev.kind == SS_EV_EXIT &&
			    top->key == ev.arg && !top->stack && !top->args &&
			    !(top->flags & ~SS_SLICE_UNORDERED) && in_win && wi < sl->nwins &&
			    ev.ns >= sl->wins[wi].open_ns && ev.ns < sl->wins[wi].close_ns) {
				top->flags |= SS_SLICE_UNANNOUNCED;
				w.pend = NULL;
			} else {
				ss_slices_announce(&w);
			}
		}
		if (!first_ns)
			first_ns = ev.ns;
		while (wi < sl->nwins && ev.ns >= sl->wins[wi].close_ns) {
			if (in_win)
				ss_slices_close_window(&w, sl->wins[wi].close_ns);
			in_win = 0;
			wi++;
		}
		if (sl->markers && (ev.kind == SS_EV_STOP || ev.kind == SS_EV_LOST))
			ss_slices_mark(&w, ev.kind, ev.arg, ev.ns);
		if (wi >= sl->nwins || ev.ns < sl->wins[wi].open_ns)
			continue;  /* outside every recording window */
		if (!in_win) {
			in_win = 1;
			win_begin = sl->whole_run ? ev.ns : sl->wins[wi].open_ns;
			ss_slices_push_stack(&w, wi, t);
		}
		last_ns = ev.ns;
		switch (ev.kind) {
		case SS_EV_ENTER:
			ss_slices_open(&w, SS_SLICE_FUNCTION, ev.arg, ev.ns,
				       ev.unordered ? SS_SLICE_UNORDERED : 0);
			break;
		case SS_EV_EXIT:
			ss_slices_pop(&w, &w.calls, SS_SLICE_FUNCTION, ev.arg, ev.ns,
				      win_begin, ev.unordered ? SS_SLICE_UNORDERED : 0);
			break;
		case SS_EV_RANGE_PUSH:
			ss_slices_open(&w, SS_SLICE_RANGE, ev.arg, ev.ns, 0);
			break;
		case SS_EV_RANGE_POP:
			ss_slices_pop(&w, &w.ranges, SS_SLICE_RANGE, ev.arg, ev.ns,
				      win_begin, 0);
			break;
		case SS_EV_UNWIND:
			ss_slices_unwind(&w, SS_UNWIND_FN(ev.arg), ev.ns,
					 SS_UNWIND_WHY(ev.arg));
			break;
		case SS_EV_INHERIT:  /* open in the parent at fork */
			ss_slices_open(&w, SS_SLICE_FUNCTION, ev.arg, ev.ns,
				       SS_SLICE_CLIPPED_BEGIN);
			break;
		case SS_EV_ARGS:  /* record.args: of the ENTER just before */
			ss_slices_args(&w, &ev);
			break;
		case SS_EV_STACK:  /* of the innermost frame without one */
			if (w.calls.n && !w.calls.f[w.calls.n - 1].stack)
				w.calls.f[w.calls.n - 1].stack = ev.arg;
			break;
		case SS_EV_STOP:
			if (!w.stop_ns)
				w.stop_ns = ev.ns;
			ss_slices_close_window(&w, ev.ns);
			break;
		default:
			break;
		}
	}
	if (w.pend)
		ss_slices_announce(&w);
	/* a window that closed after this thread's last event still ends at
	 * its close, like the steps in it */
	if (in_win)
		ss_slices_close_window(&w, sl->wins[wi].close_ns != UINT64_MAX ?
						   sl->wins[wi].close_ns : last_ns);
	/* ProfilerStep#K slices on the thread that began each RECORD step;
	 * none after recording stopped (max_trace_mb, a full disk: the
	 * runtime still counts the steps, nothing of them is recorded) and
	 * the step it stopped in ends there */
	for (i = 0; i < sl->nsteps; i++) {
		const struct ss_slices_step *s = &sl->steps[i];
		uint64_t end;
		if (s->action != SS_STEP_RECORD || !ss_slices_step_is(s, t))
			continue;
		if (w.stop_ns && s->ns >= w.stop_ns)
			continue;
		end = i + 1 < sl->nsteps ? sl->steps[i + 1].ns : last_ns;
		if (w.stop_ns && end > w.stop_ns)
			end = w.stop_ns;
		ss_slices_emit(&w, SS_SLICE_STEP, s->step, s->ns, end, 0, 0, 0);
	}
	(void)first_ns;
	free(w.calls.f);
	free(w.ranges.f);
	return w.emitted;
}
