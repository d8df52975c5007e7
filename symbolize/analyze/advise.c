/*
 * advise.c - the core of `stepscope advise` (advise.h): walk a run once,
 * split its steps into categories, hand it to every check, rank what they
 * found.
 *
 * Design: one ss_agg_walk feeds the aggregator, the allocation report,
 * the argument report, the step splitter (advise-split.c) and the
 * exporter each check asks for; then the splitter's steps and their
 * means make struct ss_adv_run, and each check of ss_adv_checks judges it
 * in turn.  Findings are ranked by their saving per step (ties keep the
 * checks' order).  Printing is advise-print.c's.
 *
 * Must never: let a check's failure to judge hide the others, or print a
 * finding whose saving was not computed from this run.
 */
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "advise-split.h"
#include "alloc-report.h"
#include "args-report.h"
#include "run-check.h"
#include "util.h"

/* the splitter, kept beside the run for ss_adv_release */
struct ss_adv_core {
	struct ss_adv_split *split;
	struct ss_exporter *allocx, *argx;
	struct ss_args_report *args;
	void **state;               /* per check */
};

static const char *const ss_adv_names[SS_ADV_NCAT] = {
	"operators", "omp team wait", "preempted", "blocked", "allocation calls",
	"stepscope hooks", "GPU wait", "CUDA API",
};
static const char *const ss_adv_keys[SS_ADV_NCAT] = {
	"ops", "omp_wait", "preempted", "blocked", "alloc", "hooks", "gpu_wait", "gpu_api",
};

const char *ss_adv_cat_name(enum ss_adv_cat c)
{
	return (unsigned)c < SS_ADV_NCAT ? ss_adv_names[c] : "?";
}

const char *ss_adv_cat_key(enum ss_adv_cat c)
{
	return (unsigned)c < SS_ADV_NCAT ? ss_adv_keys[c] : "?";
}

struct ss_adv_finding *ss_adv_add(struct ss_adv_list *l, const char *check)
{
	struct ss_adv_finding *f;

	if (ss_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v), 8))
		return NULL;
	f = &l->v[l->n++];
	memset(f, 0, sizeof(*f));
	f->check = check;
	return f;
}

int ss_adv_need_args(const struct ss_adv_run *run, char *why, size_t whylen)
{
	if (!run->args) {
		snprintf(why, whylen, "the run has no record.args (docs/shapes.md)");
		return 1;
	}
	if (!run->nsteps || !run->median_step_ns) {
		snprintf(why, whylen, "the run has no recorded step");
		return 1;
	}
	return 0;
}

static int ss_adv_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* by saving, descending; the checks' order (index) breaks ties */
struct ss_adv_rank {
	double save;
	size_t i;
};

