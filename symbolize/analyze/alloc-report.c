/*
 * alloc-report.c - report's memory columns (alloc-report.h): Self CPU
 * Mem, CPU Mem and Allocs per function (CUDA's three when CUDA memory was
 * recorded), the peak bytes of each recorded step's own blocks, and the footer
 * that says how frees of unknown size were counted.
 *
 * How: an exporter whose `alloc` callback gets each process's records
 * (read/alloc-read.c); each record adds its signed bytes to the function
 * it was made in (self) and to every distinct function on its call path
 * (total: a recursive function once), keyed by (pid, tid, name) and by
 * name alone for the merged rows (alloc-keys.c's table, records of one
 * call path, thread and kind summed first).  Rows are then looked up by
 * name.
 *
 * Never: guess a size (a free of unknown size is 0 bytes, and counted in
 * the footer), or show a column of a kind that was not recorded.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-report.h"
#include "alloc-keys.h"
#include "alloc-read.h"

struct fkey {
	struct ss_alloc_key k;      /* first: alloc-keys.h's record */
	struct ss_alloc_fstat st;
};

struct pstep {
	uint64_t pid, step;
	uint64_t spaces[SS_ALLOC_SPACES];
	uint64_t peak[SS_ALLOC_SPACES];
	size_t nspaces;
};

struct ss_alloc_report {
	struct ss_exporter ex;
	struct ss_alloc_keys keys;  /* of struct fkey */
	struct pstep *steps;
	size_t nsteps;
	uint64_t spaces[SS_ALLOC_SPACES]; /* every space seen in the run */
	size_t nspaces;
	int kinds;                  /* 1: CPU memory recorded, 2: CUDA's */
	uint64_t allocs, frees, unknown, outside, untracked, leaked;
	size_t procs, procs_live;   /* with records; with their exit list */
	int oom;
};

const char *const ss_alloc_report_heads[SS_ALLOC_NCOL] = {
	"Self CPU Mem", "CPU Mem", "Allocs", "Self CUDA Mem", "CUDA Mem", "CUDA Allocs",
};

/* The records of one call path on one thread, of one kind, summed: each
 * path's names are looked up once, not once per record. */
struct acc {
	uint32_t node;              /* 0: a free slot */
	int c;                      /* 0 CPU, 1 CUDA */
	uint64_t tid;
	int64_t delta;
	uint64_t allocs, bytes;
};

struct accs {
	struct acc *v;
	size_t cap, n;
};

static size_t acc_slot(const struct accs *a, uint32_t node, uint64_t tid, int c)
{
	uint64_t h = ((uint64_t)node * 0x9E3779B97F4A7C15ull) ^ (tid * 0xff51afd7ed558ccdull) ^ (uint64_t)c;
	return (size_t)(h ^ (h >> 29)) & (a->cap - 1);
}

static struct acc *acc_get(struct accs *a, uint32_t node, uint64_t tid, int c)
{
	if ((a->n + 1) * 2 > a->cap) {
		struct accs b = { calloc(a->cap ? a->cap * 2 : 256, sizeof(struct acc)),
				  a->cap ? a->cap * 2 : 256, 0 };
		if (!b.v)
			return NULL;
		for (size_t i = 0; i < a->cap; i++)
			if (a->v[i].node) {
				size_t j = acc_slot(&b, a->v[i].node, a->v[i].tid, a->v[i].c);
				while (b.v[j].node)
					j = (j + 1) & (b.cap - 1);
				b.v[j] = a->v[i];
				b.n++;
			}
		free(a->v);
		*a = b;
	}
	size_t j = acc_slot(a, node, tid, c);
	for (; a->v[j].node; j = (j + 1) & (a->cap - 1))
		if (a->v[j].node == node && a->v[j].tid == tid && a->v[j].c == c)
			return &a->v[j];
	a->v[j].node = node;
	a->v[j].tid = tid;
	a->v[j].c = c;
	a->n++;
	return &a->v[j];
}

