/*
 * advise-alloc.c - the "alloc" check of `stepscope advise` (advise.h):
 * allocation churn, the same sizes allocated and freed again in every
 * step, where allocating once and reusing the block would do.
 *
 * Design: an exporter fed the recorded allocations of each process
 * (memory.allocations; read/alloc-read.h) in the core's walk.  A block
 * allocated and freed inside the same recorded step is a churned pair of
 * (the function that allocated it, its size); a pair that comes back in
 * at least half of the recorded steps (and two of them) is churn.  What
 * churn costs is not in the trace (a malloc's duration is not recorded,
 * and the page faults of a fresh block are paid where it is first
 * written), so it is measured here, on this machine, per churned size:
 * malloc + a write to every 4 KiB page + free, against the same writes
 * into a block that is kept (median of 5 batches, fewer when a size has
 * taken 1.5 s; sizes over 64 MiB are measured at 64 MiB and scaled; no
 * more sizes once 6 s are spent).  The saving per step
 * is the pairs a step times that difference; its low end counts malloc
 * and free alone (a program that writes few pages of its blocks).
 *
 * Must never: count a pair whose free belongs to another step, or run
 * its measurement on more than SS_CHURN_MEASURE_MAX bytes at once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advise.h"
#include "alloc-report.h"

#define SS_CHURN_MIN 0.05                  /* of the median step */
#define SS_CHURN_SIZES 8                   /* sizes measured */
#define SS_CHURN_MEASURE_MAX (64u << 20)   /* bytes per measured block */
#define SS_CHURN_BUDGET 1.5e9              /* ns of measuring per size */
#define SS_CHURN_BUDGET_ALL 6e9            /* ... and in all */
#define SS_CHURN_PAGE 4096

struct ss_churn_key {
	const char *name;          /* its own copy (own) */
	char *own;
	uint64_t size, pairs, steps, last;  /* last: step id + 1 */
};

/* A live block: where it was allocated.  A table of the live blocks only
 * (a free takes its block out), so it grows with the most blocks live at
 * once, not with the run's allocations. */
struct ss_churn_slot {
	uint64_t addr, step;       /* step id + 1, 0: outside a step */
	uint32_t node;             /* 0: an empty slot (a block of no node
	                            * is not kept) */
};

struct ss_churn {
	struct ss_exporter ex;
	struct ss_churn_key *k;
	size_t n, cap;
	uint32_t *kidx;            /* hash of k: index + 1, 0 empty */
	size_t kcap;
	struct ss_churn_slot *t;   /* the current process's live blocks */
	size_t tcap, tlive;
	uint64_t nsteps;           /* recorded steps of every process */
	int have, oom;
};

static size_t ss_churn_khash(const char *name, uint64_t size)
{
	uint64_t h = 1469598103934665603ull ^ size * 0x9e3779b97f4a7c15ull;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return (size_t)(h ^ h >> 29);
}

static int ss_churn_kgrow(struct ss_churn *c)
{
	size_t cap = c->kcap ? 2 * c->kcap : 64;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < c->n; i++) {
		size_t h = ss_churn_khash(c->k[i].name, c->k[i].size) & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = (uint32_t)(i + 1);
	}
	free(c->kidx);
	c->kidx = t;
	c->kcap = cap;
	return 0;
}

static struct ss_churn_key *ss_churn_get(struct ss_churn *c, const char *name, uint64_t size)
{
	size_t h;

	if ((c->n + 1) * 2 > c->kcap && ss_churn_kgrow(c))
		return NULL;
	for (h = ss_churn_khash(name, size) & (c->kcap - 1); c->kidx[h]; h = (h + 1) & (c->kcap - 1)) {
		struct ss_churn_key *k = &c->k[c->kidx[h] - 1];
		if (k->size == size && !strcmp(k->name, name))
			return k;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct ss_churn_key *k = realloc(c->k, cap * sizeof(*k));
		if (!k)
			return NULL;
		c->k = k;
		c->cap = cap;
	}
	struct ss_churn_key *k = &c->k[c->n];
	memset(k, 0, sizeof(*k));
	if (!(k->own = strdup(name)))
		return NULL;
	k->name = k->own;
	k->size = size;
	c->kidx[h] = (uint32_t)++c->n;
	return k;
}

