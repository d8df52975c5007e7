/*
 * report.c - `stepscope report DIR`: the key_averages table of a
 * recorded run (Name, Self %, Self, Total %, Total, Avg, Min, Max, Calls),
 * as text, CSV or JSON, and with --steps the step times of every active
 * cycle and the share of each step taken by the top functions.
 *
 * Design: the run is walked once into an aggregator (agg.c); this file only
 * sorts, cuts and prints.  Percentages use the sum of the self time of all
 * function slices as 100%, like torch.profiler.  Text times carry units
 * (ns, us, ms, s); CSV and JSON carry integer nanoseconds.
 *
 * --whole-run prints the same table from the runtime's whole-run counts
 * (stats: whole_run; stats-read.c) instead of the recorded windows
 * (report-whole.c; report.h holds what the two share).
 *
 * Must never: print anything but the report on stdout, or print a
 * percentage computed against zero.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "cli.h"
#include "cmds.h"
#include "export.h"
#include "run-check.h"
#include "gpu-report.h"
#include "ranks.h"
#include "args-report.h"
#include "overhead.h"
#include "step-outliers.h"
#include "offcpu-report.h"
#include "alloc-device.h"
#include "alloc-report.h"
#include "outfile.h"
#include "report.h"

#define SS_REPORT_NAME_MAX 55     /* like torch: longer names end in "..." */
#define SS_REPORT_SHARE_TOP 5


/* Under a text table cut by --limit: how many rows it left out. */
void ss_report_more(FILE *f, size_t shown, size_t all)
{
	if (all > shown)
		fprintf(f, "%zu more row%s (--limit 0 shows all)\n", all - shown,
			all - shown == 1 ? "" : "s");
}

static void ss_report_usage(FILE *f)
{
	fprintf(f,
		"usage: stepscope report [--sort KEY] [--limit N] [--threads] [--steps | --whole-run] [--compensate]\n"
		"                        [--format table|csv|json] [-o FILE] [--backend dw|bfd] [-q] DIR\n"
		"       stepscope report --ranks [--limit N] [-o FILE] [--backend dw|bfd] [-q] DIR\n"
		"       stepscope report --group-by args [--format table|csv|json] [--limit N] [-o FILE]\n"
		"                        [--backend dw|bfd] [-q] DIR\n"
		"\n"
		"   --sort KEY         total (default), self, avg, calls, max, min or name\n"
		"   --limit N          at most N rows (default 30; 0 = all)\n"
		"   --threads          one row per function and thread (default: threads merged)\n"
		"   --steps            step times per active cycle and the top functions' share\n"
		"                      of each step\n"
		"   --whole-run        every step of the run, from the counts kept with\n"
		"                      'stats: whole_run' (no Min/Max)\n"
		"   --ranks            MPI ranks compared: per-step time, compute and MPI\n"
		"                      time of each rank, stragglers, imbalance (docs/mpi.md)\n"
		"   --compensate       subtract stepscope's own calibrated cost per recorded\n"
		"                      call from Self and Total\n"
		"   --group-by args    one row per function and argument values (record.args),\n"
		"                      with FLOPs and GFLOP/s (flops:; docs/shapes.md)\n"
		"   --format FMT       table (default), csv or json\n"
		"   -o, --output FILE  write there instead of stdout (- is stdout)\n"
		"   --backend NAME     symbol reader: dw (default) or bfd\n"
		"   -q, --quiet        no warnings about unresolved symbols\n"
		"\n"
		"Self: time in the function itself; Total: with its callees, a recursive\n"
		"function counted once; Avg = Total / Calls; Min/Max: single calls.\n"
		"Percentages are of the sum of all self time (the footer's total).\n");
}

double ss_report_pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

void ss_report_dashes(FILE *f, const int *w, int ncol)
{
	int i, j;

	for (i = 0; i < ncol; i++) {
		for (j = 0; j < w[i]; j++)
			fputc('-', f);
		fputs(i + 1 < ncol ? "  " : "\n", f);
	}
}

void ss_report_cell(FILE *f, const char *s, int w, int left, int last)
{
	if (left)
		fprintf(f, "%-*s", w, s);
	else
		fprintf(f, "%*s", w, s);
	fputs(last ? "\n" : "  ", f);
}

