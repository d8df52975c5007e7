/*
 * advise-print.c - `stepscope advise`'s output (advise.h, ss_adv_print):
 * the breakdown of a step into categories (mean per step, and per step
 * with --steps), the findings ranked by saving, and a line per check that
 * found nothing or could not judge; as text, CSV (the per-step table) or
 * JSON (everything).
 *
 * Text times carry units; CSV and JSON carry integer nanoseconds, step
 * begins since the run's first event.  Must never: print a percentage
 * computed against zero, or a category the run cannot know as zero
 * (off-CPU without record.sched is said to be unknown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "outfile.h"
#include "util.h"

#define SS_ADV_TOP_OPS 8

static double ss_adv_pct(double v, double of)
{
	return of > 0 ? 100.0 * v / of : 0.0;
}

/* the mean step (the 100% of the table) */
static double ss_adv_mean_step(const struct ss_adv_run *run)
{
	double sum = 0;

	for (size_t i = 0; i < run->nsteps; i++)
		sum += (double)(run->steps[i].end_ns - run->steps[i].begin_ns);
	return run->nsteps ? sum / (double)run->nsteps : 0;
}

/* a category is a column when the run can have it */
static int ss_adv_shown(const struct ss_adv_run *run, int c)
{
	switch (c) {
	case SS_ADV_PREEMPTED:
	case SS_ADV_BLOCKED:
		return run->have_offcpu;
	case SS_ADV_ALLOC:
		return run->alloc != NULL || run->cat_mean[c];
	case SS_ADV_HOOKS:
		return run->ovh.known;
	case SS_ADV_GPU_WAIT:
	case SS_ADV_GPU_API:
		return run->have_gpu;
	default:
		return c == SS_ADV_OPS || run->cat_mean[c];
	}
}

int ss_adv_cat_shown(const struct ss_adv_run *run, enum ss_adv_cat c)
{
	return ss_adv_shown(run, (int)c);
}

/* the outermost operators over every step: name, mean ns per step */
struct ss_adv_opsum {
	const char *name;
	double ns;
};

static int ss_adv_cmp_opsum(const void *a, const void *b)
{
	const struct ss_adv_opsum *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static size_t ss_adv_ops(const struct ss_adv_run *run, struct ss_adv_opsum **out)
{
	struct ss_adv_opsum *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < run->nsteps; i++)
		for (size_t k = 0; k < run->steps[i].nop; k++) {
			const struct ss_adv_op *o = &run->steps[i].op[k];
			size_t j;
			for (j = 0; j < n && strcmp(v[j].name, o->name); j++)
				;
			if (j == n) {
				if (ss_grow((void **)&v, &cap, n, sizeof(*v), 16))
					goto done;
				v[n++] = (struct ss_adv_opsum){ o->name, 0 };
			}
			v[j].ns += (double)o->ns;
		}
done:
	for (size_t j = 0; j < n; j++)
		v[j].ns /= (double)run->nsteps;
	if (n)
		qsort(v, n, sizeof(*v), ss_adv_cmp_opsum);
	*out = v;
	return n;
}

static const char *ss_adv_t(double ns, char *buf, size_t len)
{
	return ss_agg_fmt_time(ns > 0 ? (uint64_t)(ns + 0.5) : 0, buf, len);
}

static void ss_adv_text_breakdown(FILE *f, const struct ss_adv_run *run)
{
	double step = ss_adv_mean_step(run);
	struct ss_adv_opsum *ops;
	size_t nops = ss_adv_ops(run, &ops);
	char tb[32];

	fprintf(f, "Where a step's time went (mean per step)\n");
	fprintf(f, "  %-20s  %10s  %6s\n", "Category", "Per step", "%");
	fprintf(f, "  --------------------  ----------  ------\n");
	for (int c = 0; c < SS_ADV_NCAT; c++)
		if (ss_adv_shown(run, c))
			fprintf(f, "  %-20s  %10s  %5.1f%%\n", ss_adv_cat_name(c),
				ss_adv_t((double)run->cat_mean[c], tb, sizeof(tb)),
				ss_adv_pct((double)run->cat_mean[c], step));
	fprintf(f, "  %-20s  %10s  %5.1f%%\n", "step", ss_adv_t(step, tb, sizeof(tb)), 100.0);
	if (!run->have_offcpu)
		fprintf(f, "  (off the CPU: not known, the run has no record.sched; it is in "
			   "operators)\n");
	if (nops) {
		fprintf(f, "\nOperators: the outermost calls of a step (mean per step, inclusive)\n");
		for (size_t j = 0; j < nops && j < SS_ADV_TOP_OPS; j++)
			fprintf(f, "  %-40s  %10s  %5.1f%%\n", ops[j].name,
				ss_adv_t(ops[j].ns, tb, sizeof(tb)), ss_adv_pct(ops[j].ns, step));
		if (nops > SS_ADV_TOP_OPS)
			fprintf(f, "  %zu more\n", nops - SS_ADV_TOP_OPS);
	}
	free(ops);
}

