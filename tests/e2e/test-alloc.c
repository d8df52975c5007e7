/*
 * test-alloc.c - end to end: recorded allocations (memory.allocations,
 * issue 34) against the ledger of s-alloc, a trainer that writes down
 * every allocation and free it makes (size, address, the functions open,
 * the step; see s-alloc.c: threads, a signal handler that allocates, one
 * that allocates and siglongjmps), recorded on steps 2..5 of 8.
 *
 * Checks, all exact: `report --format json` gives every function the
 * ledger's Self CPU Mem (bytes allocated minus freed directly in it), CPU
 * Mem (with its callees, a name once per path) and Allocs over the
 * recorded steps, 0 for every other function, one free of unknown size
 * (log_metrics' realloc of the block of step 1); `report --steps` the
 * ledger's peak bytes of each recorded step's own blocks; `memory --leaks` names
 * leak_small with 4 blocks of 24 bytes and nothing else; trace.json has
 * one [memory] instant per recorded allocation and free with the ledger's
 * address and bytes.  Also: memory.allocations off records nothing and
 * shows no memory column; an allocator of the program's own in a shared
 * library (lib-alloc-own.c) is the one the wrappers forward to and the
 * figures still equal the ledger; a program that defines malloc in its
 * executable runs as without stepscope (the same calls) and is told its
 * allocations are not recorded; a fork in a recorded step (the child's
 * allocation and free in its own trace, the parent's figures exact); a
 * -static build (libstepscope.a's wrappers, linked by --wrap) exact too;
 * C++ new and delete; a 20 us timer whose handler allocates at any
 * instant (thousands of interruptions, every record arrives once); a
 * trace whose first STEP record has a size of 0xfffffff0 gives the same
 * leak list as intact, with one warning naming the record's offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"
#include "format.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
#define SETS "--set step.function=train_step --set window.start_step=2 " \
	     "--set window.end_step=6 --set memory.allocations=true"
enum { FIRST = 2, END = 6, STEPS = 8, MAXF = 64, MAXL = 4096 };

/* The ledger's view of one function over the recorded steps. */
struct fn {
	char name[64];
	long long self, total, allocs;
};

struct ledger {
	struct fn f[MAXF];
	int nf;
	long long peak[STEPS];      /* of the step's own blocks */
	long long live_peak[STEPS]; /* of the blocks live since the window opened */
	int unknown;                /* frees of blocks allocated before FIRST */
	int nrec;                   /* recorded allocations and frees */
	struct { unsigned long long addr, size; char kind; } rec[MAXL];
};

static struct fn *fn_get(struct ss_e2e *t, struct ledger *l, const char *name)
{
	for (int i = 0; i < l->nf; i++)
		if (!strcmp(l->f[i].name, name))
			return &l->f[i];
	SS_E2E_CHECK(t, l->nf < MAXF, "too many functions in the ledger");
	struct fn *f = &l->f[l->nf++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	return f;
}

static int recorded(int step)
{
	return step >= FIRST && step < END;
}

/* Parse s-alloc's output (see s-alloc.c) into l. */
static void parse_ledger(struct ss_e2e *t, const char *out, struct ledger *l)
{
	char *copy = strdup(out), *save = NULL;
	memset(l, 0, sizeof(*l));
	SS_E2E_CHECK(t, copy, "out of memory");
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind, path[128];
		int step, astep = -1;
		unsigned long long size, addr;
		unsigned long long lp;
		if (sscanf(line, "P %d %llu %llu", &step, &size, &lp) == 3 && step >= 0 &&
		    step < STEPS) {
			l->peak[step] = (long long)size;
			l->live_peak[step] = (long long)lp;
			continue;
		}
		int n = sscanf(line, "%c %d %llu %llx %127s %d", &kind, &step, &size, &addr, path, &astep);
		if (n < 5 || (kind != 'A' && kind != 'F') || !recorded(step))
			continue;
		long long delta = kind == 'A' ? (long long)size : recorded(astep) ? -(long long)size : 0;
		if (kind == 'F' && !recorded(astep))
			l->unknown++;
		if (l->nrec < MAXL) {
			l->rec[l->nrec].addr = addr;
			l->rec[l->nrec].size = kind == 'F' && !recorded(astep) ? 0 : size;
			l->rec[l->nrec].kind = kind;
			l->nrec++;
		}
		/* the innermost function is the last one of the path */
		char *names[16];
		int nn = 0;
		for (char *s = path, *p; nn < 16 && (p = strsep(&s, "/"));)
			names[nn++] = p;
		struct fn *self = fn_get(t, l, names[nn - 1]);
		self->self += delta;
		self->allocs += kind == 'A';
		for (int i = 0; i < nn; i++) {
			int seen = 0;
			for (int j = 0; j < i; j++)
				seen |= !strcmp(names[j], names[i]);
			if (!seen)
				fn_get(t, l, names[i])->total += delta;
		}
	}
	free(copy);
}