void ss_report_name(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);

	if (n <= SS_REPORT_NAME_MAX) {
		snprintf(buf, len, "%s", name);
		return;
	}
	snprintf(buf, len, "%.*s...", SS_REPORT_NAME_MAX - 3, name);
}

void ss_report_thread(const struct ss_agg_row *r, char *buf, size_t len)
{
	if (r->thread)
		snprintf(buf, len, "%s (%llu)", r->thread, (unsigned long long)r->tid);
	else
		snprintf(buf, len, "%llu", (unsigned long long)r->tid);
}

/* Where and why recording stopped, when it did (max_trace_mb): the
 * table holds nothing after that moment, though the program ran on. */
static void ss_report_stopped(FILE *f, const struct ss_agg *a)
{
	uint64_t step, at;
	const char *why;
	char tb[32];

	if (!ss_agg_stopped(a, &step, &at, &why))
		return;
	fprintf(f, "Recording stopped");
	if (step != UINT64_MAX)
		fprintf(f, " in step %llu", (unsigned long long)step);
	fprintf(f, ", %s into the run (%s): nothing after it is recorded, the program "
		"ran on\n", ss_agg_fmt_time(at, tb, sizeof(tb)), why);
}

/* "lost events: N on thread NAME (tid T)", a line per thread that dropped
 * events: the table does not hold their time, so say how many. */
static void ss_report_lost(FILE *f, const struct ss_agg *a)
{
	uint64_t pid, tid, lost;
	const char *name;
	size_t i = 0;

	while (ss_agg_lost(a, &i, &pid, &tid, &name, &lost)) {
		fprintf(f, "lost events: %llu on thread %s (tid %llu", (unsigned long long)lost,
			name ? name : "?", (unsigned long long)tid);
		if (ss_agg_nprocesses(a) > 1)
			fprintf(f, ", pid %llu", (unsigned long long)pid);
		fprintf(f, ")\n");
	}
}