static size_t ss_churn_ahash(uint64_t addr, size_t mask)
{
	return (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 17) & mask;
}

/* The slot of addr, or the empty slot where it would go */
static size_t ss_churn_find(const struct ss_churn *c, uint64_t addr)
{
	size_t m = c->tcap - 1, i = ss_churn_ahash(addr, m);

	while (c->t[i].node && c->t[i].addr != addr)
		i = (i + 1) & m;
	return i;
}

static int ss_churn_tgrow(struct ss_churn *c)
{
	struct ss_churn_slot *old = c->t;
	size_t ocap = c->tcap;

	c->tcap = ocap ? 2 * ocap : 1024;
	if (!(c->t = calloc(c->tcap, sizeof(*c->t)))) {
		c->t = old;
		c->tcap = ocap;
		return -1;
	}
	for (size_t i = 0; i < ocap; i++)
		if (old[i].node)
			c->t[ss_churn_find(c, old[i].addr)] = old[i];
	free(old);
	return 0;
}

/* Take slot i out, moving later slots of its run back (linear probing) */
static void ss_churn_del(struct ss_churn *c, size_t i)
{
	size_t m = c->tcap - 1, j = i;

	c->t[i].node = 0;
	c->tlive--;
	for (;;) {
		j = (j + 1) & m;
		if (!c->t[j].node)
			return;
		size_t h = ss_churn_ahash(c->t[j].addr, m);
		/* j's home h lies cyclically in (i, j]: it stays */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		c->t[i] = c->t[j];
		c->t[j].node = 0;
		i = j;
	}
}

/* One process's allocations: the pairs allocated and freed in one step. */
static void ss_churn_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct ss_churn *c = ctx;
	size_t cur = 0;
	uint64_t base = c->nsteps;

	(void)pid;
	c->have = 1;
	c->nsteps += d->nsteps;
	if (c->t)
		memset(c->t, 0, c->tcap * sizeof(*c->t));
	c->tlive = 0;
	if (!c->t && ss_churn_tgrow(c)) {
		c->oom = 1;
		return;
	}
	for (size_t i = 0; i < d->nev && !c->oom; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		uint64_t step = 0;
		size_t at;

		while (cur < d->nsteps && e->ns >= d->steps[cur].end_ns)
			cur++;
		if (cur < d->nsteps && e->ns >= d->steps[cur].begin_ns)
			step = base + cur + 1;
		if (!e->is_free) {
			if (!e->node || e->node > d->nnodes || !d->nodes[e->node - 1].name)
				continue;
			if ((c->tlive + 1) * 2 > c->tcap && ss_churn_tgrow(c)) {
				c->oom = 1;
				break;
			}
			at = ss_churn_find(c, e->addr);
			c->tlive += !c->t[at].node;
			c->t[at] = (struct ss_churn_slot){ e->addr, step, e->node };
			continue;
		}
		if (!e->known || !c->t[at = ss_churn_find(c, e->addr)].node)
			continue;
		struct ss_churn_slot s = c->t[at];
		ss_churn_del(c, at);
		if (!step || s.step != step)
			continue;
		struct ss_churn_key *k = ss_churn_get(c, d->nodes[s.node - 1].name, e->size);
		if (!k) {
			c->oom = 1;
			break;
		}
		k->pairs++;
		if (k->last != step) {
			k->steps++;
			k->last = step;
		}
	}
}

static struct ss_exporter *ss_churn_exporter(const char *dir, void **state)
{
	struct ss_churn *c = calloc(1, sizeof(*c));

	(void)dir;
	if (!c)
		return NULL;
	c->ex.ctx = c;
	c->ex.alloc = ss_churn_alloc;
	ss_exporter_nops(&c->ex); /* freed by the check's release */
	*state = c;
	return &c->ex;
}

