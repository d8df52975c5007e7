/*
 * alloc.c - recorded allocations (memory.allocations, docs/memory.md): the
 * SS_EV_ALLOC and SS_EV_FREE records, and the table of blocks allocated
 * while recording that tells, at exit, which of them were never freed.
 *
 * How: the malloc family's wrappers (alloc-wrap.c) call in here only when
 * a window is open (the gate's recording bit and memory.allocations) or,
 * for a free, when the table holds blocks.  A record is a compact long
 * record in the calling thread's own block (format.h), claimed with one
 * instruction like the hooks' events (internal.h, ss_emit), so a signal
 * handler that allocates on top of it takes the next words; a full block
 * or a far time goes through the hooks' slow path (ss_buf_refill).  The
 * table is a lock-free open-addressing hash of addresses (insert and
 * remove by compare-and-swap), mapped once at start-up; at exit what is
 * left in it is written as SS_META_ALLOC_LIVE records.  The CUDA side
 * (gpu*.c) records through ss_alloc_record/ss_alloc_record_free too.
 *
 * Never: allocate, lock or make a system call on these paths (the
 * table's mapping and the exit dump are start-up and exit work); record
 * the runtime's own calls (a thread in the slow path, the runtime's own
 * threads' start, a thread past its exit destructor); lose a record
 * silently (a dropped one is counted as lost like an event; a block the
 * full table cannot follow is counted in SS_META_ALLOC_LIVE.untracked).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "internal.h"

struct ss_alloc_hot ss_alloc_hot;

/* The table of blocks followed (struct ss_alloc_slot, alloc.h): key 0
 * free, 1 a removed entry (probes go on past it). */
#define TAB_SIZE (1u << SS_ALLOC_TAB_BITS)
#define TAB_PROBES 256
#define TAB_TOMB 1
#define tab_slot ss_alloc_slot
#define tab_hash ss_alloc_hash
static struct tab_slot *tab;
static uint64_t tab_untracked;
static __thread int thread_gone; /* past its exit destructor */
static const char *not_recorded; /* why the wrappers see nothing */

static void tab_insert(uint64_t addr, uint64_t size, uint64_t space)
{
	if (!tab || addr <= TAB_TOMB)
		return;
	uint32_t h = tab_hash(addr);
	uint64_t *home = &ss_alloc_hot.home[h >> 6], bit = UINT64_C(1) << (h & 63);
	if (!(__atomic_load_n(home, __ATOMIC_RELAXED) & bit)) /* before the entry */
		__atomic_fetch_or(home, bit, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < TAB_PROBES; i++) {
		struct tab_slot *s = &tab[(h + i) & (TAB_SIZE - 1)];
		uint64_t k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
		if (k == addr) { /* freed where no wrapper saw it */
			s->size = size;
			s->space = space;
			return;
		}
		if (k > TAB_TOMB)
			continue;
		/* a free slot: another thread may take it at the same time */
		if (__atomic_compare_exchange_n(&s->key, &k, addr, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			s->size = size;
			s->space = space;
			if (ss_unlikely(!ss_alloc_hot.live))
				ss_alloc_hot.live = 1; /* frees look here from now on */
			return;
		}
		i--; /* taken meanwhile: look at it again */
	}
	__atomic_fetch_add(&tab_untracked, 1, __ATOMIC_RELAXED);
}

/* Take addr out of the table: 1 and its size when it was there. */
static int tab_remove(uint64_t addr, uint64_t *size, uint64_t *space)
{
	if (!tab || addr <= TAB_TOMB)
		return 0;
	uint32_t h = tab_hash(addr);
	for (unsigned i = 0; i < TAB_PROBES; i++) {
		struct tab_slot *s = &tab[(h + i) & (TAB_SIZE - 1)];
		uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (!k)
			return 0;
		if (k != addr)
			continue;
		*size = s->size;
		*space = s->space;
		/* only the thread that frees the block removes its entry (a
		 * block is freed once), and nothing inserts over a live key:
		 * a plain store */
		__atomic_store_n(&s->key, TAB_TOMB, __ATOMIC_RELEASE);
		return 1;
	}
	return 0;
}

/* New bases (tbase now) at e: three words. */
static uint64_t *put_base(struct ss_thread *t, uint64_t *e, uint64_t now)
{
	e[1] = now;
	e[2] = t->abase;
	atomic_signal_fence(memory_order_seq_cst);
	e[0] = SS_CW_LONG(SS_EV_BASE, 2, 0);
	t->tbase = now;
	return e + 3;
}

static void put_rec(uint64_t *e, unsigned kind, unsigned n, const uint64_t *p, uint64_t dt)
{
	e[0] = SS_CW_LONG(SS_EV_PAD, n, 0); /* until the head: skip them */
	atomic_signal_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < n; i++)
		e[1 + i] = p[i];
	atomic_signal_fence(memory_order_seq_cst);
	e[0] = SS_CW_LONG(kind, n, dt);
}

