/*
 * mem-check.c - recorded CUDA allocations against the program's own
 * ledger: the check of memory.allocations with gpu.enabled, run by
 * test-cuda-mem (make test, on the stand-in CUDA runtime) and by the GPU
 * proof kit (device-check.sh, on a real GPU and in its dry run).  Prints
 * one line per check, "ok   ..." or "FAIL ...: what differed".  Exit
 * status: the number of failed checks (at most 100), 2 for a usage error.
 *
 *   mem-check [--label NAME] [--exact] --ledger FILE --report FILE
 *             [--leaks FILE]
 *
 * --ledger: the program's stdout (tests/e2e/s-cuda-mem.c), lines
 *   "A STEP FUNCTION PARENT SPACE DEVICE BYTES ID" (an allocation) and
 *   "F ..." (a free of block ID, with that block's space, device, size).
 * --report: `stepscope report --steps --format json`.  The recorded steps
 *   are its step_list; every function that made a CUDA memory call in
 *   them (not main: open when the recording began, its row holds only
 *   what the reader saw it call) must have, over those steps:
 *     self_cuda_mem   bytes allocated minus bytes freed in the function
 *                     itself, device and managed memory (a free of a
 *                     block allocated outside the recorded steps: 0)
 *     cuda_mem        the same with its callees
 *     cuda_allocs     its device and managed allocations
 *     *_by_device     the same two per device
 *   and each recorded step's peak_bytes of each CUDA space ("cuda:N",
 *   "cuda:N pinned", "cuda:N managed"): the most bytes the step's own
 *   blocks (allocated in it, not yet freed) held at once.
 *   With --exact (the stand-in, whose CUDA runtime allocates no host
 *   memory of its own): also self_cpu_mem and cpu_mem (pinned memory is
 *   CPU memory, as in torch.profiler), and the count of frees of unknown
 *   size.  On a real GPU libcudart's own mallocs land in those.
 * --leaks: `stepscope memory --leaks` (its table: space, blocks, bytes,
 *   the bytes again for people, allocating function): per device, the
 *   blocks allocated in recorded steps and never freed, by function,
 *   count and bytes, and no other CUDA block.
 *
 * Never: take a check as passed when there was nothing to check.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"

#define MAXF 64
#define MAXE 8192
#define MAXD 8
#define MAXS 64

static cJSON *load_json(const char *path, const char *what)
{
	char *text = slurp(path, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!j)
		result(0, what, "cannot read %s as JSON", path);
	return j;
}

/* ------------------------------------------------------------ ledger */

struct ent {
	char what;
	int step, space, dev, id;
	long bytes;
	char fn[64], parent[64];
};
static struct ent ev[MAXE];
static int nev;

static struct fn {
	char name[64], parent[64];
	long self_cuda, total_cuda, self_cpu, total_cpu;
	long dself[MAXD], dtotal[MAXD];
	int cuda_allocs, cpu_allocs;
	int active; /* made a CUDA memory call in a recorded step */
} fns[MAXF];
static int nfns;

static struct fn *fn_get(const char *name, const char *parent)
{
	for (int i = 0; i < nfns; i++)
		if (!strcmp(fns[i].name, name))
			return &fns[i];
	if (nfns == MAXF)
		return NULL;
	struct fn *f = &fns[nfns++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->parent, sizeof(f->parent), "%s", parent);
	return f;
}

static int read_ledger(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && nev < MAXE) {
		struct ent *e = &ev[nev];
		if ((line[0] != 'A' && line[0] != 'F') ||
		    sscanf(line, "%c %d %63s %63s %d %d %ld %d", &e->what, &e->step, e->fn,
			   e->parent, &e->space, &e->dev, &e->bytes, &e->id) != 8)
			continue;
		nev++;
	}
	fclose(f);
	return nev ? 0 : -1;
}

static int recorded[MAXS], nrec;

static int is_recorded(int step)
{
	for (int i = 0; i < nrec; i++)
		if (recorded[i] == step)
			return 1;
	return 0;
}

/* the allocation of block id, or NULL */
static const struct ent *alloc_of(int id)
{
	for (int i = 0; i < nev; i++)
		if (ev[i].what == 'A' && ev[i].id == id)
			return &ev[i];
	return NULL;
}

static int is_cuda(int space)
{
	return space == 1 || space == 3;
}

/* ------------------------------------------------------------ the oracle */

static long unknown_frees;

