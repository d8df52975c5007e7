/*
 * overhead.c - stepscope's own cost in a recorded run (overhead.h): read
 * the runtime's calibration, state the share, compensate the times.
 *
 * Works on the aggregate's call trees only, never on the events again.
 * Must never: divide by a zero time, or make a time negative.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "overhead.h"
#include "run.h"

void ss_overhead_read(const char *dir, struct ss_overhead *o)
{
	char **paths = NULL, err[512];
	size_t n = 0, with = 0, inside = 0, costs = 0;
	uint64_t sum = 0, in_ns = UINT64_MAX;

	memset(o, 0, sizeof(*o));
	if (ss_run_list(dir, ss_run_is_trace, &paths, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		struct ss_reader *r = ss_reader_open(paths[i], err, sizeof(err));
		struct ss_meta_iter it;
		struct ss_meta_rec m;

		if (!r)
			continue;
		o->procs++;
		o->events += r->nevents;
		if (!stat(paths[i], &st))
			o->bytes += (uint64_t)st.st_size;
		struct ss_meta_cost cost, last;
		int have_cost = 0;
		ss_reader_meta_begin(r, &it);
		while (ss_reader_meta_next(&it, &m)) { /* the last one wins */
			if (m.type == SS_META_COST && m.len >= SS_META_COST_V1_SIZE) {
				memset(&last, 0, sizeof(last)); /* older: no step figures */
				memcpy(&last, m.data, m.len < sizeof(last) ? m.len : sizeof(last));
				have_cost = 1;
			}
			if (m.type == SS_META_SWITCH && m.len >= sizeof(struct ss_meta_switch)) {
				struct ss_meta_switch sw;
				memcpy(&sw, m.data, sizeof(sw));
				o->switches += sw.n;
			}
		}
		if (have_cost) {
			cost = last;
			costs++;
			o->cpu_ns += cost.cpu_ns;
			o->bg_ns += cost.bg_cpu_ns;
			o->skipped += cost.skipped;
			o->taken_back += cost.taken_back;
			o->open_ns += cost.open_ns;
			if (cost.skip_pair_ns > o->skip_ns) /* the dearest process's */
				o->skip_ns = cost.skip_pair_ns;
			double tick = r->ns_per_tick > 0 ? r->ns_per_tick : 1.0;
			o->rec_ns += (uint64_t)((double)cost.rec_step_ticks * tick);
			o->rec_n += cost.rec_steps;
			o->tail_ns += (uint64_t)((double)cost.tail_step_ticks * tick);
			o->tail_n += cost.tail_steps;
			o->ref_ns += (uint64_t)((double)cost.ref_step_ticks * tick);
			o->ref_n += cost.ref_steps;
			o->first_ns += (uint64_t)((double)cost.first_step_ticks * tick);
			o->first_n += cost.first_steps;
		}
		ss_reader_meta_begin(r, &it);
		while (ss_reader_meta_next(&it, &m)) {
			struct ss_meta_overhead c;

			if (m.type != SS_META_OVERHEAD || m.len < sizeof(c))
				continue;
			memcpy(&c, m.data, sizeof(c));
			/* the reader's fit, not the runtime's first estimate */
			sum += r->ns_per_tick > 0 ? (uint64_t)(c.pair_ticks * r->ns_per_tick + 0.5)
						  : c.pair_ns;
			with++;
			if (c.inside_ticks) { /* the least: never more than is inside */
				uint64_t ns = r->ns_per_tick > 0
						      ? (uint64_t)(c.inside_ticks * r->ns_per_tick)
						      : c.inside_ticks;
				in_ns = ns < in_ns ? ns : in_ns;
				inside++;
			}
			break;
		}
		ss_reader_free(r);
	}
	ss_run_list_free(paths, n);
	if (with) {
		o->known = 1;
		o->pair_ns = sum / with;
		o->inside_known = inside == with;
		o->inside_ns = inside ? in_ns : 0;
	}
	o->cost_known = costs && costs == o->procs && o->cpu_ns;
}

/* What recording cost, ns of CPU time (the runtime's account). */
static double ss_overhead_hooks(const struct ss_overhead *o, uint64_t calls);

static double ss_overhead_cost(const struct ss_overhead *o, uint64_t calls)
{
	/* a left-out call: what this run's calibration measured (skip_ns),
	 * else half a recorded one.  On b-omp-busy with filter.exclude=axpy8
	 * (1.66M left-out calls) the measured slowdown put them at about
	 * 6 ns, the calibration's figure; half the recorded pair (15 ns)
	 * stated 44.7% where recording cost 28.5% (quiet make bench) */
	return ss_overhead_hooks(o, calls) + (double)o->bg_ns + (double)o->open_ns +
	       (double)o->switches * SS_OVERHEAD_SWITCH_NS;
}