static long long num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

static int has_row(const cJSON *rows, const char *want)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
		if (cJSON_IsString(name) && !strcmp(name->valuestring, want))
			return 1;
	}
	return 0;
}

/* report --format json --steps: every row against the ledger */
static void check_report(struct ss_e2e *t, const struct ledger *l)
{
	SS_E2E_SH_OK(t, SS " report --format json --steps --limit 0 -o report.json run");
	cJSON *root = ss_e2e_load_json(t, "report.json");
	const cJSON *row, *rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
	int found = 0;
	cJSON_ArrayForEach(row, rows) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
		SS_E2E_CHECK(t, cJSON_IsString(name), "a row without a name");
		const struct fn *f = NULL;
		for (int i = 0; i < l->nf; i++)
			if (!strcmp(l->f[i].name, name->valuestring))
				f = &l->f[i];
		long long self = f ? f->self : 0, total = f ? f->total : 0,
			  allocs = f ? f->allocs : 0;
		found += f != NULL;
		SS_E2E_CHECK(t, num(row, "self_cpu_mem") == self && num(row, "cpu_mem") == total &&
				     num(row, "allocs") == allocs,
			     "%s: Self CPU Mem %lld, CPU Mem %lld, Allocs %lld; the ledger says "
			     "%lld, %lld, %lld", name->valuestring, num(row, "self_cpu_mem"),
			     num(row, "cpu_mem"), num(row, "allocs"), self, total, allocs);
	}
	/* main was open when the window opened: a row (clipped, its CPU Mem
	 * the steps') where the runtime saw it on the stack, as the time
	 * columns show it; the -static build's window walk does not */
	SS_E2E_CHECK(t, found == l->nf || (found == l->nf - 1 && !has_row(rows, "main")),
		     "%d of the ledger's %d functions have a row", found, l->nf);
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory");
	SS_E2E_CHECK(t, num(mem, "unknown_frees") == l->unknown,
		     "unknown_frees %lld, the ledger has %d", num(mem, "unknown_frees"), l->unknown);
	/* every allocation the ledger has is made in a recorded call; none
	 * of the runtime's own threads' (the memory poller's) is recorded */
	SS_E2E_CHECK(t, num(mem, "outside") == 0, "%lld allocations outside any call",
		     num(mem, "outside"));
	const cJSON *st, *steps = cJSON_GetObjectItemCaseSensitive(root, "step_list");
	int nsteps = 0;
	cJSON_ArrayForEach(st, steps) {
		long long step = num(st, "step");
		const cJSON *peak = cJSON_GetObjectItemCaseSensitive(st, "peak_bytes");
		SS_E2E_CHECK(t, recorded((int)step), "step %lld was not recorded", step);
		SS_E2E_CHECK(t, num(peak, "heap") == l->peak[step],
			     "step %lld: peak %lld, the ledger's %lld", step, num(peak, "heap"),
			     l->peak[step]);
		nsteps++;
	}
	SS_E2E_CHECK(t, nsteps == END - FIRST, "%d steps, want %d", nsteps, END - FIRST);
	cJSON_Delete(root);
}