static void ss_churn_release(void *state)
{
	struct ss_churn *c = state;

	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->k[i].own);
	free(c->k);
	free(c->kidx);
	free(c->t);
	free(c);
}

static double ss_churn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int ss_churn_cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static void ss_churn_touch(volatile char *p, size_t size)
{
	for (size_t i = 0; i < size; i += SS_CHURN_PAGE)
		p[i] = (char)i;
	p[size - 1] = 1;
}

/* Per block of size bytes on this machine, median of 5 batches (fewer,
 * at least 1, once budget ns are spent), in ns: malloc + write a byte a
 * page + free; the same writes into a kept block; malloc + free alone.
 * -1 when malloc fails. */
static int ss_churn_measure(size_t size, double budget, double *fresh, double *reuse,
			    double *bare)
{
	double v[3][5], start = ss_churn_now();
	size_t n = (32u << 20) / size;
	int nb = 0;
	char *keep;

	n = n < 1 ? 1 : n > 4096 ? 4096 : n;
	if (!(keep = malloc(size)))
		return -1;
	ss_churn_touch(keep, size);
	for (int b = 0; b < 5 && (!b || ss_churn_now() - start < budget); b++, nb++) {
		double t0 = ss_churn_now();
		for (size_t i = 0; i < n; i++) {
			char *p = malloc(size);
			if (!p) {
				free(keep);
				return -1;
			}
			ss_churn_touch(p, size);
			__asm__ volatile("" : : "r"(p) : "memory");
			free(p);
		}
		double t1 = ss_churn_now();
		for (size_t i = 0; i < n; i++) {
			ss_churn_touch(keep, size);
			__asm__ volatile("" : : "r"(keep) : "memory");
		}
		double t2 = ss_churn_now();
		for (size_t i = 0; i < n; i++) {
			char *p = malloc(size);
			__asm__ volatile("" : : "r"(p) : "memory");
			free(p);
		}
		double t3 = ss_churn_now();
		v[0][b] = (t1 - t0) / (double)n;
		v[1][b] = (t2 - t1) / (double)n;
		v[2][b] = (t3 - t2) / (double)n;
	}
	free(keep);
	for (int i = 0; i < 3; i++)
		qsort(v[i], (size_t)nb, sizeof(double), ss_churn_cmp_d);
	*fresh = v[0][nb / 2];
	*reuse = v[1][nb / 2];
	*bare = v[2][nb / 2];
	return 0;
}

/* Most bytes a step first */
static int ss_churn_cmp_key(const void *x, const void *y)
{
	const struct ss_churn_key *a = x, *b = y;
	double u = (double)a->pairs * (double)a->size, w = (double)b->pairs * (double)b->size;

	return u < w ? 1 : u > w ? -1 : strcmp(a->name, b->name);
}