static void ss_report_table(FILE *f, struct ss_agg *a, struct ss_agg_row *rows,
			    size_t n, const struct ss_report_opts *o)
{
	static const char *const heads[] = { "Name", "Thread", "Self %", "Self",
					     "Total %", "Total", "Avg", "Min",
					     "Max", "Calls", "Clipped", "Off-CPU Self",
					     "Off-CPU", "Self CPU Mem", "CPU Mem", "Allocs", "Self CUDA Mem", "CUDA Mem", "CUDA Allocs",
					     "FLOPs", "GFLOP/s" };
	/* print order: record.sched's after Self and Total, flops: after
	 * Calls, memory's last */
	static const int order[] = { 0, 1, 2, 3, 11, 4, 5, 12, 6, 7, 8, 9, 10, 19, 20, 13, 14, 15, 16, 17, 18 };
	enum { NCOL = 13 + SS_ALLOC_NCOL + 2 };
	int w[NCOL], show[NCOL], ww[NCOL], i, m = 0, last = 0;
	uint64_t sum = o->sum;
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(a, &steps), k;
	char cell[NCOL][128], tb[32];
	uint64_t clipped = 0;

	for (k = 0; k < n; k++)
		clipped += rows[k].clipped;
	for (i = 0; i < NCOL; i++) {
		show[i] = i == 1 ? o->threads : i == 10 ? clipped != 0 /* cut frames: say so */
			: i >= 19 ? ss_args_report_flops_shown(o->args) /* flops: */
			: i >= 13 ? ss_alloc_report_shown(o->mem, i - 13)
			: i > 10 ? ss_agg_have_offcpu(a, NULL) : 1;
		w[i] = (int)strlen(heads[i]);
		if (i >= 2 && w[i] < (i >= 13 ? 12 : 9)) /* "-512.00 KiB" */
			w[i] = i >= 13 ? 12 : 9;
	}
	for (k = 0; k < n; k++) {
		ss_report_name(rows[k].name, cell[0], sizeof(cell[0]));
		if ((int)strlen(cell[0]) > w[0])
			w[0] = (int)strlen(cell[0]);
		ss_report_thread(&rows[k], cell[1], sizeof(cell[1]));
		if ((int)strlen(cell[1]) > w[1])
			w[1] = (int)strlen(cell[1]);
	}
	for (i = 0; i < NCOL; i++)
		if (show[order[i]]) {
			ww[m++] = w[order[i]];
			last = order[i];
		}
	ss_report_dashes(f, ww, m);
	for (i = 0; i < NCOL; i++)
		if (show[order[i]])
			ss_report_cell(f, heads[order[i]], w[order[i]], order[i] < 2,
				       order[i] == last);
	ss_report_dashes(f, ww, m);
	for (k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		ss_report_name(r->name, cell[0], sizeof(cell[0]));
		ss_report_thread(r, cell[1], sizeof(cell[1]));
		snprintf(cell[2], sizeof(cell[2]), "%.2f%%", ss_report_pct(r->self_ns, sum));
		ss_agg_fmt_time(r->self_ns, cell[3], sizeof(cell[3]));
		snprintf(cell[4], sizeof(cell[4]), "%.2f%%", ss_report_pct(r->total_ns, sum));
		ss_agg_fmt_time(r->total_ns, cell[5], sizeof(cell[5]));
		ss_agg_fmt_time(ss_agg_row_avg(r), cell[6], sizeof(cell[6]));
		ss_agg_fmt_time(r->min_ns, cell[7], sizeof(cell[7]));
		ss_agg_fmt_time(r->max_ns, cell[8], sizeof(cell[8]));
		if (!r->calls || (r->clipped && !r->complete))
			snprintf(cell[6], sizeof(cell[6]), "-");
		if (r->clipped && !r->complete) /* only cut fragments */
			snprintf(cell[7], sizeof(cell[7]), "-"),
			snprintf(cell[8], sizeof(cell[8]), "-");
		snprintf(cell[9], sizeof(cell[9]), "%llu", (unsigned long long)r->calls);
		snprintf(cell[10], sizeof(cell[10]), "%llu", (unsigned long long)r->clipped);
		ss_agg_fmt_time(r->off_self_ns, cell[11], sizeof(cell[11]));
		ss_agg_fmt_time(r->off_ns, cell[12], sizeof(cell[12]));
		ss_offcpu_report_minmax(r, cell[7], cell[8], sizeof(cell[7]));
		ss_alloc_report_cells(o->mem, r, &cell[13]);
		ss_args_report_cells(o->args, r->name, cell[19], cell[20], sizeof(cell[19]));
		for (i = 0; i < NCOL; i++)
			if (show[order[i]])
				ss_report_cell(f, cell[order[i]], w[order[i]], order[i] < 2,
					       order[i] == last);
	}
	ss_report_dashes(f, ww, m);
	ss_report_more(f, n, o->nall);
	fprintf(f, "Self time total: %s\n", ss_agg_fmt_time(sum, tb, sizeof(tb)));
	if (clipped)
		fprintf(f, "Clipped: parts of calls cut by the start or end of a recorded window\n"
			"(main and the loop around the steps); their time in the window is in\n"
			"Self and Total, a part cut at the start is not a call, Min/Max leave them out\n");
	fprintf(f, "Steps: %zu (%zu process%s, %zu thread%s)\n", nsteps,
		ss_agg_nprocesses(a), ss_agg_nprocesses(a) == 1 ? "" : "es",
		ss_agg_nthreads(a), ss_agg_nthreads(a) == 1 ? "" : "s");
	ss_offcpu_report_footer(f, a, rows, o->nall);
	ss_alloc_report_footer(f, o->mem);
	ss_args_report_footer(f, o->args); /* flops: what GFLOP/s is over */
	ss_report_stopped(f, a);
	ss_report_lost(f, a);
	ss_overhead_print(f, &o->over, o->calls, ss_agg_self_sum(a), o->dir, o->compensate);
}

