/*
 * slices.c - pair ENTER/EXIT (and range push/pop) events of a thread into
 * slices, clipped to the recording windows of the process.
 *
 * Design: windows come from SS_META_STEP records (runs of RECORD steps;
 * no step records = one window over the whole run).  Each thread keeps a
 * stack of open frames.  An EXIT closes the nearest matching frame and
 * marks the frames above it "unwound"; an EXIT with no match belongs to a
 * call that began before the window and is emitted clipped at the window
 * start.  When a window closes, open frames end there, clipped.  Frames
 * open at a window's start (SS_META_STACK) or inherited from the parent
 * of a forked process (SS_EV_INHERIT) are pushed clipped.  An UNWIND (the
 * runtime saw a frame vanish: longjmp, pthread_exit, exit) ends the frame
 * and those above it, marked unwound with its reason.  On request, STOP
 * and LOST events come out as MARKER slices; a function slice with a
 * native stack says which of its frames is its nearest open caller.
 *
 * Must never: keep closed slices in memory, or emit a slice that ends
 * before it begins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slices.h"
#include "util.h"

struct ss_slices_step {
	uint64_t ns, step, tid, serial;
	uint32_t action, cycle;
};

struct ss_slices_window {
	uint64_t open_ns, close_ns;     /* close UINT64_MAX: end of stream */
	size_t first_step;
};

struct ss_slices_stack {
	uint64_t ns, tid, serial;
	uint64_t *addrs;                /* innermost first */
	size_t n;
};

struct ss_slices_string {
	uint64_t id;
	char *text;
	const char *args;       /* after a TAB in the text (MPI calls), or NULL */
};

struct ss_slices_tname {
	uint64_t tid;
	char name[48];  /* the comm (16), or "COMM/worker-TID" */
};

/* A thread the program did not name carries the comm of the thread that
 * made it (the kernel copies it at clone): every worker of "train" is
 * "train" too.  Such a thread, not the main one, with the main thread's
 * name, is shown as "NAME/worker-TID" so threads are told apart without
 * claiming a name the program gave. */
static void ss_slices_worker_names(struct ss_slices_tname *tn, size_t n, uint64_t pid)
{
	const char *main_name = NULL;
	char base[17];
	size_t i;

	for (i = 0; i < n; i++)
		if (tn[i].tid == pid)
			main_name = tn[i].name;
	if (!main_name || !main_name[0])
		return;
	snprintf(base, sizeof(base), "%s", main_name);
	for (i = 0; i < n; i++)
		if (tn[i].tid != pid && !strcmp(tn[i].name, base))
			snprintf(tn[i].name, sizeof(tn[i].name), "%s/worker-%llu", base,
				 (unsigned long long)tn[i].tid);
}

struct ss_slicer {
	const struct ss_reader *r;
	struct ss_sym_space *sp;
	struct ss_slices_step *steps;
	size_t nsteps;
	struct ss_slices_window *wins;
	size_t nwins;
	int whole_run;                  /* no step records */
	int markers;                    /* hand out SS_SLICE_MARKER slices */
	struct ss_slices_stack *stacks;
	size_t nstacks;
	struct ss_slices_string *strs;
	size_t nstrs;
	struct ss_slices_tname *tnames;
	size_t ntnames;
	uint64_t first_ns;
	/* record.stack: SS_META_STACKDEF records by id, the frame tree */
	struct ss_slices_sdef *sdefs;
	size_t nsdefs;
	struct ss_stack_node *nodes;
	size_t nnodes, capnodes;
	ss_slice_fn open_fn;            /* ss_slicer_on_open, or NULL */
	void *open_ctx;
	uint32_t *nodemap;              /* hash of (parent, start) -> node */
	size_t capmap;                  /* a power of two */
};

struct ss_slices_frame {
	uint64_t key;                   /* address, or string id for ranges */
	uint64_t begin;
	unsigned flags;
	uint64_t stack;                 /* SS_EV_STACK id, 0 = none */
};