/* What the calls' hooks cost, ns: recorded calls and calls taken back
 * x pair_ns, calls left out x their probe's cost; what a filter can take
 * away (the rest is the windows' opening and the background thread's
 * work) */
static double ss_overhead_hooks(const struct ss_overhead *o, uint64_t calls)
{
	double skip = o->skip_ns ? (double)o->skip_ns : (double)o->pair_ns / 2;
	return ((double)calls + (double)o->taken_back) * (double)o->pair_ns +
	       (double)o->skipped * skip;
}

double ss_overhead_measured(const struct ss_overhead *o, double *rec_ns, double *ref_ns)
{
	/* a step cut by exit holds the program's teardown: only without a
	 * step that a boundary closed; the first step often holds the
	 * program's warm-up: only without another unrecorded one */
	double rec = o->rec_n ? (double)o->rec_ns / (double)o->rec_n
		   : o->tail_n ? (double)o->tail_ns / (double)o->tail_n : 0.0;
	double ref = o->ref_n ? (double)o->ref_ns / (double)o->ref_n
		   : o->first_n ? (double)o->first_ns / (double)o->first_n : 0.0;
	if (rec_ns)
		*rec_ns = rec;
	if (ref_ns)
		*ref_ns = ref;
	return rec > 0 && ref > 0 ? rec / ref : 0.0;
}

double ss_overhead_slowdown(const struct ss_overhead *o, uint64_t calls, uint64_t sum)
{
	double m = ss_overhead_measured(o, NULL, NULL);
	if (m > 0)
		return m;
	double pct = ss_overhead_pct(o, calls, sum);
	return pct < 99.0 ? 100.0 / (100.0 - pct) : 100.0;
}

/* The hooks' cost in percent of the program's own CPU time while
 * recording: its CPU time less the hooks, the background thread and the
 * switches' cost (the openings' wall time is no CPU measure: on a loaded
 * machine one took longer than the CPU time of the whole window), or,
 * where that leaves nothing (a window opened for a step of microseconds),
 * the unrecorded steps' time as many times as steps were recorded */
static double ss_overhead_hooks_pct(const struct ss_overhead *o, uint64_t calls, uint64_t sum)
{
	double hooks = ss_overhead_hooks(o, calls), ref;
	double own = o->cost_known ? (double)o->cpu_ns - hooks - (double)o->bg_ns -
					     (double)o->switches * SS_OVERHEAD_SWITCH_NS
				   : (double)sum - hooks;
	if (own < 1.0 && ss_overhead_measured(o, NULL, &ref) > 0)
		own = ref * (double)(o->rec_n ? o->rec_n : o->tail_n);
	return 100.0 * hooks / (own < 1.0 ? 1.0 : own);
}

enum ss_overhead_advice ss_overhead_advice(const struct ss_overhead *o, uint64_t calls,
					   uint64_t sum)
{
	if (!o->known || ss_overhead_slowdown(o, calls, sum) <= 1.0 + SS_OVERHEAD_WARN_PCT / 100.0)
		return SS_OVERHEAD_FINE;
	/* fewer calls than `filter` proposes (its --min-calls) leave it
	 * nothing to propose */
	return calls >= SS_OVERHEAD_MIN_CALLS &&
			       ss_overhead_hooks_pct(o, calls, sum) > SS_OVERHEAD_WARN_PCT
		       ? SS_OVERHEAD_FILTER
		       : SS_OVERHEAD_WINDOWS;
}

uint64_t ss_overhead_calls(struct ss_agg *a)
{
	struct ss_agg_row *rows;
	size_t n = ss_agg_rows(a, 0, &rows);
	uint64_t calls = 0;

	for (size_t i = 0; i < n; i++)
		if (rows[i].kind == SS_AGG_FUNCTION)
			calls += rows[i].calls;
	return calls;
}

double ss_overhead_pct(const struct ss_overhead *o, uint64_t calls, uint64_t sum)
{
	if (!o->known || !sum)
		return 0.0;
	double pct = o->cost_known ? 100.0 * ss_overhead_cost(o, calls) / (double)o->cpu_ns
				   : 100.0 * (double)calls * (double)o->pair_ns / (double)sum;
	return pct > 100.0 ? 100.0 : pct;
}

