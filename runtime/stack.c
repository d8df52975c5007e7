/*
 * stack.c - native call stacks at recorded function entries
 * (record.stack: true, record.stack_depth: N; docs/stacks.md).
 *
 * Design: right after an ENTER is emitted, the hook calls
 * ss_stack_capture(), which walks the thread's stack, up to N return
 * addresses innermost first (the first one inside the entered function),
 * looks the stack up in a per-thread table of the distinct stacks seen and
 * emits one SS_EV_STACK event carrying the stack's id.  A stack seen for the
 * first time on a thread is written once as an SS_META_STACKDEF record
 * (under ss_rt.lock: the only lock taken here, once per distinct stack).
 *
 * The walk follows frame pointers while the frames belong to code that keeps
 * them: the runtime and the modules built with -finstrument-functions
 * (stepscope-cc adds -fno-omit-frame-pointer).  Every frame pointer is
 * checked against the thread's stack bounds, cached per thread, before it is
 * read, so a broken chain ends the walk instead of faulting.  At the first
 * return address into other code (libc's qsort, a BLAS, the CUDA runtime,
 * the start code below main), whose frame pointer cannot be trusted, the walk
 * goes on with libunwind (loaded with dlopen when record.stack is on, so the
 * library has no link dependency on it), started from that frame's own
 * registers: its pc, its sp just above the return address and the saved
 * frame pointer.  Without libunwind the stack ends at that frame.
 *
 * Off (the default), this file costs the hook one predictable branch on
 * ss_hot.stacks, on the cache line the hook reads anyway.
 *
 * Never: fault on a bad frame pointer, malloc, or take a lock for a stack
 * already seen on the thread; never recurse (a signal handler entering
 * instrumented code during a capture gets no stack); never change errno.
 *
 * The table (top of the file) is plain code with no runtime state;
 * tests/unit/test-stack.c includes this file to test it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<libunwind.h>)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define SS_STACK_UNWIND 1
#endif
#endif
#ifndef SS_STACK_UNWIND
#define SS_STACK_UNWIND 0
#endif

#define SS_STACK_MAX 128            /* record.stack_depth's upper bound */
#define SS_STACK_SLOTS (1u << 14)   /* distinct stacks kept per thread */
#define SS_STACK_ARENA (1u << 18)   /* return addresses kept per thread */
#define SS_STACK_RANGES 64          /* frame-pointer code ranges */

/* ------------------------------------------------------------ the table */

struct ss_stack_slot {
	uint64_t hash;
	uint64_t id;                /* 0: empty */
	uint32_t off, n;            /* the addresses: arena[off .. off + n) */
};

/* Open addressing on the hash of the addresses; the addresses themselves
 * are kept so that a hash collision never merges two stacks. */
struct ss_stack_memo;

struct ss_stack_table {
	struct ss_stack_memo *memo; /* libunwind results (ss_stack_unwind) */
	struct ss_stack_slot *slot;
	uint32_t nslots;            /* a power of two */
	uint32_t used;
	uint64_t *arena;
	uint32_t cap, fill;
};