static void ss_adv_text_steps(FILE *f, const struct ss_adv_run *run)
{
	char tb[32];

	fprintf(f, "\nPer step\n  %8s  %10s", "Step", "Time");
	for (int c = 0; c < SS_ADV_NCAT; c++)
		if (ss_adv_shown(run, c))
			fprintf(f, "  %10.10s", ss_adv_cat_key(c));
	fprintf(f, "  %s\n", "top operator");
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct ss_adv_step *s = &run->steps[i];
		fprintf(f, "  %8llu  %10s", (unsigned long long)s->step,
			ss_adv_t((double)(s->end_ns - s->begin_ns), tb, sizeof(tb)));
		for (int c = 0; c < SS_ADV_NCAT; c++)
			if (ss_adv_shown(run, c))
				fprintf(f, "  %10s", ss_adv_t((double)s->cat[c], tb, sizeof(tb)));
		fprintf(f, "  %s\n", s->nop ? s->op[0].name : "-");
	}
}

static void ss_adv_text_findings(FILE *f, const struct ss_adv_result *r)
{
	double step = ss_adv_mean_step(&r->run);
	char a[32], b[32];

	if (!r->found.n) {
		fprintf(f, "\nFindings: none\n");
		return;
	}
	fprintf(f, "\nFindings, by time saved per step\n");
	for (size_t i = 0; i < r->found.n; i++) {
		const struct ss_adv_finding *x = &r->found.v[i];
		fprintf(f, "%zu. [%s] %s\n", i + 1, x->check, x->title);
		fprintf(f, "   saves %s per step (%.1f%% of the step)", ss_adv_t(x->save_ns, a, sizeof(a)),
			ss_adv_pct(x->save_ns, step));
		if (x->save_lo != x->save_hi)
			fprintf(f, ", between %s and %s", ss_adv_t(x->save_lo, a, sizeof(a)),
				ss_adv_t(x->save_hi, b, sizeof(b)));
		fprintf(f, "\n");
		if (x->evidence[0])
			fprintf(f, "   evidence: %s\n", x->evidence);
		if (x->advice[0])
			fprintf(f, "   advice: %s\n", x->advice);
		if (x->how[0])
			fprintf(f, "   how: %s\n", x->how);
		if (x->nfuncs) {
			fprintf(f, "   functions:");
			for (int k = 0; k < x->nfuncs && k < SS_ADV_FUNCS; k++)
				fprintf(f, "%s %s", k ? "," : "", x->funcs[k]);
			fprintf(f, "\n");
		}
	}
}

static size_t ss_adv_found_by(const struct ss_adv_result *r, const char *check)
{
	size_t n = 0;

	for (size_t i = 0; i < r->found.n; i++)
		n += !strcmp(r->found.v[i].check, check);
	return n;
}

static void ss_adv_text_checks(FILE *f, const struct ss_adv_result *r)
{
	int head = 0;

	for (size_t i = 0; i < r->nchecks; i++) {
		const struct ss_adv_check *c = ss_adv_checks[i];
		size_t n;
		if (!c || r->status[i] < 0)
			continue;
		if (!head++)
			fprintf(f, "\nChecks\n");
		if (r->status[i] == 1) {
			fprintf(f, "  %-10s not judged: %s\n", c->name, r->why[i]);
			continue;
		}
		n = ss_adv_found_by(r, c->name);
		if (n)
			fprintf(f, "  %-10s %zu finding%s above\n", c->name, n, n == 1 ? "" : "s");
		else
			fprintf(f, "  %-10s nothing found (%s)\n", c->name, c->looks_at);
	}
}

