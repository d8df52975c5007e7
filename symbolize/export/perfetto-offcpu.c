/*
 * perfetto-offcpu.c - off-CPU intervals (record.sched) in the Perfetto
 * exporter: a child track "off-CPU" under each thread's track holds one
 * slice per interval the thread spent switched out, "off-CPU (preempted)"
 * (runnable, waiting for a CPU) or "off-CPU (blocked)" (asleep, on a lock,
 * on I/O), category "off_cpu".
 *
 * Design: the intervals come before the thread's slices, sorted; they go
 * on their own sequence with absolute timestamps (ss_pf_gpu_event), so
 * they need not interleave with the thread's delta-encoded stream, and on
 * their own track, so they can never upset the nesting of its calls.
 * Must never: write an END before its BEGIN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "format.h"
#include "perfetto.h"

void ss_pf_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_perfetto *pf = ctx;

	ss_pf_thread_flush(pf);
	ss_pf_counters_flush(pf);
	uint32_t seq = pf->next_seq++;
	for (size_t i = 0; i < d->n; i++) {
		const struct ss_offcpu_thread *t = &d->th[i];
		uint64_t parent = 0;
		for (size_t k = 0; k < pf->nthreads && !parent; k++)
			if (pf->threads[k].pid == pid && pf->threads[k].tid == t->tid)
				parent = pf->threads[k].uuid;
		if (!parent || !t->n)
			continue;
		uint64_t track = pf->next_uuid++;
		ss_pf_track_desc(pf, track, parent, "off-CPU", NULL, NULL, 0);
		for (size_t k = 0; k < t->n; k++) {
			const struct ss_offcpu_iv *v = &t->iv[k];
			int pre = !!(v->flags & SS_SWITCH_PREEMPTED);
			ss_pf_gpu_event(pf, seq, v->begin_ns, SS_PF_TYPE_BEGIN, track,
					pre ? "off-CPU (preempted)" : "off-CPU (blocked)",
					"off_cpu", NULL, 0, 0, 0);
			ss_pf_gpu_event(pf, seq, v->end_ns, SS_PF_TYPE_END, track, NULL,
					NULL, NULL, 0, 0, 0);
			pf->ex.events++;
		}
	}
}
