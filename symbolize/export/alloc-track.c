/*
 * alloc-track.c - recorded allocations as counter tracks of the trace
 * (memory.allocations; read/alloc-read.h), for Chrome JSON and Perfetto:
 * their `alloc` callbacks (ss_chrome_alloc, ss_pf_alloc) feed the
 * exporter's own counter callback, so each track is drawn as the memory
 * sampler's are.
 *
 * CUDA (gpu.enabled, runtime/gpu-alloc.c): one track per device,
 * "CUDA memory cuda:N", the live bytes of that device's device and
 * managed memory allocated while recording (pinned host memory is CPU
 * memory, as in the report), a sample at each allocation and free of it.
 * The value is the reader's: blocks allocated since the current window
 * opened, a free of unknown size 0 bytes, so the track ends where the
 * report's peaks and leaks say.
 *
 * Never: write a track for a device with no record, or a sample that is
 * not a change of live bytes.
 */
#include <string.h>

#include "alloc-read.h"
#include "chrome.h"
#include "perfetto.h"

#define MAX_DEV 64

static void cuda_tracks(struct ss_exporter *ex, uint64_t pid, const struct ss_alloc_data *d)
{
	uint64_t last[SS_ALLOC_SPACES] = { 0 }; /* live bytes of each space */
	uint64_t shown[MAX_DEV] = { 0 };
	uint8_t any[MAX_DEV] = { 0 };

	for (size_t i = 0; i < d->nev; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		int si = ss_alloc_space_index(d, e->space);
		if (!ss_alloc_space_cuda(e->space) || si < 0)
			continue;
		last[si] = e->live;
		unsigned dev = SS_SPACE_DEVICE(e->space);
		uint64_t v = 0;
		for (size_t k = 0; k < d->nspaces; k++)
			if (ss_alloc_space_cuda(d->spaces[k]) && SS_SPACE_DEVICE(d->spaces[k]) == dev)
				v += last[k];
		if (dev >= MAX_DEV || (any[dev] && v == shown[dev]))
			continue;
		char name[48];
		snprintf(name, sizeof(name), "CUDA memory cuda:%u", dev);
		ex->counter(ex->ctx, pid, name, e->ns, (double)v);
		any[dev] = 1;
		shown[dev] = v;
	}
}

void ss_chrome_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct ss_chrome *c = ctx;
	cuda_tracks(&c->ex, pid, d);
	ss_alloc_cpu_track(&c->ex, pid, d);   /* chrome-alloc.c */
	ss_chrome_alloc_events(c, pid, d);
}

void ss_pf_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct ss_perfetto *pf = ctx;
	cuda_tracks(&pf->ex, pid, d);
	ss_alloc_cpu_track(&pf->ex, pid, d);  /* chrome-alloc.c */
	ss_pf_alloc_events(pf, pid, d);       /* perfetto-alloc.c */
}