static int ss_adv_cmp_thread(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* the threads that ran steps: distinct (pid, tid) */
static size_t ss_adv_threads(const struct ss_adv_run *run)
{
	uint64_t (*v)[2] = malloc(run->nsteps * sizeof(*v) + 1);
	size_t n = 0;

	if (!v)
		return 1;
	for (size_t i = 0; i < run->nsteps; i++)
		v[i][0] = run->steps[i].pid, v[i][1] = run->steps[i].tid;
	qsort(v, run->nsteps, sizeof(*v), ss_adv_cmp_thread);
	for (size_t i = 0; i < run->nsteps; i++)
		n += !i || v[i][0] != v[i - 1][0] || v[i][1] != v[i - 1][1];
	free(v);
	return n;
}

static void ss_adv_text(FILE *f, const struct ss_adv_result *r, unsigned flags)
{
	const struct ss_adv_run *run = &r->run;
	char tb[32];
	size_t threads = ss_adv_threads(run);

	fprintf(f, "stepscope advise: %s: %zu recorded step%s on %zu thread%s, median step %s\n\n",
		run->dir, run->nsteps, run->nsteps == 1 ? "" : "s", threads, threads == 1 ? "" : "s",
		ss_agg_fmt_time(run->median_step_ns, tb, sizeof(tb)));
	ss_adv_text_breakdown(f, run);
	if (flags & SS_ADV_PRINT_STEPS)
		ss_adv_text_steps(f, run);
	ss_adv_text_findings(f, r);
	ss_adv_text_checks(f, r);
}

static void ss_adv_csv(FILE *f, const struct ss_adv_result *r)
{
	const struct ss_adv_run *run = &r->run;
	uint64_t t0 = ss_agg_t0(run->agg);

	fprintf(f, "step,pid,tid,begin_ns,step_ns");
	for (int c = 0; c < SS_ADV_NCAT; c++)
		fprintf(f, ",%s_ns", ss_adv_cat_key(c));
	fprintf(f, ",off_cpu_known,top_op,top_op_ns\n");
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct ss_adv_step *s = &run->steps[i];
		fprintf(f, "%llu,%llu,%llu,%llu,%llu", (unsigned long long)s->step,
			(unsigned long long)s->pid, (unsigned long long)s->tid,
			(unsigned long long)(s->begin_ns >= t0 ? s->begin_ns - t0 : 0),
			(unsigned long long)(s->end_ns - s->begin_ns));
		for (int c = 0; c < SS_ADV_NCAT; c++)
			fprintf(f, ",%llu", (unsigned long long)s->cat[c]);
		fprintf(f, ",%d,", run->have_offcpu && !s->off_unknown);
		if (s->nop)
			ss_out_csv_field(f, s->op[0].name);
		fprintf(f, ",%llu\n", (unsigned long long)(s->nop ? s->op[0].ns : 0));
	}
}

static void ss_adv_json_steps(FILE *f, const struct ss_adv_run *run)
{
	uint64_t t0 = ss_agg_t0(run->agg);

	fprintf(f, ",\"per_step\":[");
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct ss_adv_step *s = &run->steps[i];
		fprintf(f, "%s{\"step\":%llu,\"pid\":%llu,\"tid\":%llu,\"begin_ns\":%llu,\"step_ns\":%llu",
			i ? "," : "", (unsigned long long)s->step, (unsigned long long)s->pid,
			(unsigned long long)s->tid,
			(unsigned long long)(s->begin_ns >= t0 ? s->begin_ns - t0 : 0),
			(unsigned long long)(s->end_ns - s->begin_ns));
		fprintf(f, ",\"off_cpu_known\":%s,\"ns\":{",
			run->have_offcpu && !s->off_unknown ? "true" : "false");
		for (int c = 0; c < SS_ADV_NCAT; c++)
			fprintf(f, "%s\"%s\":%llu", c ? "," : "", ss_adv_cat_key(c),
				(unsigned long long)s->cat[c]);
		fprintf(f, "},\"ops\":[");
		for (size_t k = 0; k < s->nop; k++) {
			fprintf(f, "%s{\"name\":", k ? "," : "");
			ss_export_json_fputs(f, s->op[k].name);
			fprintf(f, ",\"ns\":%llu}", (unsigned long long)s->op[k].ns);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]");
}

