/*
 * advise-omp.c - the "omp" check of `stepscope advise`: an OpenMP team on
 * more threads than free CPUs, whose threads spin or wait for each other
 * while the ones with work are preempted (advise.h).
 *
 * Design: the runtime names the time the thread that starts a parallel
 * region waits for its team ("omp start: wait for the team" until its own
 * share begins, "omp barrier: wait for the team" after it); with
 * record.sched the part of those waits spent on the CPU is spinning
 * (libgomp's waiting threads spin unless OMP_WAIT_POLICY=passive), and
 * the stepping thread's preempted time is time another thread (a spinning
 * team member, a neighbour job) had its CPU.  Neither is work: the saving
 * of letting waiting threads sleep, or of fewer threads than free CPUs, is
 * per step the spinning plus the preempted time, the mean over steps
 * (preemption comes in long slices on a shared machine: a median misses
 * it); its low end the larger of the two alone.  A team that does not
 * spin (under 5% of the step: waits too short to matter), or sleeps in
 * its waits longer than it spins (OMP_WAIT_POLICY=passive: the core's
 * team-wait category less the spinning is the time asleep), gets no
 * finding, whatever else preempted its thread.  Without
 * record.sched the whole team wait is the estimate (spinning and sleeping
 * not told apart).
 * The team's size is the number of threads that ran an outlined region
 * (gcc's `fn._omp_fn.N`, clang's `.omp_outlined.`).  The run does not
 * record how many CPUs were free: the preempted time is the evidence.
 *
 * Must never: report a finding below 5% of the median step, or for a run
 * with no parallel region.
 */
#include <stdlib.h>
#include <string.h>

#include "advise.h"

#define SS_ADV_OMP_MIN 0.05  /* of the mean step: below it, nothing found */
#define SS_ADV_OMP_RANGE_START "omp start: wait for the team"
#define SS_ADV_OMP_RANGE_WAIT "omp barrier: wait for the team"

/* An outlined parallel region's body (gcc, clang). */
static int ss_adv_omp_outlined(const char *name)
{
	return strstr(name, "._omp_fn.") || strstr(name, ".omp_outlined");
}

struct ss_adv_omp_team {
	size_t threads;              /* most threads in one process's regions */
	const char *region[SS_ADV_FUNCS];   /* outlined bodies, by total time */
	uint64_t region_ns[SS_ADV_FUNCS];
	size_t nregion;
};

/* The team: threads that ran outlined regions, per process (the largest),
 * and the regions that took most time. */
static int ss_adv_omp_team(struct ss_agg *a, struct ss_adv_omp_team *t)
{
	struct ss_agg_row *rows;
	size_t n = ss_agg_rows(a, 1, &rows), i, j, cnt;
	uint64_t *seen = malloc((n ? n : 1) * 2 * sizeof(*seen));
	size_t nseen = 0;

	memset(t, 0, sizeof(*t));
	if (!seen)
		return -1;
	for (i = 0; i < n; i++) {
		if (rows[i].kind != SS_AGG_FUNCTION || !ss_adv_omp_outlined(rows[i].name))
			continue;
		for (j = 0; j < nseen && (seen[2 * j] != rows[i].pid || seen[2 * j + 1] !=
					  rows[i].tid); j++)
			;
		if (j == nseen) {
			seen[2 * nseen] = rows[i].pid;
			seen[2 * nseen++ + 1] = rows[i].tid;
		}
	}
	for (i = 0; i < nseen; i++) {
		for (j = 0, cnt = 0; j < nseen; j++)
			cnt += seen[2 * j] == seen[2 * i];
		if (cnt > t->threads)
			t->threads = cnt;
	}
	free(seen);
	n = ss_agg_rows(a, 0, &rows);
	for (i = 0; i < n; i++) {
		size_t p;
		if (rows[i].kind != SS_AGG_FUNCTION || !ss_adv_omp_outlined(rows[i].name))
			continue;
		for (p = t->nregion; p > 0 && t->region_ns[p - 1] < rows[i].total_ns; p--)
			if (p < SS_ADV_FUNCS) {
				t->region[p] = t->region[p - 1];
				t->region_ns[p] = t->region_ns[p - 1];
			}
		if (p < SS_ADV_FUNCS) {
			t->region[p] = rows[i].name;
			t->region_ns[p] = rows[i].total_ns;
			if (t->nregion < SS_ADV_FUNCS)
				t->nregion++;
		}
	}
	return 0;
}

/* The team waits inside steps, whole run: every range node named for one
 * under a "ProfilerStep" frame of the flame tree; its time and the part
 * of it switched out. */
static void ss_adv_omp_waits(struct ss_agg *a, const struct ss_agg_node *n, int in_step,
			     uint64_t *wait, uint64_t *off)
{
	for (; n; n = n->next) {
		int in = in_step || n->native == SS_AGG_FRAME_STEP;
		if (in && n->native == SS_AGG_FRAME_RANGE) {
			const char *name = ss_agg_name(a, n->name);
			if (name && (!strcmp(name, SS_ADV_OMP_RANGE_START) ||
				     !strcmp(name, SS_ADV_OMP_RANGE_WAIT))) {
				*wait += n->self_ns;
				*off += n->off_self_ns < n->self_ns ? n->off_self_ns : n->self_ns;
			}
		}
		ss_adv_omp_waits(a, n->child, in, wait, off);
	}
}

