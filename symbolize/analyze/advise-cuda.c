/*
 * advise-cuda.c - the "cuda" check of `stepscope advise`: the GPU idle
 * between kernels while the host makes a round trip to it (a synchronize
 * after each of many small kernels), and host-side launch overhead.
 *
 * Design: an exporter walked with the core's.  A process's GPU activity
 * comes before its slices (run.c): it keeps the device's busy intervals
 * (kernels, copies; merged) and the CUDA API calls of each thread
 * (waits: a name with "Synchronize", or a copy or memset not "Async", as
 * the GPU wait category; launches: a name with "Launch").
 * Function slices claim the waits and launch calls inside them (the
 * innermost one wins: the function that waits, or launches).  A step
 * slice, given after every other slice of its thread, then sums for the
 * step:
 *   S  its length        G  the union of device busy time in it
 *   W  its thread's time in calls that wait, when they did (ac_waited)
 *   L  its thread's time in launch calls, and how many
 * With one synchronize per step the host queues the step's work and the
 * device runs it while the host goes on: the step takes max(S - W, G)
 * (the host's own time, or the device's, whichever is longer).
 *
 * Findings (docs/advise.md, "cuda"), medians over the steps:
 *   round trips: 2 or more waits per step; saving
 *     S - max(S - W, G);
 *   launch overhead: launch calls longer than the kernels they start and
 *     the host, not the device, the longer one once the waits are gone;
 *     with X the host time of the function that made the most launches
 *     (its calls in steps less their waits, per step; at least L),
 *     saving max(S - W, G) - max(S - W - X + L/n, G): its loop goes with
 *     every launch but one (fused kernels or one CUDA graph launch); the
 *     low end takes X = L, the launch calls alone.
 *
 * Must never: judge a run without GPU activity (it says so instead).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "util.h"

struct ac_span {
	uint64_t begin, end;
};

/* A kernel: its launch's thread and start, its time on the device. */
struct ac_kern {
	uint64_t tid, begin, dev_ns;
};

struct ac_api {
	uint64_t tid, begin, end;
	int sync;                    /* 1 a wait, 0 a launch */
	size_t fn;                   /* sync: index + 1 into fns, 0 none */
	unsigned depth;              /* of the claiming slice + 1 */
};

/* One recorded step. */
struct ac_step {
	uint64_t len, gpu, wait, launch;
	size_t nsync, nlaunch, nkernel;
	size_t ncalls;               /* wait calls, waited or not */
	uint64_t kernel_ns;          /* device time of kernels launched in it */
};

/* A host function around CUDA calls: the waits and launches it made
 * itself (it is their innermost function), and the time of its calls
 * in steps that launched something. */
struct ac_fn {
	char *name;
	uint64_t wait_ns, launch_ns, incl_ns;
	size_t calls, launches;
};

struct ac_state {
	struct ss_exporter ex;
	struct ac_span *busy;        /* current process, merged */
	size_t nbusy, capbusy;
	struct ac_api *api;          /* current process, by (tid, begin) */
	size_t napi, capapi;
	struct ac_kern *kern;        /* current process, by (tid, begin) */
	size_t nkern, capkern;
	struct ac_step *steps;
	size_t nsteps, capsteps;
	struct ac_fn *fns;
	size_t nfns, capfns;
	struct { char name[64]; uint64_t n; } wn[16]; /* waits by name */
	struct { char name[64]; uint64_t n; } kn[16]; /* kernels by name */
	int any, oom;
};