static void ss_adv_json_findings(FILE *f, const struct ss_adv_result *r, double step)
{
	fprintf(f, ",\"findings\":[");
	for (size_t i = 0; i < r->found.n; i++) {
		const struct ss_adv_finding *x = &r->found.v[i];
		fprintf(f, "%s{\"check\":", i ? "," : "");
		ss_export_json_fputs(f, x->check);
		fprintf(f, ",\"save_ns\":%.0f,\"save_lo_ns\":%.0f,\"save_hi_ns\":%.0f,\"save_pct\":%.2f",
			x->save_ns, x->save_lo, x->save_hi, ss_adv_pct(x->save_ns, step));
		fprintf(f, ",\"title\":");
		ss_export_json_fputs(f, x->title);
		fprintf(f, ",\"evidence\":");
		ss_export_json_fputs(f, x->evidence);
		fprintf(f, ",\"advice\":");
		ss_export_json_fputs(f, x->advice);
		fprintf(f, ",\"how\":");
		ss_export_json_fputs(f, x->how);
		fprintf(f, ",\"functions\":[");
		for (int k = 0; k < x->nfuncs && k < SS_ADV_FUNCS; k++) {
			fprintf(f, "%s", k ? "," : "");
			ss_export_json_fputs(f, x->funcs[k]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]");
}

static void ss_adv_json(FILE *f, const struct ss_adv_result *r)
{
	const struct ss_adv_run *run = &r->run;
	double step = ss_adv_mean_step(run);
	int first = 1;

	fprintf(f, "{\"dir\":");
	ss_export_json_fputs(f, run->dir);
	fprintf(f, ",\"steps\":%zu,\"median_step_ns\":%llu,\"mean_step_ns\":%.0f", run->nsteps,
		(unsigned long long)run->median_step_ns, step);
	fprintf(f, ",\"off_cpu_known\":%s,\"gpu\":%s", run->have_offcpu ? "true" : "false",
		run->have_gpu ? "true" : "false");
	fprintf(f, ",\"categories\":[");
	for (int c = 0; c < SS_ADV_NCAT; c++) {
		fprintf(f, "%s{\"key\":\"%s\",\"name\":\"%s\",\"mean_ns\":%llu,\"pct\":%.2f}",
			c ? "," : "", ss_adv_cat_key(c), ss_adv_cat_name(c),
			(unsigned long long)run->cat_mean[c],
			ss_adv_pct((double)run->cat_mean[c], step));
	}
	fprintf(f, "]");
	ss_adv_json_steps(f, run);
	ss_adv_json_findings(f, r, step);
	fprintf(f, ",\"checks\":[");
	for (size_t i = 0; i < r->nchecks; i++) {
		const struct ss_adv_check *c = ss_adv_checks[i];
		if (!c || r->status[i] < 0)
			continue;
		fprintf(f, "%s{\"name\":", first ? "" : ",");
		first = 0;
		ss_export_json_fputs(f, c->name);
		if (r->status[i] == 1) {
			fprintf(f, ",\"judged\":false,\"why\":");
			ss_export_json_fputs(f, r->why[i]);
		} else {
			fprintf(f, ",\"judged\":true,\"findings\":%zu,\"looks_at\":",
				ss_adv_found_by(r, c->name));
			ss_export_json_fputs(f, c->looks_at);
		}
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}

int ss_adv_print_opts(FILE *f, const struct ss_adv_result *r, const char *format,
		      unsigned flags)
{
	if (!strcmp(format, "csv"))
		ss_adv_csv(f, r);
	else if (!strcmp(format, "json"))
		ss_adv_json(f, r);
	else if (!strcmp(format, "text"))
		ss_adv_text(f, r, flags);
	else
		return -1;
	return ferror(f) ? -1 : 0;
}

int ss_adv_print(FILE *f, const struct ss_adv_result *r, const char *format)
{
	return ss_adv_print_opts(f, r, format, 0);
}
