/*
 * ring.c - each thread's ring of blocks: the owner's side (a block begun,
 * finished, switched; a thread's ring given and closed).  Copying finished
 * blocks out is ring-copy.c; what both share is ring.h.
 *
 * Design: a thread records into a RING chunk of the trace file (format.h):
 * `nblocks` blocks used in turn, mapped MAP_SHARED and paged in before the
 * thread gets it.  The ring is reused, so the words a thread writes stay in
 * its core's cache, and the thread never takes a page fault or a system
 * call between two blocks.  The runtime's background thread ("stepscope-buf",
 * pool.c) copies every finished block into an EVENTS chunk of the thread
 * and clears it; the thread then uses it again.  Nothing is only in
 * memory: a process that dies (SIGKILL, abort, _exit) leaves its unfinished
 * and uncopied blocks in the RING chunk of the file, where a reader finds
 * them (a block copied and not yet cleared is found twice: the reader keeps
 * the longer copy).
 *
 * When the background thread falls behind and the ring is full, the thread
 * copies its oldest blocks itself if nobody else is copying them at that
 * moment, else writes its next block straight into an EVENTS chunk (one
 * the pool paged in, else one it maps itself).  Only when none of that can
 * be done without waiting on another thread does it drop events: it
 * counts them and writes the count as an SS_EV_LOST record at the head of
 * its next block.  It never waits.
 *
 * Lock order: ring->mu, then ss_rt.lock, then the pool's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

/* Test switches, read once, as the runtime starts (tests only):
 * STEPSCOPE__TEST_STALL_COPY=1: nothing copies blocks out and no pool chunk
 * is used until the process exits, so a thread whose ring fills drops
 * events, as it does when the copier is behind;
 * STEPSCOPE__TEST_KILL_AT=POINT: at exit (ss_ring_flush), the process is
 * killed at POINT the first time it gets there: "clear", halfway through
 * clearing a block copied out; "lost", between storing the exiting
 * thread's LOST record and clearing its ring header's count. */
static int stall_copy, kill_armed;
static char kill_at[8];

void ss_ring_test_switches(void)
{
	const char *v = secure_getenv("STEPSCOPE__TEST_STALL_COPY");
	stall_copy = v && *v == '1';
	v = secure_getenv("STEPSCOPE__TEST_KILL_AT");
	if (v && strlen(v) < sizeof(kill_at))
		strcpy(kill_at, v);
}

int ss_ring_stalled(void)
{
	return stall_copy;
}

void ss_ring_test_kill(const char *point)
{
	if (kill_armed && !strcmp(kill_at, point))
		raise(SIGKILL);
}

struct ss_rings ss_rings = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* A ring made for a window about to open, with no chunk ready: its first
 * RING_NOW bytes are paged in then, the rest by the background thread */
#define RING_NOW (64 << 10)

/* A new ring, free, in the list; NULL when recording stopped.  With
 * `lazy` (a window's opening), a chunk the pool does not have is paged in
 * in pieces (ss_buf_map_lazy), else whole.  ss_rt.lock held. */
