/*
 * filter.c - which calls a recording window keeps (the `filter:` keys) and
 * what one recorded call costs (SS_META_OVERHEAD).
 *
 * filter.exclude / filter.include / filter.exclude_file name functions by
 * glob; before main the names are matched against the symbol tables of
 * every module built with -finstrument-functions (elfsym.c) and the
 * matching addresses go into one open-addressing table.  The hooks consult
 * it only on the recording path (gate open) and only when ss_hot.filter is
 * set: outside a window, and in a run without filters, nothing here runs.
 *
 *   exclude      the function's own ENTER/EXIT are not recorded (its
 *                callees still are): a table lookup, then return
 *   include      only calls inside an activation of these are recorded
 *   max_depth    frames deeper than this many recorded ones are skipped
 *   min_duration a call that returns sooner, with nothing recorded after its
 *                ENTER, is taken back: the ENTER slot is cleared before the
 *                chunk ever leaves memory, so its bytes never reach the disk
 *
 * Per-thread counters (skipped depth, open included frames) live in this
 * file's own thread-local block and are reset when a new window opens
 * (ss_filter_on_window), so a frame that opened outside a window cannot
 * leave them off by one.
 *
 * The calibration (ss_filter_calibrate) runs the real hooks on the calling
 * thread before main, into a scratch buffer that is never written out.
 *
 * Must never: allocate, lock or call libc on the hook path; exit or block
 * after main.
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "filter.h"
#include "internal.h"

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

#define SS_FILTER_GLOBS 256
#define SS_FILTER_NAME_MAX 512

struct ss_filter_slot *ss_filter_table;
unsigned ss_filter_bits;             /* table has 1 << bits slots */
size_t ss_filter_used;
int ss_filter_stateful;              /* include or max_depth: counters */
static int ss_filter_has_include;
static uint32_t ss_filter_max_depth; /* 0: any depth */
static uint64_t ss_filter_min_ticks; /* 0: keep short calls */
static volatile uint32_t ss_filter_epoch = 1;
static struct ss_meta_overhead ss_filter_cost;

/* per thread: reset whenever epoch differs from ss_filter_epoch */
struct ss_filter_tls {
	uint32_t epoch;
	uint32_t skipped;        /* open frames skipped for max_depth */
	uint32_t inside;         /* open included frames */
};
static __thread struct ss_filter_tls ss_filter_tls
	__attribute__((tls_model("initial-exec")));


/* ------------------------------------------------------------ start-up */

struct ss_filter_globs {
	char *pat[SS_FILTER_GLOBS];
	unsigned kind[SS_FILTER_GLOBS];
	size_t n;
	uintptr_t *addr;         /* matches found: (addr, kind) pairs */
	size_t naddr, cap;
	int oom;
};

static void ss_filter_add_glob(struct ss_filter_globs *g, const char *p, size_t len,
			       unsigned kind)
{
	if (!len || g->n >= SS_FILTER_GLOBS)
		return;
	char *copy = ss_strndup(p, len);
	if (!copy)
		return;
	g->pat[g->n] = copy;
	g->kind[g->n++] = kind;
}

/* "a,b c" -> globs */
static void ss_filter_add_list(struct ss_filter_globs *g, const char *list, unsigned kind)
{
	for (const char *p = list; *p;) {
		p += strspn(p, ", \t");
		size_t n = strcspn(p, ", \t");
		ss_filter_add_glob(g, p, n, kind);
		p += n;
	}
}

/* One name a line; '#' starts a comment; "runtime-only NAME" (written by
 * `stepscope filter` for names gcc would match too widely) counts too. */
static int ss_filter_add_file(struct ss_filter_globs *g, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[SS_FILTER_NAME_MAX];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\r\n")] = 0;
		char *p = line + strspn(line, " \t");
		if (!strncmp(p, "runtime-only", 12) && (p[12] == ' ' || p[12] == '\t'))
			p += 12 + strspn(p + 12, " \t");
		size_t n = strcspn(p, " \t");
		ss_filter_add_glob(g, p, n, SS_FILTER_EXCLUDE);
	}
	fclose(f);
	return 0;
}

