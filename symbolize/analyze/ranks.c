/*
 * ranks.c - `stepscope report DIR --ranks` and the per-rank step chart of
 * the HTML report: the MPI ranks of a run compared step by step.
 *
 * For every rank (a trace with an SS_META_RANK record) and step: the step
 * time (its ProfilerStep slice), the MPI time (the MPI_* ranges inside the
 * step, recorded by libstepscope-mpi) and the compute time (the rest).  In
 * data-parallel training the collectives make every rank's step equally
 * long, so the straggler of a step is the rank with the most compute (the
 * others wait for it inside MPI).  The slowest rank overall has the most
 * compute summed over the steps.  Functions and ranges: total time per
 * rank, min/avg/max across ranks (load imbalance).
 * Never: call a rank without a rank record a rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "outfile.h"
#include "ranks.h"
#include "run.h"
#include "svg.h"

#define SS_RANKS_FNS 8192     /* distinct function names kept */
#define SS_RANKS_STEPS 100000 /* step numbers kept */

struct ss_ranks_proc {
	uint64_t rank, pid;
	const char *host;
	size_t run_i;
	uint64_t *step_ns, *mpi_ns; /* by step number */
	size_t nsteps;              /* 1 + highest step seen */
	uint64_t compute_ns, straggles;
};

struct ss_ranks_fn {
	char *name;
	uint64_t *total_ns, *calls;  /* by proc */
};

struct ss_ranks {
	struct ss_ranks_proc *p;
	size_t np, cur;
	struct ss_ranks_fn *fn;      /* open-addressed, SS_RANKS_FNS slots */
	struct ss_sym *sym;          /* of the run; freed after it */
	size_t nfn;
	int oom;
};

int ss_ranks_grow_steps(uint64_t **step_ns, uint64_t **mpi_ns, size_t *nsteps, uint64_t step)
{
	size_t n = *nsteps, want = (size_t)step + 1;
	uint64_t *a, *b;
	if (want <= n)
		return 0;
	a = realloc(*step_ns, want * sizeof(*a));
	if (!a)
		return -1;
	*step_ns = a;
	b = realloc(*mpi_ns, want * sizeof(*b));
	if (!b)
		return -1;
	*mpi_ns = b;
	memset(a + n, 0, (want - n) * sizeof(*a));
	memset(b + n, 0, (want - n) * sizeof(*b));
	*nsteps = want;
	return 0;
}

static int ss_ranks_grow(struct ss_ranks_proc *p, uint64_t step)
{
	return ss_ranks_grow_steps(&p->step_ns, &p->mpi_ns, &p->nsteps, step);
}

static struct ss_ranks_fn *ss_ranks_fn(struct ss_ranks *R, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	for (size_t i = 0; i < SS_RANKS_FNS; i++) {
		struct ss_ranks_fn *f = &R->fn[(h + i) % SS_RANKS_FNS];
		if (f->name && !strcmp(f->name, name))
			return f;
		if (f->name)
			continue;
		if (R->nfn + 1 >= SS_RANKS_FNS)
			return NULL;
		f->name = strdup(name);
		f->total_ns = calloc(R->np, sizeof(uint64_t));
		f->calls = calloc(R->np, sizeof(uint64_t));
		if (!f->name || !f->total_ns || !f->calls) {
			R->oom = 1;
			return NULL;
		}
		R->nfn++;
		return f;
	}
	return NULL;
}

static void ss_ranks_slice(void *ctx, uint64_t tid, const struct ss_slice *s)
{
	struct ss_ranks *R = ctx;
	struct ss_ranks_proc *p = &R->p[R->cur];
	uint64_t dur = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
	struct ss_ranks_fn *f;

	if (s->cat == SS_SLICE_STEP) {
		if (s->has_step && s->step < SS_RANKS_STEPS && !ss_ranks_grow(p, s->step))
			p->step_ns[s->step] += dur;
		return;
	}
	if (s->cat != SS_SLICE_FUNCTION && s->cat != SS_SLICE_RANGE)
		return;
	if (s->cat == SS_SLICE_RANGE && s->name && !strncmp(s->name, "MPI_", 4) &&
	    s->has_step && s->step < SS_RANKS_STEPS && !ss_ranks_grow(p, s->step))
		p->mpi_ns[s->step] += dur;
	if (s->name && (f = ss_ranks_fn(R, s->name))) {
		f->total_ns[R->cur] += dur;
		f->calls[R->cur]++;
	}
}