static struct ss_ring *ring_new(uint64_t size, int lazy)
{
	/* allocated first: a chunk mapped in pieces is never unmapped again,
	 * the background thread touches its pages (pool.c populate_later) */
	struct ss_ring *r = ss_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	uint64_t off = 0;
	struct ss_chunk_header *c = ss_pool_take(size, &off);
	for (int tries = 0; !c && tries < 2 && !ss_rt.stopped; tries++) {
		off = ss_buf_reserve(size);
		c = !off ? NULL : lazy ? ss_buf_map_lazy(off, size, RING_NOW) : ss_buf_map(off, size);
	}
	if (!c) {
		ss_free(r);
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	r->c = c;
	r->off = off;
	r->size = size;
	r->nb = SS_RING_BLOCKS;
	uint64_t room = size - sizeof(*c) - sizeof(struct ss_ring_header);
	r->bw = (uint32_t)(room / SS_RING_BLOCKS / 64 * 64 / sizeof(uint64_t));
	struct ss_ring_header *h = (struct ss_ring_header *)(c + 1);
	h->block_bytes = r->bw * (uint32_t)sizeof(uint64_t);
	h->nblocks = r->nb;
	r->hdr = h;
	r->blocks = (uint64_t *)(h + 1);
	c->magic = SS_CHUNK_MAGIC;
	c->kind = SS_CHUNK_RING;
	c->size = size;
	r->free = 1;
	pthread_mutex_lock(&ss_rings.mu);
	r->next = ss_rings.all;
	ss_rings.all = r;
	pthread_mutex_unlock(&ss_rings.mu);
	return r;
}

/* Take a free ring of `size` bytes out of the list, or NULL. */
static struct ss_ring *ring_take_free(uint64_t size)
{
	struct ss_ring *r = NULL;
	pthread_mutex_lock(&ss_rings.mu);
	for (struct ss_ring *x = ss_rings.all; x; x = x->next)
		if (x->free && x->size == size) {
			r = x;
			r->free = 0;
			break;
		}
	pthread_mutex_unlock(&ss_rings.mu);
	return r;
}

/* How many rings the process's threads lack (ss_rt.lock held): its threads
 * ("Threads:" of /proc/self/status: opendir would allocate with the
 * program's malloc) less the runtime's own, those with a ring and the free
 * rings, at most 64. */
int ss_ring_missing(void)
{
	int want = 0, have = 0;
	char st[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, st, sizeof(st) - 1);
		close(fd);
		st[n > 0 ? n : 0] = 0;
		const char *p = strstr(st, "\nThreads:");
		if (p)
			want = atoi(p + 9);
	}
	want -= ss_thread_own_count(); /* stepscope-buf, the samplers */
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		want -= t->ring != NULL;
	if (want > 64)
		want = 64;
	pthread_mutex_lock(&ss_rings.mu);
	for (struct ss_ring *x = ss_rings.all; x; x = x->next)
		have += x->free && x->size == ss_rt.chunk_bytes;
	pthread_mutex_unlock(&ss_rings.mu);
	return want > have ? want - have : 0;
}

/* Before a window opens (ss_rt.lock held): a free ring for every thread
 * of the process that has none, so the workers' first events in the
 * window find one instead of paging in their own during the first step.
 * Made by the background thread during the step before (pool.c
 * rings_early, `lazy`: paged in in pieces), else by the opening. */
void ss_ring_prepare(int lazy)
{
	for (int n = ss_ring_missing(); n > 0; n--)
		if (!ring_new(ss_rt.chunk_bytes, lazy))
			break;
}

/* Give the thread a ring (ss_rt.lock held): a free one, one the pool
 * paged in, or a new one (paged in in pieces with `lazy`).  NULL when
 * recording stopped. */
static struct ss_ring *ring_get(struct ss_thread *t, int lazy)
{
	uint64_t size = ss_rt.chunk_bytes;
	ss_pool_start(size); /* the thread that copies blocks out */
	struct ss_ring *r = ring_take_free(size);
	if (!r && ring_new(size, lazy))
		r = ring_take_free(size);
	if (!r)
		return NULL;
	r->tid = t->tid;
	r->serial = t->serial;
	r->c->tid = t->tid;
	r->c->seq = 0;
	r->hdr->lost = 0;
	r->hdr->lost_seq = 0;
	ss_clock_pair(&r->c->calib_ticks, &r->c->calib_ns);
	atomic_signal_fence(memory_order_seq_cst);
	r->c->serial = t->serial;
	t->ring = r;
	t->bseq = 0;
	t->blk = NULL;
	return r;
}

/* The thread's current block is finished: its length for the copier, or,
 * for a block written straight into an EVENTS chunk, the chunk's length. */
static void finish_block(struct ss_thread *t)
{
	struct ss_ring *r = t->ring;
	if (!r || !t->blk)
		return;
	ss_buf_fill(t, t->pos);
	uint64_t n = (uint64_t)(t->pos - t->blk);
	if (t->ovf) {
		t->ovf->used = n * sizeof(uint64_t);
		atomic_fetch_add(&ss_rt.events, ss_ring_block_events(t->blk, n));
		ss_pool_retire(t->ovf);
		t->ovf = NULL;
	} else {
		r->len[(r->begun - 1) % r->nb] = (uint32_t)n;
		atomic_store_explicit(&r->produced, r->begun, memory_order_release);
	}
	t->blk = NULL;
	t->chunk = NULL;
	t->pos = t->end = t->done = NULL;
}