void ss_overhead_print(FILE *f, const struct ss_overhead *o, uint64_t calls,
		       uint64_t sum, const char *dir, int compensated)
{
	if (!o->known)
		return;
	double pct = ss_overhead_pct(o, calls, sum);
	char b[3][32];
	fprintf(f, "stepscope overhead: %.1f%% of recorded time (%llu calls x %llu ns", pct,
		(unsigned long long)calls, (unsigned long long)o->pair_ns);
	if (o->cost_known) { /* the runtime's account: of the CPU time */
		if (o->skipped || o->taken_back)
			fprintf(f, ", %llu calls filters left out or took back",
				(unsigned long long)(o->skipped + o->taken_back));
		if (o->switches)
			fprintf(f, ", %llu switches recorded x %.1f us",
				(unsigned long long)o->switches, SS_OVERHEAD_SWITCH_NS / 1e3);
		if (o->open_ns)
			fprintf(f, ", %s opening windows",
				ss_agg_fmt_time(o->open_ns, b[2], sizeof(b[2])));
		fprintf(f, ", %s in stepscope's background thread, of %s of the "
			"program's CPU time while recording",
			ss_agg_fmt_time(o->bg_ns, b[0], sizeof(b[0])),
			ss_agg_fmt_time(o->cpu_ns, b[1], sizeof(b[1])));
	}
	fprintf(f, ")%s", compensated ? ", subtracted above (--compensate)" : "");
	double rec, ref, measured = ss_overhead_measured(o, &rec, &ref);
	if (measured > 0) /* the steps as the program's clock saw them */
		fprintf(f, "; recorded steps %.2fx slower than unrecorded: %s a step against %s "
			"(%llu against %llu%s)\n", measured,
			ss_agg_fmt_time((uint64_t)rec, b[0], sizeof(b[0])),
			ss_agg_fmt_time((uint64_t)ref, b[1], sizeof(b[1])),
			(unsigned long long)(o->rec_n ? o->rec_n : o->tail_n),
			(unsigned long long)(o->ref_n ? o->ref_n : o->first_n),
			o->ref_n ? "" : ", the first step");
	else if (o->cost_known && pct >= 90.0) /* 1 / (1 - share) means nothing here */
		fprintf(f, "; no unrecorded step to time: over 10x slower than unrecorded "
			"by that share, if the calibration holds\n");
	else if (o->cost_known)
		fprintf(f, "; no unrecorded step to time: about %.2fx slower than unrecorded "
			"by that share\n", ss_overhead_slowdown(o, calls, sum));
	else
		fputc('\n', f);
	/* the warning when the recorded steps ran over 10% slower; what to do
	 * depends on what a change would take away: a filter the hooks' cost,
	 * advised whenever that alone is over 10% of the program's own CPU time,
	 * longer windows the fixed cost (opening windows, the background
	 * thread: a short window of few calls, like make demo's) */
	switch (ss_overhead_advice(o, calls, sum)) {
	case SS_OVERHEAD_FINE:
		break;
	case SS_OVERHEAD_WINDOWS:
		fprintf(f, "warning: above %.0f%%, mostly stepscope's fixed cost (opening windows "
			"and its background thread), not its hooks: longer windows "
			"(schedule.active) spread it over more steps\n", SS_OVERHEAD_WARN_PCT);
		break;
	case SS_OVERHEAD_FILTER:
		{
			double h = ss_overhead_hooks_pct(o, calls, sum);
			if (h > 999.0)
				fprintf(f, "warning: above %.0f%%, and the recorded calls' hooks cost "
					"over 10x the program's own CPU time", SS_OVERHEAD_WARN_PCT);
			else
				fprintf(f, "warning: above %.0f%%, and the recorded calls' hooks cost "
					"%.0f%% of the program's own CPU time", SS_OVERHEAD_WARN_PCT, h);
		}
		fprintf(f, " by themselves; run 'stepscope filter %s' to find the calls to "
			"leave out\n", dir);
		break;
	}
}

/* ------------------------------------------------------------ compensation */

struct ss_comp {
	uint64_t *self_calls;   /* by name id: direct recorded callees */
	uint64_t *total_calls;  /* by name id: recorded calls below, outermost
	                         * activation of the name only */
	size_t cap;
	uint32_t stack[4096];   /* names of the path, for recursion */
	size_t depth;
	int oom;
};