/* The top function names by self time (merged rows), for --steps. */
static size_t ss_report_top(struct ss_agg *a, const char **top, size_t max)
{
	struct ss_agg_row *rows;
	size_t n = ss_agg_rows(a, 0, &rows), i, m = 0;

	ss_agg_sort_rows(rows, n, SS_AGG_SORT_SELF);
	for (i = 0; i < n && m < max; i++)
		if (rows[i].kind == SS_AGG_FUNCTION && rows[i].self_ns)
			top[m++] = rows[i].name;
	return m;
}

static void ss_report_steps_text(FILE *f, struct ss_agg *a)
{
	struct ss_agg_cycle *cy;
	size_t nc = ss_agg_cycles(a, &cy), i, j, ntop;
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(a, &steps);
	const char *top[SS_REPORT_SHARE_TOP];
	int w[SS_REPORT_SHARE_TOP];
	char b[5][32];

	fprintf(f, "\nStep time (ProfilerStep#k), per active cycle\n");
	if (!nc) {
		fprintf(f, "  no recorded steps (set step.function or call stepscope_step())\n");
		return;
	}
	fprintf(f, "  %5s  %5s  %10s  %10s  %10s  %10s  %10s\n", "Cycle", "Steps",
		"Mean", "p50", "p95", "Max", "Total");
	for (i = 0; i < nc; i++)
		fprintf(f, "  %5u  %5zu  %10s  %10s  %10s  %10s  %10s\n", cy[i].cycle,
			cy[i].count, ss_agg_fmt_time(cy[i].mean_ns, b[0], 32),
			ss_agg_fmt_time(cy[i].p50_ns, b[1], 32),
			ss_agg_fmt_time(cy[i].p95_ns, b[2], 32),
			ss_agg_fmt_time(cy[i].max_ns, b[3], 32),
			ss_agg_fmt_time(cy[i].sum_ns, b[4], 32));
	free(cy);
	ntop = ss_report_top(a, top, SS_REPORT_SHARE_TOP);
	if (!ntop)
		return;
	fprintf(f, "\nShare of each step: self time of the top %zu functions on every thread\n"
		"(above 100%% in sum when threads run in parallel)\n", ntop);
	fprintf(f, "  %8s  %5s  %10s", "Pid", "Step", "Time");
	for (j = 0; j < ntop; j++) {
		size_t l = strlen(top[j]);
		w[j] = l < 10 ? 10 : l > 28 ? 28 : (int)l;
		fprintf(f, "  %*.*s", w[j], w[j], top[j]);
	}
	fputc('\n', f);
	for (i = 0; i < nsteps; i++) {
		uint64_t d = steps[i].end_ns - steps[i].begin_ns;
		fprintf(f, "  %8llu  %5llu  %10s", (unsigned long long)steps[i].pid,
			(unsigned long long)steps[i].step, ss_agg_fmt_time(d, b[0], 32));
		for (j = 0; j < ntop; j++) {
			char pct[32];
			snprintf(pct, sizeof(pct), "%.1f%%",
				 ss_report_pct(ss_agg_step_self(a, top[j], &steps[i]), d));
			fprintf(f, "  %*s", w[j], pct);
		}
		fputc('\n', f);
	}
}

void ss_report_csv_header(FILE *f, const struct ss_report_opts *o, int off)
{
	fprintf(f, "name,kind,%sself_pct,self_ns,total_pct,total_ns,avg_ns,min_ns,max_ns,calls,clipped%s",
		o->threads ? "pid,tid,thread," : "",
		off ? ",off_cpu_self_ns,off_cpu_ns,off_cpu_longer,min_off_cpu_ns,max_off_cpu_ns"
		    : ""); /* record.sched */
	ss_alloc_report_csv_header(f, o->mem); /* memory.allocations */
	ss_alloc_device_csv_header(f, o->memdev);
	ss_args_report_csv_header(f, o->args); /* flops: */
	fputc('\n', f);
}

/* The columns of a CSV row before the times: name, kind[, pid, tid, thread]. */
void ss_report_csv_head(FILE *f, const struct ss_agg_row *r,
			       const struct ss_report_opts *o)
{
	ss_out_csv_field(f, r->name);
	fprintf(f, ",%s,", r->kind == SS_AGG_RANGE ? "range" : "function");
	if (o->threads) {
		fprintf(f, "%llu,%llu,", (unsigned long long)r->pid,
			(unsigned long long)r->tid);
		ss_out_csv_field(f, r->thread ? r->thread : "");
		fputc(',', f);
	}
}