static int ss_filter_match(uintptr_t addr, const char *name, void *ctx)
{
	struct ss_filter_globs *g = ctx;
	unsigned kind = 0;
	for (size_t i = 0; i < g->n; i++)
		if (!(kind & g->kind[i]) && !fnmatch(g->pat[i], name, 0))
			kind |= g->kind[i];
	if (!kind || !addr)
		return 0;
	if (g->naddr + 2 > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		uintptr_t *a = ss_realloc(g->addr, cap * sizeof(*a));
		if (!a) {
			g->oom = 1;
			return 0;
		}
		g->addr = a;
		g->cap = cap;
	}
	g->addr[g->naddr++] = addr;
	g->addr[g->naddr++] = kind;
	return 0;
}

static void ss_filter_insert(uintptr_t a, unsigned kind)
{
	size_t mask = ((size_t)1 << ss_filter_bits) - 1;
	for (size_t i = ss_filter_hash(a, ss_filter_bits);; i = (i + 1) & mask) {
		if (ss_filter_table[i].addr == a) {
			ss_filter_table[i].kind |= kind;
			return;
		}
		if (!ss_filter_table[i].addr) {
			ss_filter_table[i].addr = a;
			ss_filter_table[i].kind = kind;
			ss_filter_used++;
			return;
		}
	}
}

/* Before main (the runtime's constructor).  A filter file that cannot be
 * read is refused like a bad config. */
int ss_filter_init(void)
{
	const struct ss_config *c = &ss_rt.cfg;
	struct ss_filter_globs g = { 0 };
	char where[SS_CONFIG_PATH_MAX + 80];

	ss_filter_add_list(&g, c->filter_exclude, SS_FILTER_EXCLUDE);
	ss_filter_add_list(&g, c->filter_include, SS_FILTER_INCLUDE);
	if (c->filter_exclude_file[0] && ss_filter_add_file(&g, c->filter_exclude_file)) {
		ss_config_where(c, "filter.exclude_file", where, sizeof(where));
		char msg[SS_CONFIG_PATH_MAX * 2 + 160];
		snprintf(msg, sizeof(msg), "%scannot read %s (write one function name a line, "
			 "e.g. with stepscope filter RUN -o FILE)", where, c->filter_exclude_file);
		for (size_t i = 0; i < g.n; i++)
			ss_free(g.pat[i]);
		ss_free(g.addr);
		ss_rt_refuse(msg);
		return -1;
	}
	ss_filter_has_include = c->filter_include[0] != 0;
	ss_filter_max_depth = (uint32_t)c->filter_max_depth;
	ss_filter_stateful = ss_filter_has_include || ss_filter_max_depth;
	if (c->filter_min_duration_us > 0) {
		uint64_t per_s = ss_rt.hdr.clock == SS_CLOCK_TSC ? ss_rt.hdr.ticks_per_sec
								  : 1000000000ull;
		ss_filter_min_ticks = (uint64_t)c->filter_min_duration_us * (per_s / 1000000);
		if (!ss_filter_min_ticks)
			ss_filter_min_ticks = 1;
	}
	if (g.n)
		ss_elfsym_each_function(ss_filter_match, &g);
	if (g.oom)
		ss_warn("out of memory for filter names; some filters are not applied");
	if (g.naddr) {
		size_t want = g.naddr; /* two words a match: load <= 1/2 */
		ss_filter_bits = 4;
		while (((size_t)1 << ss_filter_bits) < want)
			ss_filter_bits++;
		ss_filter_table = ss_calloc((size_t)1 << ss_filter_bits, sizeof(*ss_filter_table));
		if (ss_filter_table) {
			for (size_t i = 0; i < g.naddr; i += 2)
				ss_filter_insert(g.addr[i], (unsigned)g.addr[i + 1]);
		} else {
			ss_warn("out of memory for filter names; filters are not applied");
		}
	}
	for (size_t i = 0; i < g.n; i++)
		ss_free(g.pat[i]);
	ss_free(g.addr);
	ss_hot.filter = (ss_filter_used || ss_filter_has_include || ss_filter_max_depth
			 ? SS_FILTER_SKIP : 0) |
			(ss_filter_min_ticks ? SS_FILTER_SHORT : 0);
	return 0;
}