static int ss_comp_grow(struct ss_comp *c, uint32_t id)
{
	if (id < c->cap)
		return 0;
	size_t cap = c->cap ? c->cap : 64;
	while (cap <= id)
		cap *= 2;
	uint64_t *s = realloc(c->self_calls, cap * sizeof(*s));
	if (s)
		c->self_calls = s;
	uint64_t *t = realloc(c->total_calls, cap * sizeof(*t));
	if (t)
		c->total_calls = t;
	if (!s || !t) {
		c->oom = 1;
		return -1;
	}
	memset(c->self_calls + c->cap, 0, (cap - c->cap) * sizeof(*s));
	memset(c->total_calls + c->cap, 0, (cap - c->cap) * sizeof(*t));
	c->cap = cap;
	return 0;
}

/* recorded calls directly under n (through native frames) */
static uint64_t ss_comp_direct(const struct ss_agg_node *n)
{
	uint64_t d = 0;
	for (const struct ss_agg_node *k = n->child; k; k = k->next)
		d += k->native ? ss_comp_direct(k) : k->calls;
	return d;
}

/* returns the recorded calls at and below n */
static uint64_t ss_comp_walk(struct ss_comp *c, const struct ss_agg_node *n)
{
	uint64_t below = 0;
	int named = !n->native && n->name != UINT32_MAX;

	if (named && c->depth < sizeof(c->stack) / sizeof(c->stack[0]))
		c->stack[c->depth++] = n->name;
	for (const struct ss_agg_node *k = n->child; k; k = k->next)
		below += ss_comp_walk(c, k);
	if (named) {
		c->depth--;
		if (!ss_comp_grow(c, n->name)) {
			int outer = 1;
			for (size_t i = 0; i < c->depth; i++)
				if (c->stack[i] == n->name)
					outer = 0;
			c->self_calls[n->name] += ss_comp_direct(n);
			if (outer)
				c->total_calls[n->name] += below;
		}
		return below + n->calls;
	}
	return below;
}

static uint64_t ss_comp_sub(uint64_t v, uint64_t calls, uint64_t pair_ns)
{
	uint64_t d = calls * pair_ns;
	return d < v ? v - d : 0;
}

/* apply the counts of c to the rows of (pid, tid), or to all rows */
static void ss_comp_apply(struct ss_agg *a, const struct ss_comp *c, struct ss_agg_row *rows,
			  size_t n, int match, uint64_t pid, uint64_t tid, uint64_t pair_ns)
{
	for (uint32_t id = 0; id < c->cap; id++) {
		if (!c->self_calls[id] && !c->total_calls[id])
			continue;
		const char *name = ss_agg_name(a, id);
		for (size_t i = 0; i < n; i++) {
			struct ss_agg_row *r = &rows[i];
			if (r->kind != SS_AGG_FUNCTION || strcmp(r->name, name) ||
			    (match && (r->pid != pid || r->tid != tid)))
				continue;
			r->self_ns = ss_comp_sub(r->self_ns, c->self_calls[id], pair_ns);
			r->total_ns = ss_comp_sub(r->total_ns, c->total_calls[id], pair_ns);
		}
	}
}

uint64_t ss_overhead_compensate(struct ss_agg *a, struct ss_agg_row *rows, size_t n,
				int per_thread, uint64_t pair_ns)
{
	struct ss_comp c;
	uint64_t sum = ss_agg_self_sum(a), sub = 0;

	memset(&c, 0, sizeof(c));
	if (per_thread) {
		struct ss_agg_thread_tree *tt = NULL;
		size_t nt = ss_agg_thread_trees(a, &tt);
		for (size_t i = 0; i < nt; i++) {
			if (c.cap) {
				memset(c.self_calls, 0, c.cap * sizeof(uint64_t));
				memset(c.total_calls, 0, c.cap * sizeof(uint64_t));
			}
			ss_comp_walk(&c, tt[i].root);
			ss_comp_apply(a, &c, rows, n, 1, tt[i].pid, tt[i].tid, pair_ns);
			for (size_t k = 0; k < c.cap; k++)
				sub += c.self_calls[k] * pair_ns;
		}
		free(tt);
	} else {
		ss_comp_walk(&c, ss_agg_tree(a));
		ss_comp_apply(a, &c, rows, n, 0, 0, 0, pair_ns);
		for (size_t k = 0; k < c.cap; k++)
			sub += c.self_calls[k] * pair_ns;
	}
	free(c.self_calls);
	free(c.total_calls);
	return sub < sum ? sum - sub : 0;
}