/* memory --leaks: leak_small's blocks of the recorded steps, nothing else */
static void check_leaks(struct ss_e2e *t, const struct ledger *l)
{
	const struct fn *leak = NULL;
	for (int i = 0; i < l->nf; i++)
		if (!strcmp(l->f[i].name, "leak_small"))
			leak = &l->f[i];
	SS_E2E_CHECK(t, leak && leak->allocs == END - FIRST, "the ledger has no leak_small");
	SS_E2E_SH_OK(t, SS " memory --leaks run");
	char want[256];
	snprintf(want, sizeof(want), "Leaked: %lld blocks, %lld bytes", leak->allocs, leak->self);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, want) == 1, "no line '%s' in:\n%s", want, t->out);
	unsigned long long blocks = 0, bytes = 0;
	char name[64] = "";
	const char *line = strstr(t->out, "\nheap");
	SS_E2E_CHECK(t, line && sscanf(line, " heap %llu %llu %*s %*s %63s", &blocks, &bytes, name) == 3,
		     "no heap row in:\n%s", t->out);
	SS_E2E_CHECK(t, !strcmp(name, "leak_small") && blocks == (unsigned long long)leak->allocs &&
			     bytes == (unsigned long long)leak->self,
		     "first leak row: %s %llu blocks %llu bytes; want leak_small %lld %lld", name,
		     blocks, bytes, leak->allocs, leak->self);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, "heap") == 1, "more than one leak row:\n%s", t->out);
}

struct ab {
	unsigned long long addr;
	long long bytes;
};

static int ab_cmp(const void *x, const void *y)
{
	const struct ab *a = x, *b = y;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

/* trace.json: one [memory] instant per recorded allocation and free, the
 * ledger's addresses (the pointers the program got) and bytes; the "CPU
 * memory" track reaches the highest live bytes of the window */
static void check_trace(struct ss_e2e *t, const struct ledger *l)
{
	static struct ab want[MAXL], got[MAXL];
	int nw = 0, ng = 0;
	long long top = 0, peak = 0;
	for (int i = 0; i < l->nrec; i++) {
		want[nw].addr = l->rec[i].addr;
		want[nw].bytes = l->rec[i].kind == 'A' ? (long long)l->rec[i].size
						       : -(long long)l->rec[i].size;
		nw++;
	}
	for (int s = FIRST; s < END; s++)
		if (l->live_peak[s] > peak)
			peak = l->live_peak[s];
	ss_e2e_symbolize(t, "run");
	cJSON *root = ss_e2e_load_json(t, "run/trace.json");
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		if (!cJSON_IsString(name))
			continue;
		if (!strcmp(name->valuestring, "CPU memory") && num(args, "value") > top)
			top = num(args, "value");
		if (strcmp(name->valuestring, "[memory]"))
			continue;
		SS_E2E_CHECK(t, ng < MAXL, "too many [memory] events");
		SS_E2E_CHECK(t, num(args, "Device Type") == 0 && num(args, "Device Id") == -1,
			     "a [memory] event not on the CPU");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(args, "Addr");
		got[ng].addr = cJSON_IsNumber(a) ? (unsigned long long)a->valuedouble : 0;
		got[ng].bytes = num(args, "Bytes");
		ng++;
	}
	cJSON_Delete(root);
	SS_E2E_CHECK(t, ng == nw, "%d [memory] events, the ledger has %d recorded calls", ng, nw);
	qsort(want, nw, sizeof(*want), ab_cmp);
	qsort(got, ng, sizeof(*got), ab_cmp);
	for (int i = 0; i < nw; i++)
		SS_E2E_CHECK(t, want[i].addr == got[i].addr && want[i].bytes == got[i].bytes,
			     "[memory] event %d: Addr %#llx Bytes %lld; the ledger's %#llx %lld", i,
			     got[i].addr, got[i].bytes, want[i].addr, want[i].bytes);
	SS_E2E_CHECK(t, top == peak, "CPU memory track's highest value %lld, the highest live bytes %lld",
		     top, peak);
	/* Perfetto: the same instants, on a [memory] track of each thread */
	ss_e2e_need(t, "command -v protoc", "protoc", "protobuf-compiler");
	SS_E2E_SH_OK(t, SS " symbolize --format perfetto -o run/t.perfetto-trace run && "
		     "protoc --decode=perfetto.protos.Trace -I \"$SS_E2E_SRC/tests/proto\" "
		     "\"$SS_E2E_SRC/tests/proto/perfetto-subset.proto\" < run/t.perfetto-trace | "
		     "grep -c 'name: \"Bytes\"'");
	SS_E2E_CHECK(t, atoi(t->out) == nw, "%d [memory] instants in Perfetto, want %d",
		     atoi(t->out), nw);
}

