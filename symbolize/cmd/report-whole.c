/*
 * report-whole.c - `stepscope report --whole-run DIR`: the same table
 * (text, CSV, JSON) from the runtime's whole-run counts (stats: whole_run,
 * log.every_n_steps; read/stats-read.c) instead of the recorded windows.
 *
 * Design: rows come ready from stats-read.c; Min and Max are "-" (null in
 * JSON, empty in CSV): the runtime keeps no single calls.  The footer says
 * how many steps the counts cover, the calls it could not count, and when
 * the times are sampled estimates.
 *
 * Must never: print a percentage computed against zero, or a Min/Max.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "report.h"
#include "stats-read.h"

/* ------------------------------------------------------------ --whole-run
 * Rows from stats-read.c: the same columns, Min and Max shown as "-" (the
 * runtime keeps no single calls), footer "whole run: N steps". */
static void ss_report_whole_table(FILE *f, const struct ss_stats_result *res,
				  const struct ss_agg_row *rows, size_t n,
				  const struct ss_report_opts *o)
{
	static const char *const heads[] = { "Name", "Thread", "Self %", "Self",
					     "Total %", "Total", "Avg", "Min",
					     "Max", "Calls" };
	int w[10], ww[10], i, m = 0;
	char cell[10][128], tb[32];
	size_t k;

	for (i = 0; i < 10; i++)
		w[i] = (int)strlen(heads[i]) < 9 && i >= 2 ? 9 : (int)strlen(heads[i]);
	for (k = 0; k < n; k++) {
		ss_report_name(rows[k].name, cell[0], sizeof(cell[0]));
		ss_report_thread(&rows[k], cell[1], sizeof(cell[1]));
		for (i = 0; i < 2; i++)
			if ((int)strlen(cell[i]) > w[i])
				w[i] = (int)strlen(cell[i]);
	}
	for (i = 0; i < 10; i++)
		if (i != 1 || o->threads)
			ww[m++] = w[i];
	ss_report_dashes(f, ww, m);
	for (i = 0; i < 10; i++)
		if (i != 1 || o->threads)
			ss_report_cell(f, heads[i], w[i], i < 2, i == 9);
	ss_report_dashes(f, ww, m);
	for (k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		ss_report_name(r->name, cell[0], sizeof(cell[0]));
		ss_report_thread(r, cell[1], sizeof(cell[1]));
		snprintf(cell[2], sizeof(cell[2]), "%.2f%%", ss_report_pct(r->self_ns, res->self_sum));
		ss_agg_fmt_time(r->self_ns, cell[3], sizeof(cell[3]));
		snprintf(cell[4], sizeof(cell[4]), "%.2f%%", ss_report_pct(r->total_ns, res->self_sum));
		ss_agg_fmt_time(r->total_ns, cell[5], sizeof(cell[5]));
		ss_agg_fmt_time(r->calls ? r->total_ns / r->calls : 0, cell[6], sizeof(cell[6]));
		snprintf(cell[7], sizeof(cell[7]), "-");
		snprintf(cell[8], sizeof(cell[8]), "-");
		snprintf(cell[9], sizeof(cell[9]), "%llu", (unsigned long long)r->calls);
		for (i = 0; i < 10; i++)
			if (i != 1 || o->threads)
				ss_report_cell(f, cell[i], w[i], i < 2, i == 9);
	}
	ss_report_dashes(f, ww, m);
	ss_report_more(f, n, o->nall);
	fprintf(f, "Self time total: %s\n", ss_agg_fmt_time(res->self_sum, tb, sizeof(tb)));
	fprintf(f, "whole run: %llu steps (%zu process%s, %zu thread%s)\n",
		(unsigned long long)res->steps, res->nprocesses,
		res->nprocesses == 1 ? "" : "es", res->nthreads, res->nthreads == 1 ? "" : "s");
	if (res->dropped)
		fprintf(f, "not counted: %llu calls (inside signal handlers that interrupted the counting, or too deep)\n",
			(unsigned long long)res->dropped);
	if (res->sample_ns)
		fprintf(f, "times: sampled estimates, one look at the stacks every %s (calls are exact; "
			"the step function's total is measured)\n",
			ss_agg_fmt_time(res->sample_ns, tb, sizeof(tb)));
}

static void ss_report_whole_csv(FILE *f, const struct ss_stats_result *res,
				const struct ss_agg_row *rows, size_t n,
				const struct ss_report_opts *o)
{
	ss_report_csv_header(f, o, 0);
	for (size_t k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		ss_report_csv_head(f, r, o);  /* kind: always function */
		fprintf(f, "%.4f,%llu,%.4f,%llu,%llu,,,%llu,0\n",
			ss_report_pct(r->self_ns, res->self_sum), (unsigned long long)r->self_ns,
			ss_report_pct(r->total_ns, res->self_sum), (unsigned long long)r->total_ns,
			(unsigned long long)(r->calls ? r->total_ns / r->calls : 0),
			(unsigned long long)r->calls);
	}
}

static void ss_report_whole_json(FILE *f, const struct ss_stats_result *res,
				 const struct ss_agg_row *rows, size_t n,
				 const struct ss_report_opts *o, const char *sortname)
{
	fprintf(f, "{\"whole_run\":true,\"self_total_ns\":%llu,\"steps\":%llu,\"processes\":%zu,"
		"\"threads\":%zu,\"dropped\":%llu,\"sample_ns\":%llu,\"sort\":",
		(unsigned long long)res->self_sum, (unsigned long long)res->steps,
		res->nprocesses, res->nthreads, (unsigned long long)res->dropped,
		(unsigned long long)res->sample_ns);
	ss_export_json_fputs(f, sortname);
	fprintf(f, ",\n\"rows\":[");
	for (size_t k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		ss_report_json_head(f, r, k, o);  /* kind: always function */
		fprintf(f, ",\"self_pct\":%.4f,\"self_ns\":%llu,\"total_pct\":%.4f,\"total_ns\":%llu,"
			"\"avg_ns\":%llu,\"min_ns\":null,\"max_ns\":null,\"calls\":%llu}",
			ss_report_pct(r->self_ns, res->self_sum), (unsigned long long)r->self_ns,
			ss_report_pct(r->total_ns, res->self_sum), (unsigned long long)r->total_ns,
			(unsigned long long)(r->calls ? r->total_ns / r->calls : 0),
			(unsigned long long)r->calls);
	}
	fprintf(f, "\n]}\n");
}

int ss_report_whole_run(struct ss_report_opts *o, const char *sortname)
{
	struct ss_stats_result res;
	char err[1024];
	size_t n;
	int rc;
	struct ss_out out;
	FILE *f;

	rc = ss_stats_read(o->dir, o->backend, o->quiet, o->threads, &res, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: report: %s\n", err);
		return rc;
	}
	if (!(f = ss_report_open(&out, o->out))) {
		ss_stats_result_release(&res);
		return 2;
	}
	ss_agg_sort_rows(res.rows, res.nrows, (enum ss_agg_sort)o->sort);
	n = o->nall = res.nrows;
	if (o->limit && n > (size_t)o->limit)
		n = (size_t)o->limit;
	if (!strcmp(o->format, "csv"))
		ss_report_whole_csv(f, &res, res.rows, n, o);
	else if (!strcmp(o->format, "json"))
		ss_report_whole_json(f, &res, res.rows, n, o, sortname);
	else
		ss_report_whole_table(f, &res, res.rows, n, o);
	rc = ss_report_close(&out);
	ss_stats_result_release(&res);
	return rc;
}