/* A recorded stack; resolved (names, leaf) when a slice first uses it. */
struct ss_slices_sdef {
	struct ss_stack st;
	uint64_t *addrs;
	const char **names;             /* NULL until resolved */
};

struct ss_slices_fstack {
	struct ss_slices_frame *f;
	size_t n, cap;
};

/* State of one thread walk. */
struct ss_slices_walk {
	struct ss_slicer *sl;
	uint64_t tid;
	ss_slice_fn fn;
	void *ctx;
	struct ss_slices_fstack calls, ranges;
	uint64_t emitted;
	uint64_t stack;                 /* of the next slice emitted */
	unsigned why;                   /* unwind reason of the next ones */
	/* with open_fn: the stack whose top frame is pushed but not yet
	 * announced (its SS_EV_STACK may follow), and its category */
	struct ss_slices_fstack *pend;
	enum ss_slice_cat pend_cat;
};

static int ss_slices_cmp_step(const void *a, const void *b)
{
	const struct ss_slices_step *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

static int ss_slices_cmp_str(const void *a, const void *b)
{
	const struct ss_slices_string *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void ss_slices_build_windows(struct ss_slicer *sl)
{
	size_t i;
	int open = 0;

	if (!sl->nsteps) {
		sl->whole_run = 1;
		sl->wins = calloc(1, sizeof(*sl->wins));
		if (sl->wins) {
			sl->wins[0].open_ns = 0;
			sl->wins[0].close_ns = UINT64_MAX;
			sl->nwins = 1;
		}
		return;
	}
	sl->wins = calloc(sl->nsteps, sizeof(*sl->wins));
	if (!sl->wins)
		return;
	for (i = 0; i < sl->nsteps; i++) {
		int rec = sl->steps[i].action == SS_STEP_RECORD;
		if (rec && !open) {
			sl->wins[sl->nwins].open_ns = sl->steps[i].ns;
			sl->wins[sl->nwins].close_ns = UINT64_MAX;
			sl->wins[sl->nwins].first_step = i;
			open = 1;
		} else if (!rec && open) {
			sl->wins[sl->nwins++].close_ns = sl->steps[i].ns;
			open = 0;
		}
	}
	if (open)
		sl->nwins++;
}

/* ------------------------------------------------ record.stack stacks */

static int ss_slices_cmp_sdef(const void *a, const void *b)
{
	const struct ss_slices_sdef *x = a, *y = b;

	return x->st.id < y->st.id ? -1 : x->st.id > y->st.id;
}

static void ss_slices_add_sdef(struct ss_slicer *sl, size_t *cap,
			       const struct ss_meta_rec *m)
{
	struct ss_meta_stackdef d;
	struct ss_slices_sdef *s;
	size_t n;

	if (m->len < sizeof(d))
		return;
	memcpy(&d, m->data, sizeof(d));
	n = (m->len - sizeof(d)) / sizeof(uint64_t);
	if (d.n < n)
		n = (size_t)d.n;
	if (!d.id || !n || ss_grow((void **)&sl->sdefs, cap, sl->nsdefs,
					  sizeof(*s), 16))
		return;
	s = &sl->sdefs[sl->nsdefs];
	memset(s, 0, sizeof(*s));
	s->addrs = malloc(n * sizeof(uint64_t));
	if (!s->addrs)
		return;
	memcpy(s->addrs, m->data + sizeof(d), n * sizeof(uint64_t));
	s->st.id = d.id;
	s->st.n = n;
	s->st.addrs = s->addrs;
	sl->nsdefs++;
}

static size_t ss_slices_node_hash(uint32_t parent, uint64_t start)
{
	uint64_t h = (start ^ ((uint64_t)parent << 40)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29));
}

/* The node of function `start` called from node `parent`; 0 on out of
 * memory. */
static uint32_t ss_slices_node(struct ss_slicer *sl, uint32_t parent,
			       uint64_t start, const char *name)
{
	size_t mask, i;

	if ((sl->nnodes + 1) * 2 > sl->capmap) {
		size_t nc = sl->capmap ? sl->capmap * 2 : 256, j;
		uint32_t *nm = calloc(nc, sizeof(*nm));
		if (!nm)
			return 0;
		for (j = 0; j < sl->nnodes; j++) {
			const struct ss_stack_node *o = &sl->nodes[j];
			i = ss_slices_node_hash(o->parent, o->start) & (nc - 1);
			while (nm[i])
				i = (i + 1) & (nc - 1);
			nm[i] = (uint32_t)j + 1;
		}
		free(sl->nodemap);
		sl->nodemap = nm;
		sl->capmap = nc;
	}
	mask = sl->capmap - 1;
	i = ss_slices_node_hash(parent, start) & mask;
	while (sl->nodemap[i]) {
		const struct ss_stack_node *o = &sl->nodes[sl->nodemap[i] - 1];
		if (o->parent == parent && o->start == start)
			return sl->nodemap[i];
		i = (i + 1) & mask;
	}
	if (ss_grow((void **)&sl->nodes, &sl->capnodes, sl->nnodes,
			   sizeof(*sl->nodes), 16))
		return 0;
	sl->nodes[sl->nnodes].parent = parent;
	sl->nodes[sl->nnodes].start = start;
	sl->nodes[sl->nnodes].name = name;
	sl->nodemap[i] = (uint32_t)++sl->nnodes;
	return sl->nodemap[i];
}

/* Stack `id` with its frames named, or NULL. */
static const struct ss_stack *ss_slices_stack(struct ss_slicer *sl, uint64_t id)
{
	size_t lo = 0, hi = sl->nsdefs, i;
	struct ss_slices_sdef *d = NULL;
	uint32_t node = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sl->sdefs[mid].st.id == id) {
			d = &sl->sdefs[mid];
			break;
		}
		if (sl->sdefs[mid].st.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!d || !sl->sp)
		return NULL;
	if (d->names)
		return &d->st;
	d->names = calloc(d->st.n, sizeof(*d->names));
	if (!d->names)
		return NULL;
	/* outermost first, so each frame's node hangs under its caller's */
	for (i = d->st.n; i-- > 0;) {
		/* return addresses: the call is the byte before */
		const struct ss_sym_info *info = ss_sym_lookup(sl->sp, d->addrs[i] - 1);
		d->names[i] = info->name;
		node = ss_slices_node(sl, node, info->start, info->name);
	}
	d->st.names = d->names;
	d->st.leaf = node;
	return &d->st;
}