/* An EVENTS chunk for a block the ring has no room for: one the pool
 * paged in already, else one mapped now; NULL if neither can be had
 * without waiting. */
static struct ss_chunk_header *overflow_chunk(struct ss_thread *t, int have_lock)
{
	uint64_t off = 0;
	struct ss_chunk_header *c = ss_pool_take(ss_rt.chunk_bytes, &off);
	if (!c && !ss_ring_stalled() && (have_lock || !pthread_mutex_trylock(&ss_rt.lock))) {
		/* none ready: map one (the system calls the ring is there to
		 * spare, but no event lost), unless that means waiting */
		off = ss_buf_reserve(ss_rt.chunk_bytes);
		c = off ? ss_buf_map(off, ss_rt.chunk_bytes) : NULL;
		if (!have_lock)
			pthread_mutex_unlock(&ss_rt.lock);
	}
	if (!c)
		return NULL;
	c->kind = SS_CHUNK_EVENTS;
	c->tid = t->tid;
	c->seq = t->bseq;
	c->used = 0;
	ss_clock_pair(&c->calib_ticks, &c->calib_ns);
	atomic_signal_fence(memory_order_seq_cst);
	c->serial = t->serial;
	return c;
}

/* Begin the thread's next block, its bases from `now` and `ab`: in the
 * ring, else (the copier is behind and the ring cannot be emptied now)
 * straight into a chunk the pool paged in.  NULL when neither has room:
 * the caller drops and counts. */
static uint64_t *begin_block(struct ss_thread *t, uint64_t now, uint64_t ab, int have_lock)
{
	struct ss_ring *r = t->ring;
	uint64_t *b, *end;
	if (ss_ring_stalled() && !ss_ring_block_free(r, r->begun))
		return NULL;
	/* full: copy the blocks ourselves (the background thread is behind),
	 * else write the block straight into an EVENTS chunk; when neither
	 * can be had right now (the background thread holds the ring or the
	 * file, maybe preempted on a busy machine), yield and look again, at
	 * most SS_SPIN_TRIES times, then drop (counted) rather than wait */
	struct ss_chunk_header *c = NULL;
	for (int i = 0; !ss_ring_block_free(r, r->begun) && i < SS_SPIN_TRIES; i++) {
		if (!pthread_mutex_trylock(&r->mu)) {
			ss_ring_drain_locked(r, have_lock, r->nb);
			pthread_mutex_unlock(&r->mu);
			if (ss_ring_block_free(r, r->begun))
				break;
		}
		if ((c = overflow_chunk(t, have_lock)))
			break;
		sched_yield();
	}
	if (c) {
		t->ovf = c;
		b = (uint64_t *)(c + 1);
		end = (uint64_t *)((char *)c + c->size);
	} else if (ss_ring_block_free(r, r->begun)) {
		b = ss_ring_block_at(r, r->begun++);
		end = b + r->bw;
	} else {
		return NULL;
	}
	t->blk = b;
	t->chunk = r->c;
	t->end = end - SS_RESERVE;
	return ss_buf_put_block(t, b, now, ab);
}

/* Address base for a block that begins with `word`. */
static uint64_t base_for(struct ss_thread *t, uint64_t word)
{
	unsigned kind = SS_EV_KIND(word);
	if (kind == SS_EV_ENTER || kind == SS_EV_EXIT)
		return SS_ABASE(SS_EV_ARG(word));
	return t->abase;
}

/* One event dropped: counted on the thread, and in its ring's header in
 * the file with the number of the block whose LOST record will count it
 * (the next one begun), so that a process killed before that record is
 * written still says what it dropped (the reader counts the header's
 * number as that block; once the block exists, it is the one kept). */