static int ss_adv_cmp_rank(const void *a, const void *b)
{
	const struct ss_adv_rank *x = a, *y = b;

	if (x->save != y->save)
		return x->save > y->save ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int ss_adv_sort(struct ss_adv_list *l)
{
	struct ss_adv_rank *r;
	struct ss_adv_finding *v;

	if (l->n < 2)
		return 0;
	r = malloc(l->n * sizeof(*r));
	v = malloc(l->n * sizeof(*v));
	if (!r || !v) {
		free(r), free(v);
		return -1;
	}
	for (size_t i = 0; i < l->n; i++)
		r[i] = (struct ss_adv_rank){ l->v[i].save_ns, i };
	qsort(r, l->n, sizeof(*r), ss_adv_cmp_rank);
	for (size_t i = 0; i < l->n; i++)
		v[i] = l->v[r[i].i];
	free(l->v);
	free(r);
	l->v = v;
	l->cap = l->n;
	return 0;
}

/* the steps, their median and the categories' means */
static int ss_adv_steps(struct ss_adv_run *run, struct ss_adv_split *sp)
{
	uint64_t *d;
	double sum[SS_ADV_NCAT] = { 0 };

	if (ss_adv_split_steps(sp, run->ovh.known ? run->ovh.pair_ns : 0, &run->steps,
			       &run->nsteps))
		return -1;
	if (!run->nsteps)
		return 0;
	d = malloc(run->nsteps * sizeof(*d));
	if (!d)
		return -1;
	for (size_t i = 0; i < run->nsteps; i++) {
		d[i] = run->steps[i].end_ns - run->steps[i].begin_ns;
		for (int c = 0; c < SS_ADV_NCAT; c++)
			sum[c] += (double)run->steps[i].cat[c];
	}
	qsort(d, run->nsteps, sizeof(*d), ss_adv_cmp_u64);
	run->median_step_ns = ss_agg_percentile(d, run->nsteps, 0.5);
	free(d);
	for (int c = 0; c < SS_ADV_NCAT; c++)
		run->cat_mean[c] = (uint64_t)(sum[c] / (double)run->nsteps + 0.5);
	return 0;
}

/* the exporters of the walk: aggregate, memory, arguments, splitter, and
 * the checks'; *n of them */
static int ss_adv_exporters(struct ss_adv_result *r, struct ss_adv_core *co,
			    struct ss_exporter **walk, size_t *n)
{
	struct ss_exporter *spx;

	*n = 0;
	walk[(*n)++] = ss_agg_exporter(r->run.agg);
	co->allocx = ss_alloc_report_new();
	co->argx = ss_args_report_new(&co->args);
	spx = ss_adv_split_new(&co->split);
	if (!co->allocx || !co->argx || !spx)
		return -1;
	walk[(*n)++] = co->allocx;
	walk[(*n)++] = co->argx;
	walk[(*n)++] = spx;
	for (size_t i = 0; i < ss_adv_nchecks; i++) {
		const struct ss_adv_check *c = ss_adv_checks[i];
		struct ss_exporter *x;
		if (!c || !c->exporter)
			continue;
		x = c->exporter(r->run.dir, &co->state[i]);
		if (!x)
			return -1;
		walk[(*n)++] = x;
	}
	return 0;
}

static void ss_adv_judge_all(struct ss_adv_result *r, struct ss_adv_core *co, int *oom)
{
	for (size_t i = 0; i < ss_adv_nchecks; i++) {
		const struct ss_adv_check *c = ss_adv_checks[i];
		int st;
		if (!c) {
			r->status[i] = -1; /* not built in */
			continue;
		}
		st = c->judge(&r->run, co->state[i], &r->found, r->why[i], sizeof(r->why[i]));
		if (st < 0) {
			*oom = 1;
			return;
		}
		r->status[i] = st;
		if (st == 1 && !r->why[i][0])
			snprintf(r->why[i], sizeof(r->why[i]), "it could not judge this run");
	}
}

int ss_adv_build(const char *dir, const char *backend, int quiet, struct ss_adv_result *r,
		 char *err, size_t errlen)
{
	struct ss_adv_core *co;
	struct ss_exporter **walk = NULL;
	size_t nwalk = 0;
	int rc, oom = 0;

	memset(r, 0, sizeof(*r));
	r->run.dir = dir;
	r->run.backend = backend;
	if (ss_run_check_empty(dir, err, errlen)) {
		char why[512];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: nothing was recorded: %s", dir, why);
		return 2;
	}
	r->nchecks = ss_adv_nchecks;
	r->status = calloc(ss_adv_nchecks ? ss_adv_nchecks : 1, sizeof(*r->status));
	r->why = calloc(ss_adv_nchecks ? ss_adv_nchecks : 1, sizeof(*r->why));
	co = calloc(1, sizeof(*co));
	r->run.agg = ss_agg_new();
	walk = calloc(4 + ss_adv_nchecks, sizeof(*walk));
	if (!r->status || !r->why || !co || !r->run.agg || !walk ||
	    !(co->state = calloc(ss_adv_nchecks ? ss_adv_nchecks : 1, sizeof(void *)))) {
		free(co), free(walk);
		ss_adv_release(r);
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	r->run.core = co;
	if (ss_adv_exporters(r, co, walk, &nwalk)) {
		free(walk);
		ss_adv_release(r);
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	rc = ss_agg_walk(dir, backend, quiet, walk, nwalk, err, errlen);
	for (size_t i = 0; !rc && i < nwalk; i++)
		if (walk[i]->end && walk[i]->end(walk[i]->ctx, err, errlen))
			rc = 1;
	free(walk);
	if (rc) {
		ss_adv_release(r);
		return rc;
	}
	ss_overhead_read(dir, &r->run.ovh);
	r->run.alloc = ss_alloc_report_have(ss_alloc_report_of(co->allocx), 0) ||
				       ss_alloc_report_have(ss_alloc_report_of(co->allocx), 1) ?
			       ss_alloc_report_of(co->allocx) :
			       NULL;
	r->run.args = ss_adv_split_have_args(co->split) ? co->args : NULL;
	r->run.have_offcpu = ss_agg_have_offcpu(r->run.agg, NULL);
	r->run.have_gpu = ss_adv_split_have_gpu(co->split);
	if (ss_adv_steps(&r->run, co->split)) {
		ss_adv_release(r);
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	if (!r->run.nsteps) {
		ss_adv_release(r);
		snprintf(err, errlen, "%s: no recorded step: advise splits steps (set step.function, "
			 "docs/config.md)", dir);
		return 2;
	}
	ss_adv_judge_all(r, co, &oom);
	if (oom || ss_adv_sort(&r->found)) {
		ss_adv_release(r);
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	return 0;
}

uint64_t ss_adv_calls(const struct ss_adv_run *run, const struct ss_adv_step *s,
		      uint64_t *all_threads)
{
	const struct ss_adv_core *co = run->core;

	if (!co || !co->split) {
		if (all_threads)
			*all_threads = 0;
		return 0;
	}
	return ss_adv_split_calls(co->split, s, all_threads);
}

void ss_adv_release(struct ss_adv_result *r)
{
	struct ss_adv_core *co = r->run.core;

	if (co) {
		for (size_t i = 0; co->state && i < ss_adv_nchecks; i++)
			if (co->state[i] && ss_adv_checks[i] && ss_adv_checks[i]->release)
				ss_adv_checks[i]->release(co->state[i]);
		free(co->state);
		ss_exporter_free(co->allocx);
		ss_exporter_free(co->argx);
		ss_args_report_free(co->args);
		ss_adv_split_free(co->split);
		free(co);
	}
	for (size_t i = 0; i < r->run.nsteps; i++)
		free(r->run.steps[i].op);
	free(r->run.steps);
	ss_agg_free(r->run.agg);
	free(r->found.v);
	free(r->status);
	free(r->why);
	memset(r, 0, sizeof(*r));
}