/* Sums over the recorded steps, per function and up its callers. */
static void expect(void)
{
	/* every function and its caller first (one caller each in the
	 * fixture, no recursion) */
	for (int i = 0; i < nev; i++) {
		struct fn *f = fn_get(ev[i].fn, ev[i].parent);
		if (f && !strcmp(f->parent, "-"))
			snprintf(f->parent, sizeof(f->parent), "%s", ev[i].parent);
		if (strcmp(ev[i].parent, "-"))
			fn_get(ev[i].parent, "-");
	}
	for (int i = 0; i < nev; i++) {
		const struct ent *e = &ev[i];
		if (!is_recorded(e->step))
			continue;
		const struct ent *a = e->what == 'A' ? e : alloc_of(e->id);
		long d = e->what == 'A' ? e->bytes : -e->bytes;
		if (!a || !is_recorded(a->step)) { /* allocated before: unknown */
			d = 0;
			unknown_frees++;
		}
		struct fn *f = fn_get(e->fn, e->parent);
		if (!f)
			continue;
		f->active = 1;
		int cuda = is_cuda(e->space), dev = e->dev < MAXD ? e->dev : MAXD - 1;
		if (cuda) {
			f->self_cuda += d;
			f->dself[dev] += d;
			f->cuda_allocs += e->what == 'A';
		} else {
			f->self_cpu += d;
			f->cpu_allocs += e->what == 'A';
		}
		for (struct fn *g = f; g; g = strcmp(g->parent, "-") ? fn_get(g->parent, "-") : NULL) {
			if (cuda) {
				g->total_cuda += d;
				g->dtotal[dev] += d;
			} else {
				g->total_cpu += d;
			}
		}
	}
}

/* ------------------------------------------------------------ report */

static const cJSON *row_of(const cJSON *rows, const char *name)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, rows) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "name");
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
		if (cJSON_IsString(n) && !strcmp(n->valuestring, name) && cJSON_IsString(k) &&
		    !strcmp(k->valuestring, "function"))
			return r;
	}
	return NULL;
}

static long num(const cJSON *o, const char *k, int *have)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (have)
		*have = cJSON_IsNumber(v);
	return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

static void check_rows(const cJSON *rep, int exact)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(rep, "rows");
	int bad = 0, checked = 0;
	char why[1536] = "";
	size_t wl = 0;
#define DIFF(...)                                                               \
	do {                                                                    \
		if (wl < sizeof(why) - 200)                                     \
			wl += snprintf(why + wl, sizeof(why) - wl, __VA_ARGS__); \
		bad++;                                                          \
	} while (0)
	int skipped = 0;
	for (int i = 0; i < nfns; i++) {
		const struct fn *f = &fns[i];
		if (!f->active) {
			/* main: open when the recording began, the reader knows
			 * only the calls made inside it */
			skipped++;
			continue;
		}
		const cJSON *r = row_of(rows, f->name);
		if (!r) {
			if (f->total_cuda || f->self_cuda || f->cuda_allocs)
				DIFF("%s: no row; ", f->name);
			continue;
		}
		int h1, h2, h3;
		long s = num(r, "self_cuda_mem", &h1), t = num(r, "cuda_mem", &h2),
		     n = num(r, "cuda_allocs", &h3);
		if (!h1 || !h2 || !h3) {
			DIFF("%s: no self_cuda_mem/cuda_mem/cuda_allocs; ", f->name);
			continue;
		}
		checked++;
		if (s != f->self_cuda || t != f->total_cuda || n != f->cuda_allocs)
			DIFF("%s: Self CUDA Mem %ld CUDA Mem %ld allocs %ld, ledger %ld %ld %d; ",
			     f->name, s, t, n, f->self_cuda, f->total_cuda, f->cuda_allocs);
		const cJSON *bs = cJSON_GetObjectItemCaseSensitive(r, "self_cuda_mem_by_device");
		const cJSON *bt = cJSON_GetObjectItemCaseSensitive(r, "cuda_mem_by_device");
		for (int d = 0; d < MAXD; d++) {
			char k[16];
			snprintf(k, sizeof(k), "%d", d);
			long ds = num(bs, k, NULL), dt = num(bt, k, NULL);
			if (ds != f->dself[d] || dt != f->dtotal[d])
				DIFF("%s on cuda:%d: Self %ld Mem %ld, ledger %ld %ld; ", f->name, d,
				     ds, dt, f->dself[d], f->dtotal[d]);
		}
		if (exact) {
			long cs = num(r, "self_cpu_mem", NULL), ct = num(r, "cpu_mem", NULL);
			if (cs != f->self_cpu || ct != f->total_cpu)
				DIFF("%s: Self CPU Mem %ld CPU Mem %ld, ledger (pinned) %ld %ld; ",
				     f->name, cs, ct, f->self_cpu, f->total_cpu);
		}
	}
	if (!bad)
		snprintf(why, sizeof(why), "%d functions equal the ledger to the byte%s%s", checked,
			 exact ? " (and CPU Mem: pinned)" : "",
			 skipped ? "; callers with no call of their own in the steps not checked"
				 : "");
	result(!bad && checked > 0, "CUDA Mem and Self CUDA Mem per function and device", "%s",
	       why);
	if (exact) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(rep, "memory");
		long u = num(m, "unknown_frees", NULL);
		result(u == unknown_frees, "frees of unknown size",
		       "%ld counted, the ledger frees %ld blocks allocated before the recording",
		       u, unknown_frees);
	}
}

