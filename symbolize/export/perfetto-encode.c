/*
 * perfetto-encode.c - the protobuf layer of the Perfetto exporter: fields
 * encoded by hand into growing messages, packets into the output buffer
 * and the writer thread that writes it out, interned names, track
 * descriptors, and the packet sequences of TrackEvents with delta
 * timestamps.
 *
 * Design: a message is a byte buffer; a sub-message is encoded on its own
 * and appended with its length (no back-patching).  Knows protobuf and
 * Perfetto's packet rules (an interned name is sent once per sequence, a
 * track descriptor before its first event), nothing about slices.
 *
 * Must never: emit a negative timestamp delta, or an event on a sequence
 * before the sequence's clock snapshot and defaults.
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

/* ---------------------------------------------------------------- encoding */

void ss_pf_bytes(struct ss_pf_msg *m, const void *p, size_t n)
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

void ss_pf_varint(struct ss_pf_msg *m, uint64_t v)
{
	uint8_t b[10];

	ss_pf_bytes(m, b, ss_pf_varint_enc(b, v));
}

void ss_pf_uint(struct ss_pf_msg *m, unsigned field, uint64_t v)
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

void ss_pf_str(struct ss_pf_msg *m, unsigned field, const char *s)
{
	ss_pf_lenfield(m, field, s, strlen(s));
}

void ss_pf_sub(struct ss_pf_msg *m, unsigned field, const struct ss_pf_msg *sub)
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

void *ss_pf_writer_main(void *arg)
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

void ss_pf_flush(struct ss_perfetto *pf)
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

void ss_pf_writer_stop(struct ss_perfetto *pf)
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
void ss_pf_packet(struct ss_perfetto *pf, struct ss_pf_msg *pkt)
{
	ss_pf_sub(&pf->out, SS_PF_TRACE_PACKET, pkt);
	if (pkt->oom && !pf->werr)
		pf->werr = ENOMEM;
	pkt->n = 0;
	if (pf->out.n >= SS_PF_BUF)
		ss_pf_flush(pf);
}

/* ---------------------------------------------------------------- names */

uint64_t ss_pf_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

uint32_t ss_pf_intern(struct ss_perfetto *pf, const char *s)
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

void ss_pf_track_desc(struct ss_perfetto *pf, uint64_t uuid, uint64_t parent,
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

uint64_t ss_pf_process_uuid(struct ss_perfetto *pf, uint64_t pid)
{
	size_t i;

	for (i = 0; i < pf->npids; i++)
		if (pf->pids[i] == pid)
			return pf->puuids[i];
	return 0;
}

/* Start a sequence: clock snapshot at t, defaults (clock 64, track). */
uint32_t ss_pf_sequence(struct ss_perfetto *pf, uint64_t t, uint64_t track)
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
void ss_pf_sent_clear(struct ss_perfetto *pf)
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
void ss_pf_event(struct ss_perfetto *pf, struct ss_pf_msg *pkt,
		 struct ss_pf_msg *te, uint32_t seq, uint64_t dt,
		 unsigned type, uint64_t track, uint32_t name, int counter,
		 double value, const struct ss_pf_extra *x)
{
	size_t before = pf->out.n;
	int named = type == SS_PF_TYPE_BEGIN || type == SS_PF_TYPE_INSTANT;

	/* the common case (perfetto.h) */
	if (!counter && !(x && (x->cs || x->ann || x->call)) &&
	    ss_pf_event_fast(pf, seq, dt, type, track, name))
		return;
	pkt->n = 0;
	te->n = 0;
	ss_pf_uint(pkt, SS_PF_PKT_TIMESTAMP, dt);
	ss_pf_uint(pkt, SS_PF_PKT_SEQ_ID, seq);
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
	if (x && x->call)
		ss_pf_call_args(te, x->call); /* record.args */
	ss_pf_sub(pkt, SS_PF_PKT_TRACK_EVENT, te);
	if (named)
		ss_pf_interned(pf, pkt, name, x ? x->cs : 0);
	ss_pf_packet(pf, pkt);
	pf->bytes_events += pf->out.n >= before ? pf->out.n - before : 0;
	pf->track_events++;
}