static void record_trainer(struct ss_e2e *t, const char *extra, const char *args,
			   struct ledger *l)
{
	ss_e2e_build(t, "alloc", NULL);
	SS_E2E_SH_OK(t, SS " record -o run " SETS " %s -- ./s-alloc %d %d %d %s", extra, STEPS,
		     FIRST, END, args);
	parse_ledger(t, t->out, l);
	SS_E2E_CHECK(t, l->nf >= 10 && l->unknown == 1,
		     "the ledger has %d functions and %d unknown frees", l->nf, l->unknown);
}

static void test_trainer(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct ledger l;
	record_trainer(t, "", "", &l);
	check_report(t, &l);
	check_leaks(t, &l);
	check_trace(t, &l);
	/* the HTML memory view: the plot and the top allocator first */
	SS_E2E_SH_OK(t, SS " html run -o r.html && grep -c '<h2 id=\"allocations\">' r.html && "
		     "sed -n '/Top allocating/,/<\\/table>/p' r.html | sed -n 3p");
	SS_E2E_CHECK(t, atoi(t->out) == 1 && strstr(t->out, ">layer_forward<") &&
			     strstr(t->out, ">48.00 KiB<"),
		     "no memory view with layer_forward's 48 KiB on top: %s", t->out);
	ss_e2e_pass(t);
}

/* A -static link: libstepscope.a's wrappers, by stepscope-cc's --wrap */
static void test_static(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct ledger l;
	ss_e2e_build(t, "alloc", "-static -Wl,--fatal-warnings");
	SS_E2E_SH_OK(t, "! readelf -d s-alloc | grep -q NEEDED");
	SS_E2E_SH_OK(t, SS " record -o run " SETS " -- ./s-alloc %d %d %d", STEPS, FIRST, END);
	parse_ledger(t, t->out, &l);
	check_report(t, &l);
	check_leaks(t, &l);
	ss_e2e_pass(t);
}

/* C++: new and delete go through the malloc family.  s-alloc-cxx.cc, 3
 * recorded steps: make_tensor 2 blocks, 1056 bytes a step, freed by
 * train_step; grow's vector 256 + 512 bytes, all freed in grow (a gcc
 * build: std::vector's functions, from a system header, are not
 * instrumented, their calls are grow's; C++ names carry their parameters) */
static void test_cxx(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope-cc\" g++ -O2 -I\"$SS_E2E_SRC/tests/e2e\" "
		     "-o s-alloc-cxx \"$SS_E2E_SRC/tests/e2e/s-alloc-cxx.cc\"");
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set window.start_step=2 "
		     "--set window.end_step=5 --set memory.allocations=true -- ./s-alloc-cxx");
	SS_E2E_CHECK(t, strstr(t->out, "tensor 32 data 1024"), "unexpected sizes: %s", t->out);
	SS_E2E_SH_OK(t, SS " report --format json --limit 0 -o r.json run");
	cJSON *root = ss_e2e_load_json(t, "r.json");
	static const struct { const char *name; long long self, total, allocs; } want[] = {
		{ "make_tensor(long)", 3 * 1056, 3 * 1056, 6 },
		{ "train_step()", -3 * 1056, 0, 0 },
		{ "grow()", 0, 0, 6 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const cJSON *row, *found = NULL;
		cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, "rows")) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
			if (cJSON_IsString(name) && !strcmp(name->valuestring, want[i].name))
				found = row;
		}
		SS_E2E_CHECK(t, found && num(found, "self_cpu_mem") == want[i].self &&
				     num(found, "cpu_mem") == want[i].total &&
				     num(found, "allocs") == want[i].allocs,
			     "%s: Self CPU Mem %lld, CPU Mem %lld, Allocs %lld; want %lld, %lld, %lld",
			     want[i].name, found ? num(found, "self_cpu_mem") : -1,
			     found ? num(found, "cpu_mem") : -1, found ? num(found, "allocs") : -1,
			     want[i].self, want[i].total, want[i].allocs);
	}
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

