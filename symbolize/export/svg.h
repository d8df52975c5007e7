/*
 * svg.h - inline SVG pictures of an aggregated run: the flame graph, the
 * step-time bars and the memory counters.  Used by `flame` (a standalone
 * .svg) and `html` (embedded in the page).  Output is deterministic: the
 * same run gives the same bytes (colors come from a hash of the name).
 */
#ifndef SS_SVG_H
#define SS_SVG_H

#include <stdio.h>

#include "agg.h"

/* XML-escaped text. */
void ss_svg_text(FILE *f, const char *s);
/* A flame graph of the merged function tree, `width` px wide, root at the
 * bottom; each frame a <rect> with a <title> (name, total, self, calls).
 * standalone: with the XML prolog and xmlns.  Returns the number of frames
 * drawn (frames narrower than 0.1 px are left out). */
size_t ss_svg_flame(FILE *f, struct ss_agg *a, int width, const char *title,
		    int standalone);
/* One flame graph per thread, stacked top to bottom (sorted by pid, tid),
 * each as wide as the picture and headed by its thread's name and total;
 * standalone as above.  Returns the number of frames drawn. */
size_t ss_svg_flame_threads(FILE *f, struct ss_agg *a, int width, const char *title,
			    int standalone);
/* Bars of every step's duration; returns the number of bars. */
size_t ss_svg_steps(FILE *f, struct ss_agg *a, int width, int height);
/* One line per counter track (bytes over time); returns the number of
 * tracks drawn. */
size_t ss_svg_counters(FILE *f, struct ss_agg *a, int width, int height);

#endif /* SS_SVG_H */