static int ss_ranks_cmp_proc(const void *a, const void *b)
{
	const struct ss_ranks_proc *x = a, *y = b;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int ss_ranks_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void ss_ranks_free(struct ss_ranks *R)
{
	for (size_t i = 0; i < R->np; i++) {
		free(R->p[i].step_ns);
		free(R->p[i].mpi_ns);
	}
	for (size_t i = 0; R->fn && i < SS_RANKS_FNS; i++) {
		free(R->fn[i].name);
		free(R->fn[i].total_ns);
		free(R->fn[i].calls);
	}
	free(R->p);
	free(R->fn);
}

/* Release the run, then its symbolizer. */
static void ss_ranks_release(struct ss_ranks *R, struct ss_run *run)
{
	ss_ranks_free(R);
	ss_run_release(run);
	if (R->sym)
		ss_sym_free(R->sym);
}

/* Load the ranks of dir; 0, or the exit status with the reason printed. */
static int ss_ranks_load(struct ss_ranks *R, struct ss_run *run, const char *dir,
			 const char *backend, int quiet)
{
	char err[2048];
	int rc;

	memset(R, 0, sizeof(*R));
	memset(run, 0, sizeof(*run));
	R->sym = ss_run_sym(dir, backend, quiet, err, sizeof(err));
	if (!R->sym) {
		fprintf(stderr, "stepscope: %s\n", err);
		return 2;
	}
	rc = ss_run_open(run, dir, R->sym, 0, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "stepscope: %s\n", err);
		return rc;
	}
	R->p = calloc(run->n ? run->n : 1, sizeof(*R->p));
	R->fn = calloc(SS_RANKS_FNS, sizeof(*R->fn));
	if (!R->p || !R->fn) {
		fprintf(stderr, "stepscope: out of memory\n");
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < run->n; i++) {
		struct ss_meta_rank rk;
		if (!ss_ranks_info(run->rs[i], &rk))
			continue;
		R->p[R->np].rank = rk.rank;
		R->p[R->np].pid = run->rs[i]->hdr.pid;
		R->p[R->np].host = run->rs[i]->hdr.hostname;
		R->p[R->np].run_i = i;
		R->np++;
	}
	if (!R->np) {
		if (quiet < 2)
			fprintf(stderr, "stepscope: %s: no MPI ranks in this run (record with "
			"'mpirun ... stepscope record -o RUN -- PROG'; docs/mpi.md)\n", dir);
		rc = 2;
		goto out;
	}
	qsort(R->p, R->np, sizeof(*R->p), ss_ranks_cmp_proc);
	for (R->cur = 0; R->cur < R->np; R->cur++)
		ss_run_feed(run, R->p[R->cur].run_i, NULL, 0, ss_ranks_slice, R);
	if (R->oom) {
		fprintf(stderr, "stepscope: out of memory\n");
		rc = 1;
	}
out:
	return rc;
}

/* Steps every rank has (1 + the highest such step number). */
static size_t ss_ranks_nsteps(const struct ss_ranks *R)
{
	size_t n = SIZE_MAX;
	for (size_t i = 0; i < R->np; i++)
		if (R->p[i].nsteps < n)
			n = R->p[i].nsteps;
	return n == SIZE_MAX ? 0 : n;
}

static uint64_t ss_ranks_compute(const struct ss_ranks_proc *p, size_t s)
{
	return p->step_ns[s] > p->mpi_ns[s] ? p->step_ns[s] - p->mpi_ns[s] : 0;
}

/* The straggler of step s (index into R->p) and the median compute. */
static size_t ss_ranks_straggler(const struct ss_ranks *R, size_t s, uint64_t *median)
{
	uint64_t v[1024];
	size_t best = 0, n = 0;
	for (size_t i = 0; i < R->np; i++) {
		uint64_t c = ss_ranks_compute(&R->p[i], s);
		if (c > ss_ranks_compute(&R->p[best], s))
			best = i;
		if (n < 1024)
			v[n++] = c;
	}
	qsort(v, n, sizeof(v[0]), ss_ranks_cmp_u64);
	*median = n ? v[n / 2 - (n % 2 == 0)] : 0;
	return best;
}

