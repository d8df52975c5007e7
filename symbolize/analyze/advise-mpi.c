/*
 * advise-mpi.c - the "mpi" check of `stepscope advise`: the straggler
 * rank of an MPI run and the operator that makes it late.
 *
 * Design: an exporter walked with the core's.  Each process named
 * "rank N (host, pid P)" (run.c, ranks.h) is a rank; per rank and step
 * number it sums the step (its ProfilerStep slices) and the MPI time (the
 * MPI_* ranges of libstepscope-mpi in the step), and per function its
 * time inside steps.  As `report --ranks` does, a step's compute is step
 * minus MPI, and the rank with the most compute is the one the others
 * wait for in the collective.  The operator is the function whose time
 * in steps grew most on the straggler against the median of the other
 * ranks, among the functions that hold no MPI call (the step function and
 * its callers hold the wait, not the work); on a tie the outermost.
 *
 * The saving (docs/advise.md, "mpi"), over the steps every rank has, the
 * last one left out (it holds MPI_Finalize and the exit): the smaller of
 * the straggler's median compute minus the other ranks' median, and its
 * least compute in a step minus theirs (the median of their least); what
 * the step loses when the straggler's extra work goes; if that work is
 * spread over the n ranks instead, (n-1)/n of it (save_lo).  Preemptions
 * only add time, and on a busy machine make some rank late in many steps
 * by chance, which no balancing removes: noise inflates either estimate
 * now and then, rarely both.  The others' median wait per step (save_hi)
 * holds that noise too.
 *
 * Must never: call a process without a rank a rank, or judge one rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "ranks.h"
#include "util.h"

#define AM_STEPS 100000   /* step numbers kept per rank */

struct am_proc {
	uint64_t rank, pid;
	uint64_t *step_ns, *mpi_ns;  /* by step number */
	size_t nsteps;
};

struct am_fn {
	char *name;
	uint64_t *ns;                /* time in steps, by proc index */
	size_t cap;
	unsigned mindepth;
	int has_mpi;                 /* some call of it holds an MPI range */
};

struct am_span {
	uint64_t tid, begin, end;
};

struct am_state {
	struct ss_exporter ex;
	struct am_proc *p;
	size_t np, capp;
	int cur;                     /* index into p, -1: no rank */
	struct am_fn *fn;
	size_t nfn, capfn;
	size_t *slot;                /* open-addressed: index + 1 into fn */
	size_t nslot;
	struct am_span *mpi;         /* current process, by (tid, begin) */
	size_t nmpi, capmpi;
	char coll[64];               /* the MPI call with the most time */
	uint64_t coll_ns;
	struct { char name[64]; uint64_t ns; } calls[16];
	int oom;
};

static int am_grow_steps(struct am_proc *p, uint64_t step)
{
	return ss_ranks_grow_steps(&p->step_ns, &p->mpi_ns, &p->nsteps, step);
}

static void am_process(void *ctx, uint64_t pid, const char *name)
{
	struct am_state *S = ctx;
	unsigned long long rank;
	S->cur = -1;
	S->nmpi = 0;
	if (!name || sscanf(name, "rank %llu (", &rank) != 1)
		return;
	if (ss_grow((void **)&S->p, &S->capp, S->np, sizeof(*S->p), 8)) {
		S->oom = 1;
		return;
	}
	S->p[S->np] = (struct am_proc){ .rank = rank, .pid = pid };
	S->cur = (int)S->np++;
}

/* The function row of name, made when new; NULL out of memory. */
static struct am_fn *am_fn(struct am_state *S, const char *name)
{
	if (S->nfn * 2 >= S->nslot) {
		size_t ns = S->nslot ? S->nslot * 2 : 256;
		size_t *sl = calloc(ns, sizeof(*sl));
		if (!sl)
			return NULL;
		for (size_t i = 0; i < S->nfn; i++) {
			size_t h = ss_hash_str(S->fn[i].name) % ns;
			while (sl[h])
				h = (h + 1) % ns;
			sl[h] = i + 1;
		}
		free(S->slot);
		S->slot = sl;
		S->nslot = ns;
	}
	size_t h = ss_hash_str(name) % S->nslot;
	for (; S->slot[h]; h = (h + 1) % S->nslot)
		if (!strcmp(S->fn[S->slot[h] - 1].name, name))
			return &S->fn[S->slot[h] - 1];
	if (ss_grow((void **)&S->fn, &S->capfn, S->nfn, sizeof(*S->fn), 64))
		return NULL;
	struct am_fn *f = &S->fn[S->nfn];
	*f = (struct am_fn){ .name = strdup(name), .mindepth = ~0u };
	if (!f->name)
		return NULL;
	S->slot[h] = ++S->nfn;
	return f;
}

