/*
 * perfetto.c - write slices and counters as a native Perfetto
 * protobuf trace (.perfetto-trace), encoded by hand, as they come.
 *
 * Design: a Trace is a run of `packet` fields (field 1, length-delimited
 * TracePacket).  Every thread gets its own packet sequence with:
 *   - a ClockSnapshot making clock 64 an incremental (delta) clock equal to
 *     CLOCK_MONOTONIC, the one clock the recording read, declared the
 *     trace's primary clock (no other clock is claimed);
 *   - TracePacketDefaults: timestamp_clock_id 64, track_uuid = the thread;
 *   - TrackEvent SLICE_BEGIN/END packets whose timestamps are deltas and
 *     whose names are interned (InternedData.event_names, sent once per
 *     sequence with the first event that uses them).  The snapshot packet
 *     says SEQ_INCREMENTAL_STATE_CLEARED; event packets carry no
 *     sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE only lets a reader skip
 *     packets written before a lost state was cleared again, which a file
 *     written whole, each sequence from its snapshot, never has (2 bytes
 *     of every event).
 * A BEGIN costs about 12 bytes (packet 2, timestamp delta 2-3, sequence
 * 2, TrackEvent 2, type 2, name 2), an END 10.
 *
 * Streaming: the slicer announces each function and range as it opens
 * (ss_slicer_on_open) in time order with the slices that close, so a
 * BEGIN is written at the opening and the END when the slice (and every
 * slice above it) has closed; memory is the open frames of one thread.
 * A leaf call, whose EXIT came right after its ENTER, is not announced
 * (ss_slicer_open_leaves): its slice (SS_SLICE_UNANNOUNCED) comes where
 * the opening would have, and its BEGIN and END are written together.
 * What comes unannounced - the steps (handed out at the thread's end) and
 * slices whose ENTER preceded the window - is buffered, sorted and written
 * on a sequence of its own after the thread.  User ranges and steps go to
 * child tracks of the thread; counters to counter tracks of the process on
 * one sequence per process.  Track descriptors come before their events.
 *
 * record.stack: a function slice's native stack becomes the BEGIN's
 * callstack_iid, with the callstack, its frames and their function names
 * interned like event names (a frame per function name, iid = the name's;
 * a callstack per (process, stack id), iid global).  Unwound slices carry
 * a debug annotation "unwound" (its reason) on their END, which Perfetto
 * adds to the slice's args, ranges with args (MPI calls) one named "args"
 * ("bytes=4096 comm_size=4") on their BEGIN; markers (recording stopped, events lost) are
 * INSTANT events on the thread's track, the count of lost events in a
 * "count" annotation.
 *
 * Field numbers: protos/perfetto/trace/trace_packet.proto and the
 * track_event protos; tests/proto/perfetto-subset.proto mirrors the part
 * used here.
 *
 * Files: this one is the exporter's callbacks (threads, slices, counters);
 * perfetto-encode.c the protobuf encoder, packets, interning and tracks;
 * perfetto-gpu.c the GPU tracks; perfetto.h what they share.
 *
 * Must never: emit a negative timestamp delta, a BEGIN/END pair that does
 * not nest on its track, or hold a thread's slices.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "outfile.h"
#include "util.h"
#include "perfetto.h"
/* ---------------------------------------------------------------- threads */

