/*
 * diff-html.h - the page of `stepscope html --diff BASE NEW`: one offline
 * HTML file (no script, no network resource) with the diff table, the two
 * runs' step times side by side and a differential flame graph.
 */
#ifndef SS_DIFF_HTML_H
#define SS_DIFF_HTML_H

#include <stdio.h>

#include "diff.h"

/* Write the page comparing a (BASE) and b (NEW), both loaded with their
 * aggregators (ss_diff_load), from the comparison of ss_diff_compare. */
void ss_diff_html_write(FILE *f, const struct ss_diff_run *a,
			const struct ss_diff_run *b, const struct ss_diff_opts *o,
			const struct ss_diff_stat *step,
			const struct ss_diff_row *rows, size_t nrows,
			const char *note);

#endif /* SS_DIFF_HTML_H */