static void ss_ranks_text(FILE *f, struct ss_ranks *R, size_t nsteps, int limit)
{
	char b[6][32];
	size_t hosts = 0, slow = 0;

	for (size_t i = 0; i < R->np; i++) {
		size_t j;
		for (j = 0; j < i && strcmp(R->p[j].host, R->p[i].host); j++)
			;
		hosts += j == i;
	}
	fprintf(f, "%zu ranks on %zu host%s, %zu step%s\n\n", R->np, hosts, hosts == 1 ? "" : "s",
		nsteps, nsteps == 1 ? "" : "s");
	fprintf(f, "%6s %6s  %-16s %12s %12s %12s\n", "Step", "Rank", "Host", "Step time",
		"Compute", "MPI");
	for (size_t s = 0; s < nsteps; s++) {
		uint64_t med;
		size_t st = ss_ranks_straggler(R, s, &med);
		for (size_t i = 0; i < R->np; i++) {
			const struct ss_ranks_proc *p = &R->p[i];
			fprintf(f, "%6zu %6llu  %-16.16s %12s %12s %12s%s\n", s,
				(unsigned long long)p->rank, p->host,
				ss_agg_fmt_time(p->step_ns[s], b[0], 32),
				ss_agg_fmt_time(ss_ranks_compute(p, s), b[1], 32),
				ss_agg_fmt_time(p->mpi_ns[s], b[2], 32),
				i == st && R->np > 1 ? "  <- straggler" : "");
		}
	}
	fprintf(f, "\nStragglers (the rank with the most compute in the step; the others wait in MPI):\n");
	for (size_t s = 0; s < nsteps; s++) {
		uint64_t med;
		size_t st = ss_ranks_straggler(R, s, &med);
		uint64_t c = ss_ranks_compute(&R->p[st], s);
		R->p[st].straggles++;
		fprintf(f, "  step %zu: rank %llu (compute %s, median %s, +%s)\n", s,
			(unsigned long long)R->p[st].rank, ss_agg_fmt_time(c, b[0], 32),
			ss_agg_fmt_time(med, b[1], 32), ss_agg_fmt_time(c - med, b[2], 32));
	}
	for (size_t i = 0; i < R->np; i++) {
		R->p[i].compute_ns = 0;
		for (size_t s = 0; s < nsteps; s++)
			R->p[i].compute_ns += ss_ranks_compute(&R->p[i], s);
		if (R->p[i].compute_ns > R->p[slow].compute_ns)
			slow = i;
	}
	if (nsteps)
		fprintf(f, "slowest rank: %llu (straggler in %llu of %zu steps, compute %s in all)\n",
			(unsigned long long)R->p[slow].rank,
			(unsigned long long)R->p[slow].straggles, nsteps,
			ss_agg_fmt_time(R->p[slow].compute_ns, b[0], 32));

	/* functions across ranks, by their largest per-rank total */
	struct ss_ranks_fn **fs = calloc(R->nfn + 1, sizeof(*fs));
	size_t nf = 0;
	if (!fs)
		return;
	for (size_t i = 0; i < SS_RANKS_FNS; i++)
		if (R->fn[i].name)
			fs[nf++] = &R->fn[i];
	for (size_t i = 1; i < nf; i++) { /* insertion sort by max total */
		struct ss_ranks_fn *x = fs[i];
		uint64_t mx = 0, my;
		size_t j;
		for (size_t r = 0; r < R->np; r++)
			mx = x->total_ns[r] > mx ? x->total_ns[r] : mx;
		for (j = i; j > 0; j--) {
			my = 0;
			for (size_t r = 0; r < R->np; r++)
				my = fs[j - 1]->total_ns[r] > my ? fs[j - 1]->total_ns[r] : my;
			if (my >= mx)
				break;
			fs[j] = fs[j - 1];
		}
		fs[j] = x;
	}
	fprintf(f, "\nAcross ranks (total time per rank, calls included):\n");
	fprintf(f, "%-40s %12s %12s %12s %8s %10s\n", "Name", "Min", "Avg", "Max", "Max rank",
		"Calls/rank");
	for (size_t i = 0; i < nf && (!limit || i < (size_t)limit); i++) {
		uint64_t mn = UINT64_MAX, mx = 0, sum = 0, calls = 0;
		size_t at = 0;
		for (size_t r = 0; r < R->np; r++) {
			uint64_t v = fs[i]->total_ns[r];
			mn = v < mn ? v : mn;
			if (v > mx) {
				mx = v;
				at = r;
			}
			sum += v;
			calls += fs[i]->calls[r];
		}
		fprintf(f, "%-40.40s %12s %12s %12s %8llu %10.1f\n", fs[i]->name,
			ss_agg_fmt_time(mn, b[0], 32), ss_agg_fmt_time(sum / R->np, b[1], 32),
			ss_agg_fmt_time(mx, b[2], 32), (unsigned long long)R->p[at].rank,
			(double)calls / (double)R->np);
	}
	if (limit && nf > (size_t)limit)
		fprintf(f, "%zu more row%s (--limit 0 shows all)\n", nf - (size_t)limit,
			nf - (size_t)limit == 1 ? "" : "s");
	free(fs);
}