static void fkey_add(void *rec, int self, const void *arg)
{
	struct fkey *k = rec;
	const struct acc *e = arg;
	if (self) {
		k->st.self[e->c] += e->delta;
		k->st.allocs[e->c] += e->allocs;
		k->st.alloc_bytes[e->c] += e->bytes;
	} else {
		k->st.total[e->c] += e->delta;
	}
}

static void ar_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct ss_alloc_report *m = ctx;
	m->procs++;
	m->allocs += d->allocs;
	m->frees += d->frees;
	m->unknown += d->unknown_frees;
	m->outside += d->outside;
	if (d->have_live) {
		m->procs_live++;
		m->untracked += d->untracked;
		m->leaked += d->nleaked;
	}
	for (size_t i = 0; i < d->nspaces; i++) {
		size_t j;
		for (j = 0; j < m->nspaces && m->spaces[j] != d->spaces[i]; j++)
			;
		if (j == m->nspaces && m->nspaces < SS_ALLOC_SPACES)
			m->spaces[m->nspaces++] = d->spaces[i];
		m->kinds |= ss_alloc_space_cuda(d->spaces[i]) ? 2 : 1;
	}
	struct accs a = { NULL, 0, 0 };
	for (size_t i = 0; i < d->nev && !m->oom; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		if (!e->node)
			continue;
		struct acc *x = acc_get(&a, e->node, e->tid, ss_alloc_space_cuda(e->space));
		if (!x) {
			m->oom = 1;
			break;
		}
		x->delta += e->delta;
		x->allocs += !e->is_free;
		x->bytes += e->is_free ? 0 : e->size;
	}
	for (size_t i = 0; i < a.cap && !m->oom; i++)
		if (a.v[i].node && ss_alloc_keys_path(&m->keys, pid, a.v[i].tid, d->nodes,
						      a.v[i].node, fkey_add, &a.v[i]))
			m->oom = 1;
	free(a.v);
	if (d->nsteps) {
		void *p = realloc(m->steps, (m->nsteps + d->nsteps) * sizeof(*m->steps));
		if (!p) {
			m->oom = 1;
			return;
		}
		m->steps = p;
		for (size_t i = 0; i < d->nsteps; i++) {
			struct pstep *s = &m->steps[m->nsteps++];
			s->pid = pid;
			s->step = d->steps[i].step;
			s->nspaces = d->nspaces;
			memcpy(s->spaces, d->spaces, sizeof(s->spaces));
			memcpy(s->peak, d->steps[i].peak, sizeof(s->peak));
		}
	}
}

static int ar_end(void *ctx, char *err, size_t errlen)
{
	return ss_export_oom_end(((struct ss_alloc_report *)ctx)->oom, err, errlen);
}

static void ar_release(void *ctx)
{
	struct ss_alloc_report *m = ctx;
	ss_alloc_keys_release(&m->keys);
	free(m->steps);
	free(m);
}

struct ss_exporter *ss_alloc_report_new(void)
{
	struct ss_alloc_report *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	ss_alloc_keys_init(&m->keys, sizeof(struct fkey));
	m->ex.ctx = m;
	m->ex.end = ar_end;
	m->ex.release = ar_release;
	m->ex.alloc = ar_alloc;
	ss_exporter_nops(&m->ex);
	return &m->ex;
}

const struct ss_alloc_report *ss_alloc_report_of(const struct ss_exporter *e)
{
	return e ? e->ctx : NULL;
}

int ss_alloc_report_have(const struct ss_alloc_report *m, int cuda)
{
	return m && (m->kinds & (cuda ? 2 : 1));
}

const struct ss_alloc_fstat *ss_alloc_report_row(const struct ss_alloc_report *m,
						 const struct ss_agg_row *r)
{
	if (!m || r->kind != SS_AGG_FUNCTION || !r->name)
		return NULL;
	const struct fkey *k = ss_alloc_keys_find(&m->keys, r->pid, r->tid, r->name);
	return k ? &k->st : NULL;
}

int ss_alloc_report_shown(const struct ss_alloc_report *m, int col)
{
	return ss_alloc_report_have(m, col >= 3);
}