/* The record did not fit the bases, or a handler recorded over its claim
 * (n + 1 words at e): as ss_emit_far, signals held, the claim given back
 * or padded, the record stored at the end.  0: no room, refill first. */
static int emit_far(struct ss_thread *t, uint64_t *e, unsigned kind, unsigned n,
		    const uint64_t *p, uint64_t now)
{
	int saved = errno, done = 0;
	sigset_t old;
	ss_buf_hold_signals(&old);
	ss_buf_fill(t, e);
	if (t->pos == e + n + 1) {
		t->pos = e;
		t->done = e;
	} else {
		for (unsigned i = 0; i <= n; i++)
			e[i] = SS_CW_LONG(SS_EV_PAD, 0, 0);
		now = ss_clock_now();
	}
	uint64_t *q = t->pos;
	if (q && t->end - q >= (ptrdiff_t)(n + 1 + 3)) {
		if ((int64_t)(now - t->tbase) < 0)
			now = t->tbase;
		if (now - t->tbase >= (UINT64_C(1) << 32))
			q = put_base(t, q, now);
		put_rec(q, kind, n, p, now - t->tbase);
		q += n + 1;
		atomic_signal_fence(memory_order_seq_cst);
		t->pos = q;
		t->done = q;
		done = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return done;
}

/* Append one ALLOC or FREE record (n payload words) on this thread. */
static void emit(unsigned kind, unsigned n, const uint64_t *p)
{
	struct ss_thread *t = &ss_tls;
	for (int tries = 0; tries < 4; tries++) {
		uint64_t tb = t->tbase;
		uint64_t *e = t->pos;
		if (ss_unlikely(!e || e + n >= t->end)) {
			/* the hooks' slow path: a new block (or the thread's
			 * first ring), a PAD as its first record; a drop is
			 * counted there as this record's */
			ss_buf_refill(t, SS_EV_WORD(SS_EV_PAD, 0));
			if (!t->pos || t->pos + n >= t->end)
				return;
			continue;
		}
		if (ss_unlikely(e != t->done)) {
			ss_buf_fill(t, e); /* we interrupted a claim: close it */
			continue;
		}
		if (!ss_claim(&t->pos, e, e + n + 1))
			continue;
		atomic_signal_fence(memory_order_seq_cst);
		uint64_t now = ss_clock_now();
		uint64_t dt = now - tb;
		atomic_signal_fence(memory_order_seq_cst);
		if (ss_unlikely((dt >> 32) != 0 || tb != t->tbase || t->pos != e + n + 1)) {
			if (emit_far(t, e, kind, n, p, now))
				return;
			continue;
		}
		put_rec(e, kind, n, p, dt);
		atomic_signal_fence(memory_order_seq_cst);
		t->done = e + n + 1;
		return;
	}
}

void ss_alloc_forget_slow(uint64_t addr)
{
	uint64_t size, space;
	tab_remove(addr, &size, &space);
}

/* stack.c: set while a native stack is captured (record.stack): what
 * libunwind allocates then is the runtime's */
extern __thread int ss_stack_busy __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* This thread's allocations may be recorded now. */
static inline int may_record(void)
{
	struct ss_thread *t = &ss_tls;
	return (ss_hot.gate & ss_alloc_hot.mask) && !t->in_slow && !t->own && !thread_gone &&
	       !ss_stack_busy && !ss_rt.dormant;
}

/* The caller of the allocator was at csp (its stack pointer at the call,
 * 0: unknown): recorded frames deeper than that are gone (a longjmp or a
 * handler's siglongjmp left them), and say so before the record, as the
 * next hook call would (frames.c), so the record belongs to the caller. */
static void frames_gone(uintptr_t csp)
{
	struct ss_thread *t = &ss_tls;
	uint32_t d = t->depth;
	if (csp && d && t->frames && d - 1 < t->frames_cap && t->frames[d - 1].sp < csp)
		ss_frames_unwind(t, csp - 1, 0);
}

void ss_alloc_record(uint64_t addr, uint64_t size, uint64_t space)
{
	ss_alloc_record_at(addr, size, space, 0);
}

void ss_alloc_record_at(uint64_t addr, uint64_t size, uint64_t space, uintptr_t csp)
{
	if (!addr || !may_record())
		return;
	frames_gone(csp);
	uint64_t p[3] = { addr, size, space };
	emit(SS_EV_ALLOC, 3, p);
	tab_insert(addr, size, space);
}

int ss_alloc_record_free(uint64_t addr, uint64_t space, uint64_t *size)
{
	return ss_alloc_record_free_at(addr, space, size, 0);
}

int ss_alloc_record_free_at(uint64_t addr, uint64_t space, uint64_t *size, uintptr_t csp)
{
	uint64_t sz = 0, sp = space;
	int known = tab_remove(addr, &sz, &sp);
	if (size)
		*size = sz;
	if (addr && may_record()) {
		frames_gone(csp);
		/* the block's own space when the table has it: cudaFree names
		 * no device (the current one may be another's) and frees
		 * managed memory too (gpu-alloc.c) */
		uint64_t p[2] = { addr, known ? sp : space };
		emit(SS_EV_FREE, 2, p);
	}
	return known;
}

/* realloc failed after its FREE was noted: the block is still the
 * program's, allocated again in the record and the table. */
void ss_alloc_record_undo(uint64_t addr, uint64_t size, int known)
{
	if (!known)
		return;
	uint64_t p[3] = { addr, size, SS_SPACE_HEAP | SS_SPACE_AGAIN };
	if (may_record())
		emit(SS_EV_ALLOC, 3, p);
	tab_insert(addr, size, SS_SPACE_HEAP);
}

void ss_alloc_thread_gone(void)
{
	thread_gone = 1;
}

/* Before main, after the config: map the table and open the gate. */
void ss_alloc_init(void)
{
	if (!ss_rt.cfg.memory_allocations)
		return;
	const char *why = ss_alloc_wrap_check ? ss_alloc_wrap_check()
					      : "a static link without stepscope-cc's -Wl,--wrap=malloc,... "
						"(libstepscope.a's wrappers are not in the program)";
	if (why) { /* said at exit, by a process that recorded something */
		not_recorded = why;
		return;
	}
	void *m = mmap(NULL, sizeof(struct tab_slot) * TAB_SIZE + TAB_SIZE / 8, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		ss_warn("memory.allocations: no memory for the table of live blocks (%s); "
			"leaks are not followed", strerror(errno));
	} else {
		tab = m;
		ss_alloc_hot.home = (uint64_t *)(tab + TAB_SIZE);
		ss_alloc_hot.tab = m;
	}
	ss_alloc_hot.mask = SS_GATE_REC;
}

/* In a forked child: the parent's blocks are not this trace's. */
void ss_alloc_after_fork(void)
{
	if (!tab)
		return;
	madvise(tab, sizeof(struct tab_slot) * TAB_SIZE + TAB_SIZE / 8, MADV_DONTNEED); /* zeroes */
	ss_alloc_hot.live = 0;
	tab_untracked = 0;
}

/* At exit, lock held: the blocks still live, SS_META_ALLOC_LIVE records
 * of up to 2048 blocks each (at least one record, so a reader knows the
 * list is complete). */
void ss_alloc_write_live(void)
{
	if (not_recorded) /* a shell with its own malloc that only ran the
			   * program recorded nothing and says nothing */
		ss_warn("memory.allocations: %s; its allocations were not recorded",
			not_recorded);
	if (!ss_alloc_hot.mask)
		return;
	static struct ss_alloc_block buf[2048];
	struct ss_meta_alloc_live h = {
		.untracked = __atomic_load_n(&tab_untracked, __ATOMIC_RELAXED),
	};
	size_t n = 0;
	int wrote = 0;
	for (uint32_t i = 0; tab && i < TAB_SIZE; i++) {
		uint64_t k = __atomic_load_n(&tab[i].key, __ATOMIC_ACQUIRE);
		if (k <= TAB_TOMB)
			continue;
		buf[n].addr = k;
		buf[n].space = tab[i].space;
		if (++n == sizeof(buf) / sizeof(buf[0])) {
			h.n = n;
			ss_meta_write(SS_META_ALLOC_LIVE, &h, sizeof(h), buf, n * sizeof(buf[0]));
			n = 0;
			wrote = 1;
		}
	}
	if (n || !wrote) {
		h.n = n;
		ss_meta_write(SS_META_ALLOC_LIVE, &h, sizeof(h), buf, n * sizeof(buf[0]));
	}
}