int ss_ranks_report(const char *dir, const char *backend, int quiet, const char *out,
		    int limit)
{
	struct ss_ranks R;
	struct ss_run run;
	struct ss_out o = { 0 };
	char err[4200];
	int rc = ss_ranks_load(&R, &run, dir, backend, quiet);

	if (!rc && ss_out_open(&o, out ? out : "-", err, sizeof(err))) {
		fprintf(stderr, "stepscope: %s\n", err);
		rc = 2;
	}
	if (!rc) {
		ss_ranks_text(o.f, &R, ss_ranks_nsteps(&R), limit);
		if (ss_out_commit(&o, 0, err, sizeof(err))) {
			fprintf(stderr, "stepscope: %s\n", err);
			rc = 1;
		}
	}
	ss_out_abort(&o);
	ss_ranks_release(&R, &run);
	return rc;
}

void ss_ranks_html(FILE *f, const char *dir, const char *backend)
{
	struct ss_ranks R;
	struct ss_run run;
	size_t nsteps, shown, barw = 8, gap = 10, x;
	uint64_t top = 1;
	char b[3][32];

	/* no ranks: nothing (quiet 2: not even the message) */
	if (ss_ranks_load(&R, &run, dir, backend, 2)) {
		ss_ranks_release(&R, &run);
		return;
	}
	nsteps = ss_ranks_nsteps(&R);
	shown = nsteps < 100 ? nsteps : 100;
	for (size_t s = 0; s < shown; s++)
		for (size_t i = 0; i < R.np; i++)
			top = R.p[i].step_ns[s] > top ? R.p[i].step_ns[s] : top;
	size_t width = 60 + shown * (R.np * barw + gap), height = 200;
	fprintf(f, "<h2>Ranks</h2>\n<p class=\"muted\">Each step, one bar per rank "
		"(rank 0 first): compute dark, MPI light; the straggler (most compute) "
		"outlined in red. Highest step: %s. Table: <code>stepscope report DIR --ranks</code></p>\n",
		ss_agg_fmt_time(top, b[0], 32));
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" height=\"%zu\" "
		"font-family=\"sans-serif\" font-size=\"10\">\n", width, height + 20);
	x = 50;
	for (size_t s = 0; s < shown; s++) {
		uint64_t med;
		size_t st = ss_ranks_straggler(&R, s, &med);
		for (size_t i = 0; i < R.np; i++) {
			const struct ss_ranks_proc *p = &R.p[i];
			double hc = (double)ss_ranks_compute(p, s) * height / (double)top;
			double hm = (double)p->mpi_ns[s] * height / (double)top;
			fprintf(f, "<g><title>step %zu, rank %llu (%s): step %s, compute %s, MPI %s"
				"</title><rect x=\"%zu\" y=\"%.1f\" width=\"%zu\" height=\"%.1f\" "
				"fill=\"#3465a4\"%s/><rect x=\"%zu\" y=\"%.1f\" width=\"%zu\" "
				"height=\"%.1f\" fill=\"#9fc1e8\"/></g>\n", s,
				(unsigned long long)p->rank, p->host,
				ss_agg_fmt_time(p->step_ns[s], b[0], 32),
				ss_agg_fmt_time(ss_ranks_compute(p, s), b[1], 32),
				ss_agg_fmt_time(p->mpi_ns[s], b[2], 32), x, height - hc, barw - 1, hc,
				i == st && R.np > 1 ? " stroke=\"#c00\" stroke-width=\"1.5\"" : "",
				x, height - hc - hm, barw - 1, hm);
			x += barw;
		}
		fprintf(f, "<text x=\"%zu\" y=\"%zu\">%zu</text>\n", x - R.np * barw, height + 14, s);
		x += gap;
	}
	fprintf(f, "</svg>\n");
	ss_ranks_release(&R, &run);
}
