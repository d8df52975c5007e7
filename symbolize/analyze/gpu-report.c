/*
 * gpu-report.c - device time on the host functions and steps, for
 * `stepscope report`: an exporter walked beside the aggregator.
 *
 * Design: a process's GPU activity comes before its slices (run.c), so the
 * launches (the CUDA API call that started a kernel or copy: its thread
 * and start, and the device time of the work) are sorted per thread with
 * prefix sums first.  Each host function slice then adds the device time
 * of the launches inside it to its name's CUDA total (a binary search) and
 * claims those launches for CUDA self when it is deeper than their last
 * claimant: at the end each launch's device time is in the self of its
 * innermost host function.  A recursive function counts its nested calls'
 * launches again in its total (as Total does for host time).
 *
 * Per step: GPU is the union of device busy intervals within the step,
 * idle the time the host spent inside CUDA API calls while the device had
 * nothing to do (launch overhead, waiting in a synchronize that is already
 * done), host the rest.
 *
 * Must never: print anything when the run has no GPU activity.
 */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "gpu-report.h"
#include "util.h"

struct gr_launch {
	uint64_t pid, tid, ns, dev_ns;
	unsigned depth;       /* of the claiming slice + 1, 0: none */
	size_t row;
};

struct gr_row {
	char *name;
	uint64_t self, total, launches;
};

struct gr_span {
	uint64_t pid, begin, end;
	uint64_t step;        /* steps: its number */
};

struct ss_gpu_report {
	struct ss_exporter ex;
	struct gr_launch *l;
	size_t nl, capl, done;        /* l[done..nl) is the current process */
	uint64_t *prefix;             /* prefix[i]: dev_ns of l[0..i) */
	size_t capp;
	struct gr_row *rows;
	size_t nrows, caprows;
	struct gr_span *busy, *api, *steps;
	size_t nbusy, capbusy, napi, capapi, nsteps, capsteps;
	int any, oom;
};

