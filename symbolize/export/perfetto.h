/*
 * perfetto.h - what the parts of the Perfetto exporter share (not a public
 * header: export.h is): the protobuf field numbers, the exporter's state,
 * the encoder (perfetto-encode.c) and the exporter's callbacks
 * (perfetto.c, perfetto-gpu.c).  perfetto.c's opening comment describes
 * the trace it writes.
 */
#ifndef SS_PERFETTO_H
#define SS_PERFETTO_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include "export.h"
#include "outfile.h"

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
	const struct ss_slice *call; /* record.args: its values too, or NULL */
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
	const struct ss_slice *call; /* record.args: closed with these
				      * values, popped in the same call */
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

void ss_pf_bytes(struct ss_pf_msg *m, const void *p, size_t n);
void ss_pf_varint(struct ss_pf_msg *m, uint64_t v);
void ss_pf_uint(struct ss_pf_msg *m, unsigned field, uint64_t v);
void ss_pf_str(struct ss_pf_msg *m, unsigned field, const char *s);
void ss_pf_sub(struct ss_pf_msg *m, unsigned field, const struct ss_pf_msg *sub);
/* record.args: s's parameters as debug annotations (perfetto-args.c) */
void ss_pf_call_args(struct ss_pf_msg *te, const struct ss_slice *s);
void *ss_pf_writer_main(void *arg);
void ss_pf_flush(struct ss_perfetto *pf);
void ss_pf_writer_stop(struct ss_perfetto *pf);
void ss_pf_packet(struct ss_perfetto *pf, struct ss_pf_msg *pkt);
uint64_t ss_pf_hash_u64(uint64_t x);
uint32_t ss_pf_intern(struct ss_perfetto *pf, const char *s);
void ss_pf_track_desc(struct ss_perfetto *pf, uint64_t uuid, uint64_t parent,
		      const char *name, const struct ss_pf_msg *process,
		      const struct ss_pf_msg *thread, int counter_bytes);
uint64_t ss_pf_process_uuid(struct ss_perfetto *pf, uint64_t pid);
uint32_t ss_pf_sequence(struct ss_perfetto *pf, uint64_t t, uint64_t track);
void ss_pf_sent_clear(struct ss_perfetto *pf);
void ss_pf_event(struct ss_perfetto *pf, struct ss_pf_msg *pkt,
		 struct ss_pf_msg *te, uint32_t seq, uint64_t dt,
		 unsigned type, uint64_t track, uint32_t name, int counter,
		 double value, const struct ss_pf_extra *x);

static inline size_t ss_pf_varint_enc(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return n;
}

/* The common TrackEvent packet, a BEGIN of a name this sequence knows or
 * an END with nothing else, encoded straight into the output, its two
 * lengths (each under 128: one byte) filled in behind it: 1, or 0 when
 * it is not that case (ss_pf_event writes it). */
static inline int ss_pf_event_fast(struct ss_perfetto *pf, uint32_t seq, uint64_t dt,
				   unsigned type, uint64_t track, uint32_t name)
{
	int named = type == SS_PF_TYPE_BEGIN || type == SS_PF_TYPE_INSTANT;
	uint8_t *o, *plen, *tlen;
	size_t before = pf->out.n;

	if ((named && !(name < pf->capsent && (pf->sent[name] & 1))) ||
	    pf->out.cap - pf->out.n < 64)
		return 0;
	o = pf->out.p + pf->out.n;
	*o++ = SS_PF_TRACE_PACKET << 3 | 2;
	plen = o++;
	*o++ = SS_PF_PKT_TIMESTAMP << 3;
	o += ss_pf_varint_enc(o, dt);
	*o++ = SS_PF_PKT_SEQ_ID << 3;
	o += ss_pf_varint_enc(o, seq);
	*o++ = SS_PF_PKT_TRACK_EVENT << 3 | 2;
	tlen = o++;
	*o++ = SS_PF_TE_TYPE << 3;
	*o++ = (uint8_t)type;
	if (named) {
		*o++ = SS_PF_TE_NAME_IID << 3;
		o += ss_pf_varint_enc(o, (uint64_t)name + 1);
	}
	if (track) {
		*o++ = SS_PF_TE_TRACK_UUID << 3;
		o += ss_pf_varint_enc(o, track);
	}
	*tlen = (uint8_t)(o - tlen - 1);   /* <= 2 + 11 + 11 */
	*plen = (uint8_t)(o - plen - 1);   /* <= 11 + 6 + 2 + 24 */
	pf->out.n = (size_t)(o - pf->out.p);
	pf->bytes_events += pf->out.n - before;
	pf->track_events++;
	if (pf->out.n >= SS_PF_BUF)
		ss_pf_flush(pf);
	return 1;
}

void ss_pf_thread_flush(struct ss_perfetto *pf);
void ss_pf_counters_flush(struct ss_perfetto *pf);
void ss_pf_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g);
void ss_pf_gpu_event(struct ss_perfetto *pf, uint32_t seq, uint64_t ns,
		     unsigned type, uint64_t track, const char *name,
		     const char *cat, const char *ann, uint64_t ann_v,
		     unsigned flow_field, uint64_t flow);
/* perfetto-offcpu.c: the exporter's offcpu callback (record.sched) */
void ss_pf_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d);
/* alloc-track.c: recorded allocations as counter tracks */
void ss_pf_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d);
/* perfetto-alloc.c: a [memory] instant per allocation and free */
void ss_pf_alloc_events(struct ss_perfetto *pf, uint64_t pid, const struct ss_alloc_data *d);
/* chrome-alloc.c: the "CPU memory" track, through ex's counter callback */
void ss_alloc_cpu_track(struct ss_exporter *ex, uint64_t pid, const struct ss_alloc_data *d);

#endif /* SS_PERFETTO_H */
