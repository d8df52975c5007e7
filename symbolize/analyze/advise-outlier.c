/*
 * advise-outlier.c - the "outlier" check of `stepscope advise`: steps that
 * took much longer than the median step, and the operator that grew in
 * them (advise.h).
 *
 * Design: step-outliers.c finds the outlier steps (longer than
 * SS_STEP_OUTLIER_FACTOR x the median step) and, in each, the functions
 * whose self time is furthest above their median self time per step.  The
 * function that explains most of the outliers' excess, over all of them,
 * is the cause named.  The saving, if its extra work went away, is its
 * excess (self time above its median) over the outlier steps, divided by
 * the number of steps (the mean step falls by that much); the high end is
 * the whole excess over the median step of the outliers it grew in (what
 * else grew with it may go too).  Outliers where it did not grow are
 * another cause's, left out.  With record.sched steps are
 * judged on their time less the time they were preempted, and functions
 * on their self time less their time switched out: a step that was slow
 * because the machine was busy is no operator's doing.  The first step of
 * each process (start-up: loading, first touches) is never an outlier
 * here.
 *
 * Must never: report a finding below 5% of the median step (on the CPU)
 * or of the mean step (as advise prints its share), or name a
 * function that did not grow in the outlier steps.
 */
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "step-outliers.h"

#define SS_ADV_OUT_MIN 0.05  /* of the median step: below it, nothing found */

struct ss_adv_out_fn {
	const char *name;
	uint64_t excess_ns;          /* over every outlier step */
	size_t steps;                /* outlier steps it grew in */
};

static int ss_adv_out_cmp(const void *x, const void *y)
{
	const struct ss_adv_out_fn *a = x, *b = y;

	return a->excess_ns < b->excess_ns ? 1 : a->excess_ns > b->excess_ns ? -1 : 0;
}

/* Add o's grown functions to the tally fn[0..*n). */
static int ss_adv_out_tally(struct ss_adv_out_fn **fn, size_t *n, size_t *cap,
			    const struct ss_step_outlier *o)
{
	for (size_t j = 0; j < o->ngrew; j++) {
		size_t i;
		for (i = 0; i < *n && strcmp((*fn)[i].name, o->grew[j].name); i++)
			;
		if (i == *n) {
			if (*n == *cap) {
				size_t nc = *cap ? 2 * *cap : 16;
				void *p = realloc(*fn, nc * sizeof(**fn));
				if (!p)
					return -1;
				*fn = p;
				*cap = nc;
			}
			(*fn)[(*n)++] = (struct ss_adv_out_fn){ o->grew[j].name, 0, 0 };
		}
		(*fn)[i].excess_ns += o->grew[j].excess_ns;
		(*fn)[i].steps++;
	}
	return 0;
}