/* Signal handlers that allocate at any instant (a 20 us timer, its
 * handler's malloc from lib-alloc-bump.c, safe anywhere): the records of
 * the interrupted thread and of its handlers all arrive, none twice,
 * each in its function (s-alloc-sig.c). */
static void test_signals(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	long a = -1, f = -1, h = -1;
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -o liballocbump.so "
		     "\"$SS_E2E_SRC/tests/e2e/lib-alloc-bump.c\"");
	ss_e2e_build(t, "alloc-sig", "-L. -lallocbump -Wl,-rpath,\"$PWD\"");
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set window.start_step=1 "
		     "--set window.end_step=5 --set memory.allocations=true -- ./s-alloc-sig 6 1 5 5000");
	const char *p = strstr(t->out, "allocs ");
	SS_E2E_CHECK(t, p && sscanf(p, "allocs %ld frees %ld handler %ld", &a, &f, &h) == 3,
		     "no counts: %s", t->out);
	SS_E2E_SH_OK(t, SS " report --format json -o r.json run");
	cJSON *root = ss_e2e_load_json(t, "r.json");
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory");
	SS_E2E_CHECK(t, !cJSON_GetObjectItemCaseSensitive(root, "lost"), "events were lost");
	SS_E2E_CHECK(t, num(mem, "allocs") == a && num(mem, "frees") == f &&
			     num(mem, "unknown_frees") == 0 && num(mem, "outside") == 0,
		     "recorded %lld allocs, %lld frees (%lld unknown, %lld outside); the program "
		     "made %ld and %ld", num(mem, "allocs"), num(mem, "frees"),
		     num(mem, "unknown_frees"), num(mem, "outside"), a, f);
	const cJSON *row;
	long long churn = -1, alarm = 0;
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, "rows")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
		if (cJSON_IsString(name) && !strcmp(name->valuestring, "churn"))
			churn = num(row, "allocs");
		if (cJSON_IsString(name) && !strcmp(name->valuestring, "on_alarm"))
			alarm = num(row, "allocs");
	}
	SS_E2E_CHECK(t, churn == a - h && alarm == h,
		     "churn %lld allocs, on_alarm %lld; the program: %ld and %ld", churn, alarm,
		     a - h, h);
	if (!h)
		printf("note: the timer never fired in a recorded step: nothing interrupted\n");
	cJSON_Delete(root);
	ss_e2e_pass(t);
}

/* memory.allocations off (the default): nothing recorded, no column */
static void test_off(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "alloc", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step --set window.start_step=2 "
		     "--set window.end_step=6 -- ./s-alloc %d %d %d", STEPS, FIRST, END);
	SS_E2E_SH_OK(t, SS " report --format csv run");
	SS_E2E_CHECK(t, !strstr(t->out, "cpu_mem") && !strstr(t->out, "allocs"),
		     "memory columns without memory.allocations:\n%s", t->out);
	SS_E2E_SH_OK(t, SS " symbolize run");
	SS_E2E_SH_OK(t, "grep -c '\\[memory\\]\\|CPU memory' run/trace.json || true");
	SS_E2E_CHECK(t, atoi(t->out) == 0, "memory events without memory.allocations");
	SS_E2E_SH_OK(t, SS " html run -o r.html && grep -c 'Recorded allocations' r.html || true");
	SS_E2E_CHECK(t, atoi(t->out) == 0, "a memory view without memory.allocations");
	int st = ss_e2e_sh(t, SS " memory --leaks run");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "no recorded allocations") == 1,
		     "memory --leaks without records says: %s", t->err);
	st = ss_e2e_sh(t, SS " memory --stacks run");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "--stacks goes with --leaks") == 1,
		     "memory --stacks alone says: %s", t->err);
	st = ss_e2e_sh(t, SS " memory --leaks nowhere");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	ss_e2e_pass(t);
}

