/*
 * advise-html.h - the "Overview" at the top of `stepscope html`: a
 * stacked bar per recorded step (struct ss_adv_step cat[]), the mean
 * breakdown, and the findings of `stepscope advise`, each linking to the
 * summary-table rows of the functions it names.
 */
#ifndef SS_ADVISE_HTML_H
#define SS_ADVISE_HTML_H

#include <stdio.h>

#include "advise.h"

/* The most bars drawn: a longer run shows every k-th step (said so). */
#define SS_ADV_HTML_BARS 240

/* Whether the page holds a row for name (html.c: its summary table). */
typedef int (*ss_adv_html_row_fn)(void *ctx, const char *name);

/* The fill of category c ("#4e79a7", ...). */
const char *ss_adv_html_color(enum ss_adv_cat c);
/* The id of name's summary-table row: "row-" then name with every byte
 * outside [A-Za-z0-9_-] as ".XX" (hex), so distinct names get distinct
 * ids, usable as they are in an href="#...". */
void ss_adv_html_row_id(FILE *f, const char *name);
/* Whether a finding of r names name (the table must then have its row). */
int ss_adv_html_named(const struct ss_adv_result *r, const char *name);
/* The section: <h2 id="overview">, the bars (svg#overview-bars), the
 * legend, table#breakdown, ol#findings (or p#no-findings) and what each
 * check judged.  A function of a finding is a link to its row when
 * has_row(ctx, name) says the page has one, plain text otherwise. */
void ss_adv_html(FILE *f, const struct ss_adv_result *r, ss_adv_html_row_fn has_row,
		 void *ctx);

#endif /* SS_ADVISE_HTML_H */