static int gr_by_thread_time(const void *x, const void *y)
{
	const struct gr_launch *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

static int gr_by_begin(const void *x, const void *y)
{
	const struct gr_span *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

static int gr_span_add(struct gr_span **s, size_t *cap, size_t *n, uint64_t pid,
		       uint64_t b, uint64_t e)
{
	if (ss_grow((void **)s, cap, *n, sizeof(**s), 256))
		return -1;
	(*s)[(*n)++] = (struct gr_span){ pid, b, e, 0 };
	return 0;
}

static void gr_gpu(void *ctx, uint64_t pid, const struct ss_gpu_data *g)
{
	struct ss_gpu_report *r = ctx;
	r->done = r->nl;
	for (size_t i = 0; i < g->n && !r->oom; i++) {
		const struct ss_gpu_op *o = &g->ops[i];
		if (o->type == SS_GPU_API) {
			r->oom |= gr_span_add(&r->api, &r->capapi, &r->napi, pid,
					      o->start_ns, o->end_ns);
			continue;
		}
		r->any = 1;
		r->oom |= gr_span_add(&r->busy, &r->capbusy, &r->nbusy, pid,
				      o->start_ns, o->end_ns);
		const struct ss_gpu_op *a = ss_gpu_launch(g, o->correlation);
		if (!a)
			continue;
		if (ss_grow((void **)&r->l, &r->capl, r->nl, sizeof(*r->l), 256)) {
			r->oom = 1;
			break;
		}
		r->l[r->nl++] = (struct gr_launch){ pid, a->tid, a->start_ns,
						    o->end_ns - o->start_ns, 0, 0 };
	}
	qsort(r->l + r->done, r->nl - r->done, sizeof(*r->l), gr_by_thread_time);
	if (ss_grow((void **)&r->prefix, &r->capp, r->nl + 1, sizeof(*r->prefix), 256)) {
		r->oom = 1;
		return;
	}
	r->prefix[0] = 0;
	for (size_t i = 0; i < r->nl; i++)
		r->prefix[i + 1] = r->prefix[i] + r->l[i].dev_ns;
}

/* First launch of the current process at or after (pid, tid, ns). */
static size_t gr_lower(const struct ss_gpu_report *r, uint64_t pid, uint64_t tid,
		       uint64_t ns)
{
	size_t lo = r->done, hi = r->nl;
	struct gr_launch key = { pid, tid, ns, 0, 0, 0 };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (gr_by_thread_time(&r->l[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t gr_row(struct ss_gpu_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return i;
	if (ss_grow((void **)&r->rows, &r->caprows, r->nrows, sizeof(*r->rows), 32))
		return SIZE_MAX;
	r->rows[r->nrows] = (struct gr_row){ strdup(name), 0, 0, 0 };
	if (!r->rows[r->nrows].name)
		return SIZE_MAX;
	return r->nrows++;
}

static void gr_slice(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	struct ss_gpu_report *r = ctx;
	if (s->cat == SS_SLICE_STEP) {
		r->oom |= gr_span_add(&r->steps, &r->capsteps, &r->nsteps, pid,
				      s->begin_ns, s->end_ns);
		/* the number in its name (has_step is the step at its begin,
		 * which a boundary can make the one before) */
		if (!r->oom)
			r->steps[r->nsteps - 1].step =
				s->name && !strncmp(s->name, "ProfilerStep#", 13)
					? strtoull(s->name + 13, NULL, 10)
					: r->nsteps - 1;
		return;
	}
	if (s->cat != SS_SLICE_FUNCTION || r->nl == r->done)
		return;
	size_t a = gr_lower(r, pid, tid, s->begin_ns);
	size_t b = gr_lower(r, pid, tid, s->end_ns + 1);
	if (a >= b)
		return;
	size_t row = gr_row(r, s->name ? s->name : "?");
	if (row == SIZE_MAX) {
		r->oom = 1;
		return;
	}
	r->rows[row].total += r->prefix[b] - r->prefix[a];
	for (size_t i = a; i < b; i++)
		if (r->l[i].depth < s->depth + 1) {
			r->l[i].depth = s->depth + 1;
			r->l[i].row = row;
		}
}

static void gr_release(void *ctx)
{
	struct ss_gpu_report *r = ctx;
	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].name);
	free(r->rows);
	free(r->l);
	free(r->prefix);
	free(r->busy);
	free(r->api);
	free(r->steps);
	free(r);
}

struct ss_exporter *ss_gpu_report_new(void)
{
	struct ss_gpu_report *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->ex.ctx = r;
	r->ex.slice = gr_slice;
	r->ex.gpu = gr_gpu;
	r->ex.release = gr_release;
	ss_exporter_nops(&r->ex);
	return &r->ex;
}

static int gr_by_self(const void *x, const void *y)
{
	const struct gr_row *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Length of [b, e) covered by the sorted, merged busy spans of pid. */
static uint64_t gr_covered(const struct gr_span *s, size_t n, uint64_t pid,
			   uint64_t b, uint64_t e)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i].pid != pid || s[i].end <= b || s[i].begin >= e)
			continue;
		uint64_t lo = s[i].begin > b ? s[i].begin : b;
		uint64_t hi = s[i].end < e ? s[i].end : e;
		sum += hi - lo;
	}
	return sum;
}

void ss_gpu_report_print(FILE *f, struct ss_exporter *e)
{
	struct ss_gpu_report *r = e->ctx;
	char t1[32], t2[32], t3[32];

	if (!r->any)
		return;
	if (r->oom) {
		fprintf(f, "\nCUDA: out of memory reading the GPU activity\n");
		return;
	}
	for (size_t i = 0; i < r->nl; i++)
		if (r->l[i].depth) {
			r->rows[r->l[i].row].self += r->l[i].dev_ns;
			r->rows[r->l[i].row].launches++;
		}
	qsort(r->rows, r->nrows, sizeof(*r->rows), gr_by_self);
	int w = 4;
	for (size_t i = 0; i < r->nrows; i++)
		if ((int)strlen(r->rows[i].name) > w)
			w = (int)strlen(r->rows[i].name);
	if (w > 55)
		w = 55;
	fprintf(f, "\nCUDA time by launching host function (device time of the kernels and\n"
		   "copies launched inside it: self directly, total with its callees)\n");
	fprintf(f, "%-*s  %12s  %12s  %8s\n", w, "Name", "CUDA self", "CUDA total", "Launches");
	for (size_t i = 0; i < r->nrows; i++)
		fprintf(f, "%-*.*s  %12s  %12s  %8llu\n", w, w, r->rows[i].name,
			ss_agg_fmt_time(r->rows[i].self, t1, sizeof(t1)),
			ss_agg_fmt_time(r->rows[i].total, t2, sizeof(t2)),
			(unsigned long long)r->rows[i].launches);
	/* merge the device busy spans per process */
	qsort(r->busy, r->nbusy, sizeof(*r->busy), gr_by_begin);
	size_t m = 0;
	for (size_t i = 0; i < r->nbusy; i++) {
		if (m && r->busy[m - 1].pid == r->busy[i].pid &&
		    r->busy[i].begin <= r->busy[m - 1].end) {
			if (r->busy[i].end > r->busy[m - 1].end)
				r->busy[m - 1].end = r->busy[i].end;
		} else {
			r->busy[m++] = r->busy[i];
		}
	}
	r->nbusy = m;
	qsort(r->steps, r->nsteps, sizeof(*r->steps), gr_by_begin);
	fprintf(f, "\nPer step: host (the host works, the GPU idles), GPU (the GPU works),\n"
		   "idle (the host waits inside CUDA calls with the GPU idle)\n");
	fprintf(f, "%6s  %12s  %12s  %12s  %6s\n", "Step", "Host", "GPU", "Idle", "GPU %");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct gr_span *s = &r->steps[i];
		uint64_t len = s->end - s->begin;
		uint64_t gpu = gr_covered(r->busy, r->nbusy, s->pid, s->begin, s->end);
		uint64_t idle = 0;
		for (size_t k = 0; k < r->napi; k++) {
			const struct gr_span *a = &r->api[k];
			if (a->pid != s->pid || a->end <= s->begin || a->begin >= s->end)
				continue;
			uint64_t lo = a->begin > s->begin ? a->begin : s->begin;
			uint64_t hi = a->end < s->end ? a->end : s->end;
			idle += (hi - lo) - gr_covered(r->busy, r->nbusy, s->pid, lo, hi);
		}
		if (gpu + idle > len)
			idle = len > gpu ? len - gpu : 0;
		uint64_t host = len - gpu - idle;
		fprintf(f, "%6llu  %12s  %12s  %12s  %5.1f%%\n", (unsigned long long)s->step,
			ss_agg_fmt_time(host, t1, sizeof(t1)),
			ss_agg_fmt_time(gpu, t2, sizeof(t2)),
			ss_agg_fmt_time(idle, t3, sizeof(t3)),
			len ? 100.0 * (double)gpu / (double)len : 0.0);
	}
}