static void count_lost(struct ss_thread *t)
{
	__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
	if (t->ring) {
		t->ring->hdr->lost_seq = t->bseq;
		__atomic_fetch_add(&t->ring->hdr->lost, 1, __ATOMIC_RELAXED);
	}
}

/* Slow path of ss_emit: the thread has no block or its block is full.
 * Stores `word` as the next block's first event, stamped after the switch
 * (the slow path is not the program's time) but before the signals held
 * back meanwhile are delivered: a handler that interrupted it runs right
 * after this event, with its own true timestamps, so it nests under the
 * call it interrupted. */
void ss_buf_refill(struct ss_thread *t, uint64_t word)
{
	if (t->own)
		return; /* the runtime's own calls (ss_thread_start) */
	/* the ring was full at the last try: count, and look again without
	 * the slow path's system calls until a block is free (or, every
	 * SS_DROP_RETRY events, through it: it may copy blocks itself) */
	if (t->drop && t->ring && !ss_ring_block_free(t->ring, t->ring->begun) && !t->in_slow &&
	    (ss_hot.gate & SS_GATE_EVENTS) && (t->lost % SS_DROP_RETRY) != 0) {
		count_lost(t);
		return;
	}
	int saved = errno;
	/* A signal handler that ran in here would find the block full and
	 * the slow path busy, and lose its events: hold asynchronous signals
	 * back (before the slow path is marked busy) until the new block is
	 * in place and this event is stored. */
	sigset_t old;
	ss_buf_hold_signals(&old);
	if (t->in_slow || !(ss_hot.gate & SS_GATE_EVENTS)) {
		/* a signal handler interrupted another slow path (a step
		 * boundary, a maps snapshot), or recording stopped meanwhile:
		 * drop, but count it */
		if (ss_hot.gate & SS_GATE_EVENTS)
			count_lost(t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		return;
	}
	t->in_slow = 1;
	/* a block switch takes no lock: the background thread may hold
	 * ss_rt.lock while it reserves file space (the maps are looked at
	 * there too, pool.c) */
	if (t->state == SS_THREAD_NEW || !t->ring) {
		pthread_mutex_lock(&ss_rt.lock);
		ss_fork_resume();
		if (t->state == SS_THREAD_NEW)
			ss_thread_init(t);
		if (!t->ring && !ss_rt.stopped && !ss_rt.disabled)
			ring_get(t, 0);
		pthread_mutex_unlock(&ss_rt.lock);
	}
	if (ss_rt.stopped && t->blk && t->pos <= t->end)
		ss_buf_put_stop(t); /* in the words the block keeps free */
	finish_block(t);
	uint64_t *e = NULL;
	if (t->ring && !ss_rt.stopped) {
		uint64_t now = ss_clock_now();
		e = begin_block(t, now, base_for(t, word), 0);
		if (e && t->lost) {
			uint64_t n = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
			e = ss_buf_put(t, e, SS_EV_WORD(SS_EV_LOST, n & SS_EV_ARG_MASK), now);
			atomic_signal_fence(memory_order_seq_cst);
			t->ring->hdr->lost = 0; /* said in the stream now */
			atomic_fetch_add(&ss_rt.lost, n);
		}
		if (e && t->inherit)
			e = ss_frames_inherit(t, e, t->end - 2, now,
					      SS_EV_KIND(word) == SS_EV_ENTER);
	}
	t->drop = t->ring && !e;
	if (e) {
		/* odd: an EXIT stored here was read unfenced (ss_clock_exit) */
		uint64_t now = ss_clock_now() | 1;
		if (now - t->tbase >= (UINT64_C(1) << 32))
			now = t->tbase | 1;
		t->pos = ss_buf_put(t, e, word, now);
		t->done = t->pos;
	} else if (ss_hot.gate & SS_GATE_EVENTS) {
		count_lost(t);
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->in_slow = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}

/* When a window opens (lock held, the thread's slow path busy): give the
 * stepping thread its ring and first block now, before its step begins,
 * so that its first event takes no refill.  Lost events and inherited
 * frames are left to the refill, which writes them at a block's head. */
void ss_buf_ready(struct ss_thread *t)
{
	if (t->blk || t->lost || t->inherit || ss_rt.stopped || ss_rt.disabled)
		return;
	if (!t->ring && !ring_get(t, 1))
		return;
	uintptr_t hint = (uintptr_t)ss_hot.watch;
	uint64_t *e = begin_block(t, ss_clock_now(), hint ? SS_ABASE(hint) : t->abase, 1);
	if (e)
		t->pos = t->done = e;
}

/* Recording stopped while this thread had a block: mark it in the
 * thread's stream (every block keeps room for this) and finish the
 * block, which stays in the ring if it cannot be copied. */
void ss_buf_mark_stop(struct ss_thread *t)
{
	if (t->in_slow || !t->blk)
		return;
	sigset_t old;
	int saved = errno;
	ss_buf_hold_signals(&old);
	t->in_slow = 1;
	if (t->blk && ss_rt.stopped && t->pos <= t->end) {
		ss_buf_put_stop(t);
		finish_block(t);
	}
	t->in_slow = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}

/* The thread is done with its ring (it exits), ss_rt.lock held: its last
 * block is finished, what is left copied out and the ring freed, by this
 * thread when nobody holds the ring, else by the background thread. */
void ss_ring_close(struct ss_thread *t)
{
	struct ss_ring *r = t->ring;
	if (!r)
		return;
	finish_block(t);
	t->ring = NULL;
	r->lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
	r->lost_seq = t->bseq++;
	r->lost_ts = ss_clock_now();
	r->hdr->lost_seq = r->lost_seq; /* the block the copier writes */
	r->hdr->lost = r->lost;
	atomic_store(&r->closing, 1);
	ss_ring_release_gone(r); /* else the background thread does */
	ss_pool_start(ss_rt.chunk_bytes); /* wake it */
}

/* At process exit, before ss_rt.lock is taken: the calling thread's block
 * is finished (a later event begins a new one), and every finished block
 * of every ring is copied out.  Blocks other threads are still writing
 * stay in their rings, where a reader finds them. */
void ss_ring_flush(struct ss_thread *self)
{
	stall_copy = 0;
	kill_armed = 1;
	if (self->lost && self->ring && (ss_hot.gate & SS_GATE_EVENTS)) {
		/* events dropped since its last block began: say so now */
		ss_ring_drain_all(0);
		self->drop = 0;
		/* in a block of its own, the one the ring's header names: a
		 * process killed before the header's count is cleared has
		 * the count twice under one block number, kept once */
		finish_block(self);
		self->ring->hdr->lost_seq = self->bseq;
		uint64_t n = __atomic_exchange_n(&self->lost, 0, __ATOMIC_RELAXED);
		ss_emit(SS_EV_WORD(SS_EV_LOST, n & SS_EV_ARG_MASK));
		atomic_signal_fence(memory_order_seq_cst);
		ss_ring_test_kill("lost");
		self->ring->hdr->lost = 0; /* in the stream now */
		atomic_fetch_add(&ss_rt.lost, n);
	}
	finish_block(self);
	ss_ring_drain_all(0);
	/* threads still running that dropped events: say so in a block of
	 * their own (the count is final enough: the process is ending) */
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next) {
		struct ss_ring *r = t->ring;
		if (!r || !t->lost || t == self)
			continue;
		pthread_mutex_lock(&r->mu);
		r->lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
		r->lost_seq = __atomic_fetch_add(&t->bseq, 1, __ATOMIC_RELAXED);
		r->lost_ts = ss_clock_now();
		r->hdr->lost_seq = r->lost_seq;
		r->hdr->lost = r->lost;
		ss_ring_write_lost_locked(r, 0);
		pthread_mutex_unlock(&r->mu);
	}
}

/* In a forked child: the rings are the parent's, which it goes on using. */
void ss_ring_after_fork(void)
{
	struct ss_ring *r = ss_rings.all, *next;
	pthread_mutex_init(&ss_rings.mu, NULL);
	ss_rings.all = NULL;
	for (; r; r = next) {
		next = r->next;
		munmap(r->c, r->size);
		ss_free(r);
	}
}
