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
 *     sequence with the first event that uses them).  Every event packet
 *     says SEQ_NEEDS_INCREMENTAL_STATE (it reads the clock and the interned
 *     names); the snapshot packet says SEQ_INCREMENTAL_STATE_CLEARED.
 * A BEGIN costs about 15 bytes, an END about 12.
 *
 * Streaming: the slicer announces each function and range as it opens
 * (ss_slicer_on_open) in time order with the slices that close, so a
 * BEGIN is written at the opening and the END when the slice (and every
 * slice above it) has closed; memory is the open frames of one thread.
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

/* field numbers */
enum {
	SS_PF_TRACE_PACKET = 1,
	SS_PF_PKT_CLOCK_SNAPSHOT = 6,
	SS_PF_PKT_TIMESTAMP = 8,
	SS_PF_PKT_SEQ_ID = 10,
	SS_PF_PKT_TRACK_EVENT = 11,
	SS_PF_PKT_INTERNED = 12,
	SS_PF_PKT_SEQ_FLAGS = 13,
	SS_PF_PKT_DEFAULTS = 59,
	SS_PF_PKT_TRACK_DESC = 60,
	SS_PF_DEF_CLOCK_ID = 58,
	SS_PF_DEF_TRACK_EVENT = 11,
	SS_PF_TED_TRACK_UUID = 11,
	SS_PF_TE_TYPE = 9,
	SS_PF_TE_NAME_IID = 10,
	SS_PF_TE_TRACK_UUID = 11,
	SS_PF_TE_COUNTER_VALUE = 30,
	SS_PF_TE_DOUBLE_COUNTER_VALUE = 44,
	SS_PF_TD_UUID = 1,
	SS_PF_TD_NAME = 2,
	SS_PF_TD_PROCESS = 3,
	SS_PF_TD_THREAD = 4,
	SS_PF_TD_PARENT = 5,
	SS_PF_TD_COUNTER = 8,
	SS_PF_PD_PID = 1,
	SS_PF_PD_NAME = 6,
	SS_PF_THD_PID = 1,
	SS_PF_THD_TID = 2,
	SS_PF_THD_NAME = 5,
	SS_PF_CD_UNIT = 3,
	SS_PF_ID_EVENT_NAMES = 2,
	SS_PF_EN_IID = 1,
	SS_PF_EN_NAME = 2,
	SS_PF_CS_CLOCKS = 1,
	SS_PF_CS_PRIMARY = 2,
	SS_PF_CK_ID = 1,
	SS_PF_CK_TS = 2,
	SS_PF_CK_INCREMENTAL = 3,
	SS_PF_TE_DEBUG_ANNOTATIONS = 4,
	SS_PF_TE_CALLSTACK_IID = 56,
	SS_PF_DA_UINT = 3,
	SS_PF_DA_STRING = 6,
	SS_PF_DA_NAME = 10,
	SS_PF_ID_FUNCTION_NAMES = 5,
	SS_PF_ID_FRAMES = 6,
	SS_PF_ID_CALLSTACKS = 7,
	SS_PF_IS_IID = 1,
	SS_PF_IS_STR = 2,
	SS_PF_FR_IID = 1,
	SS_PF_FR_FUNCTION_NAME_ID = 2,
	SS_PF_CST_IID = 1,
	SS_PF_CST_FRAME_IDS = 2,
};

#define SS_PF_TYPE_BEGIN 1
#define SS_PF_TYPE_END 2
#define SS_PF_TYPE_INSTANT 3
#define SS_PF_TYPE_COUNTER 4
#define SS_PF_CLOCK_MONOTONIC 3
#define SS_PF_CLOCK_SEQ 64
#define SS_PF_SEQ_CLEARED 1
#define SS_PF_SEQ_NEEDS 2
#define SS_PF_UNIT_BYTES 3

#define SS_PF_BUF (1u << 20)

enum { SS_PF_TRACK_FUNC, SS_PF_TRACK_RANGE, SS_PF_TRACK_STEP, SS_PF_NTRACKS };

struct ss_pf_slice {
	uint64_t begin, end;
	uint32_t name;           /* global name id */
	uint32_t cs;             /* callstack iid, 0: none */
	uint16_t depth;
	uint8_t track;
	uint8_t unwound;         /* 1 + enum ss_unwind_reason, 0: returned */
	uint32_t args;           /* 1 + name id of the range's args, 0: none */
};