size_t ss_slicer_stack_nodes(const struct ss_slicer *sl,
			     const struct ss_stack_node **nodes)
{
	*nodes = sl->nodes;
	return sl->nnodes;
}

struct ss_slicer *ss_slicer_new(const struct ss_reader *r, struct ss_sym_space *sp)
{
	struct ss_slicer *sl = calloc(1, sizeof(*sl));
	size_t capsteps = 0, capstacks = 0, capstrs = 0, captn = 0, capsd = 0, i;
	struct ss_meta_iter it;
	struct ss_meta_rec m;

	if (!sl)
		return NULL;
	sl->r = r;
	sl->sp = sp;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		switch (m.type) {
		case SS_META_MAPS:
			if (sp)
				ss_sym_space_add_maps_at(sp, (const char *)m.data, m.len,
							 ss_reader_ns(r, m.ts));
			break;
		case SS_META_STEP: {
			struct ss_meta_step st;
			struct ss_slices_step *s;
			if (m.len < sizeof(st) ||
			    ss_grow((void **)&sl->steps, &capsteps,
					   sl->nsteps, sizeof(*s), 16))
				break;
			memcpy(&st, m.data, sizeof(st));
			s = &sl->steps[sl->nsteps++];
			s->ns = ss_reader_ns(r, m.ts);
			s->step = st.step;
			s->tid = st.tid;
			s->serial = st.serial;
			s->action = st.action;
			s->cycle = st.cycle;
			break;
		}
		case SS_META_STACK: {
			struct ss_meta_stack st;
			struct ss_slices_stack *s;
			size_t n;
			if (m.len < sizeof(st))
				break;
			memcpy(&st, m.data, sizeof(st));
			n = (m.len - sizeof(st)) / sizeof(uint64_t);
			if (st.n < n)
				n = (size_t)st.n;
			if (ss_grow((void **)&sl->stacks, &capstacks,
					   sl->nstacks, sizeof(*s), 16))
				break;
			s = &sl->stacks[sl->nstacks];
			s->addrs = malloc((n + 1) * sizeof(uint64_t));
			if (!s->addrs)
				break;
			memcpy(s->addrs, m.data + sizeof(st), n * sizeof(uint64_t));
			s->n = n;
			s->ns = ss_reader_ns(r, m.ts);
			s->tid = st.tid;
			s->serial = st.serial;
			sl->nstacks++;
			break;
		}
		case SS_META_STRING: {
			struct ss_slices_string *s;
			uint64_t id;
			if (m.len < sizeof(id) ||
			    ss_grow((void **)&sl->strs, &capstrs,
					   sl->nstrs, sizeof(*s), 16))
				break;
			memcpy(&id, m.data, sizeof(id));
			s = &sl->strs[sl->nstrs];
			s->id = id;
			s->text = strndup((const char *)m.data + sizeof(id),
					  m.len - sizeof(id));
			if (s->text) {
				char *tab = strchr(s->text, '\t');
				s->args = NULL;
				if (tab) { /* "NAME\tARGS": libstepscope-mpi */
					*tab = 0;
					s->args = tab + 1;
				}
				sl->nstrs++;
			}
			break;
		}
		case SS_META_STACKDEF:
			ss_slices_add_sdef(sl, &capsd, &m);
			break;
		case SS_META_THREAD: {
			struct ss_meta_thread t;
			struct ss_slices_tname *tn = NULL;
			if (m.len < sizeof(t))
				break;
			memcpy(&t, m.data, sizeof(t));
			for (i = 0; i < sl->ntnames; i++)
				if (sl->tnames[i].tid == t.tid)
					tn = &sl->tnames[i];
			if (!tn) {
				if (ss_grow((void **)&sl->tnames, &captn,
						   sl->ntnames, sizeof(*tn), 16))
					break;
				tn = &sl->tnames[sl->ntnames++];
			}
			tn->tid = t.tid;
			memcpy(tn->name, t.name, sizeof(t.name));
			tn->name[sizeof(t.name)] = 0;
			break;
		}
		default:
			break;
		}
	}
	ss_slices_worker_names(sl->tnames, sl->ntnames, r->hdr.pid);
	if (sl->nsteps)
		qsort(sl->steps, sl->nsteps, sizeof(*sl->steps), ss_slices_cmp_step);
	if (sl->nstrs)
		qsort(sl->strs, sl->nstrs, sizeof(*sl->strs), ss_slices_cmp_str);
	if (sl->nsdefs)
		qsort(sl->sdefs, sl->nsdefs, sizeof(*sl->sdefs), ss_slices_cmp_sdef);
	ss_slices_build_windows(sl);
	if (!sl->wins) {
		ss_slicer_free(sl);
		return NULL;
	}
	for (i = 0; i < r->nthreads; i++) {
		uint64_t ns = ss_reader_thread_first_ns(r, i);
		if (ns && (!sl->first_ns || ns < sl->first_ns))
			sl->first_ns = ns;
	}
	if (sl->nsteps && sl->steps[0].ns &&
	    (!sl->first_ns || sl->steps[0].ns < sl->first_ns))
		sl->first_ns = sl->steps[0].ns;
	return sl;
}