/* peak_bytes of each recorded step, per CUDA space */
static void check_peaks(const cJSON *rep)
{
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(rep, "step_list"), *s;
	int bad = 0, checked = 0;
	char why[1536] = "";
	size_t wl = 0;
	/* per step and (space, device): bytes of the blocks the step itself
	 * allocated and has not freed; a step's peak is their most */
	long own[MAXS][4][MAXD] = { { { 0 } } }, peak[MAXS][4][MAXD] = { { { 0 } } };
	for (int i = 0; i < nev; i++) {
		const struct ent *e = &ev[i];
		int k;
		for (k = 0; k < nrec && recorded[k] != e->step; k++)
			;
		if (k == nrec || e->space < 1 || e->space > 3)
			continue;
		int dev = e->dev < MAXD ? e->dev : MAXD - 1;
		const struct ent *a = e->what == 'A' ? e : alloc_of(e->id);
		if (!a || a->step != e->step)
			continue;
		own[k][e->space][dev] += e->what == 'A' ? e->bytes : -e->bytes;
		if (own[k][e->space][dev] > peak[k][e->space][dev])
			peak[k][e->space][dev] = own[k][e->space][dev];
	}
	cJSON_ArrayForEach(s, steps) {
		int step = (int)num(s, "step", NULL), k;
		for (k = 0; k < nrec && recorded[k] != step; k++)
			;
		const cJSON *pb = cJSON_GetObjectItemCaseSensitive(s, "peak_bytes");
		if (k == nrec || !pb) {
			DIFF("step %d: no peak_bytes; ", step);
			continue;
		}
		for (int sp = 1; sp <= 3; sp++)
			for (int d = 0; d < MAXD; d++) {
				char name[32];
				snprintf(name, sizeof(name), "cuda:%d%s", d,
					 sp == 2 ? " pinned" : sp == 3 ? " managed" : "");
				int have;
				long got = num(pb, name, &have);
				if (!have && !peak[k][sp][d])
					continue;
				checked++;
				if (got != peak[k][sp][d])
					DIFF("step %d %s: peak %ld, ledger %ld; ", step, name, got,
					     peak[k][sp][d]);
			}
	}
	if (!bad)
		snprintf(why, sizeof(why), "%d (step, space) peaks equal the ledger's", checked);
	result(!bad && checked > 0, "peak bytes of each step's own blocks per CUDA space", "%s", why);
}

/* ------------------------------------------------------------ leaks */