static int am_span_cmp(const struct am_span *a, uint64_t tid, uint64_t begin)
{
	if (a->tid != tid)
		return a->tid < tid ? -1 : 1;
	return a->begin < begin ? -1 : a->begin > begin;
}

/* An MPI range of the current process, kept sorted by (tid, begin):
 * ranges of a thread close in time order, so this inserts at the end. */
static void am_mpi_add(struct am_state *S, uint64_t tid, uint64_t b, uint64_t e)
{
	if (ss_grow((void **)&S->mpi, &S->capmpi, S->nmpi, sizeof(*S->mpi), 256)) {
		S->oom = 1;
		return;
	}
	size_t i = S->nmpi++;
	while (i > 0 && am_span_cmp(&S->mpi[i - 1], tid, b) > 0) {
		S->mpi[i] = S->mpi[i - 1];
		i--;
	}
	S->mpi[i] = (struct am_span){ tid, b, e };
}

/* Whether an MPI range of tid lies inside [b, e]. */
static int am_holds_mpi(const struct am_state *S, uint64_t tid, uint64_t b, uint64_t e)
{
	size_t lo = 0, hi = S->nmpi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (am_span_cmp(&S->mpi[mid], tid, b) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < S->nmpi && S->mpi[lo].tid == tid && S->mpi[lo].end <= e;
}

/* Time per MPI call name (its name up to the TAB of its args), but
 * MPI_Finalize: the last step holds it, and no step waits in it. */
static void am_call(struct am_state *S, const char *name, uint64_t dur)
{
	size_t len = strcspn(name, "\t");
	if (!strncmp(name, "MPI_Finalize", len))
		return;
	if (len >= sizeof(S->calls[0].name))
		len = sizeof(S->calls[0].name) - 1;
	for (size_t i = 0; i < 16; i++) {
		if (!S->calls[i].name[0]) {
			memcpy(S->calls[i].name, name, len);
			S->calls[i].name[len] = 0;
		}
		if (strlen(S->calls[i].name) == len && !strncmp(S->calls[i].name, name, len)) {
			S->calls[i].ns += dur;
			if (S->calls[i].ns > S->coll_ns) {
				S->coll_ns = S->calls[i].ns;
				snprintf(S->coll, sizeof(S->coll), "%s", S->calls[i].name);
			}
			return;
		}
	}
}

static void am_slice(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	struct am_state *S = ctx;
	(void)pid;
	if (S->cur < 0 || S->oom || !s->has_step || s->step >= AM_STEPS)
		return;
	struct am_proc *p = &S->p[S->cur];
	uint64_t dur = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
	if (s->cat == SS_SLICE_STEP) {
		if (am_grow_steps(p, s->step))
			S->oom = 1;
		else
			p->step_ns[s->step] += dur;
		return;
	}
	if (s->cat == SS_SLICE_RANGE && s->name && !strncmp(s->name, "MPI_", 4)) {
		if (am_grow_steps(p, s->step)) {
			S->oom = 1;
			return;
		}
		p->mpi_ns[s->step] += dur;
		am_mpi_add(S, tid, s->begin_ns, s->end_ns);
		am_call(S, s->name, dur);
		return;
	}
	if (s->cat != SS_SLICE_FUNCTION || !s->in_step || !s->name)
		return;
	struct am_fn *f = am_fn(S, s->name);
	size_t had = f ? f->cap : 0;
	if (!f || ss_grow((void **)&f->ns, &f->cap, (size_t)S->cur, sizeof(*f->ns), 8)) {
		S->oom = 1;
		return;
	}
	memset(f->ns + had, 0, (f->cap - had) * sizeof(*f->ns));
	f->ns[S->cur] += dur;
	if (s->depth < f->mindepth)
		f->mindepth = s->depth;
	if (!f->has_mpi && am_holds_mpi(S, tid, s->begin_ns, s->end_ns))
		f->has_mpi = 1;
}

/* The exporter's release: nothing, the state lives until the check's. */
static void am_ex_release(void *ctx)
{
	(void)ctx;
}

static void am_release(void *ctx)
{
	struct am_state *S = ctx;
	for (size_t i = 0; i < S->np; i++) {
		free(S->p[i].step_ns);
		free(S->p[i].mpi_ns);
	}
	for (size_t i = 0; i < S->nfn; i++) {
		free(S->fn[i].name);
		free(S->fn[i].ns);
	}
	free(S->p);
	free(S->fn);
	free(S->slot);
	free(S->mpi);
	free(S);
}

static struct ss_exporter *am_exporter(const char *dir, void **state)
{
	struct am_state *S = calloc(1, sizeof(*S));
	(void)dir;
	if (!S)
		return NULL;
	S->cur = -1;
	S->ex.ctx = S;
	S->ex.process = am_process;
	S->ex.slice = am_slice;
	S->ex.release = am_ex_release;
	ss_exporter_nops(&S->ex);
	*state = S;
	return &S->ex;
}

static int am_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts v); 0 when n is 0. */
static uint64_t am_median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), am_cmp_u64);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