static void ss_report_csv(FILE *f, struct ss_agg *a, struct ss_agg_row *rows,
			  size_t n, const struct ss_report_opts *o)
{
	uint64_t sum = o->sum;
	size_t k;

	int off = ss_agg_have_offcpu(a, NULL);
	ss_report_csv_header(f, o, off);
	for (k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		ss_report_csv_head(f, r, o);
		fprintf(f, "%.4f,%llu,%.4f,%llu,%llu,%llu,%llu,%llu,%llu",
			ss_report_pct(r->self_ns, sum), (unsigned long long)r->self_ns,
			ss_report_pct(r->total_ns, sum), (unsigned long long)r->total_ns,
			(unsigned long long)ss_agg_row_avg(r),
			(unsigned long long)r->min_ns, (unsigned long long)r->max_ns,
			(unsigned long long)r->calls, (unsigned long long)r->clipped);
		if (off)
			fprintf(f, ",%llu,%llu,%llu", (unsigned long long)r->off_self_ns,
				(unsigned long long)r->off_ns, (unsigned long long)r->off_most),
			ss_offcpu_report_minmax_csv(f, r, 0);
		ss_alloc_report_csv_row(f, o->mem, r);
		ss_alloc_device_csv_row(f, o->memdev, r);
		ss_args_report_csv_row(f, o->args, r->name);
		fputc('\n', f);
	}
}

/* Row k of a JSON array up to the times: {"name", "kind"[, pid, tid, thread]. */
void ss_report_json_head(FILE *f, const struct ss_agg_row *r, size_t k,
				const struct ss_report_opts *o)
{
	fprintf(f, "%s\n{\"name\":", k ? "," : "");
	ss_export_json_fputs(f, r->name);
	fprintf(f, ",\"kind\":\"%s\"", r->kind == SS_AGG_RANGE ? "range" : "function");
	if (o->threads) {
		fprintf(f, ",\"pid\":%llu,\"tid\":%llu,\"thread\":",
			(unsigned long long)r->pid, (unsigned long long)r->tid);
		ss_export_json_fputs(f, r->thread ? r->thread : "");
	}
}

/* ,"lost":[{"pid":P,"tid":T,"thread":NAME,"events":N},...] when any */
static void ss_report_json_lost(FILE *f, const struct ss_agg *a)
{
	uint64_t pid, tid, lost;
	const char *name;
	size_t i = 0, k = 0;

	while (ss_agg_lost(a, &i, &pid, &tid, &name, &lost)) {
		fprintf(f, "%s{\"pid\":%llu,\"tid\":%llu,\"thread\":", k++ ? "," : ",\"lost\":[",
			(unsigned long long)pid, (unsigned long long)tid);
		if (name)
			ss_export_json_fputs(f, name);
		else
			fprintf(f, "null");
		fprintf(f, ",\"events\":%llu}", (unsigned long long)lost);
	}
	if (k)
		fprintf(f, "]");
}