void ss_slicer_free(struct ss_slicer *sl)
{
	size_t i;

	if (!sl)
		return;
	for (i = 0; i < sl->nstacks; i++)
		free(sl->stacks[i].addrs);
	for (i = 0; i < sl->nstrs; i++)
		free(sl->strs[i].text);
	for (i = 0; i < sl->nsdefs; i++) {
		free(sl->sdefs[i].addrs);
		free(sl->sdefs[i].names);
	}
	free(sl->sdefs);
	free(sl->nodes);
	free(sl->nodemap);
	free(sl->stacks);
	free(sl->strs);
	free(sl->steps);
	free(sl->wins);
	free(sl->tnames);
	free(sl);
}

uint64_t ss_slicer_first_ns(const struct ss_slicer *sl)
{
	return sl->first_ns;
}

const char *ss_slicer_thread_name(const struct ss_slicer *sl, uint64_t tid)
{
	size_t i;

	for (i = 0; i < sl->ntnames; i++)
		if (sl->tnames[i].tid == tid && sl->tnames[i].name[0])
			return sl->tnames[i].name;
	return NULL;
}

size_t ss_slicer_cycles(const struct ss_slicer *sl, uint32_t *out, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < sl->nsteps; i++) {
		if (sl->steps[i].action != SS_STEP_RECORD)
			continue;
		for (j = 0; j < n && j < max; j++)
			if (out[j] == sl->steps[i].cycle)
				break;
		if (j < n)
			continue;
		if (n < max)
			out[n] = sl->steps[i].cycle;
		n++;
	}
	return n;
}

