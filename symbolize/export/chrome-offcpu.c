/*
 * chrome-offcpu.c - off-CPU intervals (record.sched) in the Chrome JSON
 * exporter: one complete event ("X") per interval a thread spent switched
 * out, on the thread itself, named "off-CPU (preempted)" (it was runnable
 * and waited for a CPU) or "off-CPU (blocked)" (it slept, waited on a
 * lock or for I/O), category "off_cpu".
 *
 * Design: a thread is off the CPU only between two of its own events, so
 * each interval lies inside the innermost call open then and nests under
 * it in the viewers (Perfetto UI, chrome://tracing); the category lets a
 * viewer hide them.  Must never: write an interval before the run's t0.
 */
#include <stdio.h>
#include <string.h>

#include "chrome.h"
#include "format.h"

void ss_chrome_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d)
{
	struct ss_chrome *c = ctx;

	for (size_t i = 0; i < d->n; i++) {
		const struct ss_offcpu_thread *t = &d->th[i];
		for (size_t k = 0; k < t->n; k++) {
			const struct ss_offcpu_iv *v = &t->iv[k];
			uint64_t b = v->begin_ns > c->t0 ? v->begin_ns - c->t0 : 0;
			uint64_t e = v->end_ns > c->t0 ? v->end_ns - c->t0 : 0;
			int pre = !!(v->flags & SS_SWITCH_PREEMPTED);
			if (e <= b)
				continue;
			ss_chrome_sep(c);
			if (pre)
				SS_CHROME_LIT(c, "{\"ph\":\"X\",\"cat\":\"off_cpu\","
						 "\"name\":\"off-CPU (preempted)\",\"pid\":");
			else
				SS_CHROME_LIT(c, "{\"ph\":\"X\",\"cat\":\"off_cpu\","
						 "\"name\":\"off-CPU (blocked)\",\"pid\":");
			ss_chrome_u64(c, pid);
			SS_CHROME_LIT(c, ",\"tid\":");
			ss_chrome_u64(c, t->tid);
			SS_CHROME_LIT(c, ",\"ts\":");
			ss_chrome_us(c, b);
			SS_CHROME_LIT(c, ",\"dur\":");
			ss_chrome_us(c, e - b);
			if (v->flags & (SS_SWITCH_FROM_START | SS_SWITCH_TO_END))
				SS_CHROME_LIT(c, ",\"args\":{\"clipped\":true}}");
			else
				SS_CHROME_LIT(c, "}");
			c->ex.events++;
		}
	}
}