static void ss_report_json(FILE *f, struct ss_agg *a, struct ss_agg_row *rows,
			   size_t n, const struct ss_report_opts *o,
			   const char *sortname)
{
	uint64_t sum = o->sum;
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(a, &steps), k, nc, j;
	struct ss_agg_cycle *cy;

	fprintf(f, "{\"self_total_ns\":%llu,\"steps\":%zu,\"processes\":%zu,\"threads\":%zu,\"sort\":",
		(unsigned long long)sum, nsteps, ss_agg_nprocesses(a), ss_agg_nthreads(a));
	ss_export_json_fputs(f, sortname);
	if (o->over.known)
		fprintf(f, ",\"overhead\":{\"pair_ns\":%llu,\"calls\":%llu,\"pct\":%.4f,\"compensated\":%s}",
			(unsigned long long)o->over.pair_ns, (unsigned long long)o->calls,
			ss_overhead_pct(&o->over, o->calls, ss_agg_self_sum(a)),
			o->compensate ? "true" : "false");
	ss_report_json_lost(f, a);
	ss_offcpu_report_json(f, a, rows, o->nall);
	ss_alloc_report_json(f, o->mem);
	{
		uint64_t step, at;
		const char *why;
		if (ss_agg_stopped(a, &step, &at, &why)) {
			fprintf(f, ",\"stopped\":{\"why\":");
			ss_export_json_fputs(f, why);
			if (step != UINT64_MAX)
				fprintf(f, ",\"step\":%llu", (unsigned long long)step);
			fprintf(f, ",\"at_ns\":%llu}", (unsigned long long)at);
		}
	}
	fprintf(f, ",\n\"rows\":[");
	for (k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		ss_report_json_head(f, r, k, o);
		fprintf(f, ",\"self_pct\":%.4f,\"self_ns\":%llu,\"total_pct\":%.4f,\"total_ns\":%llu,"
			"\"avg_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,\"calls\":%llu,\"clipped\":%llu",
			ss_report_pct(r->self_ns, sum), (unsigned long long)r->self_ns,
			ss_report_pct(r->total_ns, sum), (unsigned long long)r->total_ns,
			(unsigned long long)ss_agg_row_avg(r),
			(unsigned long long)r->min_ns, (unsigned long long)r->max_ns,
			(unsigned long long)r->calls, (unsigned long long)r->clipped);
		if (ss_agg_have_offcpu(a, NULL))
			fprintf(f, ",\"off_cpu_self_ns\":%llu,\"off_cpu_ns\":%llu,\"off_cpu_longer\":%llu",
				(unsigned long long)r->off_self_ns, (unsigned long long)r->off_ns,
				(unsigned long long)r->off_most),
			ss_offcpu_report_minmax_csv(f, r, 1);
		ss_alloc_report_json_row(f, o->mem, r);
		ss_alloc_device_json_row(f, o->memdev, r);
		ss_args_report_json_row(f, o->args, r->name);
		fputc('}', f);
	}
	fprintf(f, "\n],\n\"cycles\":[");
	nc = ss_agg_cycles(a, &cy);
	for (k = 0; k < nc; k++)
		fprintf(f, "%s{\"cycle\":%u,\"count\":%zu,\"mean_ns\":%llu,\"p50_ns\":%llu,"
			"\"p95_ns\":%llu,\"max_ns\":%llu,\"min_ns\":%llu,\"sum_ns\":%llu}",
			k ? "," : "", cy[k].cycle, cy[k].count,
			(unsigned long long)cy[k].mean_ns, (unsigned long long)cy[k].p50_ns,
			(unsigned long long)cy[k].p95_ns, (unsigned long long)cy[k].max_ns,
			(unsigned long long)cy[k].min_ns, (unsigned long long)cy[k].sum_ns);
	free(cy);
	fprintf(f, "]");
	if (o->steps) {
		const char *top[SS_REPORT_SHARE_TOP];
		size_t ntop = ss_report_top(a, top, SS_REPORT_SHARE_TOP);
		fprintf(f, ",\n\"step_list\":[");
		for (k = 0; k < nsteps; k++) {
			uint64_t d = steps[k].end_ns - steps[k].begin_ns;
			fprintf(f, "%s\n{\"pid\":%llu,\"tid\":%llu,\"step\":%llu,\"cycle\":%u,\"ns\":%llu,\"self_ns\":{",
				k ? "," : "", (unsigned long long)steps[k].pid,
				(unsigned long long)steps[k].tid,
				(unsigned long long)steps[k].step, steps[k].cycle,
				(unsigned long long)d);
			for (j = 0; j < ntop; j++) {
				fprintf(f, "%s", j ? "," : "");
				ss_export_json_fputs(f, top[j]);
				fprintf(f, ":%llu", (unsigned long long)ss_agg_step_self(a, top[j], &steps[k]));
			}
			fprintf(f, "}");
			if (ss_agg_have_offcpu(a, NULL))
				ss_offcpu_report_json_step(f, &steps[k]); /* record.sched */
			ss_alloc_report_json_step(f, o->mem, &steps[k]);
			fprintf(f, "}");
		}
		fprintf(f, "\n]");
	}
	fprintf(f, "}\n");
}

