/*
 * offcpu-report.c - the off-CPU parts of `stepscope report` (record.sched:
 * when the kernel had a recorded thread switched out; docs/report.md,
 * "Off-CPU").
 *
 * Design: the aggregator (agg.c) already summed each call's off-CPU time
 * (Off-CPU, counted like Total) and the part of it while the call was the
 * innermost (Off-CPU Self, a part of Self), and each step's; this file
 * only words them.  Text times carry units, JSON integer nanoseconds.
 * Must never: print any of it for a run without switch records.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "offcpu-report.h"

#define SS_OFFCPU_NAMES 3   /* functions named in the footer's line */

void ss_offcpu_report_footer(FILE *f, const struct ss_agg *a,
			     const struct ss_agg_row *rows, size_t n)
{
	uint64_t lost, most = 0;
	const struct ss_agg_row *top[SS_OFFCPU_NAMES] = { NULL };
	size_t i, k, nfun = 0, flagged = 0;

	if (!ss_agg_have_offcpu(a, &lost))
		return;
	fprintf(f, "Off-CPU: time the kernel had the thread switched out inside the call\n"
		"(preempted or blocked); Off-CPU Self: while it was the innermost call, a\n"
		"part of Self (Self - Off-CPU Self ran on a CPU)\n");
	for (i = 0; i < n; i++)
		flagged += (rows[i].min_off_ns != 0) + (rows[i].max_off_ns != 0);
	if (flagged)
		fprintf(f, "Min/Max with '*': that call was switched out for part of its time "
			"(not its work alone)\n");
	for (i = 0; i < n; i++) {
		const struct ss_agg_row *r = &rows[i];
		if (r->kind != SS_AGG_FUNCTION || !r->off_most)
			continue;
		most += r->off_most;
		nfun++;
		for (k = 0; k < SS_OFFCPU_NAMES; k++) {
			if (!top[k] || r->off_most > top[k]->off_most) {
				memmove(top + k + 1, top + k,
					(SS_OFFCPU_NAMES - 1 - k) * sizeof(top[0]));
				top[k] = r;
				break;
			}
		}
	}
	if (most) {
		fprintf(f, "Off the CPU longer than on it: %llu call%s (",
			(unsigned long long)most, most == 1 ? "" : "s");
		for (k = 0; k < SS_OFFCPU_NAMES && top[k]; k++)
			fprintf(f, "%s%s %llu", k ? ", " : "", top[k]->name,
				(unsigned long long)top[k]->off_most);
		fprintf(f, "%s)\n", nfun > SS_OFFCPU_NAMES ? ", ..." : "");
	}
	if (lost)
		fprintf(f, "switch records lost: %llu (the kernel's ring of a thread filled before "
			"it was read): the off-CPU time around them is missing\n",
			(unsigned long long)lost);
	uint64_t unw = ss_agg_offcpu_unwatched(a);
	if (unw)
		fprintf(f, "threads without a switch ring: %llu (the kernel refused one: "
			"kernel.perf_event_mlock_kb, or over 512 threads at once): their calls' "
			"time is not known on or off the CPU, Off-CPU counts them 0\n",
			(unsigned long long)unw);
	uint64_t cut = ss_agg_offcpu_cut(a);
	if (cut)
		fprintf(f, "switches cut short: %llu process%s ended without exit() or _exit() "
			"(a fatal signal, exit_group): the switches since its rings were last "
			"read (10 ms at most, while a window was open) are missing\n",
			(unsigned long long)cut, cut == 1 ? "" : "es");
}

void ss_offcpu_report_minmax(const struct ss_agg_row *r, char *min, char *max, size_t len)
{
	size_t l;

	if (r->min_off_ns && (l = strlen(min)) + 1 < len && strcmp(min, "-"))
		memcpy(min + l, "*", 2);
	if (r->max_off_ns && (l = strlen(max)) + 1 < len && strcmp(max, "-"))
		memcpy(max + l, "*", 2);
}

void ss_offcpu_report_minmax_csv(FILE *f, const struct ss_agg_row *r, int json)
{
	fprintf(f, json ? ",\"min_off_cpu_ns\":%llu,\"max_off_cpu_ns\":%llu" : ",%llu,%llu",
		(unsigned long long)r->min_off_ns, (unsigned long long)r->max_off_ns);
}

void ss_offcpu_report_steps(FILE *f, const struct ss_agg *a)
{
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(a, &steps), i;
	char b[5][32];

	if (!ss_agg_have_offcpu(a, NULL) || !nsteps)
		return;
	fprintf(f, "\nOn and off the CPU, per step (the thread that ran the step)\n");
	fprintf(f, "  %8s  %5s  %10s  %10s  %10s  %10s  %10s\n", "Pid", "Step", "Time",
		"On-CPU", "Off-CPU", "Preempted", "Blocked");
	for (i = 0; i < nsteps; i++) {
		const struct ss_agg_step *s = &steps[i];
		uint64_t d = s->end_ns - s->begin_ns;
		uint64_t off = s->off_ns < d ? s->off_ns : d;
		uint64_t pre = s->off_preempted_ns < off ? s->off_preempted_ns : off;
		if (s->off_unknown) { /* no switch ring: not known */
			fprintf(f, "  %8llu  %5llu  %10s  %10s  %10s  %10s  %10s\n",
				(unsigned long long)s->pid, (unsigned long long)s->step,
				ss_agg_fmt_time(d, b[0], 32), "-", "-", "-", "-");
			continue;
		}
		fprintf(f, "  %8llu  %5llu  %10s  %10s  %10s  %10s  %10s\n",
			(unsigned long long)s->pid, (unsigned long long)s->step,
			ss_agg_fmt_time(d, b[0], 32), ss_agg_fmt_time(d - off, b[1], 32),
			ss_agg_fmt_time(off, b[2], 32), ss_agg_fmt_time(pre, b[3], 32),
			ss_agg_fmt_time(off - pre, b[4], 32));
	}
}

void ss_offcpu_report_json(FILE *f, const struct ss_agg *a,
			   const struct ss_agg_row *rows, size_t n)
{
	uint64_t lost, most = 0;

	if (!ss_agg_have_offcpu(a, &lost))
		return;
	for (size_t i = 0; i < n; i++)
		if (rows[i].kind == SS_AGG_FUNCTION)
			most += rows[i].off_most;
	fprintf(f, ",\"off_cpu\":{\"lost\":%llu,\"calls_off_longer\":%llu,"
		"\"threads_without_ring\":%llu,\"processes_cut\":%llu}",
		(unsigned long long)lost, (unsigned long long)most,
		(unsigned long long)ss_agg_offcpu_unwatched(a),
		(unsigned long long)ss_agg_offcpu_cut(a));
}

void ss_offcpu_report_json_step(FILE *f, const struct ss_agg_step *s)
{
	uint64_t d = s->end_ns - s->begin_ns;
	uint64_t off = s->off_ns < d ? s->off_ns : d;
	if (s->off_unknown) { /* no switch ring: neither is known */
		fprintf(f, ",\"on_cpu_ns\":null,\"off_cpu_ns\":null,\"preempted_ns\":null");
		return;
	}
	fprintf(f, ",\"on_cpu_ns\":%llu,\"off_cpu_ns\":%llu,\"preempted_ns\":%llu",
		(unsigned long long)(d - off), (unsigned long long)off,
		(unsigned long long)(s->off_preempted_ns < off ? s->off_preempted_ns : off));
}
