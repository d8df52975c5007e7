/*
 * report-args.c - `stepscope report --group-by args`: walk the run with
 * the args grouping (analyze/args-report.c) and print it as a table, CSV
 * or JSON.  report.c hands the command over here when the option is given.
 *
 * Must never: print a half-written file (outfile.c commits it whole).
 */
#include <stdio.h>

#include "agg.h"
#include "args-report.h"
#include "export.h"
#include "outfile.h"

int ss_report_args(const char *dir, const char *backend, int quiet, const char *out,
		   const char *format, size_t limit)
{
	struct ss_args_report *r = NULL;
	struct ss_exporter *ex = ss_args_report_new(&r);
	struct ss_out o = { 0 };
	char err[1024];
	int rc;

	if (!ex) {
		fprintf(stderr, "stepscope: report: out of memory\n");
		return 1;
	}
	rc = ss_agg_walk(dir, backend, quiet, &ex, 1, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_args_report_free(r);
		return rc;
	}
	if (ss_out_open(&o, out ? out : "-", err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		ss_args_report_free(r);
		return 2;
	}
	ss_args_report_print(o.f, r, format, limit);
	rc = 0;
	if (ss_out_commit(&o, 0, err, sizeof(err))) {
		fprintf(stderr, "stepscope: report: %s\n", err);
		rc = 1;
	}
	ss_out_abort(&o);
	ss_args_report_free(r);
	return rc;
}