/* Done writing the report to f (stdout or -o): 0, or 1 when it could not
 * be written. */
/* The report's output (standard output unless -o): opened after the run
 * is read, so a bad run leaves no file behind. */
FILE *ss_report_open(struct ss_out *out, const char *path)
{
	char err[1024];

	if (ss_out_open(out, path ? path : "-", err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		return NULL;
	}
	return out->f;
}

int ss_report_close(struct ss_out *out)
{
	char err[1024];
	int rc = 0;

	if (ss_out_commit(out, 0, err, sizeof(err))) {
		fprintf(stderr, "stepscope: report: %s\n", err);
		rc = 1;
	}
	ss_out_abort(out);
	return rc;
}

static enum ss_cli_took ss_report_option(struct ss_cli *c, void *ctx, int argc,
					 char **argv, int *i)
{
	struct ss_report_opts *o = ctx;
	const char *s = argv[*i], *v;
	int r;

	if (!strcmp(s, "--threads")) {
		o->threads = 1;
	} else if (!strcmp(s, "--steps")) {
		o->steps = 1;
	} else if (!strcmp(s, "--whole-run")) {
		o->whole_run = 1;
	} else if (!strcmp(s, "--ranks")) {
		o->ranks = 1; /* ranks.c */
	} else if (!strcmp(s, "--compensate")) {
		o->compensate = 1;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--group-by", &v))) {
		if (r < 0 || strcmp(v, "args")) {
			fprintf(stderr, "stepscope: report: --group-by takes 'args' (one row per function and argument values, record.args)\n");
			return SS_CLI_BAD;
		}
		o->group_args = 1;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--sort", &v))) {
		if (r < 0)
			return SS_CLI_BAD;
		o->sort = ss_agg_sort_parse(v);
		if (o->sort < 0) {
			fprintf(stderr, "stepscope: report: unknown sort key '%s' (use total, self, avg, calls, max, min or name)\n", v);
			return SS_CLI_BAD;
		}
	} else if ((r = ss_cli_value(c, argc, argv, i, "--limit", &v))) {
		char *end;
		long l;
		if (r < 0)
			return SS_CLI_BAD;
		l = strtol(v, &end, 10);
		if (*end || l < 0 || end == v) {
			fprintf(stderr, "stepscope: report: --limit wants a number >= 0, not '%s'\n", v);
			return SS_CLI_BAD;
		}
		o->limit = (int)l;
	} else if ((r = ss_cli_value(c, argc, argv, i, "--format", &v))) {
		if (r < 0)
			return SS_CLI_BAD;
		if (strcmp(v, "table") && strcmp(v, "csv") && strcmp(v, "json")) {
			fprintf(stderr, "stepscope: report: unknown format '%s' (use table, csv or json)\n", v);
			return SS_CLI_BAD;
		}
		o->format = v;
	} else {
		return SS_CLI_NOT_MINE;
	}
	return SS_CLI_TAKEN;
}

int cmd_report(int argc, char **argv)
{
	static const char *const sortnames[] = { "total", "self", "avg", "calls",
						 "max", "min", "name" };
	struct ss_report_opts o = { .format = "table", .sort = SS_AGG_SORT_TOTAL, .limit = 30 };
	struct ss_cli c = { "report", ss_report_usage, SS_CLI_SYMBOLS | SS_CLI_EQUALS,
			    NULL, NULL, NULL, 0 };
	struct ss_agg *a;
	struct ss_exporter *ex;
	struct ss_agg_row *rows;
	char err[1024];
	size_t n;
	int rc;
	struct ss_out out;
	FILE *f;

	rc = ss_cli_parse(&c, argc, argv, ss_report_option, &o);
	if (rc != SS_CLI_GO)
		return rc;
	o.dir = c.dir;
	o.out = c.out;
	o.backend = c.backend;
	o.quiet = c.quiet;
	if (o.ranks)
		return ss_ranks_report(o.dir, o.backend, o.quiet, o.out, o.limit);
	if (o.group_args)  /* record.args: report-args.c */
		return ss_report_args(o.dir, o.backend, o.quiet, o.out, o.format, (size_t)o.limit);
	if (o.steps && !strcmp(o.format, "csv")) {
		fprintf(stderr, "stepscope: report: --steps has no CSV form; use --format json or table\n");
		return 2;
	}
	if (o.whole_run) {
		if (o.steps) {
			fprintf(stderr, "stepscope: report: --steps and --whole-run cannot be combined (the whole-run counts have no step times)\n");
			return 2;
		}
		if (o.sort == SS_AGG_SORT_MIN || o.sort == SS_AGG_SORT_MAX) {
			fprintf(stderr, "stepscope: report: --whole-run keeps no Min/Max; sort by total, self, avg, calls or name\n");
			return 2;
		}
		return ss_report_whole_run(&o, sortnames[o.sort]);
	}
	if (ss_run_check_empty(o.dir, err, sizeof(err))) {  /* not an empty table */
		fprintf(stderr, "stepscope: report: %s: nothing was recorded: %s\n", o.dir, err);
		return 2;
	}
	a = ss_agg_new();
	if (!a) {
		fprintf(stderr, "stepscope: report: out of memory\n");
		return 1;
	}
	ex = ss_agg_exporter(a);
	/* gpu.enabled: device time per host function and step */
	struct ss_exporter *exs[2] = { ex, ss_gpu_report_new() };
	struct ss_exporter *memx = ss_alloc_report_new(), *walk[5]; /* memory.allocations */
	struct ss_exporter *devx = ss_alloc_device_new(); /* its CUDA memory per device */
	size_t nwalk = ss_alloc_report_list(walk, ex, exs[1], memx, &o.mem);
	if (devx)
		walk[nwalk++] = devx, o.memdev = ss_alloc_device_of(devx);
	struct ss_exporter *argx = ss_args_report_new(&o.args); /* flops: columns */
	if (argx)
		walk[nwalk++] = argx;
	rc = ss_agg_walk(o.dir, o.backend, o.quiet, walk, nwalk, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_exporter_free(exs[1]), ss_exporter_free(memx), ss_exporter_free(devx);
		ss_agg_free(a);
		return rc;
	}
	if (ex->end(ex->ctx, err, sizeof(err))) {
		fprintf(stderr, "stepscope: report: %s\n", err);
		ss_exporter_free(exs[1]), ss_exporter_free(memx), ss_exporter_free(devx);
		ss_agg_free(a);
		return 1;
	}
	if (!(f = ss_report_open(&out, o.out))) {
		ss_exporter_free(exs[1]), ss_exporter_free(memx), ss_exporter_free(devx);
		ss_agg_free(a);
		return 2;
	}
	ss_overhead_read(o.dir, &o.over);
	o.calls = ss_overhead_calls(a);
	o.sum = ss_agg_self_sum(a);
	n = ss_agg_rows(a, o.threads, &rows);
	if (o.compensate && o.over.known)
		o.sum = ss_overhead_compensate(a, rows, n, o.threads, o.over.pair_ns);
	ss_agg_sort_rows(rows, n, (enum ss_agg_sort)o.sort);
	o.nall = n;
	if (o.limit && n > (size_t)o.limit)
		n = (size_t)o.limit;
	if (!strcmp(o.format, "csv")) {
		ss_report_csv(f, a, rows, n, &o);
	} else if (!strcmp(o.format, "json")) {
		ss_report_json(f, a, rows, n, &o, sortnames[o.sort]);
	} else {
		ss_report_table(f, a, rows, n, &o);
		ss_alloc_device_section(f, o.memdev, rows, n); /* two devices or more */
		if (o.steps)
			ss_report_steps_text(f, a);
		if (o.steps)
			ss_offcpu_report_steps(f, a), ss_alloc_report_steps(f, o.mem);
		if (o.steps)
			ss_step_outliers_text(f, a, SS_STEP_OUTLIER_FACTOR);
		if (exs[1])
			ss_gpu_report_print(f, exs[1]);
	}
	ss_exporter_free(exs[1]), ss_exporter_free(memx), ss_exporter_free(devx); /* NULL: nothing */
	ss_args_report_free(o.args);
	rc = ss_report_close(&out);
	ss_agg_free(a);
	return rc;
}
