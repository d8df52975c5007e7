/*
 * chrome-alloc.c - recorded allocations (memory.allocations) in the Chrome
 * JSON exporter, as torch.profiler writes them with profile_memory: one
 * instant event named "[memory]" per allocation and free, on the thread
 * that made it, with args "Addr", "Bytes" (negative for a free; 0 for a
 * free of unknown size, which also gets "Unknown Size": true), "Total
 * Allocated" (the live bytes of its space after it), "Device Type" (0 CPU,
 * 1 CUDA) and "Device Id" (-1 for the CPU, else the CUDA device); and the
 * counter track "CPU memory" of each process (alloc-track.c draws the
 * CUDA ones): the live bytes of the heap and pinned host memory allocated
 * while recording.
 *
 * Never: write an event before the run's t0, or a counter sample that is
 * not a change.
 */
#include <stdio.h>
#include <string.h>

#include "alloc-read.h"
#include "chrome.h"

/* "CPU memory": the live bytes of the CPU spaces, at each change */
void ss_alloc_cpu_track(struct ss_exporter *ex, uint64_t pid, const struct ss_alloc_data *d)
{
	uint64_t last[SS_ALLOC_SPACES] = { 0 }, shown = 0;
	int any = 0;

	for (size_t i = 0; i < d->nev; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		int si = ss_alloc_space_index(d, e->space);
		if (ss_alloc_space_cuda(e->space) || si < 0)
			continue;
		last[si] = e->live;
		uint64_t v = 0;
		for (size_t k = 0; k < d->nspaces; k++)
			if (!ss_alloc_space_cuda(d->spaces[k]))
				v += last[k];
		if (any && v == shown)
			continue;
		ex->counter(ex->ctx, pid, "CPU memory", e->ns, (double)v);
		any = 1;
		shown = v;
	}
}

static void i64(struct ss_chrome *c, int64_t v)
{
	if (v < 0) {
		SS_CHROME_LIT(c, "-");
		ss_chrome_u64(c, -(uint64_t)v);
	} else {
		ss_chrome_u64(c, (uint64_t)v);
	}
}

void ss_chrome_alloc_events(struct ss_chrome *c, uint64_t pid, const struct ss_alloc_data *d)
{
	for (size_t i = 0; i < d->nev; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		int cuda = SS_SPACE_KIND(e->space) != SS_SPACE_HEAP;
		ss_chrome_sep(c);
		SS_CHROME_LIT(c, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\","
				 "\"name\":\"[memory]\",\"pid\":");
		ss_chrome_u64(c, pid);
		SS_CHROME_LIT(c, ",\"tid\":");
		ss_chrome_u64(c, e->tid);
		SS_CHROME_LIT(c, ",\"ts\":");
		ss_chrome_us(c, e->ns > c->t0 ? e->ns - c->t0 : 0);
		SS_CHROME_LIT(c, ",\"args\":{\"Addr\":");
		ss_chrome_u64(c, e->addr);
		SS_CHROME_LIT(c, ",\"Bytes\":");
		i64(c, e->delta);
		if (e->is_free && !e->known)
			SS_CHROME_LIT(c, ",\"Unknown Size\":true");
		SS_CHROME_LIT(c, ",\"Total Allocated\":");
		ss_chrome_u64(c, e->live);
		/* pinned host memory is CUDA's allocator's, on the CPU */
		if (!cuda || SS_SPACE_KIND(e->space) == SS_SPACE_CUDA_PINNED) {
			SS_CHROME_LIT(c, ",\"Device Type\":0,\"Device Id\":-1}}");
		} else {
			SS_CHROME_LIT(c, ",\"Device Type\":1,\"Device Id\":");
			ss_chrome_u64(c, SS_SPACE_DEVICE(e->space));
			SS_CHROME_LIT(c, "}}");
		}
		c->ex.events++;
	}
}