/* A native stack, interned once per (process, stack id). */
struct ss_pf_cstack {
	uint64_t pid, id;
	uint32_t *frames;        /* name ids, outermost first */
	uint32_t n;
};

/* What a BEGIN or INSTANT carries besides its name. */
struct ss_pf_extra {
	uint32_t cs;
	const char *ann;         /* debug annotation name, or NULL */
	const char *ann_str;     /* its string value, or NULL: ann_uint */
	uint64_t ann_uint;
};

/* a small growable byte string for nested messages */
struct ss_pf_msg {
	uint8_t *p;
	size_t n, cap;
	int oom;
};

struct ss_pf_thread {
	uint64_t pid, tid, uuid;
	uint64_t sub[SS_PF_NTRACKS];     /* child tracks, 0 until used */
	char *name;
};

/* An open function or range of the current thread. */
struct ss_pf_open {
	uint64_t begin, end;
	uint8_t closed, unwound;
};

struct ss_pf_ostack {
	struct ss_pf_open *f;
	size_t n, cap;
};

struct ss_pf_ctr {
	uint64_t pid, uuid;
	char *name;
};

struct ss_pf_cval {
	uint64_t ns;
	double v;
	uint64_t uuid;
};

struct ss_perfetto {
	struct ss_exporter ex;
	struct ss_out of;        /* outfile.h: the output file */
	FILE *f;
	/* a writer thread hands full buffers to fwrite while the next one
	 * fills (as chrome.c does): the kernel's copy overlaps the
	 * encoding */
	pthread_t wth;
	pthread_mutex_t wmu;
	pthread_cond_t wcv;
	struct ss_pf_msg wbuf;           /* the buffer being written, or idle */
	int wbusy, wstop, wstarted;
	char *path;
	int werr;
	struct ss_pf_msg out;            /* pending output bytes */
	uint64_t next_uuid;
	uint32_t next_seq;
	/* names */
	char **names;
	size_t nnames, capnames;
	uint32_t *nhash;
	size_t nhcap;
	/* processes */
	uint64_t *pids, *puuids;
	size_t npids, cappids;
	struct ss_pf_thread *threads;
	size_t nthreads, capthreads;
	/* current thread: its streamed sequence, open frames per track
	 * (function, range), and the slices that came unannounced */
	struct ss_pf_thread *cur;
	uint32_t cur_seq;                /* 0: not started */
	uint64_t cur_last;               /* time of its last packet */
	struct ss_pf_ostack os[2];
	struct ss_pf_msg pkt, te;        /* scratch for one event */
	/* name ids of functions by address and name string (the symbolizer's
	 * strings are stable; a name built per slice is a function of the
	 * address alone) */
	struct { uint64_t addr; const char *name; uint32_t id; } fcache[4096];
	struct ss_pf_slice *sl;
	size_t nsl, capsl;
	uint8_t *sent;                   /* per name: interned on this sequence
					  * (1 event name, 2 function name and
					  * frame) */
	size_t capsent;
	/* callstacks: iid i + 1 is cstacks[i] */
	struct ss_pf_cstack *cstacks;
	size_t ncs, capcs;
	uint32_t *cshash;                /* iid, 0 = empty */
	size_t cshcap;
	uint8_t *cssent;                 /* per callstack: on this sequence */
	size_t capcssent;
	/* counters of the current process */
	uint64_t ctr_pid;
	struct ss_pf_ctr *ctrs;
	size_t nctrs, capctrs;
	struct ss_pf_cval *cv;
	size_t ncv, capcv;
	uint64_t bytes_events;           /* bytes of TrackEvent packets */
	uint64_t track_events;
};

/* ---------------------------------------------------------------- encoding */

static void ss_pf_bytes(struct ss_pf_msg *m, const void *p, size_t n)
{
	if (m->n + n > m->cap) {
		size_t nc = m->cap ? m->cap : 256;
		uint8_t *np;
		while (nc < m->n + n)
			nc *= 2;
		np = realloc(m->p, nc);
		if (!np) {
			m->oom = 1;
			return;
		}
		m->p = np;
		m->cap = nc;
	}
	memcpy(m->p + m->n, p, n);
	m->n += n;
}

static size_t ss_pf_varint_enc(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return n;
}

static inline size_t ss_pf_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void ss_pf_varint(struct ss_pf_msg *m, uint64_t v)
{
	uint8_t b[10];

	ss_pf_bytes(m, b, ss_pf_varint_enc(b, v));
}

