/*
 * advise-split.h - the exporter behind `stepscope advise`'s categories
 * (advise-split.c): fed by the core's walk beside the aggregator, it keeps
 * what each stepping thread did in its steps (OpenMP team-wait ranges,
 * CUDA API calls, off-CPU intervals, allocation records, calls per step,
 * the outermost calls) and at the end splits every recorded step into
 * enum ss_adv_cat (advise.h) so that the parts add up to the step.
 */
#ifndef SS_ADVISE_SPLIT_H
#define SS_ADVISE_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "advise.h"

struct ss_adv_split;

/* The exporter and its state (*out; free it with ss_adv_split_free after
 * the exporter: the exporter's release does nothing).  NULL: out of
 * memory. */
struct ss_exporter *ss_adv_split_new(struct ss_adv_split **out);
void ss_adv_split_free(struct ss_adv_split *sp);

/* After the walk: every recorded step split (advise.h, struct
 * ss_adv_step), sorted by (pid, begin); the op names are owned by sp.
 * pair_ns: one recorded call's cost (0: not known, no hooks category).
 * 0, or -1 out of memory.  *steps is malloc'ed (free it and each op
 * array). */
int ss_adv_split_steps(struct ss_adv_split *sp, uint64_t pair_ns,
		       struct ss_adv_step **steps, size_t *n);
/* What the walk saw: GPU activity, slices with recorded arguments, and
 * allocation records inside steps. */
int ss_adv_split_have_gpu(const struct ss_adv_split *sp);
int ss_adv_split_have_args(const struct ss_adv_split *sp);
/* Recorded calls in step s on its own thread (the hooks category's
 * count), and on every thread of its process while it ran. */
uint64_t ss_adv_split_calls(const struct ss_adv_split *sp, const struct ss_adv_step *s,
			    uint64_t *all_threads);

#endif /* SS_ADVISE_SPLIT_H */
