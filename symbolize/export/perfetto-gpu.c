/*
 * perfetto-gpu.c - a process's GPU activity (gpu.enabled: kernels, copies,
 * memsets, CUDA API calls) in the Perfetto exporter: one track per CUDA
 * API thread and per stream under a "GPU N" track, and flows from each
 * launch to its work.
 *
 * Design: GPU ops come in file order, not time order, so each goes on its
 * own sequence with absolute timestamps instead of deltas; a track is
 * made the first time an op needs it (at most 256).
 *
 * Must never: give an op an END before its BEGIN, or a flow that ends
 * nowhere (a launch without its work carries none).
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
 * deltas); a BEGIN carries the name, category, annotation and flow.  Also
 * what perfetto-offcpu.c writes its intervals with. */
void ss_pf_gpu_event(struct ss_perfetto *pf, uint32_t seq, uint64_t ns,
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
void ss_pf_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g)
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