static void ss_pf_uint(struct ss_pf_msg *m, unsigned field, uint64_t v)
{
	ss_pf_varint(m, (uint64_t)field << 3);
	ss_pf_varint(m, v);
}

static void ss_pf_double(struct ss_pf_msg *m, unsigned field, double v)
{
	ss_pf_varint(m, (uint64_t)field << 3 | 1);
	ss_pf_bytes(m, &v, 8);  /* little-endian hosts only, like format.h */
}

static void ss_pf_lenfield(struct ss_pf_msg *m, unsigned field, const void *p,
			   size_t n)
{
	ss_pf_varint(m, (uint64_t)field << 3 | 2);
	ss_pf_varint(m, n);
	ss_pf_bytes(m, p, n);
}

static void ss_pf_str(struct ss_pf_msg *m, unsigned field, const char *s)
{
	ss_pf_lenfield(m, field, s, strlen(s));
}

static void ss_pf_sub(struct ss_pf_msg *m, unsigned field, const struct ss_pf_msg *sub)
{
	ss_pf_lenfield(m, field, sub->p, sub->n);
	if (sub->oom)
		m->oom = 1;
}

/* m to the file with write(2): stdio would copy it once more */
static void ss_pf_write(struct ss_perfetto *pf, const struct ss_pf_msg *m)
{
	const uint8_t *p = m->p;
	size_t n = m->n;

	while (n) {
		ssize_t k = write(fileno(pf->f), p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (!pf->werr)
				pf->werr = errno;
			return;
		}
		p += k;
		n -= (size_t)k;
	}
}

static void *ss_pf_writer_main(void *arg)
{
	struct ss_perfetto *pf = arg;

	pthread_mutex_lock(&pf->wmu);
	for (;;) {
		while (!pf->wbusy && !pf->wstop)
			pthread_cond_wait(&pf->wcv, &pf->wmu);
		if (!pf->wbusy)
			break;
		pthread_mutex_unlock(&pf->wmu);
		ss_pf_write(pf, &pf->wbuf);
		pthread_mutex_lock(&pf->wmu);
		pf->wbusy = 0;
		pthread_cond_broadcast(&pf->wcv);
	}
	pthread_mutex_unlock(&pf->wmu);
	return NULL;
}

/* Wait until the writer holds no buffer. */
static void ss_pf_writer_wait(struct ss_perfetto *pf)
{
	pthread_mutex_lock(&pf->wmu);
	while (pf->wbusy)
		pthread_cond_wait(&pf->wcv, &pf->wmu);
	pthread_mutex_unlock(&pf->wmu);
}

static void ss_pf_flush(struct ss_perfetto *pf)
{
	struct ss_pf_msg t;

	if (!pf->out.n)
		return;
	if (!pf->wstarted) {
		ss_pf_write(pf, &pf->out);
		pf->out.n = 0;
		return;
	}
	ss_pf_writer_wait(pf);
	t = pf->wbuf;            /* idle: swap it with the full one */
	pthread_mutex_lock(&pf->wmu);
	pf->wbuf = pf->out;
	pf->wbusy = 1;
	pthread_cond_broadcast(&pf->wcv);
	pthread_mutex_unlock(&pf->wmu);
	pf->out = t;
	pf->out.n = 0;
}

static void ss_pf_writer_stop(struct ss_perfetto *pf)
{
	if (!pf->wstarted)
		return;
	pthread_mutex_lock(&pf->wmu);
	pf->wstop = 1;
	pthread_cond_broadcast(&pf->wcv);
	pthread_mutex_unlock(&pf->wmu);
	pthread_join(pf->wth, NULL);
	pf->wstarted = 0;
}

/* Append one TracePacket (already encoded in pkt) to the trace. */
static void ss_pf_packet(struct ss_perfetto *pf, struct ss_pf_msg *pkt)
{
	ss_pf_sub(&pf->out, SS_PF_TRACE_PACKET, pkt);
	if (pkt->oom && !pf->werr)
		pf->werr = ENOMEM;
	pkt->n = 0;
	if (pf->out.n >= SS_PF_BUF)
		ss_pf_flush(pf);
}

/* ---------------------------------------------------------------- names */

static uint64_t ss_pf_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