/* Lock held: a window opens (every thread starts from depth 0 again). */
void ss_filter_on_window(void)
{
	ss_filter_epoch++;
}

/* ------------------------------------------------------------ hook path */

static inline struct ss_filter_tls *ss_filter_state(void)
{
	struct ss_filter_tls *f = &ss_filter_tls;
	if (ss_unlikely(f->epoch != ss_filter_epoch)) {
		f->epoch = ss_filter_epoch;
		f->skipped = 0;
		f->inside = 0;
	}
	return f;
}

/* include / max_depth (filter.h has the exclusion): 1 when this ENTER
 * is not recorded (nor its EXIT: ss_filter_depth_exit says so for the
 * same function at the same depth). */
int ss_filter_depth_enter(void *fn, unsigned kind)
{
	(void)fn;
	struct ss_filter_tls *f = ss_filter_state();
	if (f->skipped || (ss_filter_max_depth && ss_tls.depth >= ss_filter_max_depth)) {
		f->skipped++;
		return 1;
	}
	if (ss_filter_has_include) {
		if (kind & SS_FILTER_INCLUDE)
			f->inside++;
		else if (!f->inside)
			return 1;
	}
	return 0;
}

int ss_filter_depth_exit(void *fn, unsigned kind)
{
	(void)fn;
	struct ss_filter_tls *f = ss_filter_state();
	if (f->skipped) {
		f->skipped--;
		return 1;
	}
	if (ss_filter_has_include) {
		if (kind & SS_FILTER_INCLUDE) {
			if (f->inside)
				f->inside--;
		} else if (!f->inside) {
			return 1;
		}
	}
	return 0;
}

/* filter.min_duration_us, at an EXIT of fn: if the last events of this
 * thread's block are fn's ENTER (one compact word, or the long record of
 * an address outside the block's window: a shared library's function in a
 * block that began in the program) and its STACK, with record.stack, and
 * it began less than the minimum ago, clear them and give their words
 * back.  1 when the call was taken back (its EXIT is not recorded).  The
 * word before could be the payload of a long record; it cannot pass for
 * fn's compact ENTER: a long ENTER's payload is fn, whose distance to the
 * base is >= 2^30, and the other payloads (ids, ticks, bases) do not decode
 * to fn with a time within the minimum.  A long ENTER is recognised by its
 * head word followed by fn itself. */
int ss_filter_take_back(void *fn)
{
	struct ss_thread *t = &ss_tls;
	uint64_t *e = t->pos;
	if (!t->blk || !e)
		return 0;
	uint64_t *first = t->blk;
	uint64_t *enter = e - 1;
	if (enter <= first)
		return 0;
	if (enter - 2 > first && SS_CW_K(enter[-1]) == 3 &&
	    SS_CW_KIND(enter[-1]) == SS_EV_STACK && SS_CW_N(enter[-1]) == 1)
		enter -= 2; /* [ENTER][STACK head][STACK id] */
	uint64_t w = *enter;
	if (w == (uintptr_t)fn && enter - 1 > first &&
	    enter[-1] == SS_CW_LONG(SS_EV_ENTER, 1, SS_CW_DT(enter[-1])))
		w = *--enter; /* [long ENTER head][fn] */
	else if (SS_CW_K(w) != SS_EV_ENTER || t->abase + SS_CW_ADDR(w) != (uintptr_t)fn)
		return 0;
	if (ss_clock_now() - (t->tbase + SS_CW_DT(w)) >= ss_filter_min_ticks)
		return 0;
	/* give the words back first: a signal handler that records now
	 * writes over them, which is what clearing them does; one that
	 * recorded since we looked keeps its events (and so does the call) */
	if (!ss_claim(&t->pos, e, enter))
		return 0;
	atomic_signal_fence(memory_order_seq_cst);
	for (uint64_t *p = e - 1; p >= enter; p--) {
		if (t->pos > p)
			break; /* a handler took this word meanwhile */
		*p = 0;
	}
	atomic_signal_fence(memory_order_seq_cst);
	if (t->pos == enter)
		t->done = enter;
	if (ss_unlikely(++ss_cost_backs >= 4096)) /* cost.c: its hooks ran */
		ss_cost_backs_flush();
	return 1;
}

