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
/* Stacked bars: nbars bars of nseg segments each, v[bar * nseg + seg]
 * (ns), segment seg filled with colors[seg], stacked bottom up in seg
 * order, heights to the tallest bar's sum; bar labels[bar] under its bar
 * when there is room (labels may be NULL).  Each drawn segment is a
 * <rect class="seg" data-bar="B" data-seg="S"> whose <title> tip(ctx, B,
 * S) writes (escaped text); zero segments are left out.  The <svg> gets
 * id and class "stack", is width 100% of the page and scales
 * (viewBox width x height).  Returns the number of bars drawn. */
typedef void (*ss_svg_tip_fn)(FILE *f, void *ctx, size_t bar, size_t seg);
size_t ss_svg_stacked(FILE *f, const char *id, size_t nbars, size_t nseg, const uint64_t *v,
		      const char *const *colors, const char *const *labels, ss_svg_tip_fn tip,
		      void *ctx, int width, int height);
/* One line per counter track (bytes over time); returns the number of
 * tracks drawn. */
size_t ss_svg_counters(FILE *f, struct ss_agg *a, int width, int height);

#endif /* SS_SVG_H */