static const struct ss_slices_string *ss_slices_string(const struct ss_slicer *sl,
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
			   uint64_t begin, uint64_t end, unsigned flags, size_t depth)
{
	struct ss_slicer *sl = w->sl;
	const struct ss_slices_step *st;

	memset(sp, 0, sizeof(*sp));
	sp->cat = cat;
	sp->begin_ns = begin;
	sp->end_ns = end < begin ? begin : end;
	sp->flags = flags;
	sp->depth = (unsigned)depth;
	if (cat == SS_SLICE_FUNCTION) {
		const struct ss_sym_info *info = NULL;
		if (sl->sp)
			info = ss_sym_lookup_at(sl->sp, key, begin);
		if (info) {
			sp->name = info->name;
			sp->file = info->file;
			sp->clone = info->clone;
		} else {
			snprintf(buf, 48, "0x%llx", (unsigned long long)key);
			sp->name = buf;
		}
		sp->addr = key;
		if (w->stack)  /* of a closing frame; openings set their own */
			sp->stack = ss_slices_stack(sl, w->stack);
		if (sp->stack)
			sp->stack_caller = ss_slices_stack_caller(sl, sp->stack,
								&w->calls, depth, key);
		if (flags & SS_SLICE_UNWOUND)
			sp->unwind = w->why;
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
	st = ss_slices_step_at(sl, begin);
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
		       st->n - 1);
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
			   unsigned flags, size_t depth)
{
	struct ss_slice s;
	char buf[48];

	ss_slices_fill(w, &s, buf, cat, key, begin, end, flags, depth);
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
	st->n++;
}

/* Close frames above `keep` (left open) at ns with extra flags. */
static void ss_slices_close_to(struct ss_slices_walk *w, struct ss_slices_fstack *st,
			       enum ss_slice_cat cat, size_t keep, uint64_t ns,
			       unsigned flags)
{
	while (st->n > keep) {
		struct ss_slices_frame *f = &st->f[--st->n];
		w->stack = f->stack;
		ss_slices_emit(w, cat, f->key, f->begin, ns, f->flags | flags, st->n);
	}
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
			       st->f[i].flags | SS_SLICE_CLIPPED_END, i);
	}
	st->n = 0;
}

