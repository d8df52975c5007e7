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
 * open at a window's start (SS_META_STACK), inherited from the parent
 * of a forked process or resumed with a suspended ucontext (SS_EV_INHERIT)
 * are pushed clipped.  An UNWIND (the runtime saw a frame vanish: longjmp,
 * pthread_exit, exit; or suspended it, a ucontext switch) ends the frame
 * and those above it, marked unwound with its reason.  On request, STOP
 * and LOST events come out as MARKER slices; a function slice with a
 * native stack says which of its frames is its nearest open caller.
 *
 * Files: this one builds the slicer of a trace (windows, steps, strings,
 * native stacks); slices-walk.c walks a thread into slices; slicer.h is the
 * slicer's inside.
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
const struct ss_stack *ss_slices_stack(struct ss_slicer *sl, uint64_t id)
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
		case SS_META_CONFIG:  /* flops: per call of a listed function */
			if (!sl->flops)
				sl->flops = ss_args_flops_config((const char *)m.data, m.len);
			break;
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
	free(sl->flops);
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

void ss_slicer_on_open(struct ss_slicer *sl, ss_slice_fn fn, void *ctx)
{
	sl->open_fn = fn;
	sl->open_ctx = ctx;
}

void ss_slicer_open_leaves(struct ss_slicer *sl, int on)
{
	sl->no_leaf_open = !on;
}

void ss_slicer_markers(struct ss_slicer *sl, int on)
{
	sl->markers = on;
}
