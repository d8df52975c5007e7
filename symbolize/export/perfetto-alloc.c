/*
 * perfetto-alloc.c - recorded allocations (memory.allocations) in the
 * Perfetto exporter: a child track "[memory]" under each thread that
 * allocated holds one instant event "[memory]" per allocation and free,
 * category "cpu_instant_event", with the debug annotations of Chrome's
 * (chrome-alloc.c): Addr, Bytes (negative for a free; 0 and "Unknown Size"
 * for a free of unknown size), Total Allocated, Device Type, Device Id.
 * The "CPU memory" counter track is alloc-track.c's.
 *
 * Design: as the off-CPU intervals (perfetto-offcpu.c), the events come
 * before the thread's slices, on a sequence of their own with absolute
 * timestamps, on their own track, so they never touch the nesting of the
 * thread's calls.  Must never: write an event of a thread it has no
 * track for.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc-read.h"
#include "perfetto.h"

enum {
	PKT_TS_CLOCK = 58,      /* TracePacket.timestamp_clock_id */
	TE_CATEGORIES = 22,     /* TrackEvent.categories */
	TE_NAME = 23,           /* TrackEvent.name */
	DA_BOOL = 2,            /* DebugAnnotation.bool_value */
	DA_INT = 4,             /* DebugAnnotation.int_value */
};

static void ann(struct ss_pf_msg *te, const char *name, unsigned field, uint64_t v)
{
	struct ss_pf_msg da = { 0 };
	ss_pf_str(&da, SS_PF_DA_NAME, name);
	ss_pf_uint(&da, field, v);
	ss_pf_sub(te, SS_PF_TE_DEBUG_ANNOTATIONS, &da);
	free(da.p);
}

static void instant(struct ss_perfetto *pf, uint32_t seq, uint64_t track,
		    const struct ss_alloc_ev *e)
{
	struct ss_pf_msg pkt = { 0 }, te = { 0 };
	int cpu = SS_SPACE_KIND(e->space) == SS_SPACE_HEAP ||
		  SS_SPACE_KIND(e->space) == SS_SPACE_CUDA_PINNED;

	ss_pf_uint(&te, SS_PF_TE_TYPE, SS_PF_TYPE_INSTANT);
	ss_pf_uint(&te, SS_PF_TE_TRACK_UUID, track);
	ss_pf_str(&te, TE_NAME, "[memory]");
	ss_pf_str(&te, TE_CATEGORIES, "cpu_instant_event");
	ann(&te, "Addr", SS_PF_DA_UINT, e->addr);
	ann(&te, "Bytes", DA_INT, (uint64_t)e->delta);
	if (e->is_free && !e->known)
		ann(&te, "Unknown Size", DA_BOOL, 1);
	ann(&te, "Total Allocated", SS_PF_DA_UINT, e->live);
	ann(&te, "Device Type", DA_INT, cpu ? 0 : 1);
	ann(&te, "Device Id", DA_INT, cpu ? (uint64_t)-1 : SS_SPACE_DEVICE(e->space));
	ss_pf_uint(&pkt, SS_PF_PKT_TIMESTAMP, e->ns);
	ss_pf_uint(&pkt, PKT_TS_CLOCK, SS_PF_CLOCK_MONOTONIC);
	ss_pf_uint(&pkt, SS_PF_PKT_SEQ_ID, seq);
	ss_pf_sub(&pkt, SS_PF_PKT_TRACK_EVENT, &te);
	ss_pf_packet(pf, &pkt);
	pf->track_events++;
	free(pkt.p);
	free(te.p);
}

void ss_pf_alloc_events(struct ss_perfetto *pf, uint64_t pid, const struct ss_alloc_data *d)
{
	ss_pf_thread_flush(pf);
	ss_pf_counters_flush(pf);
	uint32_t seq = pf->next_seq++;
	uint64_t *track = calloc(pf->nthreads ? pf->nthreads : 1, sizeof(*track));
	size_t k = 0;
	if (!track)
		return;
	/* one pass in time order; the thread of the previous record first */
	for (size_t i = 0; i < d->nev; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		if (k >= pf->nthreads || pf->threads[k].pid != pid || pf->threads[k].tid != e->tid)
			for (k = 0; k < pf->nthreads; k++)
				if (pf->threads[k].pid == pid && pf->threads[k].tid == e->tid)
					break;
		if (k >= pf->nthreads)
			continue; /* a thread with no track */
		if (!track[k]) {
			track[k] = pf->next_uuid++;
			ss_pf_track_desc(pf, track[k], pf->threads[k].uuid, "[memory]", NULL, NULL, 0);
		}
		instant(pf, seq, track[k], e);
		pf->ex.events++;
	}
	free(track);
}