char *ss_alloc_fmt_bytes(int64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	uint64_t a = b < 0 ? -(uint64_t)b : (uint64_t)b;
	int u = 0;
	double v = (double)a;
	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (!u)
		snprintf(buf, len, "%s%" PRIu64 " B", b < 0 ? "-" : "", a);
	else
		snprintf(buf, len, "%s%.2f %s", b < 0 ? "-" : "", v, unit[u]);
	return buf;
}

void ss_alloc_report_cells(const struct ss_alloc_report *m, const struct ss_agg_row *r,
			   char (*cells)[128])
{
	const struct ss_alloc_fstat *s = ss_alloc_report_row(m, r);
	struct ss_alloc_fstat z;
	memset(&z, 0, sizeof(z));
	if (!s)
		s = &z;
	for (int c = 0; c < 2; c++) {
		ss_alloc_fmt_bytes(s->self[c], cells[3 * c], 128);
		ss_alloc_fmt_bytes(s->total[c], cells[3 * c + 1], 128);
		snprintf(cells[3 * c + 2], 128, "%" PRIu64, s->allocs[c]);
	}
}

void ss_alloc_report_footer(FILE *f, const struct ss_alloc_report *m)
{
	if (!m || !m->kinds)
		return;
	fprintf(f, "Allocations recorded: %" PRIu64 " allocations, %" PRIu64 " frees"
		" (Self Mem: allocated minus freed in the function itself; Mem: with its callees)\n",
		m->allocs, m->frees);
	if (m->unknown)
		fprintf(f, "Frees of unknown size: %" PRIu64 " (blocks allocated before their "
			"recorded window opened), counted as 0 bytes\n", m->unknown);
	if (m->outside)
		fprintf(f, "Outside any recorded call: %" PRIu64 " allocations and frees "
			"(in no row, in the steps' peaks)\n", m->outside);
	if (m->untracked)
		fprintf(f, "Not followed to exit: %" PRIu64 " blocks (the runtime's table was "
			"full): leaks may be missing\n", m->untracked);
}

void ss_alloc_report_csv_header(FILE *f, const struct ss_alloc_report *m)
{
	if (ss_alloc_report_have(m, 0))
		fprintf(f, ",self_cpu_mem,cpu_mem,allocs");
	if (ss_alloc_report_have(m, 1))
		fprintf(f, ",self_cuda_mem,cuda_mem,cuda_allocs");
}

size_t ss_alloc_report_list(struct ss_exporter **walk, struct ss_exporter *agg,
			    struct ss_exporter *gpu, struct ss_exporter *mem,
			    const struct ss_alloc_report **m)
{
	size_t n = 0;
	walk[n++] = agg;
	if (gpu)
		walk[n++] = gpu;
	if (mem)
		walk[n++] = mem;
	*m = ss_alloc_report_of(mem);
	return n;
}

void ss_alloc_report_csv_row(FILE *f, const struct ss_alloc_report *m,
			     const struct ss_agg_row *r)
{
	const struct ss_alloc_fstat *s = ss_alloc_report_row(m, r);
	for (int c = 0; c < 2; c++)
		if (ss_alloc_report_have(m, c))
			fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRIu64, s ? s->self[c] : 0,
				s ? s->total[c] : 0, s ? s->allocs[c] : 0);
}

void ss_alloc_report_json_row(FILE *f, const struct ss_alloc_report *m,
			      const struct ss_agg_row *r)
{
	const struct ss_alloc_fstat *s = ss_alloc_report_row(m, r);
	static const char *const k[2][3] = {
		{ "self_cpu_mem", "cpu_mem", "allocs" },
		{ "self_cuda_mem", "cuda_mem", "cuda_allocs" },
	};
	for (int c = 0; c < 2; c++)
		if (ss_alloc_report_have(m, c))
			fprintf(f, ",\"%s\":%" PRId64 ",\"%s\":%" PRId64 ",\"%s\":%" PRIu64, k[c][0],
				s ? s->self[c] : 0, k[c][1], s ? s->total[c] : 0, k[c][2],
				s ? s->allocs[c] : 0);
}