static uint64_t am_compute(const struct am_proc *p, size_t s)
{
	return p->step_ns[s] > p->mpi_ns[s] ? p->step_ns[s] - p->mpi_ns[s] : 0;
}

/* The time of f in the steps of p, 0 when p never called it (per step:
 * divided by p's steps, the last included). */
static uint64_t am_fn_ns(const struct am_fn *f, size_t p)
{
	return p < f->cap && f->ns ? f->ns[p] : 0;
}

static int am_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
		    char *why, size_t whylen)
{
	struct am_state *S = state;
	size_t nsteps = SIZE_MAX, np = S->np;
	char b[8][32];
	(void)run;

	if (S->oom)
		return -1;
	if (np < 2) {
		snprintf(why, whylen, np ? "the run has one MPI rank" :
			 "the run has no MPI ranks (docs/mpi.md)");
		return 1;
	}
	for (size_t i = 0; i < np; i++)
		nsteps = S->p[i].nsteps < nsteps ? S->p[i].nsteps : nsteps;
	if (nsteps > 2)
		nsteps--; /* the last step holds MPI_Finalize and the exit */
	if (!nsteps || nsteps == SIZE_MAX) {
		snprintf(why, whylen, "the ranks have no recorded steps in common");
		return 1;
	}
	uint64_t *wait = calloc(nsteps, sizeof(*wait));
	uint64_t *len = calloc(nsteps, sizeof(*len)), *cv = calloc(np, sizeof(*cv));
	uint64_t *own = calloc(nsteps, sizeof(*own)), *rest = calloc(nsteps * np, sizeof(*rest));
	size_t *late = calloc(np, sizeof(*late));
	int rc = -1;
	if (!wait || !len || !cv || !own || !rest || !late)
		goto out;
	for (size_t s = 0; s < nsteps; s++) {
		size_t st = 0;
		uint64_t top = 0;
		for (size_t i = 0; i < np; i++) {
			cv[i] = am_compute(&S->p[i], s);
			if (cv[i] > cv[st])
				st = i;
			top = S->p[i].step_ns[s] > top ? S->p[i].step_ns[s] : top;
		}
		late[st]++;
		len[s] = top;
		uint64_t mx = cv[st];
		cv[st] = cv[np - 1];
		wait[s] = mx - am_median(cv, np - 1);
	}
	size_t st = 0;
	for (size_t i = 1; i < np; i++)
		st = late[i] > late[st] ? i : st;
	/* the straggler's compute, and the others': medians, and the least
	 * of each rank (its work without preemptions: the others' median) */
	size_t nown = 0, nrest = 0;
	uint64_t m_own = UINT64_MAX;
	for (size_t i = 0, n = 0; i < np; i++) {
		uint64_t m = UINT64_MAX;
		for (size_t s = 0; s < nsteps; s++) {
			uint64_t c = am_compute(&S->p[i], s);
			m = c < m ? c : m;
			if (i == st)
				own[nown++] = c;
			else
				rest[nrest++] = c;
		}
		if (i == st)
			m_own = m;
		else
			cv[n++] = m;
	}
	uint64_t m_rest = am_median(cv, np - 1);
	uint64_t c_own = am_median(own, nown), c_rest = am_median(rest, nrest);
	uint64_t waited = am_median(wait, nsteps), step = am_median(len, nsteps);
	/* the straggler's lasting excess: preemptions only add, and on a busy
	 * machine make some rank the last in every step by chance.  The
	 * smaller of two estimates, each of which noise inflates now and
	 * then but rarely both: the difference of the medians, and of the
	 * least (a rank's least compute is its work without preemptions,
	 * when it had one clean step) */
	uint64_t save = m_own > m_rest ? m_own - m_rest : 0;
	uint64_t med = c_own > c_rest ? c_own - c_rest : 0;
	save = med < save ? med : save;
	uint64_t lo = save / np * (np - 1);
	rc = 0;
	if (2 * late[st] < nsteps + 1 || (double)save < 0.05 * (double)step)
		goto out;
	/* the operator: the MPI-free function that grew most on st */
	const struct am_fn *op = NULL;
	int64_t op_gap = 0;
	uint64_t op_own = 0, op_rest = 0;
	for (size_t k = 0; k < S->nfn; k++) {
		const struct am_fn *f = &S->fn[k];
		if (f->has_mpi)
			continue;
		size_t n = 0;
		for (size_t i = 0; i < np; i++)
			if (i != st)
				cv[n++] = am_fn_ns(f, i) / S->p[i].nsteps;
		uint64_t r = am_median(cv, n), o = am_fn_ns(f, st) / S->p[st].nsteps;
		int64_t gap = (int64_t)o - (int64_t)r;
		if (!op || gap > op_gap || (gap == op_gap && f->mindepth < op->mindepth)) {
			op = f;
			op_gap = gap;
			op_own = o;
			op_rest = r;
		}
	}
	struct ss_adv_finding *fd = ss_adv_add(out, "mpi");
	if (!fd) {
		rc = -1;
		goto out;
	}
	fd->save_ns = (double)save;
	fd->save_lo = (double)lo;
	fd->save_hi = (double)(waited > save ? waited : save);
	const char *coll = S->coll[0] ? S->coll : "MPI";
	snprintf(fd->title, sizeof(fd->title),
		 "rank %llu is the straggler: the other ranks wait %s per step in %s",
		 (unsigned long long)S->p[st].rank, ss_agg_fmt_time(waited, b[0], 32), coll);
	int w = snprintf(fd->evidence, sizeof(fd->evidence),
		 "%zu ranks, %zu steps compared (the last left out): rank %llu had the most "
		 "compute (step minus MPI time) in %zu of them; its compute %s per step "
		 "(median; least %s) against %s on the other ranks (least %s), who wait "
		 "for it in %s (median step %s).",
		 np, nsteps, (unsigned long long)S->p[st].rank, late[st],
		 ss_agg_fmt_time(c_own, b[1], 32), ss_agg_fmt_time(m_own, b[5], 32),
		 ss_agg_fmt_time(c_rest, b[2], 32), ss_agg_fmt_time(m_rest, b[6], 32), coll,
		 ss_agg_fmt_time(step, b[3], 32));
	if (op && op_gap > 0 && w > 0 && (size_t)w < sizeof(fd->evidence)) {
		uint64_t per = (uint64_t)op_gap;
		snprintf(fd->evidence + w, sizeof(fd->evidence) - (size_t)w,
			 " %s takes %s per step on rank %llu against %s on the others "
			 "(+%s, %.0f%% of the gap).", op->name,
			 ss_agg_fmt_time(op_own, b[4], 32), (unsigned long long)S->p[st].rank,
			 ss_agg_fmt_time(op_rest, b[5], 32), ss_agg_fmt_time(per, b[6], 32),
			 save ? 100.0 * (double)per / (double)save : 0.0);
		snprintf(fd->funcs[fd->nfuncs++], sizeof(fd->funcs[0]), "%s", op->name);
	}
	snprintf(fd->advice, sizeof(fd->advice),
		 "give rank %llu the same work as the others in %s: split the batch or "
		 "the model evenly across ranks, move work that only rank %llu does "
		 "(logging, evaluation, checkpoints) out of the step or onto every rank; "
		 "check the rank's CPU is not shared with other work",
		 (unsigned long long)S->p[st].rank, op && op_gap > 0 ? op->name : "its step",
		 (unsigned long long)S->p[st].rank);
	snprintf(fd->how, sizeof(fd->how),
		 "the smaller of: the straggler's median compute minus the other ranks', "
		 "its least minus theirs (%zu steps); its work spread over all n ranks: "
		 "x (n-1)/n; the most: the others' median wait",
		 nsteps);
out:
	free(wait);
	free(len);
	free(cv);
	free(own);
	free(rest);
	free(late);
	return rc;
}

const struct ss_adv_check ss_adv_check_mpi = {
	.name = "mpi",
	.looks_at = "MPI ranks: each step's compute (step minus MPI time) per rank",
	.exporter = am_exporter,
	.judge = am_judge,
	.release = am_release,
};