static int ss_adv_omp_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
			    char *why, size_t whylen)
{
	const struct ss_agg_step *steps;
	size_t nsteps = ss_agg_steps(run->agg, &steps), k, i, len;
	struct ss_adv_omp_team team;
	/* means per step: 0 save, 1 wait, 2 spin, 3 preempted, 4 step */
	double m[5] = { 0 };
	uint64_t wait = 0, wait_off = 0;
	double asleep;
	struct ss_adv_finding *f;
	int off = run->have_offcpu;
	char b[6][32];

	(void)state;
	if (!nsteps) {
		snprintf(why, whylen, "the run has no recorded steps");
		return 1;
	}
	if (ss_adv_omp_team(run->agg, &team))
		return -1;
	ss_adv_omp_waits(run->agg, ss_agg_flame_tree(run->agg), 0, &wait, &wait_off);
	if (!team.nregion && !wait) {
		snprintf(why, whylen, "the run has no OpenMP parallel region in its steps");
		return 1;
	}
	if (!off)
		wait_off = 0;
	m[1] = (double)wait;
	m[2] = (double)(wait - wait_off);
	for (k = 0; k < nsteps; k++) {
		if (off && !steps[k].off_unknown)
			m[3] += (double)steps[k].off_preempted_ns;
		m[4] += (double)(steps[k].end_ns - steps[k].begin_ns);
	}
	m[0] = m[2] + m[3];
	for (i = 0; i < 5; i++)
		m[i] /= (double)nsteps;
	/* the core's team-wait category (advise-split.c) is the waits' time
	 * not preempted: on the CPU or asleep */
	asleep = off && (double)run->cat_mean[SS_ADV_OMP_WAIT] > m[2]
			 ? (double)run->cat_mean[SS_ADV_OMP_WAIT] - m[2]
			 : 0;
	/* a team that does not spin while it waits (or sleeps more than it
	 * spins: OMP_WAIT_POLICY=passive, whose waits still spend a little on
	 * the CPU waking the team) is not what the advice fixes */
	if (team.threads < 2 || m[4] <= 0 || m[2] < SS_ADV_OMP_MIN * m[4] || m[2] < asleep ||
	    m[0] < SS_ADV_OMP_MIN * m[4])
		return 0;
	f = ss_adv_add(out, "omp");
	if (!f)
		return -1;
	f->save_ns = m[0];
	f->save_lo = m[2] > m[3] ? m[2] : m[3];
	f->save_hi = m[0];
	snprintf(f->title, sizeof(f->title), "the OpenMP team of %zu threads %s: %s of a %s step "
		 "(%.0f%%)", team.threads, off ? "spins or is preempted while it waits"
					       : "waits for its threads",
		 ss_agg_fmt_time((uint64_t)m[0], b[0], 32), ss_agg_fmt_time((uint64_t)m[4], b[1], 32),
		 100.0 * m[0] / m[4]);
	/* the same opening either way; with record.sched, the wait split */
	snprintf(f->evidence, sizeof(f->evidence), "per step (means over %zu steps of %s): the "
		 "thread that starts the parallel regions waits for its team (the ranges \"%s\" "
		 "and \"%s\") %s", nsteps, ss_agg_fmt_time((uint64_t)m[4], b[0], 32),
		 SS_ADV_OMP_RANGE_START, SS_ADV_OMP_RANGE_WAIT,
		 ss_agg_fmt_time((uint64_t)m[1], b[1], 32));
	len = strlen(f->evidence);
	if (off && len + 1 < sizeof(f->evidence))
		snprintf(f->evidence + len, sizeof(f->evidence) - len, ", %s of it on the CPU, "
			 "spinning; it is preempted (runnable while another thread had its CPU) "
			 "for %s; the team has %zu threads (the run does not record how many CPUs "
			 "were free)", ss_agg_fmt_time((uint64_t)m[2], b[2], 32),
			 ss_agg_fmt_time((uint64_t)m[3], b[3], 32), team.threads);
	else if (len + 1 < sizeof(f->evidence))
		snprintf(f->evidence + len, sizeof(f->evidence) - len, "; the team has %zu "
			 "threads; without record.sched spinning, sleeping and preemption are not "
			 "told apart (record with record.sched: true for a closer estimate)",
			 team.threads);
	for (i = 0; i < team.nregion; i++) {
		len = strlen(f->evidence);
		if (len + 1 < sizeof(f->evidence))
			snprintf(f->evidence + len, sizeof(f->evidence) - len, "%s %s %s",
				 i ? "," : "; regions (total time):", team.region[i],
				 ss_agg_fmt_time(team.region_ns[i], b[4], 32));
		snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", team.region[i]);
	}
	snprintf(f->advice, sizeof(f->advice), "set OMP_WAIT_POLICY=passive, so that waiting "
		 "threads sleep and give their CPU to the ones still working; or run fewer threads "
		 "than free CPUs (OMP_NUM_THREADS below %zu, the CPUs other jobs leave free); on a "
		 "machine of your own, pin them: OMP_PROC_BIND=close OMP_PLACES=cores",
		 team.threads);
	snprintf(f->how, sizeof(f->how), off ? "per step, the team wait's time on the CPU "
		 "(spinning) plus the time preempted, the mean over %zu steps; low end: the "
		 "larger of the two" : "per step, the team wait, the mean over %zu steps", nsteps);
	return 0;
}

const struct ss_adv_check ss_adv_check_omp = {
	.name = "omp",
	.looks_at = "the time each step waits for its OpenMP team, spinning or preempted",
	.judge = ss_adv_omp_judge,
};