static int ss_pf_cmp_slice(const void *x, const void *y)
{
	const struct ss_pf_slice *a = x, *b = y;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

struct ss_pf_tev {
	uint64_t ts;
	uint32_t name, cs, args;
	uint8_t type, track, unwound;
};

static const char *ss_pf_unwound(unsigned u)
{
	switch (u) {
	case 1 + SS_UNWIND_THREAD_EXIT: return "thread_exit";
	case 1 + SS_UNWIND_EXIT: return "exit";
	case 1 + SS_UNWIND_SUSPENDED: return "suspended";
	default: return "longjmp";
	}
}

/* Track of kind k (SS_PF_TRACK_*) of thread t, described on first use. */
static uint64_t ss_pf_subtrack(struct ss_perfetto *pf, struct ss_pf_thread *t,
			       unsigned k)
{
	static const char *const tnames[] = { NULL, "user ranges", "steps" };

	if (k == SS_PF_TRACK_FUNC)
		return t->uuid;
	if (!t->sub[k]) {
		t->sub[k] = pf->next_uuid++;
		ss_pf_track_desc(pf, t->sub[k], t->uuid, tnames[k], NULL, NULL, 0);
	}
	return t->sub[k];
}

/* One event of the current thread's streamed sequence at ts (never before
 * its last one); the sequence starts at the first. */
static inline void ss_pf_cur_event(struct ss_perfetto *pf, uint64_t ts, unsigned type,
				   unsigned k, uint32_t name, const struct ss_pf_extra *x)
{
	struct ss_pf_thread *t = pf->cur;
	uint64_t track;

	if (pf->cur_seq && k == SS_PF_TRACK_FUNC && !x) {  /* a call's BEGIN or END */
		if (ts < pf->cur_last)
			ts = pf->cur_last;
		if (ss_pf_event_fast(pf, pf->cur_seq, ts - pf->cur_last, type, 0, name)) {
			pf->cur_last = ts;
			return;
		}
	}
	if (!pf->cur_seq) {
		pf->cur_seq = ss_pf_sequence(pf, ts, t->uuid);
		pf->cur_last = ts;
		ss_pf_sent_clear(pf);
	}
	if (ts < pf->cur_last)
		ts = pf->cur_last;
	track = k == SS_PF_TRACK_FUNC ? 0 : ss_pf_subtrack(pf, t, k);
	ss_pf_event(pf, &pf->pkt, &pf->te, pf->cur_seq, ts - pf->cur_last, type, track,
		    name, 0, 0, x);
	pf->cur_last = ts;
}

/* END every closed frame on top of open stack k. */
static void ss_pf_cur_pop(struct ss_perfetto *pf, unsigned k)
{
	struct ss_pf_ostack *os = &pf->os[k];

	while (os->n && os->f[os->n - 1].closed) {
		struct ss_pf_open *o = &os->f[--os->n];
		struct ss_pf_extra x;
		if (!o->unwound && !o->call) {
			ss_pf_cur_event(pf, o->end, SS_PF_TYPE_END,
					k ? SS_PF_TRACK_RANGE : SS_PF_TRACK_FUNC, 0, NULL);
			continue;
		}
		memset(&x, 0, sizeof(x));
		x.ann = o->unwound ? "unwound" : NULL;
		x.ann_str = o->unwound ? ss_pf_unwound(o->unwound) : NULL;
		x.call = o->call;  /* record.args: perfetto-args.c */
		o->call = NULL;
		ss_pf_cur_event(pf, o->end, SS_PF_TYPE_END,
				k ? SS_PF_TRACK_RANGE : SS_PF_TRACK_FUNC, 0, &x);
	}
}

/* Write the slices of the current thread that came unannounced (steps,
 * slices begun before their window), sorted, on a sequence of their own. */
static void ss_pf_late_flush(struct ss_perfetto *pf, struct ss_pf_thread *t)
{
	struct ss_pf_tev *ev[SS_PF_NTRACKS] = { NULL };
	size_t nev[SS_PF_NTRACKS] = { 0 }, pos[SS_PF_NTRACKS] = { 0 }, i, k;
	uint64_t *stack = NULL, first = UINT64_MAX, last;
	uint64_t tracks[SS_PF_NTRACKS];
	int used[SS_PF_NTRACKS] = { 0 };
	uint32_t seq;

	if (!pf->nsl)
		return;
	qsort(pf->sl, pf->nsl, sizeof(*pf->sl), ss_pf_cmp_slice);
	stack = malloc((pf->nsl + 1) * sizeof(*stack));
	for (k = 0; k < SS_PF_NTRACKS; k++)
		ev[k] = malloc((2 * pf->nsl + 1) * sizeof(**ev));
	if (!stack || !ev[0] || !ev[1] || !ev[2]) {
		pf->werr = ENOMEM;
		goto out;
	}
	/* per track: a properly nested BEGIN/END list in time order */
	for (i = 0; i < pf->nsl;) {
		unsigned tr = pf->sl[i].track;
		size_t sp = 0;
		struct ss_pf_tev *e = ev[tr];
		size_t *n = &nev[tr];
		used[tr] = 1;
		for (; i < pf->nsl && pf->sl[i].track == tr; i++) {
			struct ss_pf_slice *s = &pf->sl[i];
			uint64_t end = s->end;
			while (sp && stack[sp - 1] <= s->begin) {
				memset(&e[*n], 0, sizeof(e[*n]));
				e[*n].ts = stack[--sp];
				e[*n].type = SS_PF_TYPE_END;
				(*n)++;
			}
			if (sp && end > stack[sp - 1])
				end = stack[sp - 1];  /* crossing: cut to the parent */
			e[*n].ts = s->begin;
			e[*n].type = SS_PF_TYPE_BEGIN;
			e[*n].track = (uint8_t)tr;
			e[*n].name = s->name;
			e[*n].cs = s->cs;
			e[*n].unwound = 0;
			e[*n].args = s->args;
			(*n)++;
			stack[sp++] = end;
			if (s->begin < first)
				first = s->begin;
		}
		while (sp) {
			memset(&e[*n], 0, sizeof(e[*n]));
			e[*n].ts = stack[--sp];
			e[*n].type = SS_PF_TYPE_END;
			(*n)++;
		}
	}
	for (k = 0; k < SS_PF_NTRACKS; k++)
		tracks[k] = used[k] ? ss_pf_subtrack(pf, t, (unsigned)k) : 0;
	seq = ss_pf_sequence(pf, first, t->uuid);
	ss_pf_sent_clear(pf);
	last = first;
	for (;;) {
		struct ss_pf_extra x;
		struct ss_pf_tev *e;
		uint64_t ts;
		int best = -1;
		for (k = 0; k < SS_PF_NTRACKS; k++)
			if (pos[k] < nev[k] &&
			    (best < 0 || ev[k][pos[k]].ts < ev[best][pos[best]].ts))
				best = (int)k;
		if (best < 0)
			break;
		e = &ev[best][pos[best]++];
		ts = e->ts < last ? last : e->ts;
		memset(&x, 0, sizeof(x));
		x.cs = e->cs;
		if (e->args && e->args <= pf->nnames) {
			x.ann = "args";  /* MPI calls: "bytes=4096 comm_size=4" */
			x.ann_str = pf->names[e->args - 1];
		}
		ss_pf_event(pf, &pf->pkt, &pf->te, seq, ts - last, e->type,
			    best == SS_PF_TRACK_FUNC ? 0 : tracks[best], e->name, 0, 0,
			    &x);
		last = ts;
	}
out:
	for (k = 0; k < SS_PF_NTRACKS; k++)
		free(ev[k]);
	free(stack);
	pf->nsl = 0;
}

/* Finish the current thread: END what is still open (nothing, from a
 * complete slicer walk), then its late slices. */
void ss_pf_thread_flush(struct ss_perfetto *pf)
{
	struct ss_pf_thread *t = pf->cur;
	unsigned k;

	if (!t)
		return;
	for (k = 0; k < 2; k++) {
		size_t i;
		for (i = 0; i < pf->os[k].n; i++)
			if (!pf->os[k].f[i].closed) {
				pf->os[k].f[i].closed = 1;
				pf->os[k].f[i].end = pf->cur_last;
			}
		ss_pf_cur_pop(pf, k);
	}
	ss_pf_late_flush(pf, t);
	pf->cur = NULL;
	pf->cur_seq = 0;
}

static int ss_pf_cmp_cval(const void *x, const void *y)
{
	const struct ss_pf_cval *a = x, *b = y;

	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

/* Write the buffered counter samples of the current process. */
void ss_pf_counters_flush(struct ss_perfetto *pf)
{
	struct ss_pf_msg pkt = { 0 }, te = { 0 };
	uint64_t last;
	uint32_t seq;
	size_t i;

	if (!pf->ncv)
		return;
	qsort(pf->cv, pf->ncv, sizeof(*pf->cv), ss_pf_cmp_cval);
	seq = ss_pf_sequence(pf, pf->cv[0].ns, 0);
	last = pf->cv[0].ns;
	for (i = 0; i < pf->ncv; i++) {
		ss_pf_event(pf, &pkt, &te, seq, pf->cv[i].ns - last, SS_PF_TYPE_COUNTER,
			    pf->cv[i].uuid, 0, 1, pf->cv[i].v, NULL);
		last = pf->cv[i].ns;
	}
	pf->ncv = 0;
	free(pkt.p);
	free(te.p);
}

/* ---------------------------------------------------------------- exporter */

static int ss_pf_begin(void *ctx, uint64_t t0_ns)
{
	(void)ctx;
	(void)t0_ns;  /* absolute CLOCK_MONOTONIC times: align with other traces */
	return 0;
}

static void ss_pf_process(void *ctx, uint64_t pid, const char *name)
{
	struct ss_perfetto *pf = ctx;
	struct ss_pf_msg pd = { 0 };
	char suffix[48], *pname;
	size_t nl = strlen(name), sl;
	uint64_t uuid;

	ss_pf_thread_flush(pf);
	ss_pf_counters_flush(pf);
	if (ss_pf_process_uuid(pf, pid))
		return;
	if (ss_grow((void **)&pf->pids, &pf->cappids, pf->npids, sizeof(uint64_t), 64))
		return;
	pf->puuids = realloc(pf->puuids, pf->cappids * sizeof(uint64_t));
	if (!pf->puuids)
		return;
	uuid = pf->next_uuid++;
	pf->pids[pf->npids] = pid;
	pf->puuids[pf->npids++] = uuid;
	/* the UI shows "NAME PID" itself: "train (pid 7)" would read
	 * "train (pid 7) 7" */
	sl = (size_t)snprintf(suffix, sizeof(suffix), " (pid %llu)",
			      (unsigned long long)pid);
	pname = strdup(name);
	if (pname && nl > sl && !strcmp(pname + nl - sl, suffix))
		pname[nl - sl] = 0;
	ss_pf_uint(&pd, SS_PF_PD_PID, pid);
	ss_pf_str(&pd, SS_PF_PD_NAME, pname ? pname : name);
	ss_pf_track_desc(pf, uuid, 0, NULL, &pd, NULL, 0);
	free(pname);
	free(pd.p);
}

static struct ss_pf_thread *ss_pf_find_thread(struct ss_perfetto *pf, uint64_t pid,
					      uint64_t tid)
{
	size_t i;

	for (i = 0; i < pf->nthreads; i++)
		if (pf->threads[i].pid == pid && pf->threads[i].tid == tid)
			return &pf->threads[i];
	return NULL;
}

static void ss_pf_thread(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	struct ss_perfetto *pf = ctx;
	struct ss_pf_msg th = { 0 };
	struct ss_pf_thread *t;

	if (ss_pf_find_thread(pf, pid, tid))
		return;
	ss_pf_thread_flush(pf);
	if (ss_grow((void **)&pf->threads, &pf->capthreads, pf->nthreads,
		       sizeof(*t), 64))
		return;
	t = &pf->threads[pf->nthreads++];
	memset(t, 0, sizeof(*t));   /* sub[]: no child track yet */
	t->pid = pid;
	t->tid = tid;
	t->uuid = pf->next_uuid++;
	t->name = NULL;
	ss_pf_uint(&th, SS_PF_THD_PID, pid);
	ss_pf_uint(&th, SS_PF_THD_TID, tid);
	ss_pf_str(&th, SS_PF_THD_NAME, name);
	ss_pf_track_desc(pf, t->uuid, ss_pf_process_uuid(pf, pid), NULL, NULL, &th, 0);
	free(th.p);
}

/* The callstack iid of a native stack (interned on first use); 0 if it
 * cannot be had. */
static uint32_t ss_pf_callstack(struct ss_perfetto *pf, uint64_t pid,
				const struct ss_stack *st)
{
	struct ss_pf_cstack *c;
	size_t i, k;

	if (!st->n || !st->names)
		return 0;
	if (pf->cshcap) {
		i = (size_t)(ss_pf_hash_u64(pid * UINT64_C(0x9e3779b97f4a7c15) ^ st->id)) &
		    (pf->cshcap - 1);
		while (pf->cshash[i]) {
			c = &pf->cstacks[pf->cshash[i] - 1];
			if (c->pid == pid && c->id == st->id)
				return pf->cshash[i];
			i = (i + 1) & (pf->cshcap - 1);
		}
	}
	if ((pf->ncs + 1) * 2 > pf->cshcap) {
		size_t nc = pf->cshcap ? pf->cshcap * 2 : 256;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh)
			return 0;
		for (k = 0; k < pf->ncs; k++) {
			size_t j = (size_t)ss_pf_hash_u64(pf->cstacks[k].pid *
							   UINT64_C(0x9e3779b97f4a7c15) ^
							   pf->cstacks[k].id) & (nc - 1);
			while (nh[j])
				j = (j + 1) & (nc - 1);
			nh[j] = (uint32_t)k + 1;
		}
		free(pf->cshash);
		pf->cshash = nh;
		pf->cshcap = nc;
	}
	if (ss_grow((void **)&pf->cstacks, &pf->capcs, pf->ncs, sizeof(*c), 64))
		return 0;
	c = &pf->cstacks[pf->ncs];
	c->pid = pid;
	c->id = st->id;
	c->n = (uint32_t)st->n;
	c->frames = malloc(st->n * sizeof(*c->frames));
	if (!c->frames)
		return 0;
	for (k = 0; k < st->n; k++) {  /* outermost first */
		uint32_t f = ss_pf_intern(pf, st->names[st->n - 1 - k] ?
						      st->names[st->n - 1 - k] : "?");
		if (f == UINT32_MAX) {
			free(c->frames);
			return 0;
		}
		c->frames[k] = f;
	}
	i = (size_t)ss_pf_hash_u64(pid * UINT64_C(0x9e3779b97f4a7c15) ^ st->id) &
	    (pf->cshcap - 1);
	while (pf->cshash[i])
		i = (i + 1) & (pf->cshcap - 1);
	pf->cshash[i] = (uint32_t)pf->ncs + 1;
	return (uint32_t)++pf->ncs;
}

/* Make (pid, tid) the current thread, finishing the one before. */
static int ss_pf_switch_to(struct ss_perfetto *pf, uint64_t pid, uint64_t tid)
{
	struct ss_pf_thread *t;

	ss_pf_thread_flush(pf);
	t = ss_pf_find_thread(pf, pid, tid);
	if (!t) {
		char tn[64];
		snprintf(tn, sizeof(tn), "thread %llu", (unsigned long long)tid);
		ss_pf_thread(pf, pid, tid, tn);
		t = ss_pf_find_thread(pf, pid, tid);
		if (!t)
			return -1;
	}
	pf->cur = t;
	return 0;
}

static inline int ss_pf_switch(struct ss_perfetto *pf, uint64_t pid, uint64_t tid)
{
	if (pf->cur && pf->cur->pid == pid && pf->cur->tid == tid)
		return 0;
	return ss_pf_switch_to(pf, pid, tid);
}

/* A function or range opens: its BEGIN now. */
static void ss_pf_open(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	struct ss_perfetto *pf = ctx;
	unsigned k = s->cat == SS_SLICE_RANGE;
	struct ss_pf_ostack *os = &pf->os[k];
	struct ss_pf_extra x;
	uint32_t name;

	if ((s->cat != SS_SLICE_FUNCTION && s->cat != SS_SLICE_RANGE) ||
	    ss_pf_switch(pf, pid, tid))
		return;
	if (s->depth != os->n) {
		/* not the next frame of this thread's stack: should not happen;
		 * its slice goes the late way */
		return;
	}
	if (k == 0 && s->name) {
		size_t h = (size_t)(ss_pf_hash_u64(s->addr) & 4095);
		if (pf->fcache[h].name == s->name && pf->fcache[h].addr == s->addr) {
			name = pf->fcache[h].id;
		} else {
			name = ss_pf_intern(pf, s->name);
			pf->fcache[h].addr = s->addr;
			pf->fcache[h].name = s->name;
			pf->fcache[h].id = name;
		}
	} else {
		name = ss_pf_intern(pf, s->name ? s->name : "?");
	}
	if (name == UINT32_MAX ||
	    ss_grow((void **)&os->f, &os->cap, os->n, sizeof(*os->f), 64)) {
		pf->werr = ENOMEM;
		return;
	}
	memset(&x, 0, sizeof(x));
	x.cs = s->stack ? ss_pf_callstack(pf, pid, s->stack) : 0;
	if (s->args) {
		x.ann = "args";  /* MPI calls: "bytes=4096 comm_size=4" */
		x.ann_str = s->args;
	}
	os->f[os->n].begin = s->begin_ns;
	os->f[os->n].end = s->begin_ns;
	os->f[os->n].closed = 0;
	os->f[os->n].unwound = 0;
	os->f[os->n].call = NULL;
	os->n++;
	ss_pf_cur_event(pf, s->begin_ns, SS_PF_TYPE_BEGIN,
			k ? SS_PF_TRACK_RANGE : SS_PF_TRACK_FUNC, name,
			x.cs || x.ann ? &x : NULL);
}

static void ss_pf_slice(void *ctx, uint64_t pid, uint64_t tid,
			const struct ss_slice *s)
{
	struct ss_perfetto *pf = ctx;
	struct ss_pf_slice *o;
	uint32_t name;

	if (ss_pf_switch(pf, pid, tid))
		return;
	pf->ex.events++;
	if (s->cat == SS_SLICE_FUNCTION && (s->flags & SS_SLICE_UNANNOUNCED))
		ss_pf_open(ctx, pid, tid, s);  /* its BEGIN now: nothing came since */
	if (s->cat == SS_SLICE_FUNCTION || s->cat == SS_SLICE_RANGE) {
		struct ss_pf_ostack *os = &pf->os[s->cat == SS_SLICE_RANGE];
		struct ss_pf_open *f = s->depth < os->n ? &os->f[s->depth] : NULL;
		if (f && !f->closed && f->begin == s->begin_ns) {  /* announced */
			f->closed = 1;
			f->end = s->end_ns > s->begin_ns ? s->end_ns : s->begin_ns;
			f->unwound = (s->flags & SS_SLICE_UNWOUND) ?
					     (uint8_t)(1 + (s->unwind < 200 ? s->unwind : 0)) :
					     0;
			if (s->argv && f == &os->f[os->n - 1])
				f->call = s;  /* record.args: on its END, now */
			ss_pf_cur_pop(pf, s->cat == SS_SLICE_RANGE);
			return;
		}
	}
	name = ss_pf_intern(pf, s->name ? s->name : "?");
	if (name == UINT32_MAX) {
		pf->werr = ENOMEM;
		return;
	}
	if (s->cat == SS_SLICE_MARKER) {
		struct ss_pf_extra x;
		memset(&x, 0, sizeof(x));
		if (s->marker == SS_EV_LOST) {
			x.ann = "count";
			x.ann_uint = s->marker_arg;
		}
		ss_pf_cur_event(pf, s->begin_ns, SS_PF_TYPE_INSTANT, SS_PF_TRACK_FUNC,
				name, &x);
		return;
	}
	/* unannounced: steps, slices begun before the window */
	if (ss_grow((void **)&pf->sl, &pf->capsl, pf->nsl, sizeof(*o), 64)) {
		pf->werr = ENOMEM;
		return;
	}
	o = &pf->sl[pf->nsl++];
	o->begin = s->begin_ns;
	o->end = s->end_ns > s->begin_ns ? s->end_ns : s->begin_ns;
	if (s->cat == SS_SLICE_STEP && o->end - o->begin >= SS_EXPORT_STEP_GAP)
		o->end -= SS_EXPORT_STEP_GAP;
	o->name = name;
	o->depth = s->depth > 0xffff ? 0xffff : (uint16_t)s->depth;
	o->track = s->cat == SS_SLICE_RANGE ? SS_PF_TRACK_RANGE :
		   s->cat == SS_SLICE_STEP ? SS_PF_TRACK_STEP : SS_PF_TRACK_FUNC;
	o->cs = s->stack ? ss_pf_callstack(pf, pid, s->stack) : 0;
	o->unwound = 0;
	o->args = 0;
	if (s->args) {
		uint32_t a = ss_pf_intern(pf, s->args);
		o->args = a == UINT32_MAX ? 0 : a + 1;
	}
}

static void ss_pf_counter(void *ctx, uint64_t pid, const char *name, uint64_t ns,
			  double value)
{
	struct ss_perfetto *pf = ctx;
	struct ss_pf_ctr *c = NULL;
	size_t i;

	ss_pf_thread_flush(pf);
	if (pf->ncv && pf->ctr_pid != pid)
		ss_pf_counters_flush(pf);
	pf->ctr_pid = pid;
	for (i = 0; i < pf->nctrs; i++)
		if (pf->ctrs[i].pid == pid && !strcmp(pf->ctrs[i].name, name))
			c = &pf->ctrs[i];
	if (!c) {
		if (ss_grow((void **)&pf->ctrs, &pf->capctrs, pf->nctrs, sizeof(*c), 64))
			return;
		c = &pf->ctrs[pf->nctrs];
		c->pid = pid;
		c->uuid = pf->next_uuid++;
		if (!(c->name = strdup(name)))
			return;
		pf->nctrs++;
		ss_pf_track_desc(pf, c->uuid, ss_pf_process_uuid(pf, pid), name, NULL,
				 NULL, 1);
	}
	if (ss_grow((void **)&pf->cv, &pf->capcv, pf->ncv, sizeof(*pf->cv), 64))
		return;
	pf->cv[pf->ncv].ns = ns;
	pf->cv[pf->ncv].v = value;
	pf->cv[pf->ncv].uuid = c->uuid;
	pf->ncv++;
	pf->ex.events++;
}

static int ss_pf_end(void *ctx, char *err, size_t errlen)
{
	struct ss_perfetto *pf = ctx;

	ss_pf_thread_flush(pf);
	ss_pf_counters_flush(pf);
	ss_pf_flush(pf);
	ss_pf_writer_stop(pf);
	pf->f = NULL;
	return ss_out_commit(&pf->of, pf->werr, err, errlen);
}

static void ss_pf_release(void *ctx)
{
	struct ss_perfetto *pf = ctx;
	size_t i;

	ss_pf_writer_stop(pf);
	free(pf->wbuf.p);
	pthread_mutex_destroy(&pf->wmu);
	pthread_cond_destroy(&pf->wcv);
	ss_out_abort(&pf->of);
	for (i = 0; i < pf->nnames; i++)
		free(pf->names[i]);
	for (i = 0; i < pf->nctrs; i++)
		free(pf->ctrs[i].name);
	free(pf->names);
	free(pf->nhash);
	free(pf->pids);
	free(pf->puuids);
	free(pf->threads);
	free(pf->sl);
	free(pf->sent);
	for (i = 0; i < pf->ncs; i++)
		free(pf->cstacks[i].frames);
	free(pf->cstacks);
	free(pf->cshash);
	free(pf->cssent);
	free(pf->os[0].f);
	free(pf->os[1].f);
	free(pf->pkt.p);
	free(pf->te.p);
	free(pf->ctrs);
	free(pf->cv);
	free(pf->out.p);
	free(pf->path);
	free(pf);
}

void ss_export_perfetto_stats(const struct ss_exporter *e, uint64_t *bytes,
			      uint64_t *track_events)
{
	const struct ss_perfetto *pf = e->ctx;

	*bytes = pf->bytes_events;
	*track_events = pf->track_events;
}

struct ss_exporter *ss_export_perfetto_open(const char *path, char *err,
					    size_t errlen)
{
	struct ss_perfetto *pf = calloc(1, sizeof(*pf));

	if (!pf || !(pf->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(pf);
		return NULL;
	}
	pthread_mutex_init(&pf->wmu, NULL);
	pthread_cond_init(&pf->wcv, NULL);
	if (ss_out_open(&pf->of, path, err, errlen)) {
		ss_pf_release(pf);
		return NULL;
	}
	pf->f = pf->of.f;
	/* without a writer thread the buffers are written inline */
	if (!pthread_create(&pf->wth, NULL, ss_pf_writer_main, pf))
		pf->wstarted = 1;
	pf->next_uuid = 1;
	pf->next_seq = 1;
	pf->ex.ctx = pf;
	pf->ex.begin = ss_pf_begin;
	pf->ex.process = ss_pf_process;
	pf->ex.thread = ss_pf_thread;
	pf->ex.slice = ss_pf_slice;
	pf->ex.open = ss_pf_open;
	pf->ex.counter = ss_pf_counter;
	pf->ex.gpu = ss_pf_gpu;
	pf->ex.offcpu = ss_pf_offcpu;
	pf->ex.alloc = ss_pf_alloc;
	pf->ex.end = ss_pf_end;
	pf->ex.release = ss_pf_release;
	return &pf->ex;
}