static int ss_adv_out_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
			    char *why, size_t whylen)
{
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(run->agg, &steps), nfn = 0, capfn = 0, i, j, nfirst = 0;
	struct ss_step_outlier *o;
	struct ss_adv_out_fn *fn = NULL;
	uint64_t cause = 0;          /* excess of the outliers where fn[0] grew */
	struct ss_adv_finding *f;
	uint64_t med, excess = 0;
	int oncpu = run->have_offcpu;
	long nout;
	double save, mean = 0;
	char b[4][32];

	(void)state;
	if (nsteps < 5) {
		snprintf(why, whylen, "the run has %zu recorded steps (5 or more tell an "
			 "outlier from the rest)", nsteps);
		return 1;
	}
	nout = ss_step_outliers_find(run->agg, SS_STEP_OUTLIER_FACTOR, 1, &o, &med);
	if (nout < 0)
		return -1;
	for (i = 0, j = 0; i < (size_t)nout; i++) {
		size_t k = o[i].step;
		if (!k || steps[k - 1].pid != steps[k].pid) {
			nfirst++;
			continue; /* a process's first step: warm-up */
		}
		o[j++] = o[i];
	}
	nout = (long)j;
	for (i = 0; i < (size_t)nout; i++) {
		excess += o[i].extra_ns;
		if (ss_adv_out_tally(&fn, &nfn, &capfn, &o[i])) {
			free(o);
			free(fn);
			return -1;
		}
	}
	if (nfn)
		qsort(fn, nfn, sizeof(*fn), ss_adv_out_cmp);
	for (i = 0; nfn && i < (size_t)nout; i++)
		for (j = 0; j < o[i].ngrew; j++)
			if (!strcmp(o[i].grew[j].name, fn[0].name))
				cause += o[i].extra_ns;
	save = nfn ? (double)fn[0].excess_ns / (double)nsteps : 0;
	for (i = 0; i < nsteps; i++)
		mean += (double)(steps[i].end_ns - steps[i].begin_ns) / (double)nsteps;
	if (!nout || !nfn || save < SS_ADV_OUT_MIN * (double)med ||
	    save < SS_ADV_OUT_MIN * mean) {
		free(o);
		free(fn);
		return 0;
	}
	f = ss_adv_add(out, "outlier");
	if (!f) {
		free(o);
		free(fn);
		return -1;
	}
	f->save_ns = f->save_lo = save;
	f->save_hi = (double)cause / (double)nsteps;
	if (f->save_hi < save)
		f->save_hi = save;
	snprintf(f->title, sizeof(f->title), "%ld of %zu steps are outliers (over %.1fx the "
		 "median step, %s): %s grew in %zu of them", nout, nsteps, SS_STEP_OUTLIER_FACTOR,
		 ss_agg_fmt_time(med, b[0], 32), fn[0].name, fn[0].steps);
	{
		size_t len = 0;
		len += (size_t)snprintf(f->evidence + len, sizeof(f->evidence) - len,
			"%sthe median step is %s; the %ld outlier steps last %s more than it in "
			"all; in them %s's self time is %s above its median per step in all",
			oncpu ? "on the CPU (time preempted or switched out left out): " : "",
			ss_agg_fmt_time(med, b[0], 32), nout, ss_agg_fmt_time(excess, b[1], 32),
			fn[0].name, ss_agg_fmt_time(fn[0].excess_ns, b[3], 32));
		for (i = 1; i < nfn && i < SS_ADV_FUNCS && len < sizeof(f->evidence); i++)
			len += (size_t)snprintf(f->evidence + len, sizeof(f->evidence) - len,
				", %s's %s", fn[i].name, ss_agg_fmt_time(fn[i].excess_ns, b[3], 32));
		if (len < sizeof(f->evidence)) {
			const struct ss_agg_step *s = &steps[o[0].step];
			snprintf(f->evidence + len, sizeof(f->evidence) - len,
				 "; first outlier: pid %llu step %llu, %s",
				 (unsigned long long)s->pid, (unsigned long long)s->step,
				 ss_agg_fmt_time(s->end_ns - s->begin_ns, b[0], 32));
			len += strlen(f->evidence + len);
		}
		if (nfirst && len < sizeof(f->evidence))
			snprintf(f->evidence + len, sizeof(f->evidence) - len, "; %zu process's "
				 "first step (start-up) not judged", nfirst);
	}
	snprintf(f->advice, sizeof(f->advice), "look at what makes %s do more work in those "
		 "steps (a periodic evaluation, checkpoint, resize or cache rebuild inside the "
		 "step, a data-dependent path): move it out of the step, do it less often or "
		 "amortize it; `stepscope report --steps` lists each outlier step",
		 fn[0].name);
	snprintf(f->how, sizeof(f->how), "%s's self time above its median%s in the outlier "
		 "steps / all %zu steps; high end: those steps' whole time above the median step",
		 fn[0].name, oncpu ? " (on the CPU)" : "", nsteps);
	for (i = 0; i < nfn && i < SS_ADV_FUNCS; i++)
		snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", fn[i].name);
	free(o);
	free(fn);
	return 0;
}

const struct ss_adv_check ss_adv_check_outlier = {
	.name = "outlier",
	.looks_at = "steps over 1.5x the median step and the functions whose self time grew "
		    "in them",
	.judge = ss_adv_out_judge,
};