/* An EXIT / POP: close the matching frame, or emit a clipped one. */
static void ss_slices_pop(struct ss_slices_walk *w, struct ss_slices_fstack *st,
			  enum ss_slice_cat cat, uint64_t key, uint64_t ns,
			  uint64_t win_begin)
{
	size_t i = st->n;

	while (i > 0 && st->f[i - 1].key != key)
		i--;
	w->why = SS_UNWIND_SKIPPED;  /* frames above it were jumped over */
	if (i) {
		struct ss_slices_frame *f;
		ss_slices_close_to(w, st, cat, i, ns, SS_SLICE_UNWOUND);
		f = &st->f[--st->n];
		w->stack = f->stack;
		ss_slices_emit(w, cat, f->key, f->begin, ns, f->flags, st->n);
		return;
	}
	ss_slices_close_to(w, st, cat, 0, ns, SS_SLICE_UNWOUND);
	ss_slices_emit(w, cat, key, win_begin, ns, SS_SLICE_CLIPPED_BEGIN, 0);
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

static int ss_slices_step_is(const struct ss_slices_step *s, const struct ss_rthread *t)
{
	if (s->serial && t->serial)
		return s->serial == t->serial;
	return s->tid == t->tid;
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
		size_t before = w->calls.n;
		if (!ret)
			continue;
		info = ss_sym_lookup_at(sl->sp, ret - 1, best->ns);
		ss_slices_push(&w->calls, info->start, win->open_ns,
			       SS_SLICE_CLIPPED_BEGIN);
		ss_slices_opened(w, &w->calls, SS_SLICE_FUNCTION, before);
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
	w.fn = fn;
	w.ctx = ctx;
	ss_reader_events_begin(r, thread, &it);
	while (ss_reader_events_next(&it, &ev)) {
		size_t before;
		if (w.pend && ev.kind != SS_EV_STACK)
			ss_slices_announce(&w);
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
			before = w.calls.n;
			ss_slices_push(&w.calls, ev.arg, ev.ns, 0);
			ss_slices_opened(&w, &w.calls, SS_SLICE_FUNCTION, before);
			break;
		case SS_EV_EXIT:
			ss_slices_pop(&w, &w.calls, SS_SLICE_FUNCTION, ev.arg, ev.ns,
				      win_begin);
			break;
		case SS_EV_RANGE_PUSH:
			before = w.ranges.n;
			ss_slices_push(&w.ranges, ev.arg, ev.ns, 0);
			ss_slices_opened(&w, &w.ranges, SS_SLICE_RANGE, before);
			break;
		case SS_EV_RANGE_POP:
			ss_slices_pop(&w, &w.ranges, SS_SLICE_RANGE, ev.arg, ev.ns,
				      win_begin);
			break;
		case SS_EV_UNWIND:
			ss_slices_unwind(&w, SS_UNWIND_FN(ev.arg), ev.ns,
					 SS_UNWIND_WHY(ev.arg));
			break;
		case SS_EV_INHERIT:  /* open in the parent at fork */
			before = w.calls.n;
			ss_slices_push(&w.calls, ev.arg, ev.ns, SS_SLICE_CLIPPED_BEGIN);
			ss_slices_opened(&w, &w.calls, SS_SLICE_FUNCTION, before);
			break;
		case SS_EV_STACK:  /* of the innermost frame without one */
			if (w.calls.n && !w.calls.f[w.calls.n - 1].stack)
				w.calls.f[w.calls.n - 1].stack = ev.arg;
			break;
		case SS_EV_STOP:
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
	/* ProfilerStep#K slices on the thread that began each RECORD step */
	for (i = 0; i < sl->nsteps; i++) {
		const struct ss_slices_step *s = &sl->steps[i];
		uint64_t end;
		if (s->action != SS_STEP_RECORD || !ss_slices_step_is(s, t))
			continue;
		end = i + 1 < sl->nsteps ? sl->steps[i + 1].ns : last_ns;
		ss_slices_emit(&w, SS_SLICE_STEP, s->step, s->ns, end, 0, 0);
	}
	(void)first_ns;
	free(w.calls.f);
	free(w.ranges.f);
	return w.emitted;
}

void ss_slicer_on_open(struct ss_slicer *sl, ss_slice_fn fn, void *ctx)
{
	sl->open_fn = fn;
	sl->open_ctx = ctx;
}

void ss_slicer_markers(struct ss_slicer *sl, int on)
{
	sl->markers = on;
}