static void check_leaks(const char *path)
{
	/* expected: per (function, device) blocks of CUDA spaces allocated in
	 * recorded steps that no F line frees */
	struct {
		char fn[64];
		int dev, space;
		long count, bytes;
	} want[64];
	int nwant = 0;
	for (int i = 0; i < nev; i++) {
		const struct ent *e = &ev[i];
		if (e->what != 'A' || !is_recorded(e->step))
			continue;
		int freed = 0;
		for (int j = 0; j < nev && !freed; j++)
			freed = ev[j].what == 'F' && ev[j].id == e->id;
		if (freed)
			continue;
		int k;
		for (k = 0; k < nwant && (strcmp(want[k].fn, e->fn) || want[k].dev != e->dev ||
					  want[k].space != e->space);
		     k++)
			;
		if (k == nwant) {
			if (nwant == 64)
				continue;
			memset(&want[k], 0, sizeof(want[k]));
			snprintf(want[k].fn, sizeof(want[k].fn), "%s", e->fn);
			want[k].dev = e->dev;
			want[k].space = e->space;
			nwant++;
		}
		want[k].count++;
		want[k].bytes += e->bytes;
	}
	struct group {
		char space[32], fn[128];
		long count, bytes;
	} got[256];
	int ngot = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		result(0, "leaks per device", "cannot read %s", path);
		return;
	}
	char line[1024];
	int header = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "Space ", 6)) {
			header = 1;
			continue;
		}
		/* "SPACE(14)  BLOCKS  BYTES  HUMAN(2 words)  FUNCTION"; stack
		 * lines (--stacks) start with blanks */
		if (!header || strlen(line) < 16 || line[0] == ' ' || ngot == 256)
			continue;
		struct group *g = &got[ngot];
		char human[2][32];
		int at = 0;
		snprintf(g->space, sizeof(g->space), "%.14s", line);
		for (size_t k = strlen(g->space); k > 0 && g->space[k - 1] == ' '; k--)
			g->space[k - 1] = 0;
		if (sscanf(line + 14, "%ld %ld %31s %31s %n", &g->count, &g->bytes, human[0], human[1],
			   &at) != 4 || !at)
			continue;
		snprintf(g->fn, sizeof(g->fn), "%s", line + 14 + at);
		ngot++;
	}
	fclose(f);
	if (!header) {
		result(0, "leaks per device", "no table in %s (stepscope memory --leaks)", path);
		return;
	}
	int bad = 0;
	char why[1536] = "";
	size_t wl = 0;
	for (int k = 0; k < nwant; k++) {
		char space[32];
		snprintf(space, sizeof(space), "cuda:%d%s", want[k].dev,
			 want[k].space == 2 ? " pinned" : want[k].space == 3 ? " managed" : "");
		long count = 0, bytes = 0;
		for (int i = 0; i < ngot; i++)
			if (!strcmp(got[i].fn, want[k].fn) && !strcmp(got[i].space, space))
				count += got[i].count, bytes += got[i].bytes;
		if (count != want[k].count || bytes != want[k].bytes)
			DIFF("%s on %s: %ld blocks %ld bytes, ledger %ld %ld; ", want[k].fn, space,
			     count, bytes, want[k].count, want[k].bytes);
	}
	/* and nothing else leaked in a CUDA space */
	for (int i = 0; i < ngot; i++) {
		if (strncmp(got[i].space, "cuda:", 5))
			continue;
		int k;
		for (k = 0; k < nwant; k++) {
			char space[32];
			snprintf(space, sizeof(space), "cuda:%d%s", want[k].dev,
				 want[k].space == 2 ? " pinned" : want[k].space == 3 ? " managed" : "");
			if (!strcmp(got[i].fn, want[k].fn) && !strcmp(got[i].space, space))
				break;
		}
		if (k == nwant)
			DIFF("%s on %s: %ld blocks listed, the ledger has none; ", got[i].fn,
			     got[i].space, got[i].count);
	}
	char list[512] = "";
	for (int k = 0, l = 0; k < nwant; k++)
		l += snprintf(list + l, sizeof(list) - (size_t)l, "%s%s cuda:%d %ld x %ld B",
			      k ? ", " : "", want[k].fn, want[k].dev, want[k].count,
			      want[k].count ? want[k].bytes / want[k].count : 0);
	result(!bad && nwant > 0, "leaks per device", "%s%s", bad ? why : list,
	       bad ? "" : ", as the ledger");
}

int main(int argc, char **argv)
{
	const char *ledger = NULL, *report = NULL, *leaks = NULL;
	int exact = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--label") && i + 1 < argc)
			label = argv[++i];
		else if (!strcmp(argv[i], "--ledger") && i + 1 < argc)
			ledger = argv[++i];
		else if (!strcmp(argv[i], "--report") && i + 1 < argc)
			report = argv[++i];
		else if (!strcmp(argv[i], "--leaks") && i + 1 < argc)
			leaks = argv[++i];
		else if (!strcmp(argv[i], "--exact"))
			exact = 1;
		else {
			fprintf(stderr, "usage: mem-check [--label NAME] [--exact] --ledger FILE "
					"--report FILE [--leaks FILE]\n");
			return 2;
		}
	}
	if (!ledger || !report) {
		fprintf(stderr, "mem-check: --ledger and --report are needed\n");
		return 2;
	}
	if (read_ledger(ledger)) {
		result(0, "ledger", "no A/F lines in %s", ledger);
		return failed;
	}
	cJSON *rep = load_json(report, "report");
	if (rep) {
		const cJSON *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(rep, "step_list"))
			if (nrec < MAXS)
				recorded[nrec++] = (int)num(s, "step", NULL);
		char list[256] = "";
		for (int i = 0, l = 0; i < nrec; i++)
			l += snprintf(list + l, sizeof(list) - (size_t)l, "%s%d", i ? " " : "",
				      recorded[i]);
		result(nrec > 0, "recorded steps", nrec ? "%s" : "none in the report's step_list",
		       list);
		expect();
		if (nrec) {
			check_rows(rep, exact);
			check_peaks(rep);
		}
		cJSON_Delete(rep);
	}
	if (leaks && nrec)
		check_leaks(leaks);
	return failed > 100 ? 100 : failed;
}