static uint32_t ss_pf_intern(struct ss_perfetto *pf, const char *s)
{
	size_t i;

	if (pf->nhcap) {
		i = ss_hash_str(s) & (pf->nhcap - 1);
		while (pf->nhash[i]) {
			if (!strcmp(pf->names[pf->nhash[i] - 1], s))
				return pf->nhash[i] - 1;
			i = (i + 1) & (pf->nhcap - 1);
		}
	}
	if ((pf->nnames + 1) * 2 > pf->nhcap) {
		size_t nc = pf->nhcap ? pf->nhcap * 2 : 256, k;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh)
			return UINT32_MAX;
		for (k = 0; k < pf->nnames; k++) {
			size_t j = ss_hash_str(pf->names[k]) & (nc - 1);
			while (nh[j])
				j = (j + 1) & (nc - 1);
			nh[j] = (uint32_t)k + 1;
		}
		free(pf->nhash);
		pf->nhash = nh;
		pf->nhcap = nc;
	}
	if (ss_grow((void **)&pf->names, &pf->capnames, pf->nnames, sizeof(char *), 64) ||
	    !(pf->names[pf->nnames] = strdup(s)))
		return UINT32_MAX;
	i = ss_hash_str(s) & (pf->nhcap - 1);
	while (pf->nhash[i])
		i = (i + 1) & (pf->nhcap - 1);
	pf->nhash[i] = (uint32_t)pf->nnames + 1;
	return (uint32_t)pf->nnames++;
}

/* ---------------------------------------------------------------- tracks */

static void ss_pf_track_desc(struct ss_perfetto *pf, uint64_t uuid, uint64_t parent,
			     const char *name, const struct ss_pf_msg *process,
			     const struct ss_pf_msg *thread, int counter_bytes)
{
	struct ss_pf_msg td = { 0 }, pkt = { 0 }, cd = { 0 };

	ss_pf_uint(&td, SS_PF_TD_UUID, uuid);
	if (name)
		ss_pf_str(&td, SS_PF_TD_NAME, name);
	if (process)
		ss_pf_sub(&td, SS_PF_TD_PROCESS, process);
	if (thread)
		ss_pf_sub(&td, SS_PF_TD_THREAD, thread);
	if (parent)
		ss_pf_uint(&td, SS_PF_TD_PARENT, parent);
	if (counter_bytes) {
		ss_pf_uint(&cd, SS_PF_CD_UNIT, SS_PF_UNIT_BYTES);
		ss_pf_sub(&td, SS_PF_TD_COUNTER, &cd);
	}
	ss_pf_sub(&pkt, SS_PF_PKT_TRACK_DESC, &td);
	ss_pf_packet(pf, &pkt);
	free(td.p);
	free(pkt.p);
	free(cd.p);
}

static uint64_t ss_pf_process_uuid(struct ss_perfetto *pf, uint64_t pid)
{
	size_t i;

	for (i = 0; i < pf->npids; i++)
		if (pf->pids[i] == pid)
			return pf->puuids[i];
	return 0;
}

/* Start a sequence: clock snapshot at t, defaults (clock 64, track). */
static uint32_t ss_pf_sequence(struct ss_perfetto *pf, uint64_t t, uint64_t track)
{
	struct ss_pf_msg pkt = { 0 }, cs = { 0 }, ck = { 0 }, def = { 0 }, ted = { 0 };
	uint32_t seq = pf->next_seq++;
	/* only what is true: times are CLOCK_MONOTONIC readings, clock 64
	 * counts from this one in deltas; BOOTTIME (which also counts
	 * suspend) is not claimed equal */
	static const unsigned ids[] = { SS_PF_CLOCK_MONOTONIC, SS_PF_CLOCK_SEQ };
	size_t i;

	for (i = 0; i < 2; i++) {
		ck.n = 0;
		ss_pf_uint(&ck, SS_PF_CK_ID, ids[i]);
		ss_pf_uint(&ck, SS_PF_CK_TS, t);
		if (ids[i] == SS_PF_CLOCK_SEQ)
			ss_pf_uint(&ck, SS_PF_CK_INCREMENTAL, 1);
		ss_pf_sub(&cs, SS_PF_CS_CLOCKS, &ck);
	}
	ss_pf_uint(&cs, SS_PF_CS_PRIMARY, SS_PF_CLOCK_MONOTONIC);
	ss_pf_sub(&pkt, SS_PF_PKT_CLOCK_SNAPSHOT, &cs);
	ss_pf_uint(&pkt, SS_PF_PKT_SEQ_ID, seq);
	ss_pf_uint(&pkt, SS_PF_PKT_SEQ_FLAGS, SS_PF_SEQ_CLEARED);
	ss_pf_uint(&def, SS_PF_DEF_CLOCK_ID, SS_PF_CLOCK_SEQ);
	if (track) {
		ss_pf_uint(&ted, SS_PF_TED_TRACK_UUID, track);
		ss_pf_sub(&def, SS_PF_DEF_TRACK_EVENT, &ted);
	}
	ss_pf_sub(&pkt, SS_PF_PKT_DEFAULTS, &def);
	ss_pf_packet(pf, &pkt);
	free(pkt.p);
	free(cs.p);
	free(ck.p);
	free(def.p);
	free(ted.p);
	return seq;
}