/* ------------------------------------------------------------ overhead */

#define SS_CAL_ROUNDS 5

static void ss_filter_cal_target(void) {}

/* Before main, on the main thread, before any other thread exists: time
 * rounds of recorded call pairs through the real hooks into a scratch
 * block and keep the median round.  The block is the size of a ring's
 * block and is reused round after round, as a thread's ring is (ring.c):
 * what is timed is what a recorded call costs the program; copying the
 * blocks out is the background thread's.  The thread's buffer, frames and
 * the gate are put back afterwards, so nothing of it reaches the trace. */
void ss_filter_calibrate(void)
{
	static struct ss_frame frames[8];
	struct ss_thread *t = &ss_tls;
	struct ss_thread saved = *t;
	int gate = ss_hot.gate, filter = ss_hot.filter, stacks = ss_hot.stacks;
	uint64_t round[SS_CAL_ROUNDS], inside = UINT64_MAX;
	void *fn = (void *)&ss_filter_cal_target;
	uintptr_t lo, hi;
	if (!ss_elfsym_instrumented(&lo, &hi, 1))
		return; /* no hooks here (a shell under `record`): no cost either */
	size_t bytes = (ss_rt.chunk_bytes ? ss_rt.chunk_bytes : 1u << 20) / 16;
	size_t pairs = bytes / (2 * sizeof(uint64_t)) - 4;
	int r, nr = 0;
	uint64_t *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return;

	ss_hot.filter = 0;
	ss_hot.stacks = 0;
	t->frames = frames;
	t->frames_cap = 8;
	t->chunk = NULL;
	t->blk = NULL;
	t->ring = NULL;
	for (r = -1; r < SS_CAL_ROUNDS; r++) { /* round -1 warms the cache */
		uint64_t t0 = ss_clock_now();
		t->pos = t->done = buf;
		t->end = buf + 2 * pairs + 1;
		t->tbase = ss_clock_now();
		t->abase = SS_ABASE((uintptr_t)fn);
		t->depth = 0;
		ss_hot.gate = SS_GATE_REC;
		for (size_t i = 0; i < pairs; i++) {
			__cyg_profile_func_enter(fn, __builtin_return_address(0));
			__cyg_profile_func_exit(fn, __builtin_return_address(0));
		}
		uint64_t t1 = ss_clock_now();
		ss_hot.gate = gate;
		if (r < 0)
			continue;
		round[nr++] = t1 - t0;
		/* the ordered empty calls' times (ENTER and EXIT even,
		 * ss_clock_enter/exit): the least is the hooks' part inside
		 * the times a function's fastest call is taken from */
		for (uint64_t *w = buf; w + 1 < t->pos; w++)
			if (SS_CW_K(w[0]) == 1 && SS_CW_K(w[1]) == 2 &&
			    !((t->tbase + SS_CW_DT(w[0])) & 1) &&
			    !((t->tbase + SS_CW_DT(w[1])) & 1) &&
			    SS_CW_DT(w[1]) >= SS_CW_DT(w[0]) &&
			    SS_CW_DT(w[1]) - SS_CW_DT(w[0]) < inside)
				inside = SS_CW_DT(w[1]) - SS_CW_DT(w[0]);
	}
	/* filter.exclude: what a call the filter leaves out costs (a probe
	 * of the table and back), the target in the table for the while:
	 * added last, it ends its probe chain, so taking it out again leaves
	 * the table as it was (no other thread exists yet) */
	uint64_t skip[SS_CAL_ROUNDS];
	int ns = 0;
	if (ss_filter_table && (filter & SS_FILTER_SKIP) && ss_filter_kind((uintptr_t)fn) == 0 &&
	    ss_filter_used * 2 < ((size_t)1 << ss_filter_bits)) {
		ss_filter_insert((uintptr_t)fn, SS_FILTER_EXCLUDE);
		ss_hot.filter = filter;
		for (r = -1; r < SS_CAL_ROUNDS; r++) {
			t->pos = t->done = buf;
			t->depth = 0;
			uint64_t t0 = ss_clock_now();
			ss_hot.gate = SS_GATE_REC;
			for (size_t i = 0; i < pairs; i++) {
				__cyg_profile_func_enter(fn, __builtin_return_address(0));
				__cyg_profile_func_exit(fn, __builtin_return_address(0));
			}
			uint64_t t1 = ss_clock_now();
			ss_hot.gate = gate;
			if (r >= 0)
				skip[ns++] = t1 - t0;
		}
		size_t mask = ((size_t)1 << ss_filter_bits) - 1;
		for (size_t i = ss_filter_hash((uintptr_t)fn, ss_filter_bits);; i = (i + 1) & mask)
			if (ss_filter_table[i].addr == (uintptr_t)fn) {
				ss_filter_table[i].addr = 0;
				ss_filter_table[i].kind = 0;
				ss_filter_used--;
				break;
			}
		ss_cost_skips = 0; /* these were no program's calls */
	}
	munmap(buf, bytes);
	*t = saved;
	ss_hot.gate = gate;
	ss_hot.filter = filter;
	ss_hot.stacks = stacks;
	if (!nr)
		return;
	for (int i = 1; i < nr; i++)
		for (int j = i; j > 0 && round[j] < round[j - 1]; j--) {
			uint64_t x = round[j];
			round[j] = round[j - 1];
			round[j - 1] = x;
		}
	uint64_t ticks = round[nr / 2] / pairs;
	uint64_t per_s = ss_rt.hdr.clock == SS_CLOCK_TSC ? ss_rt.hdr.ticks_per_sec
							  : 1000000000ull;
	for (int i = 1; i < ns; i++)
		for (int j = i; j > 0 && skip[j] < skip[j - 1]; j--) {
			uint64_t x = skip[j];
			skip[j] = skip[j - 1];
			skip[j - 1] = x;
		}
	if (ns && per_s) /* cost.c writes it with the run's account */
		ss_cost_set_skip_ns((uint64_t)((double)(skip[ns / 2] / pairs) * 1e9 / (double)per_s));
	ss_filter_cost.pair_ticks = ticks;
	ss_filter_cost.pair_ns = per_s ? (uint64_t)((double)ticks * 1e9 / (double)per_s) : 0;
	ss_filter_cost.pairs = pairs;
	ss_filter_cost.inside_ticks = inside == UINT64_MAX ? 0 : inside ? inside : 1;
	/* the file may be open already (stepscope_step() mode: step 0 began
	 * in ss_window_init) */
	pthread_mutex_lock(&ss_rt.lock);
	if (ss_rt.fd >= 0)
		ss_filter_write_meta();
	pthread_mutex_unlock(&ss_rt.lock);
}

/* Lock held, the file just opened: the calibration, and how EXITs are
 * read (SS_META_EXIT_ORDER). */
void ss_filter_write_meta(void)
{
	struct ss_meta_exit_order eo = { SS_EXIT_ORDER_EVERY, 0 };
	ss_meta_write(SS_META_EXIT_ORDER, &eo, sizeof(eo), NULL, 0);
	if (ss_filter_cost.pairs)
		ss_meta_write(SS_META_OVERHEAD, &ss_filter_cost, sizeof(ss_filter_cost), NULL, 0);
}
