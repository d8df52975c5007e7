/*
 * alloc-html.h - the HTML report's view of recorded allocations
 * (alloc-html.c).
 */
#ifndef SS_ALLOC_HTML_H
#define SS_ALLOC_HTML_H

#include <stdio.h>

/* The "Recorded allocations" section of the page for the run in dir:
 * nothing when it was recorded without memory.allocations. */
void ss_alloc_html(FILE *f, const char *dir, const char *backend);

#endif /* SS_ALLOC_HTML_H */