/* An allocator of the program's own in a shared library: the wrappers
 * forward to it (it is the one recorded), the ledger still holds. */
static void test_own_library(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct ledger l;
	SS_E2E_SH_OK(t, "gcc -shared -fPIC -O2 -Wall -o liballocown.so "
		     "\"$SS_E2E_SRC/tests/e2e/lib-alloc-own.c\"");
	ss_e2e_build(t, "alloc", "-L. -lallocown -Wl,-rpath,\"$PWD\"");
	/* record.stack too: libunwind's own work at each entry is not the
	 * program's, and --leaks gives the call paths */
	SS_E2E_SH_OK(t, SS " record -o run " SETS " --set record.stack=true -- ./s-alloc %d %d %d",
		     STEPS, FIRST, END);
	long m = -1, f = -1;
	const char *p = strstr(t->err, "lib-alloc-own: malloc ");
	SS_E2E_CHECK(t, p && sscanf(p, "lib-alloc-own: malloc %ld calloc %*d realloc %*d free %ld",
				    &m, &f) == 2, "no counts from lib-alloc-own: %s", t->err);
	parse_ledger(t, t->out, &l);
	/* every step's 8 mallocs went through it */
	SS_E2E_CHECK(t, m >= STEPS * 8L && f >= STEPS * 8L,
		     "lib-alloc-own counted %ld mallocs and %ld frees", m, f);
	check_report(t, &l);
	check_leaks(t, &l);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->out, "from main > train_step > leak_small") == 1,
		     "no call path under leak_small:\n%s", t->out);
	ss_e2e_pass(t);
}

/* A program that defines malloc in its executable comes first: it runs as
 * without stepscope, and is told its allocations are not recorded; memory
 * --leaks says why there is no verdict, not to turn the setting on. */
static void test_own_executable(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_SH_OK(t, "%s %s -pthread -I\"$SS_E2E_SRC/tests/e2e\" -o plain "
		     "\"$SS_E2E_SRC/tests/e2e/s-rt-alloc.c\" && ./plain", t->v->cc, t->v->opt);
	char *plain = strdup(t->out);
	ss_e2e_build(t, "rt-alloc", NULL);
	SS_E2E_SH_OK(t, SS " record -o run --set step.function=train_step "
		     "--set memory.allocations=true -- ./s-rt-alloc");
	const char *a = strstr(plain, "malloc "), *b = strstr(t->out, "malloc ");
	SS_E2E_CHECK(t, a && b && !strncmp(a, b, strcspn(a, "\n")),
		     "plain: %s\nrecorded: %s", plain, t->out);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "memory.allocations: the program defines malloc "
					  "itself") == 1, "no word of it: %s", t->err);
	/* memory --leaks: not told to turn on what was on (issue 45) */
	int st = ss_e2e_sh(t, SS " memory --leaks run");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "run: no recorded allocations although "
					  "memory.allocations was on: the program's malloc is not one "
					  "stepscope follows (its own, or a static link without "
					  "stepscope-cc; the run's stderr said which at exit)") == 1 &&
		     !strstr(t->err, "record with --set memory.allocations=true"),
		     "memory --leaks said: %s", t->err);
	free(plain);
	ss_e2e_pass(t);
}

/* A fork in a recorded step: the child allocates 64 bytes in child_work
 * and frees them, in its own trace; the parent's figures are the ledger's.
 * The memory poller runs too: its thread's allocations are not the
 * program's. */
static void test_fork(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static struct ledger l;
	ss_e2e_build(t, "alloc", NULL);
	SS_E2E_SH_OK(t, SS " record -o run " SETS " --set memory.enabled=true "
		     "--set memory.interval_ms=1 -- ./s-alloc %d %d %d fork", STEPS, FIRST, END);
	SS_E2E_CHECK(t, strstr(t->out, "child ok"), "the child did not run: %s", t->out);
	size_t n = strlen(t->out) + 128;
	char *out = malloc(n);
	SS_E2E_CHECK(t, out, "out of memory");
	snprintf(out, n, "%sA %d 64 0x1 train_step/child_work\nF %d 64 0x1 train_step/child_work %d\n",
		 t->out, FIRST, FIRST, FIRST);
	parse_ledger(t, out, &l);
	free(out);
	check_report(t, &l);
	ss_e2e_pass(t);
}