void ss_alloc_report_json(FILE *f, const struct ss_alloc_report *m)
{
	if (!m || !m->kinds)
		return;
	fprintf(f, ",\"memory\":{\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64
		",\"unknown_frees\":%" PRIu64 ",\"outside\":%" PRIu64 ",\"untracked\":%" PRIu64 "}",
		m->allocs, m->frees, m->unknown, m->outside, m->untracked);
}

static const struct pstep *find_step(const struct ss_alloc_report *m, uint64_t pid,
				     uint64_t step)
{
	for (size_t i = 0; m && i < m->nsteps; i++)
		if (m->steps[i].pid == pid && m->steps[i].step == step)
			return &m->steps[i];
	return NULL;
}

uint64_t ss_alloc_report_step_peak(const struct ss_alloc_report *m, uint64_t pid,
				   uint64_t step, uint64_t space, int *found)
{
	const struct pstep *s = find_step(m, pid, step);
	if (found)
		*found = s != NULL;
	for (size_t i = 0; s && i < s->nspaces; i++)
		if (s->spaces[i] == space)
			return s->peak[i];
	return 0;
}

void ss_alloc_report_json_step(FILE *f, const struct ss_alloc_report *m,
			       const struct ss_agg_step *st)
{
	if (!m || !m->kinds)
		return;
	fprintf(f, ",\"peak_bytes\":{");
	for (size_t i = 0; i < m->nspaces; i++) {
		char name[48];
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "",
			ss_alloc_space_name(m->spaces[i], name, sizeof(name)),
			ss_alloc_report_step_peak(m, st->pid, st->step, m->spaces[i], NULL));
	}
	fprintf(f, "}");
}

void ss_alloc_report_steps(FILE *f, const struct ss_alloc_report *m)
{
	if (!m || !m->kinds || !m->nsteps)
		return;
	char name[48], b[48];
	fprintf(f, "\nPeak bytes per step (of the blocks each step allocated, at their most at once):\n");
	fprintf(f, "  %8s  %5s", "Pid", "Step");
	for (size_t i = 0; i < m->nspaces; i++)
		fprintf(f, "  %14s", ss_alloc_space_name(m->spaces[i], name, sizeof(name)));
	fputc('\n', f);
	for (size_t k = 0; k < m->nsteps; k++) {
		const struct pstep *s = &m->steps[k];
		fprintf(f, "  %8" PRIu64 "  %5" PRIu64, s->pid, s->step);
		for (size_t i = 0; i < m->nspaces; i++)
			fprintf(f, "  %14s",
				ss_alloc_fmt_bytes((int64_t)ss_alloc_report_step_peak(
							   m, s->pid, s->step, m->spaces[i], NULL),
						   b, sizeof(b)));
		fputc('\n', f);
	}
}

static int top_cmp(const void *x, const void *y)
{
	const struct fkey *a = *(const struct fkey *const *)x, *b = *(const struct fkey *const *)y;
	uint64_t va = a->st.alloc_bytes[0] + a->st.alloc_bytes[1];
	uint64_t vb = b->st.alloc_bytes[0] + b->st.alloc_bytes[1];
	if (va != vb)
		return va > vb ? -1 : 1;
	return strcmp(a->k.name, b->k.name);
}

size_t ss_alloc_report_top(const struct ss_alloc_report *m, const char **names,
			   const struct ss_alloc_fstat **st, size_t max)
{
	const struct fkey **v;
	size_t n = 0, i;
	if (!m || !m->keys.n || !(v = malloc(m->keys.n * sizeof(*v))))
		return 0;
	for (i = 0; i < m->keys.n; i++) {
		const struct fkey *k = ss_alloc_keys_at(&m->keys, i);
		if (!k->k.pid && !k->k.tid && (k->st.alloc_bytes[0] || k->st.alloc_bytes[1]))
			v[n++] = k;
	}
	qsort(v, n, sizeof(*v), top_cmp);
	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		names[i] = v[i]->k.name;
		st[i] = &v[i]->st;
	}
	free(v);
	return n;
}