static int ss_churn_judge(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
			  char *why, size_t whylen)
{
	struct ss_churn *c = state;
	size_t nk = 0, used = 0;
	double save = 0, lo = 0, steps;
	char ev[1200], b0[32], b1[32], b2[32];

	if (!c || !c->have) {
		snprintf(why, whylen, "the run has no recorded allocations (memory.allocations)");
		return 1;
	}
	if (c->oom)
		return -1;
	if (!c->nsteps || !run->median_step_ns) {
		snprintf(why, whylen, "the run has no recorded step");
		return 1;
	}
	steps = (double)c->nsteps;
	for (size_t i = 0; i < c->n; i++) {
		if (c->k[i].steps >= 2 && 2 * c->k[i].steps >= c->nsteps)
			c->k[nk++] = c->k[i];
		else
			free(c->k[i].own);
	}
	c->n = nk;
	if (!nk)
		return 0;
	qsort(c->k, nk, sizeof(*c->k), ss_churn_cmp_key);
	ev[0] = 0;
	double start = ss_churn_now();
	size_t unpriced = 0;
	for (size_t i = 0; i < nk && i < SS_CHURN_SIZES; i++) {
		const struct ss_churn_key *k = &c->k[i];
		size_t m = k->size > SS_CHURN_MEASURE_MAX ? SS_CHURN_MEASURE_MAX : (size_t)k->size;
		double fresh, reuse, bare, scale = (double)k->size / (double)m, per = k->pairs / steps;
		double left = SS_CHURN_BUDGET_ALL - (ss_churn_now() - start);
		if (left <= 0) {
			unpriced++;
			continue;
		}
		if (!m || ss_churn_measure(m, left < SS_CHURN_BUDGET ? left : SS_CHURN_BUDGET, &fresh,
					   &reuse, &bare))
			continue;
		double d = (fresh - reuse) * scale;
		save += per * (d > 0 ? d : 0);
		lo += per * bare * scale;
		if (i < 3 && used + 200 < sizeof(ev)) {
			ss_alloc_fmt_bytes((int64_t)k->size, b0, sizeof(b0));
			ss_agg_fmt_time((uint64_t)(fresh * scale), b1, sizeof(b1));
			ss_agg_fmt_time((uint64_t)(reuse * scale), b2, sizeof(b2));
			used += (size_t)snprintf(ev + used, sizeof(ev) - used,
						 "%s%s allocates and frees %.3g block%s of %s a step "
						 "(in %" PRIu64 " of %" PRIu64 " steps); a new one costs "
						 "%s here (malloc, a write to each page, free), writing a "
						 "kept one %s",
						 used ? "; " : "", k->name, per, per == 1 ? "" : "s", b0,
						 k->steps, c->nsteps, b1, b2);
		}
	}
	if (save < SS_CHURN_MIN * (double)run->median_step_ns)
		return 0;
	struct ss_adv_finding *f = ss_adv_add(out, "alloc");
	if (!f)
		return -1;
	f->save_ns = save;
	f->save_lo = lo < save ? lo : save;
	f->save_hi = save;
	for (size_t i = 0; i < nk && f->nfuncs < SS_ADV_FUNCS; i++) {
		int dup = 0;
		for (int j = 0; j < f->nfuncs; j++)
			dup |= !strcmp(f->funcs[j], c->k[i].name);
		if (!dup)
			snprintf(f->funcs[f->nfuncs++], sizeof(f->funcs[0]), "%s", c->k[i].name);
	}
	ss_alloc_fmt_bytes((int64_t)c->k[0].size, b0, sizeof(b0));
	snprintf(f->title, sizeof(f->title),
		 "%s allocates and frees %s%s block%s again in %" PRIu64 " of %" PRIu64
		 " steps: %zu size%s churned",
		 c->k[0].name, c->k[0].pairs > c->k[0].steps ? "" : "a ", b0,
		 c->k[0].pairs > c->k[0].steps ? "s" : "", c->k[0].steps, c->nsteps, nk,
		 nk == 1 ? "" : "s");
	ss_agg_fmt_time(run->cat_mean[SS_ADV_ALLOC], b1, sizeof(b1));
	snprintf(f->evidence, sizeof(f->evidence), "%s. Allocation calls took %s a step%s", ev, b1,
		 unpriced ? ". Some churned sizes were not priced (measuring took its 6 s): the saving "
			    "is low" : "");
	snprintf(f->advice, sizeof(f->advice),
		 "allocate these buffers once, outside the step (or keep them in the model's "
		 "state and grow them only when a size grows), and reuse them every step: a "
		 "freed large block goes back to the kernel (glibc maps blocks over 32 MiB with "
		 "mmap) and each new one pays a page fault per 4 KiB page when first written");
	snprintf(f->how, sizeof(f->how),
		 "blocks a step x (malloc + write each page + free - writing a kept block), "
		 "measured here per size, median of 5; assumes every page is written each step "
		 "(low end: malloc + free alone)");
	return 0;
}

const struct ss_adv_check ss_adv_check_alloc = {
	.name = "alloc",
	.looks_at = "blocks allocated and freed in the same step, of the same size in most steps "
		    "(memory.allocations)",
	.exporter = ss_churn_exporter,
	.judge = ss_churn_judge,
	.release = ss_churn_release,
};