static int ac_cmp_span(const void *x, const void *y)
{
	const struct ac_span *a = x, *b = y;
	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

static int ac_cmp_api(const void *x, const void *y)
{
	const struct ac_api *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

static int ac_cmp_kern(const void *x, const void *y)
{
	const struct ac_kern *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

/* A new process: nothing of the last one's GPU activity is its (gpu is
 * only called for a process that has some). */
static void ac_process(void *ctx, uint64_t pid, const char *name)
{
	struct ac_state *S = ctx;
	(void)pid;
	(void)name;
	S->nbusy = S->napi = S->nkern = 0;
}

/* A CUDA call that waits for the device: a synchronize, or a copy or
 * memset that is not Async (the GPU wait category of advise-split.c). */
static int ac_is_wait(const char *name)
{
	if (!name)
		return 0;
	if (strstr(name, "Synchronize"))
		return 1;
	return (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cudaMemset", 10) ||
		!strncmp(name, "cuMemcpy", 8) || !strncmp(name, "cuMemset", 8)) &&
	       !strstr(name, "Async");
}

static void ac_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g)
{
	struct ac_state *S = ctx;
	(void)pid;
	S->nbusy = S->napi = S->nkern = 0;
	for (size_t i = 0; i < g->n && !S->oom; i++) {
		const struct ss_gpu_op *o = &g->ops[i];
		if (o->type == SS_GPU_API) {
			int sync = ac_is_wait(o->name);
			if (!sync && !(o->name && strstr(o->name, "Launch")))
				continue;
			if (ss_grow((void **)&S->api, &S->capapi, S->napi, sizeof(*S->api), 256)) {
				S->oom = 1;
				break;
			}
			S->api[S->napi++] = (struct ac_api){ o->tid, o->start_ns, o->end_ns,
							     sync, 0, 0 };
			for (size_t k = 0; sync && k < 16; k++) {
				if (!S->wn[k].name[0])
					snprintf(S->wn[k].name, sizeof(S->wn[k].name), "%s", o->name);
				if (!strncmp(S->wn[k].name, o->name, sizeof(S->wn[k].name) - 1)) {
					S->wn[k].n++;
					break;
				}
			}
			continue;
		}
		S->any = 1;
		if (ss_grow((void **)&S->busy, &S->capbusy, S->nbusy, sizeof(*S->busy), 256)) {
			S->oom = 1;
			break;
		}
		S->busy[S->nbusy++] = (struct ac_span){ o->start_ns, o->end_ns };
		const struct ss_gpu_op *a = o->type == SS_GPU_KERNEL
			? ss_gpu_launch(g, o->correlation) : NULL;
		if (!a)
			continue;
		if (ss_grow((void **)&S->kern, &S->capkern, S->nkern, sizeof(*S->kern), 256)) {
			S->oom = 1;
			break;
		}
		S->kern[S->nkern++] = (struct ac_kern){ a->tid, a->start_ns,
							o->end_ns - o->start_ns };
		for (size_t k = 0; o->name && k < 16; k++) {
			if (!S->kn[k].name[0])
				snprintf(S->kn[k].name, sizeof(S->kn[k].name), "%s", o->name);
			if (!strncmp(S->kn[k].name, o->name, sizeof(S->kn[k].name) - 1)) {
				S->kn[k].n++;
				break;
			}
		}
	}
	qsort(S->busy, S->nbusy, sizeof(*S->busy), ac_cmp_span);
	size_t m = 0;
	for (size_t i = 0; i < S->nbusy; i++) {
		if (m && S->busy[i].begin <= S->busy[m - 1].end) {
			if (S->busy[i].end > S->busy[m - 1].end)
				S->busy[m - 1].end = S->busy[i].end;
		} else {
			S->busy[m++] = S->busy[i];
		}
	}
	S->nbusy = m;
	qsort(S->api, S->napi, sizeof(*S->api), ac_cmp_api);
	qsort(S->kern, S->nkern, sizeof(*S->kern), ac_cmp_kern);
}

/* First API call of tid at or after ns. */
static size_t ac_lower(const struct ac_state *S, uint64_t tid, uint64_t ns)
{
	struct ac_api key = { tid, ns, 0, 0, 0, 0 };
	size_t lo = 0, hi = S->napi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ac_cmp_api(&S->api[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Length of [b, e) the device was busy. */
static uint64_t ac_covered(const struct ac_state *S, uint64_t b, uint64_t e)
{
	uint64_t sum = 0;
	size_t lo = 0, hi = S->nbusy;
	while (lo < hi) { /* first span ending after b */
		size_t mid = lo + (hi - lo) / 2;
		if (S->busy[mid].end <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < S->nbusy && S->busy[i].begin < e; i++) {
		uint64_t x = S->busy[i].begin > b ? S->busy[i].begin : b;
		uint64_t y = S->busy[i].end < e ? S->busy[i].end : e;
		sum += y > x ? y - x : 0;
	}
	return sum;
}

static size_t ac_fn(struct ac_state *S, const char *name)
{
	for (size_t i = 0; i < S->nfns; i++)
		if (!strcmp(S->fns[i].name, name))
			return i + 1;
	if (ss_grow((void **)&S->fns, &S->capfns, S->nfns, sizeof(*S->fns), 16))
		return 0;
	S->fns[S->nfns] = (struct ac_fn){ .name = strdup(name) };
	if (!S->fns[S->nfns].name)
		return 0;
	return ++S->nfns;
}

/* Whether wait call a waited for the device: the device worked during
 * the call (work queued before it, which may start after it began) and
 * had finished that work when it returned.  A call during which the
 * device did nothing, or that returned with the work still running (a
 * memset queued behind a copy), waited for nothing: its time is the
 * host's. */
static int ac_waited(const struct ac_state *S, const struct ac_api *a)
{
	size_t lo = 0, hi = S->nbusy;
	while (lo < hi) { /* first span ending after a's start */
		size_t mid = lo + (hi - lo) / 2;
		if (S->busy[mid].end <= a->begin)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < S->nbusy && S->busy[lo].begin < a->end && S->busy[lo].end <= a->end;
}

static void ac_step(struct ac_state *S, uint64_t tid, const struct ss_slice *s)
{
	struct ac_step st = { .len = s->end_ns - s->begin_ns };
	st.gpu = ac_covered(S, s->begin_ns, s->end_ns);
	for (size_t i = ac_lower(S, tid, s->begin_ns);
	     i < S->napi && S->api[i].tid == tid && S->api[i].begin < s->end_ns; i++) {
		const struct ac_api *a = &S->api[i];
		uint64_t e = a->end < s->end_ns ? a->end : s->end_ns;
		uint64_t d = e > a->begin ? e - a->begin : 0;
		if (a->sync) {
			st.ncalls++;
			if (!ac_waited(S, a))
				continue;
			st.wait += d;
			st.nsync++;
			if (a->fn) {
				S->fns[a->fn - 1].wait_ns += d;
				S->fns[a->fn - 1].calls++;
			}
		} else {
			st.launch += d;
			st.nlaunch++;
			if (a->fn) {
				S->fns[a->fn - 1].launch_ns += d;
				S->fns[a->fn - 1].launches++;
			}
		}
	}
	size_t lo = 0, hi = S->nkern;
	struct ac_kern key = { tid, s->begin_ns, 0 };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ac_cmp_kern(&S->kern[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < S->nkern && S->kern[lo].tid == tid && S->kern[lo].begin < s->end_ns; lo++) {
		st.nkernel++;
		st.kernel_ns += S->kern[lo].dev_ns;
	}
	if (st.wait > st.len)
		st.wait = st.len;
	if (ss_grow((void **)&S->steps, &S->capsteps, S->nsteps, sizeof(*S->steps), 64)) {
		S->oom = 1;
		return;
	}
	S->steps[S->nsteps++] = st;
}

static void ac_slice(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	struct ac_state *S = ctx;
	(void)pid;
	if (S->oom || (!S->napi && !S->nbusy))
		return;
	if (s->cat == SS_SLICE_STEP) {
		ac_step(S, tid, s);
		return;
	}
	if (s->cat != SS_SLICE_FUNCTION || !s->name)
		return;
	size_t fn = 0;
	int launched = 0;
	for (size_t i = ac_lower(S, tid, s->begin_ns);
	     i < S->napi && S->api[i].tid == tid && S->api[i].begin <= s->end_ns; i++) {
		struct ac_api *a = &S->api[i];
		if (a->depth >= s->depth + 1)
			continue;
		if (!fn && !(fn = ac_fn(S, s->name))) {
			S->oom = 1;
			return;
		}
		a->fn = fn;
		a->depth = s->depth + 1;
		launched |= !a->sync;
	}
	if (launched && s->in_step)
		S->fns[fn - 1].incl_ns += s->end_ns - s->begin_ns;
}

static void ac_ex_release(void *ctx)
{
	(void)ctx; /* the state lives until the check's release */
}

static void ac_release(void *state)
{
	struct ac_state *S = state;
	if (!S)
		return;
	for (size_t i = 0; i < S->nfns; i++)
		free(S->fns[i].name);
	free(S->fns);
	free(S->busy);
	free(S->api);
	free(S->kern);
	free(S->steps);
	free(S);
}

static struct ss_exporter *ac_exporter(const char *dir, void **state)
{
	struct ac_state *S = calloc(1, sizeof(*S));
	(void)dir;
	if (!S)
		return NULL;
	S->ex.ctx = S;
	S->ex.process = ac_process;
	S->ex.gpu = ac_gpu;
	S->ex.slice = ac_slice;
	S->ex.release = ac_ex_release;
	ss_exporter_nops(&S->ex);
	*state = S;
	return &S->ex;
}

static int ac_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts v). */
static double ac_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), ac_cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double ac_max(double a, double b)
{
	return a > b ? a : b;
}

/* Medians of the steps: the fields of ac_step, and both savings. */
struct ac_med {
	double len, gpu, wait, launch, nsync, ncalls, nlaunch, nkernel, kernel, trip, host;
	double trip_lo, trip_hi;
};

static int ac_medians(const struct ac_state *S, struct ac_med *m)
{
	size_t n = S->nsteps;
	double *v = malloc(n * sizeof(*v));
	if (!v)
		return -1;
#define AC_MED(field, expr)                                                   \
	do {                                                                  \
		for (size_t i = 0; i < n; i++) {                              \
			const struct ac_step *s = &S->steps[i];               \
			v[i] = (expr);                                        \
		}                                                             \
		m->field = ac_median(v, n);                                   \
	} while (0)
	AC_MED(len, (double)s->len);
	AC_MED(gpu, (double)s->gpu);
	AC_MED(wait, (double)s->wait);
	AC_MED(launch, (double)s->launch);
	AC_MED(nsync, (double)s->nsync);
	AC_MED(ncalls, (double)s->ncalls);
	AC_MED(nlaunch, (double)s->nlaunch);
	AC_MED(nkernel, (double)s->nkernel);
	AC_MED(kernel, s->nkernel ? (double)s->kernel_ns / (double)s->nkernel : 0);
	AC_MED(trip, (double)s->len - ac_max((double)(s->len - s->wait), (double)s->gpu));
	m->trip_lo = v[n / 4];
	m->trip_hi = v[n - 1 - n / 4];
	AC_MED(host, (double)(s->len - s->wait));
#undef AC_MED
	free(v);
	return 0;
}

static int ac_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
		    char *why, size_t whylen)
{
	struct ac_state *S = state;
	struct ac_med m;
	char b[8][32];
	(void)run;

	if (S->oom)
		return -1;
	if (!S->any) {
		snprintf(why, whylen, "the run has no GPU activity (gpu.enabled: docs/cuda.md)");
		return 1;
	}
	if (!S->nsteps) {
		snprintf(why, whylen, "no recorded step has GPU activity");
		return 1;
	}
	if (ac_medians(S, &m))
		return -1;
	size_t wk = 0;
	for (size_t k = 1; k < 16; k++)
		wk = S->wn[k].n > S->wn[wk].n ? k : wk;
	const char *sync = S->wn[wk].n ? S->wn[wk].name : "cudaDeviceSynchronize";
	const struct ac_fn *wf = NULL, *lf = NULL;
	for (size_t i = 0; i < S->nfns; i++) {
		if (!wf || S->fns[i].wait_ns > wf->wait_ns)
			wf = &S->fns[i];
		if (!lf || S->fns[i].launches > lf->launches)
			lf = &S->fns[i];
	}
	double per_launch = m.nlaunch ? m.launch / m.nlaunch : 0;
	size_t kn = 0;
	for (size_t k = 1; k < 16; k++)
		kn = S->kn[k].n > S->kn[kn].n ? k : kn;
	const char *kname = S->kn[kn].n ? S->kn[kn].name : "?";

	if (m.nsync >= 2 && m.trip >= 0.05 * m.len) {
		struct ss_adv_finding *f = ss_adv_add(out, "cuda");
		if (!f)
			return -1;
		f->save_ns = m.trip;
		f->save_lo = m.trip_lo < m.trip ? m.trip_lo : m.trip;
		f->save_hi = m.trip_hi > m.trip ? m.trip_hi : m.trip;
		snprintf(f->title, sizeof(f->title),
			 "the GPU idles %.0f%% of the step: the host waits for it %.0f times "
			 "per step (%s)%s%s", m.len > 0 ? 100.0 * (1 - m.gpu / m.len) : 0.0,
			 m.ncalls, sync, wf ? " in " : "", wf ? wf->name : "");
		snprintf(f->evidence, sizeof(f->evidence),
			 "median over %zu steps: step %s, the GPU busy %s of it; the host in %.0f "
			 "%s calls (%.0f of them found the GPU at work) %s (in %s: %s per step "
			 "on average), in %.0f launch calls %s; %.0f kernels per step, %s each "
			 "on the GPU (mean; most launched: %s, %llu times in all)", S->nsteps,
			 ss_agg_fmt_time((uint64_t)m.len, b[0], 32),
			 ss_agg_fmt_time((uint64_t)m.gpu, b[1], 32), m.ncalls, sync, m.nsync,
			 ss_agg_fmt_time((uint64_t)m.wait, b[2], 32), wf ? wf->name : "?",
			 ss_agg_fmt_time(wf ? wf->wait_ns / S->nsteps : 0, b[3], 32), m.nlaunch,
			 ss_agg_fmt_time((uint64_t)m.launch, b[4], 32), m.nkernel,
			 ss_agg_fmt_time((uint64_t)m.kernel, b[5], 32), kname,
			 (unsigned long long)S->kn[kn].n);
		snprintf(f->advice, sizeof(f->advice),
			 "stop waiting for the GPU after each kernel in %s: queue the step's "
			 "kernels back to back and synchronize once per step (read results "
			 "back with one cudaMemcpyAsync and an event); fuse the small kernels "
			 "(one multi-tensor kernel) or capture the loop in a CUDA graph",
			 wf ? wf->name : "the step");
		snprintf(f->how, sizeof(f->how),
			 "per step: step - max(step - time in %s, GPU busy time), the step "
			 "with one wait; median over %zu steps, range its quartiles", sync,
			 S->nsteps);
		if (wf)
			snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", wf->name);
	}
	/* launch overhead: the launching function's host time (its calls
	 * less their waits, per step) goes with its launches but one */
	double x = lf && lf->launches ? ((double)lf->incl_ns - (double)lf->wait_ns) /
					       (double)S->nsteps : 0;
	x = x > m.host ? m.host : x < m.launch ? m.launch : x;
	double top = ac_max(m.host, m.gpu);
	double fuse = top - ac_max(m.host - x + per_launch, m.gpu);
	double fuse_lo = top - ac_max(m.host - m.launch + per_launch, m.gpu);
	if (lf && m.nlaunch >= 2 && per_launch > m.kernel && fuse >= 0.05 * m.len) {
		struct ss_adv_finding *f = ss_adv_add(out, "cuda");
		if (!f)
			return -1;
		f->save_ns = f->save_hi = fuse;
		f->save_lo = fuse_lo < fuse ? fuse_lo : fuse;
		snprintf(f->title, sizeof(f->title),
			 "host-side launch overhead: %.0f kernel launches per step, %s each on "
			 "the host, longer than the kernels run (%s)", m.nlaunch,
			 ss_agg_fmt_time((uint64_t)per_launch, b[0], 32), lf->name);
		snprintf(f->evidence, sizeof(f->evidence),
			 "median over %zu steps: %.0f launches take the host %s, a kernel runs "
			 "%s on the GPU (mean; most launched: %s); the GPU busy %s of a %s step; "
			 "the host's own time %s (the step less its waits in %s), of which %s "
			 "per step in %s, which made %zu launches in all",
			 S->nsteps, m.nlaunch, ss_agg_fmt_time((uint64_t)m.launch, b[1], 32),
			 ss_agg_fmt_time((uint64_t)m.kernel, b[2], 32), kname,
			 ss_agg_fmt_time((uint64_t)m.gpu, b[3], 32),
			 ss_agg_fmt_time((uint64_t)m.len, b[4], 32),
			 ss_agg_fmt_time((uint64_t)m.host, b[5], 32), sync,
			 ss_agg_fmt_time((uint64_t)x, b[6], 32), lf->name, lf->launches);
		snprintf(f->advice, sizeof(f->advice),
			 "launch fewer, larger kernels in %s: fuse the per-tensor kernels into "
			 "one (multi-tensor / foreach kernels), or capture the loop in a CUDA "
			 "graph and launch it once", lf->name);
		snprintf(f->how, sizeof(f->how),
			 "per step: max(host, GPU) - max(host - X + one launch, GPU), host = "
			 "step - time in %s, X = %s's time less its waits (low end: X = the "
			 "launch calls' time); medians", sync, lf->name);
		snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", lf->name);
	}
	return 0;
}

const struct ss_adv_check ss_adv_check_cuda = {
	.name = "cuda",
	.looks_at = "GPU busy time, the CUDA calls that wait and that launch, per step",
	.exporter = ac_exporter,
	.judge = ac_judge,
	.release = ac_release,
};