/* One damaged META record (issue 45): the first step's size set to
 * 0xfffffff0 lost the later steps, the end record and the leak list, and
 * memory --leaks said the process did not exit through exit().  Now the
 * reader names the record's offset and reads the rest: the leak list is
 * the intact run's. */
static void test_damaged_meta(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char path[4200], name[2048], want[512];
	long at = -1;

	ss_e2e_build(t, "alloc", NULL);
	SS_E2E_SH_OK(t, SS " record -o run " SETS " -- ./s-alloc %d %d %d", STEPS, FIRST, END);
	SS_E2E_SH_OK(t, SS " memory --leaks run");
	char *intact = strdup(t->out);
	SS_E2E_CHECK(t, intact && strstr(intact, "leak_small"), "no leak list: %s", t->out);
	SS_E2E_SH_OK(t, "ls run/*.sstrace > name");
	snprintf(path, sizeof(path), "%s/name", t->dir);
	FILE *f = fopen(path, "r");
	SS_E2E_CHECK(t, f && fgets(name, sizeof(name), f), "no trace");
	fclose(f);
	name[strcspn(name, "\n")] = 0;
	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	f = fopen(path, "r+b");
	SS_E2E_CHECK(t, f != NULL, "cannot open %s", path);
	/* the first STEP record of the first META chunk */
	struct ss_chunk_header ch;
	long off = 0;
	uint32_t hsize = 0;
	SS_E2E_CHECK(t, fseek(f, (long)offsetof(struct ss_file_header, header_size), SEEK_SET) == 0 && fread(&hsize, 4, 1, f) == 1, "no header");
	for (off = hsize; at < 0 && !fseek(f, off, SEEK_SET) && fread(&ch, sizeof(ch), 1, f) == 1;
	     off += (long)ch.size) {
		SS_E2E_CHECK(t, ch.magic == SS_CHUNK_MAGIC && ch.size >= sizeof(ch), "chunk at %ld", off);
		for (long pos = off + (long)sizeof(ch); ch.kind == SS_CHUNK_META &&
		     pos + 16 <= off + (long)ch.size;) {
			struct ss_meta m;
			if (fseek(f, pos, SEEK_SET) || fread(&m, sizeof(m), 1, f) != 1 || !m.type)
				break;
			if (m.type == SS_META_STEP) {
				at = pos;
				break;
			}
			pos += (long)((m.size + 7) & ~7u);
		}
	}
	SS_E2E_CHECK(t, at > 0, "no STEP record in %s", path);
	uint32_t bad = 0xfffffff0u;
	SS_E2E_CHECK(t, !fseek(f, at + 4, SEEK_SET) && fwrite(&bad, 4, 1, f) == 1, "cannot damage");
	fclose(f);
	SS_E2E_SH_OK(t, SS " memory --leaks run");
	SS_E2E_CHECK(t, !strcmp(t->out, intact), "leak list:\n%s\nintact:\n%s", t->out, intact);
	snprintf(want, sizeof(want), "damaged meta record at offset %ld: skipped %zu bytes to the "
		 "next record, and read the metadata after it", at,
		 sizeof(struct ss_meta) + sizeof(struct ss_meta_step));
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, want) == 1 && !strstr(t->err, "exit()"),
		     "expected one warning naming offset %ld, got:\n%s", at, t->err);
	free(intact);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_trainer),
		SS_E2E_TEST(test_off),
		SS_E2E_TEST(test_static),
		SS_E2E_TEST(test_cxx),
		SS_E2E_TEST(test_signals),
		SS_E2E_TEST(test_own_library),
		SS_E2E_TEST(test_own_executable),
		SS_E2E_TEST(test_fork),
		SS_E2E_TEST(test_damaged_meta),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