/* Make the per-sequence "sent" marks cover every name and callstack
 * (new ones start unsent); 0, or -1 out of memory. */
static int ss_pf_sent_cover(struct ss_perfetto *pf)
{
	if (pf->capsent < pf->nnames) {
		size_t nc = pf->nnames * 2;
		uint8_t *ns = realloc(pf->sent, nc);
		if (!ns)
			return -1;
		memset(ns + pf->capsent, 0, nc - pf->capsent);
		pf->sent = ns;
		pf->capsent = nc;
	}
	if (pf->capcssent < pf->ncs) {
		size_t nc = pf->ncs * 2;
		uint8_t *ns = realloc(pf->cssent, nc);
		if (!ns)
			return -1;
		memset(ns + pf->capcssent, 0, nc - pf->capcssent);
		pf->cssent = ns;
		pf->capcssent = nc;
	}
	return 0;
}

/* A new sequence: nothing interned on it yet. */
static void ss_pf_sent_clear(struct ss_perfetto *pf)
{
	if (pf->capsent)
		memset(pf->sent, 0, pf->capsent);
	if (pf->capcssent)
		memset(pf->cssent, 0, pf->capcssent);
}

/* Interned data a BEGIN/INSTANT needs on this sequence: its name, and its
 * callstack with the frames and function names not sent yet. */
static void ss_pf_interned(struct ss_perfetto *pf, struct ss_pf_msg *pkt,
			   uint32_t name, uint32_t cs)
{
	struct ss_pf_msg id = { 0 }, en = { 0 };
	uint32_t i;

	if (ss_pf_sent_cover(pf)) {
		pf->werr = ENOMEM;
		return;
	}
	if (name < pf->capsent && !(pf->sent[name] & 1)) {
		pf->sent[name] |= 1;
		ss_pf_uint(&en, SS_PF_EN_IID, (uint64_t)name + 1);
		ss_pf_str(&en, SS_PF_EN_NAME, pf->names[name]);
		ss_pf_sub(&id, SS_PF_ID_EVENT_NAMES, &en);
	}
	if (cs && cs <= pf->ncs && cs <= pf->capcssent && !pf->cssent[cs - 1]) {
		const struct ss_pf_cstack *c = &pf->cstacks[cs - 1];
		pf->cssent[cs - 1] = 1;
		for (i = 0; i < c->n; i++) {
			uint32_t f = c->frames[i];
			if (f >= pf->capsent || (pf->sent[f] & 2))
				continue;
			pf->sent[f] |= 2;
			en.n = 0;
			ss_pf_uint(&en, SS_PF_IS_IID, (uint64_t)f + 1);
			ss_pf_str(&en, SS_PF_IS_STR, pf->names[f]);
			ss_pf_sub(&id, SS_PF_ID_FUNCTION_NAMES, &en);
			en.n = 0;
			ss_pf_uint(&en, SS_PF_FR_IID, (uint64_t)f + 1);
			ss_pf_uint(&en, SS_PF_FR_FUNCTION_NAME_ID, (uint64_t)f + 1);
			ss_pf_sub(&id, SS_PF_ID_FRAMES, &en);
		}
		en.n = 0;
		ss_pf_uint(&en, SS_PF_CST_IID, cs);
		for (i = 0; i < c->n; i++)
			ss_pf_uint(&en, SS_PF_CST_FRAME_IDS, (uint64_t)c->frames[i] + 1);
		ss_pf_sub(&id, SS_PF_ID_CALLSTACKS, &en);
	}
	if (id.n)
		ss_pf_sub(pkt, SS_PF_PKT_INTERNED, &id);
	free(id.p);
	free(en.p);
}