static uint64_t ss_stack_hash(const uint64_t *pc, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (uint32_t i = 0; i < n; i++) {
		h ^= pc[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

/* The id of stack pc[0..n) with hash h, or 0 and *where = the empty slot
 * where ss_stack_table_add must put it. */
static uint64_t ss_stack_table_find(const struct ss_stack_table *t,
				    const uint64_t *pc, uint32_t n, uint64_t h,
				    uint32_t *where)
{
	uint32_t mask = t->nslots - 1, i = (uint32_t)h & mask;

	for (;;) {
		const struct ss_stack_slot *s = &t->slot[i];
		if (!s->id) {
			*where = i;
			return 0;
		}
		if (s->hash == h && s->n == n &&
		    !memcmp(t->arena + s->off, pc, n * sizeof(*pc)))
			return s->id;
		i = (i + 1) & mask;
	}
}

/* Room for one more stack of n addresses?  The table stays at most 3/4
 * full, so a search always ends at an empty slot. */
static int ss_stack_table_room(const struct ss_stack_table *t, uint32_t n)
{
	return (t->used + 1) * 4 <= t->nslots * 3 && t->fill + n <= t->cap;
}

static void ss_stack_table_add(struct ss_stack_table *t, uint32_t where,
			       const uint64_t *pc, uint32_t n, uint64_t h,
			       uint64_t id)
{
	struct ss_stack_slot *s = &t->slot[where];

	memcpy(t->arena + t->fill, pc, n * sizeof(*pc));
	s->off = t->fill;
	s->n = n;
	s->hash = h;
	t->fill += n;
	t->used++;
	s->id = id; /* last: a slot counts once its id is set */
}

/* ------------------------------------------------------------ state */

static __thread struct ss_stack_table *ss_stack_tab
	__attribute__((tls_model("initial-exec")));
__thread int ss_stack_busy __attribute__((tls_model("initial-exec"))); /* alloc.c reads it */

static atomic_uint_fast64_t ss_stack_next_id;
static atomic_uint_fast64_t ss_stack_lost;   /* new stacks not kept */
static atomic_int ss_stack_warned;
static uint32_t ss_stack_depth = 16;
static pthread_key_t ss_stack_key;

/* Text known to keep frame pointers; only appended to, the count is
 * published last, so a walk on another thread reads whole entries. */
static uintptr_t ss_stack_fp_lo[SS_STACK_RANGES], ss_stack_fp_hi[SS_STACK_RANGES];
static _Atomic size_t ss_stack_fp_n;
static unsigned long long ss_stack_fp_adds;

#if SS_STACK_UNWIND
static struct {
	int (*getcontext)(unw_context_t *);
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
} ss_unw;
static int ss_unw_ok;
#endif

/* ------------------------------------------------------------ the walk */

static inline int ss_stack_self(uintptr_t pc)
{
	return pc >= ss_rt.self_lo && pc < ss_rt.self_hi;
}

static inline int ss_stack_trusted(uintptr_t pc)
{
	size_t n = atomic_load_explicit(&ss_stack_fp_n, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (pc >= ss_stack_fp_lo[i] && pc < ss_stack_fp_hi[i])
			return 1;
	return 0;
}

/* libunwind is slow (microseconds a frame): its result below a frame of
 * untrusted code is remembered per thread, keyed by that frame (pc, sp,
 * rbp), with where each return address it found sits on the stack.  A
 * remembered result is used again only while every one of those stack
 * words still holds its address: the same frames are still there (the
 * start code below main, a library's frames around a callback). */
#define SS_STACK_MEMOS 4

struct ss_stack_memo {
	uintptr_t pc, sp, bp;       /* the untrusted frame; pc 0: empty */
	uint32_t n, max;            /* addresses found; how many were asked */
	uint64_t ip[SS_STACK_MAX];
	uintptr_t at[SS_STACK_MAX]; /* the stack word that held ip[i] */
};

#if SS_STACK_UNWIND
#define SS_STR_(x) #x
#define SS_STR(x) SS_STR_(x)

/* The remembered result for frame (pc, sp, bp), if its stack words still
 * hold it and it answers max: how many addresses it copied, or -1. */
static int ss_stack_memo_get(uintptr_t pc, uintptr_t sp, uintptr_t bp, uint64_t *out,
			     uint32_t max)
{
	struct ss_stack_table *tab = ss_stack_tab;
	uintptr_t lo = ss_tls.stack_lo, hi = ss_tls.stack_hi;

	if (!tab || !tab->memo)
		return -1;
	for (int k = 0; k < SS_STACK_MEMOS; k++) {
		struct ss_stack_memo *m = &tab->memo[k];
		if (m->pc != pc || m->sp != sp || m->bp != bp || (m->n == m->max && max > m->n))
			continue;
		uint32_t n = m->n < max ? m->n : max, i;
		for (i = 0; i < n; i++)
			if (m->at[i] < lo || m->at[i] + 8 > hi ||
			    *(const uintptr_t *)m->at[i] != m->ip[i])
				break;
		if (i < n)
			continue;
		memcpy(out, m->ip, n * sizeof(*out));
		return (int)n;
	}
	return -1;
}

static void ss_stack_memo_put(uintptr_t pc, uintptr_t sp, uintptr_t bp, const uint64_t *ip,
			      const uintptr_t *at, uint32_t n, uint32_t max)
{
	static __thread unsigned next __attribute__((tls_model("initial-exec")));
	struct ss_stack_table *tab = ss_stack_tab;

	if (!tab || !tab->memo)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (!at[i])
			return; /* a frame whose slot is unknown: not kept */
	struct ss_stack_memo *m = &tab->memo[next++ % SS_STACK_MEMOS];
	m->pc = pc;
	m->sp = sp;
	m->bp = bp;
	m->n = n;
	m->max = max;
	memcpy(m->ip, ip, n * sizeof(*ip));
	memcpy(m->at, at, n * sizeof(*at));
}

/* Go on below a frame of untrusted code with libunwind: the frame's pc is
 * `pc` (already stored by the caller), its sp `sp` and its rbp `bp`; or,
 * with pc 0, from here.  Stores up to max more return addresses. */
static uint32_t ss_stack_unwind(uintptr_t pc, uintptr_t sp, uintptr_t bp,
				uint64_t *out, uint32_t max)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	unw_word_t ip, csp;
	uintptr_t at[SS_STACK_MAX];
	uint32_t n = 0;
	int got;

	if (pc && max && (got = ss_stack_memo_get(pc, sp, bp, out, max)) >= 0)
		return (uint32_t)got;

	if (!ss_unw_ok || !max || ss_unw.getcontext(&ctx))
		return 0;
	if (pc) {
		ctx.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
		ctx.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
		ctx.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
	}
	if (ss_unw.init_local(&cur, &ctx))
		return 0;
	if (!pc) {
		/* from here: the first frames are the runtime's own */
		while (ss_unw.get_reg(&cur, UNW_REG_IP, &ip) == 0 &&
		       ss_stack_self((uintptr_t)ip))
			if (ss_unw.step(&cur) <= 0)
				return 0;
		if (ss_unw.get_reg(&cur, UNW_REG_IP, &ip) || !ip)
			return 0;
		out[n++] = ip;
	}
	while (n < max && ss_unw.step(&cur) > 0) {
		if (ss_unw.get_reg(&cur, UNW_REG_IP, &ip) || !ip)
			break;
		/* the caller's sp is the callee's CFA: the return address
		 * sits just below it */
		at[n] = ss_unw.get_reg(&cur, UNW_REG_SP, &csp) ? 0 : (uintptr_t)csp - 8;
		if (at[n] && *(const uintptr_t *)at[n] != ip)
			at[n] = 0;
		out[n++] = ip;
	}
	if (pc)
		ss_stack_memo_put(pc, sp, bp, out, at, n, max);
	return n;
}
#else
static uint32_t ss_stack_unwind(uintptr_t pc, uintptr_t sp, uintptr_t bp,
				uint64_t *out, uint32_t max)
{
	(void)pc, (void)sp, (void)bp, (void)out, (void)max;
	return 0;
}
#endif

/* Return addresses of the calling thread, innermost first, without the
 * runtime's own frames. */
static __attribute__((noinline)) uint32_t ss_stack_walk(const struct ss_thread *t,
							 uint64_t *pc, uint32_t max)
{
	uintptr_t lo = t->stack_lo, hi = t->stack_hi;
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	uint32_t n = 0;

	if (fp < lo || fp + 16 > hi || (fp & 7))
		return ss_stack_unwind(0, 0, 0, pc, max); /* e.g. sigaltstack */
	for (;;) {
		uintptr_t next = ((const uintptr_t *)fp)[0];
		uintptr_t ret = ((const uintptr_t *)fp)[1];
		if (!ret)
			return n;
		if (!ss_stack_self(ret)) {
			pc[n++] = ret;
			if (n == max)
				return n;
			if (!ss_stack_trusted(ret))
				return n + ss_stack_unwind(ret, fp + 16, next, pc + n,
							   max - n);
		}
		if (next <= fp || next + 16 > hi || (next & 7))
			return n;
		fp = next;
	}
}

/* ------------------------------------------------------------ slow paths */

static int ss_stack_adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* Add the text of newly loaded instrumented modules.  Lock held (or
 * before main). */
static void ss_stack_ranges_refresh(void)
{
	uintptr_t lo[SS_STACK_RANGES], hi[SS_STACK_RANGES];
	unsigned long long adds = 0;
	size_t n, have = atomic_load(&ss_stack_fp_n);

	dl_iterate_phdr(ss_stack_adds_cb, &adds);
	if (have && adds == ss_stack_fp_adds)
		return;
	ss_stack_fp_adds = adds;
	n = ss_elfsym_instrumented(lo, hi, SS_STACK_RANGES);
	for (size_t i = 0; i < n && have < SS_STACK_RANGES; i++) {
		size_t j;
		for (j = 0; j < have; j++)
			if (ss_stack_fp_lo[j] == lo[i] && ss_stack_fp_hi[j] == hi[i])
				break;
		if (j < have)
			continue;
		ss_stack_fp_lo[have] = lo[i];
		ss_stack_fp_hi[have] = hi[i];
		have++;
	}
	atomic_store_explicit(&ss_stack_fp_n, have, memory_order_release);
}

static void ss_stack_table_free(void *arg)
{
	struct ss_stack_table *t = arg;
	size_t size;

	if (!t)
		return;
	size = sizeof(*t) + (size_t)t->nslots * sizeof(*t->slot) +
	       (size_t)t->cap * sizeof(*t->arena) +
	       SS_STACK_MEMOS * sizeof(struct ss_stack_memo);
	if (ss_stack_tab == t)
		ss_stack_tab = NULL;
	munmap(t, size);
}

/* The calling thread's table, and its stack bounds. */
static struct ss_stack_table *ss_stack_table_new(struct ss_thread *t)
{
	size_t size = sizeof(struct ss_stack_table) +
		      SS_STACK_SLOTS * sizeof(struct ss_stack_slot) +
		      SS_STACK_ARENA * sizeof(uint64_t) +
		      SS_STACK_MEMOS * sizeof(struct ss_stack_memo);
	struct ss_stack_table *tab;

	if (!ss_thread_stack_bounds(t))
		return NULL;
	tab = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (tab == MAP_FAILED)
		return NULL;
	tab->slot = (struct ss_stack_slot *)(tab + 1);
	tab->nslots = SS_STACK_SLOTS;
	tab->arena = (uint64_t *)(tab->slot + SS_STACK_SLOTS);
	tab->cap = SS_STACK_ARENA;
	tab->memo = (struct ss_stack_memo *)(tab->arena + SS_STACK_ARENA);
	ss_stack_tab = tab;
	pthread_setspecific(ss_stack_key, tab);
	return tab;
}

/* A stack new on this thread: define it in the trace, keep it. */
static __attribute__((noinline)) uint64_t
ss_stack_define(struct ss_thread *t, struct ss_stack_table *tab, uint32_t where,
		const uint64_t *pc, uint32_t n, uint64_t h)
{
	struct ss_meta_stackdef d;
	uint64_t id = 0;

	if (!ss_stack_table_room(tab, n)) {
		atomic_fetch_add(&ss_stack_lost, 1);
		if (!atomic_exchange(&ss_stack_warned, 1))
			ss_warn("record.stack: thread %llu saw more than %u distinct "
				"stacks; entries on new call paths get no stack",
				(unsigned long long)t->tid, SS_STACK_SLOTS * 3 / 4);
		return 0;
	}
	t->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	ss_stack_ranges_refresh();
	d.id = atomic_fetch_add(&ss_stack_next_id, 1) + 1;
	d.n = n;
	if (!ss_meta_write_ts(SS_META_STACKDEF, 0, &d, sizeof(d), pc,
			      n * sizeof(*pc)))
		id = d.id;
	pthread_mutex_unlock(&ss_rt.lock);
	t->in_slow = 0;
	if (id)
		ss_stack_table_add(tab, where, pc, n, h, id);
	return id;
}

void ss_stack_capture(void)
{
	struct ss_thread *t = &ss_tls;
	struct ss_stack_table *tab;
	uint64_t pc[SS_STACK_MAX], h, id;
	uint32_t n, where;
	int err;

	if (t->in_slow || ss_stack_busy)
		return;
	ss_stack_busy = 1;
	err = errno;
	tab = ss_stack_tab;
	if (ss_unlikely(!tab) && !(tab = ss_stack_table_new(t)))
		goto out;
	n = ss_stack_walk(t, pc, ss_stack_depth);
	if (!n)
		goto out;
	h = ss_stack_hash(pc, n);
	id = ss_stack_table_find(tab, pc, n, h, &where);
	if (ss_unlikely(!id))
		id = ss_stack_define(t, tab, where, pc, n, h);
	if (id)
		ss_emit(SS_EV_WORD(SS_EV_STACK, id));
out:
	errno = err;
	ss_stack_busy = 0;
}

/* In a forked child: the ids in the tables belong to the parent's file. */
static void ss_stack_after_fork(void)
{
	struct ss_stack_table *tab = ss_stack_tab;

	if (tab) {
		pthread_setspecific(ss_stack_key, NULL);
		ss_stack_table_free(tab);
	}
}

void ss_stack_init(void)
{
	int64_t d = ss_rt.cfg.record_stack_depth;

	ss_stack_depth = d < 1 ? 1 : d > SS_STACK_MAX ? SS_STACK_MAX : (uint32_t)d;
	if (pthread_key_create(&ss_stack_key, ss_stack_table_free))
		return;
	pthread_atfork(NULL, NULL, ss_stack_after_fork);
	ss_stack_ranges_refresh();
#if SS_STACK_UNWIND
	void *h = ss_dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h) {
		int (*policy)(unw_addr_space_t, unw_caching_policy_t);
		unw_addr_space_t *as;
		*(void **)&ss_unw.getcontext = dlsym(h, SS_STR(unw_tdep_getcontext));
		*(void **)&ss_unw.init_local = dlsym(h, SS_STR(unw_init_local));
		*(void **)&ss_unw.step = dlsym(h, SS_STR(unw_step));
		*(void **)&ss_unw.get_reg = dlsym(h, SS_STR(unw_get_reg));
		*(void **)&policy = dlsym(h, SS_STR(unw_set_caching_policy));
		as = dlsym(h, SS_STR(unw_local_addr_space));
		ss_unw_ok = ss_unw.getcontext && ss_unw.init_local && ss_unw.step &&
			    ss_unw.get_reg;
		/* a per-thread cache: no lock, no signal mask per step */
		if (ss_unw_ok && policy && as)
			policy(*as, UNW_CACHE_PER_THREAD);
	}
	if (!ss_unw_ok && ss_dl_missing())
		ss_warn("record.stack: a static program does not load libunwind.so.8; "
			"stacks end at the first frame without a frame pointer");
	else if (!ss_unw_ok)
		ss_warn("record.stack: libunwind.so.8 not found (Debian: libunwind8); "
			"stacks end at the first frame without a frame pointer");
#else
	ss_warn("record.stack: built without libunwind; stacks end at the first "
		"frame without a frame pointer");
#endif
	ss_hot.stacks = 1;
}