/* One TrackEvent packet at delta dt on sequence seq. */
static void ss_pf_event(struct ss_perfetto *pf, struct ss_pf_msg *pkt,
			struct ss_pf_msg *te, uint32_t seq, uint64_t dt,
			unsigned type, uint64_t track, uint32_t name, int counter,
			double value, const struct ss_pf_extra *x)
{
	size_t before = pf->out.n;
	int named = type == SS_PF_TYPE_BEGIN || type == SS_PF_TYPE_INSTANT;

	/* the common case, a BEGIN of a name this sequence knows or an END
	 * with nothing else: encoded straight into the output */
	if (!counter && !(x && (x->cs || x->ann)) &&
	    (!named || (name < pf->capsent && (pf->sent[name] & 1))) &&
	    pf->out.cap - pf->out.n >= 64) {
		uint8_t t[32], *o;
		size_t tn = 0, pn;
		t[tn++] = SS_PF_TE_TYPE << 3;
		t[tn++] = (uint8_t)type;
		if (named) {
			t[tn++] = SS_PF_TE_NAME_IID << 3;
			tn += ss_pf_varint_enc(t + tn, (uint64_t)name + 1);
		}
		if (track) {
			t[tn++] = SS_PF_TE_TRACK_UUID << 3;
			tn += ss_pf_varint_enc(t + tn, track);
		}
		o = pf->out.p + pf->out.n;
		/* packet body: timestamp, sequence id, flags, track_event;
		 * its length first (the varints' sizes), then the fields
		 * straight into the output */
		{
			size_t k;
			pn = 1 + ss_pf_varint_size(dt) + 1 + ss_pf_varint_size(seq) + 2 + 2 + tn;
			*o++ = SS_PF_TRACE_PACKET << 3 | 2;
			o += ss_pf_varint_enc(o, pn);
			*o++ = SS_PF_PKT_TIMESTAMP << 3;
			o += ss_pf_varint_enc(o, dt);
			*o++ = SS_PF_PKT_SEQ_ID << 3;
			o += ss_pf_varint_enc(o, seq);
			*o++ = SS_PF_PKT_SEQ_FLAGS << 3;
			*o++ = SS_PF_SEQ_NEEDS;
			*o++ = SS_PF_PKT_TRACK_EVENT << 3 | 2;
			*o++ = (uint8_t)tn;   /* < 128 */
			for (k = 0; k < tn; k++)
				o[k] = t[k];
			o += tn;
		}
		pf->out.n = (size_t)(o - pf->out.p);
		pf->bytes_events += pf->out.n - before;
		pf->track_events++;
		if (pf->out.n >= SS_PF_BUF)
			ss_pf_flush(pf);
		return;
	}
	pkt->n = 0;
	te->n = 0;
	ss_pf_uint(pkt, SS_PF_PKT_TIMESTAMP, dt);
	ss_pf_uint(pkt, SS_PF_PKT_SEQ_ID, seq);
	ss_pf_uint(pkt, SS_PF_PKT_SEQ_FLAGS, SS_PF_SEQ_NEEDS);
	ss_pf_uint(te, SS_PF_TE_TYPE, type);
	if (named)
		ss_pf_uint(te, SS_PF_TE_NAME_IID, (uint64_t)name + 1);
	if (track)
		ss_pf_uint(te, SS_PF_TE_TRACK_UUID, track);
	if (counter) {
		if (value >= 0 && value < 9.2e18 && value == (double)(int64_t)value)
			ss_pf_uint(te, SS_PF_TE_COUNTER_VALUE, (uint64_t)(int64_t)value);
		else
			ss_pf_double(te, SS_PF_TE_DOUBLE_COUNTER_VALUE, value);
	}
	if (x && x->cs)
		ss_pf_uint(te, SS_PF_TE_CALLSTACK_IID, x->cs);
	if (x && x->ann) {
		struct ss_pf_msg da = { 0 };
		ss_pf_str(&da, SS_PF_DA_NAME, x->ann);
		if (x->ann_str)
			ss_pf_str(&da, SS_PF_DA_STRING, x->ann_str);
		else
			ss_pf_uint(&da, SS_PF_DA_UINT, x->ann_uint);
		ss_pf_sub(te, SS_PF_TE_DEBUG_ANNOTATIONS, &da);
		free(da.p);
	}
	ss_pf_sub(pkt, SS_PF_PKT_TRACK_EVENT, te);
	if (named)
		ss_pf_interned(pf, pkt, name, x ? x->cs : 0);
	ss_pf_packet(pf, pkt);
	pf->bytes_events += pf->out.n >= before ? pf->out.n - before : 0;
	pf->track_events++;
}

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
static void ss_pf_cur_event(struct ss_perfetto *pf, uint64_t ts, unsigned type,
			    unsigned k, uint32_t name, const struct ss_pf_extra *x)
{
	struct ss_pf_thread *t = pf->cur;
	uint64_t track;

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
		memset(&x, 0, sizeof(x));
		if (o->unwound) {
			x.ann = "unwound";
			x.ann_str = ss_pf_unwound(o->unwound);
		}
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
static void ss_pf_thread_flush(struct ss_perfetto *pf)
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
static void ss_pf_counters_flush(struct ss_perfetto *pf)
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
static int ss_pf_switch(struct ss_perfetto *pf, uint64_t pid, uint64_t tid)
{
	struct ss_pf_thread *t;

	if (pf->cur && pf->cur->pid == pid && pf->cur->tid == tid)
		return 0;
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
	os->n++;
	ss_pf_cur_event(pf, s->begin_ns, SS_PF_TYPE_BEGIN,
			k ? SS_PF_TRACK_RANGE : SS_PF_TRACK_FUNC, name, &x);
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
	if (s->cat == SS_SLICE_FUNCTION || s->cat == SS_SLICE_RANGE) {
		struct ss_pf_ostack *os = &pf->os[s->cat == SS_SLICE_RANGE];
		struct ss_pf_open *f = s->depth < os->n ? &os->f[s->depth] : NULL;
		if (f && !f->closed && f->begin == s->begin_ns) {  /* announced */
			f->closed = 1;
			f->end = s->end_ns > s->begin_ns ? s->end_ns : s->begin_ns;
			f->unwound = (s->flags & SS_SLICE_UNWOUND) ?
					     (uint8_t)(1 + (s->unwind < 200 ? s->unwind : 0)) :
					     0;
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

/* ------------------------------------------------------------ GPU */

enum {
	SS_PF_PKT_TS_CLOCK = 58,         /* TracePacket.timestamp_clock_id */
	SS_PF_TE_CATEGORIES = 22,
	SS_PF_TE_NAME = 23,
	SS_PF_TE_FLOW_IDS = 47,          /* fixed64 */
	SS_PF_TE_TERMINATING_FLOW_IDS = 48,
};

/* One BEGIN or END of a GPU op on its own sequence, at an absolute
 * CLOCK_MONOTONIC time (GPU ops come in file order, not time order, so no
 * deltas); a BEGIN carries the name, category, annotation and flow. */
static void ss_pf_gpu_event(struct ss_perfetto *pf, uint32_t seq, uint64_t ns,
			    unsigned type, uint64_t track, const char *name,
			    const char *cat, const char *ann, uint64_t ann_v,
			    unsigned flow_field, uint64_t flow)
{
	struct ss_pf_msg pkt = { 0 }, te = { 0 }, da = { 0 };
	uint8_t raw[8];

	ss_pf_uint(&te, SS_PF_TE_TYPE, type);
	ss_pf_uint(&te, SS_PF_TE_TRACK_UUID, track);
	if (type == SS_PF_TYPE_BEGIN) {
		ss_pf_str(&te, SS_PF_TE_NAME, name);
		ss_pf_str(&te, SS_PF_TE_CATEGORIES, cat);
		if (ann) {
			ss_pf_str(&da, SS_PF_DA_NAME, ann);
			ss_pf_uint(&da, SS_PF_DA_UINT, ann_v);
			ss_pf_sub(&te, SS_PF_TE_DEBUG_ANNOTATIONS, &da);
		}
		if (flow_field) {
			for (int i = 0; i < 8; i++)
				raw[i] = (uint8_t)(flow >> (8 * i));
			ss_pf_varint(&te, (uint64_t)flow_field << 3 | 1);
			ss_pf_bytes(&te, raw, 8);
		}
	}
	ss_pf_uint(&pkt, SS_PF_PKT_TIMESTAMP, ns);
	ss_pf_uint(&pkt, SS_PF_PKT_TS_CLOCK, SS_PF_CLOCK_MONOTONIC);
	ss_pf_uint(&pkt, SS_PF_PKT_SEQ_ID, seq);
	ss_pf_sub(&pkt, SS_PF_PKT_TRACK_EVENT, &te);
	ss_pf_packet(pf, &pkt);
	pf->track_events++;
	free(pkt.p);
	free(te.p);
	free(da.p);
}

static int ss_pf_cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

/* A track per device ("GPU 0"), one per stream under it ("stream 7"), one
 * per host thread that called CUDA under the process ("CUDA API, thread
 * N"); flows (id: process and correlation id) from each launch to its
 * kernel or copy. */
static void ss_pf_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g)
{
	struct ss_perfetto *pf = ctx;
	struct { uint32_t dev, stream, tid; int api; uint64_t uuid; } tr[256];
	size_t ntr = 0;
	char name[64];
	uint32_t seq;

	ss_pf_thread_flush(pf);
	ss_pf_counters_flush(pf);
	seq = pf->next_seq++;
	/* correlation ids of device work: the launches that get a flow */
	uint32_t *work = malloc((g->n ? g->n : 1) * sizeof(*work));
	size_t nwork = 0;
	if (!work)
		return;
	for (size_t i = 0; i < g->n; i++)
		if (g->ops[i].type != SS_GPU_API)
			work[nwork++] = g->ops[i].correlation;
	qsort(work, nwork, sizeof(*work), ss_pf_cmp_u32);
	for (size_t i = 0; i < g->n; i++) {
		const struct ss_gpu_op *o = &g->ops[i];
		int api = o->type == SS_GPU_API;
		uint64_t track = 0, dev_uuid = 0;
		for (size_t k = 0; k < ntr && !track; k++) {
			if (api ? (tr[k].api == 1 && tr[k].tid == o->tid)
				: (tr[k].api == 0 && tr[k].dev == o->device &&
				   tr[k].stream == o->stream))
				track = tr[k].uuid;
			if (!api && tr[k].api == 2 && tr[k].dev == o->device)
				dev_uuid = tr[k].uuid;
		}
		if (!track && ntr + 2 > sizeof(tr) / sizeof(tr[0]))
			continue; /* past 256 tracks: dropped */
		if (!track && !api && !dev_uuid) {
			dev_uuid = pf->next_uuid++;
			snprintf(name, sizeof(name), "GPU %u", o->device);
			ss_pf_track_desc(pf, dev_uuid, 0, name, NULL, NULL, 0);
			tr[ntr].api = 2;
			tr[ntr].dev = o->device;
			tr[ntr++].uuid = dev_uuid;
		}
		if (!track) {
			track = pf->next_uuid++;
			if (api)
				snprintf(name, sizeof(name), "CUDA API, thread %u", o->tid);
			else
				snprintf(name, sizeof(name), "stream %u", o->stream);
			ss_pf_track_desc(pf, track,
					 api ? ss_pf_process_uuid(pf, pid) : dev_uuid, name,
					 NULL, NULL, 0);
			tr[ntr].api = api;
			tr[ntr].dev = o->device;
			tr[ntr].stream = o->stream;
			tr[ntr].tid = o->tid;
			tr[ntr++].uuid = track;
		}
		uint64_t flow = (pid << 32) | o->correlation;
		int launched = api ? bsearch(&o->correlation, work, nwork, sizeof(*work),
					     ss_pf_cmp_u32) != NULL
				   : ss_gpu_launch(g, o->correlation) != NULL;
		const char *cat = api ? "cuda_api"
				      : o->type == SS_GPU_KERNEL ? "kernel"
				      : o->kind == SS_GPU_MEMSET ? "memset" : "memcpy";
		ss_pf_gpu_event(pf, seq, o->start_ns, SS_PF_TYPE_BEGIN, track, o->name, cat,
				o->type == SS_GPU_COPY ? "bytes" : "correlation",
				o->type == SS_GPU_COPY ? o->bytes : o->correlation,
				!launched ? 0
				: api     ? SS_PF_TE_FLOW_IDS
					  : SS_PF_TE_TERMINATING_FLOW_IDS,
				flow);
		ss_pf_gpu_event(pf, seq, o->end_ns, SS_PF_TYPE_END, track, NULL, NULL,
				NULL, 0, 0, 0);
		pf->ex.events++;
	}
	free(work);
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
	pf->ex.end = ss_pf_end;
	pf->ex.release = ss_pf_release;
	return &pf->ex;
}
