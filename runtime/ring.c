/*
 * ring.c - each thread's ring of blocks, and the copying of full blocks
 * out of it.
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

#include "internal.h"

#define SS_RING_BLOCKS 16

struct ss_ring {
	struct ss_ring *next;           /* every ring of the process */
	struct ss_chunk_header *c;      /* the RING chunk, mapped */
	uint64_t *blocks;               /* block 0 */
	uint64_t size;                  /* of the chunk */
	uint64_t off;                   /* of the chunk in the file */
	uint32_t bw, nb;                /* words per block, blocks */
	pthread_mutex_t mu;             /* held by whoever copies blocks out */
	uint64_t begun;                 /* ring blocks the owner began (its
	                                 * blocks in overflow chunks are not
	                                 * counted: they take no slot) */
	_Atomic uint64_t produced;      /* ring blocks the owner finished */
	_Atomic uint64_t consumed;      /* blocks copied out and cleared */
	_Atomic int closing;            /* the owner is gone: copy, then free */
	int free;                       /* no owner: can be given out again */
	uint32_t len[SS_RING_BLOCKS];   /* words used in each finished block */
	uint64_t tid, serial;           /* the owner */
	/* the owner's EVENTS chunk being filled (under mu), written with
	 * pwrite: no mapping, no page fault, no TLB shootdown */
	uint64_t ev_off;                /* 0: none */
	uint64_t spare_off;             /* a chunk reserved for the next one,
	                                 * outside mu (0: none) */
	uint64_t ev_size, ev_used;      /* chunk bytes, payload bytes */
	uint64_t evseq;
	uint64_t hole_seq, hole_ns;     /* block (seq + 1) seen with a hole */
	/* events the owner dropped and had not written as SS_EV_LOST when
	 * it was done with the ring: written in a block of their own */
	uint64_t lost, lost_seq, lost_ts;
};

#define SS_HOLE_NS 200000000ull
#define SS_SPIN_TRIES 64
/* while dropping, one event in SS_DROP_RETRY takes the slow path again */
#define SS_DROP_RETRY 256

/* STEPSCOPE__TEST_STALL_COPY=1 (tests only): nothing copies blocks out and
 * no pool chunk is used until the process exits, so a thread whose ring
 * fills drops events, as it does when the copier is behind. */
static int stall_copy = -1;

static int stalled(void)
{
	if (stall_copy < 0) {
		const char *v = getenv("STEPSCOPE__TEST_STALL_COPY");
		stall_copy = v && *v == '1';
	}
	return stall_copy;
}

static struct {
	pthread_mutex_t mu;             /* the list; never held while copying */
	struct ss_ring *all;
} rings = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t *block_at(const struct ss_ring *r, uint64_t seq)
{
	return r->blocks + (seq % r->nb) * r->bw;
}

static int block_free(struct ss_ring *r, uint64_t seq)
{
	return seq - atomic_load_explicit(&r->consumed, memory_order_acquire) < r->nb;
}

static uint64_t block_events(const uint64_t *b, uint64_t n);

/* EVENTS chunks the background thread fills: a few times a ring */
#define SS_EV_CHUNK_RINGS 4

/* Punch out [off, off + len) of the file: space never written takes no
 * disk (the reader sees zeros). */
static void punch(int fd, uint64_t off, uint64_t len)
{
	uint64_t lo = (off + 4095) & ~(uint64_t)4095;
	if (off + len >= lo + 4096)
		fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
			  (off_t)((off + len - lo) & ~(uint64_t)4095));
}

/* The trace file's descriptor for a write outside ss_rt.lock: checked to
 * still be ours, else reopened under the lock (or -1, recording stopped). */
static int ev_fd(int have_lock)
{
	int fd = ss_rt.fd;
	if (ss_buf_fd_is(fd, ss_rt.dev, ss_rt.ino))
		return fd;
	if (!have_lock)
		pthread_mutex_lock(&ss_rt.lock);
	fd = ss_buf_fd();
	if (!have_lock)
		pthread_mutex_unlock(&ss_rt.lock);
	return fd;
}

/* The owner's EVENTS chunk is full or no longer needed: the part never
 * used goes back to the file system. */
static void close_ev(struct ss_ring *r, int have_lock)
{
	if (!r->ev_off)
		return;
	int fd = ev_fd(have_lock);
	uint64_t end = sizeof(struct ss_chunk_header) + r->ev_used;
	if (fd >= 0 && end < r->ev_size)
		punch(fd, r->ev_off + end, r->ev_size - end);
	r->ev_off = 0;
}

/* A new EVENTS chunk for the ring's owner; -1 when recording stopped.
 * Takes ss_rt.lock unless the caller holds it. */
static int open_ev(struct ss_ring *r, int have_lock)
{
	uint64_t size = ss_rt.chunk_bytes * SS_EV_CHUNK_RINGS, off = r->spare_off;
	int fd;
	r->spare_off = 0;
	if (off) { /* reserved ahead: no lock to take while holding mu */
		fd = ev_fd(have_lock);
	} else {
		if (!have_lock)
			pthread_mutex_lock(&ss_rt.lock);
		for (int tries = 0; !off && tries < 2 && !ss_rt.stopped; tries++)
			off = ss_buf_reserve(size);
		fd = off ? ss_buf_fd() : -1;
		if (!have_lock)
			pthread_mutex_unlock(&ss_rt.lock);
	}
	if (fd < 0)
		return -1;
	struct ss_chunk_header h = {
		.magic = SS_CHUNK_MAGIC,
		.kind = SS_CHUNK_EVENTS,
		.size = size,
		.tid = r->tid,
		.seq = r->evseq++,
		.serial = r->serial,
	};
	ss_clock_pair(&h.calib_ticks, &h.calib_ns);
	if (pwrite(fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h))
		return -1; /* stays unassigned; the blocks stay in the ring */
	r->ev_off = off;
	r->ev_size = size;
	r->ev_used = 0;
	return 0;
}

/* Append n words to the owner's EVENTS chunk, then its `used`. */
static int copy_out(struct ss_ring *r, const uint64_t *b, uint32_t n, int have_lock)
{
	uint64_t bytes = (uint64_t)n * sizeof(uint64_t);
	if (r->ev_off && sizeof(struct ss_chunk_header) + r->ev_used + bytes > r->ev_size)
		close_ev(r, have_lock);
	if (!r->ev_off && open_ev(r, have_lock))
		return -1;
	int fd = ev_fd(have_lock);
	uint64_t at = r->ev_off + sizeof(struct ss_chunk_header) + r->ev_used;
	if (fd < 0 || pwrite(fd, b, bytes, (off_t)at) != (ssize_t)bytes)
		return -1;
	r->ev_used += bytes;
	pwrite(fd, &r->ev_used, sizeof(r->ev_used),
	       (off_t)(r->ev_off + offsetof(struct ss_chunk_header, used)));
	atomic_fetch_add(&ss_rt.events, block_events(b, n));
	return 0;
}

static uint64_t ring_offset(const struct ss_ring *r)
{
	return r->off;
}

/* Words of a block up to its first zero head: the length of a block whose
 * owner did not say (it died, or is still writing it). */
static uint32_t block_len(const uint64_t *b, uint32_t bw)
{
	uint32_t i = 0;
	while (i < bw && b[i]) {
		uint64_t w = b[i];
		i += SS_CW_K(w) == 3 ? 1 + SS_CW_N(w) : 1;
	}
	return i < bw ? i : bw;
}

/* Events in the first n words of a block (its BLOCK, BASE and PAD records
 * are not events), for the end record's count. */
static uint64_t block_events(const uint64_t *b, uint64_t n)
{
	uint64_t i = 0, ev = 0;
	while (i < n && b[i]) {
		uint64_t w = b[i];
		unsigned kind = SS_CW_KIND(w);
		if (SS_CW_K(w) != 3) {
			i++;
			ev++;
			continue;
		}
		ev += kind != SS_EV_BLOCK && kind != SS_EV_BASE && kind != SS_EV_PAD;
		i += 1 + SS_CW_N(w);
	}
	return ev;
}

/* Copy the ring's finished blocks out, oldest first, clearing each one
 * after its copy is in the file (a reader that finds it in both places
 * keeps one).  r->mu held.  0 when every finished block was copied. */
static int drain_locked(struct ss_ring *r, int have_lock, uint64_t most)
{
	uint64_t c = atomic_load_explicit(&r->consumed, memory_order_relaxed);
	uint64_t p = atomic_load_explicit(&r->produced, memory_order_acquire);
	if (p - c > most)
		p = c + most;
	for (; c < p; c++) {
		uint64_t *b = block_at(r, c);
		uint32_t n = r->len[c % r->nb];
		if (n > r->bw)
			n = block_len(b, r->bw);
		/* a word of it still 0: a signal handler finished the block
		 * while the code it interrupted held a claimed word, stored
		 * as soon as the handler returns; copy it then.  A claim
		 * still open after SS_HOLE_NS was abandoned (the handler
		 * left by siglongjmp): the block is copied up to it, and the
		 * words after it are counted as lost. */
		uint32_t good = block_len(b, n);
		if (good != n) {
			uint64_t now = ss_clock_mono_ns();
			if (r->hole_seq != c + 1) {
				r->hole_seq = c + 1;
				r->hole_ns = now;
				return -1;
			}
			if (now - r->hole_ns < SS_HOLE_NS)
				return -1;
		}
		if (n) {
			if (copy_out(r, b, good, have_lock))
				return -1; /* stays in the ring */
			if (good != n) {
				uint64_t lost[2] = { SS_CW_LONG(SS_EV_LOST, 1, 0), n - good };
				copy_out(r, lost, 2, have_lock);
				atomic_fetch_add(&ss_rt.lost, n - good);
			}
			/* clear: the head last, so the block reads as empty
			 * only once all of it is */
			memset(b + 1, 0, (size_t)(n - 1) * sizeof(uint64_t));
			atomic_store_explicit((_Atomic uint64_t *)b, 0, memory_order_release);
		}
		atomic_store_explicit(&r->consumed, c + 1, memory_order_release);
	}
	return 0;
}

/* The owner's dropped events that no block of its own says: a block of
 * their own (number lost_seq), copied out like the others.  r->mu held. */
static void write_lost_locked(struct ss_ring *r, int have_lock)
{
	if (!r->lost)
		return;
	uint64_t b[6] = {
		SS_CW_LONG(SS_EV_BLOCK, 3, 0), r->lost_seq, r->lost_ts, 0,
		SS_CW_LONG(SS_EV_LOST, 1, 0), r->lost & SS_EV_ARG_MASK,
	};
	if (!copy_out(r, b, 6, have_lock)) {
		atomic_fetch_add(&ss_rt.lost, r->lost);
		r->lost = 0;
	}
}

/* A ring whose owner is gone and whose blocks are all copied: free it
 * for the next thread.  r->mu held. */
static void release_locked(struct ss_ring *r)
{
	write_lost_locked(r, 0);
	close_ev(r, 0);
	r->c->serial = 0;
	r->c->tid = 0;
	r->begun = 0;
	atomic_store(&r->produced, 0);
	atomic_store(&r->consumed, 0);
	atomic_store(&r->closing, 0);
	r->serial = r->tid = 0;
	r->evseq = 0;
	r->free = 1;
}

/* Copy out every ring's finished blocks (the background thread, and the
 * process's exit).  Returns the number of blocks copied. */
uint64_t ss_ring_drain_all(int have_lock)
{
	uint64_t n = 0;
	if (stalled())
		return 0;
	pthread_mutex_lock(&rings.mu);
	struct ss_ring *r = rings.all;
	pthread_mutex_unlock(&rings.mu);
	/* rings are only ever added at the head and never freed */
	for (; r; r = r->next) {
		if (r->free)
			continue;
		uint64_t before = atomic_load(&r->consumed);
		if (before == atomic_load(&r->produced) && !atomic_load(&r->closing))
			continue;
		/* the owner's next EVENTS chunk is reserved here, without
		 * the ring's lock: a thread whose ring is full never finds
		 * it held during a file-system call that may take long */
		if (!r->spare_off && !ss_rt.stopped) {
			uint64_t size = ss_rt.chunk_bytes * SS_EV_CHUNK_RINGS, off;
			pthread_mutex_lock(&ss_rt.lock);
			off = ss_buf_reserve(size);
			pthread_mutex_unlock(&ss_rt.lock);
			pthread_mutex_lock(&r->mu);
			if (!r->spare_off)
				r->spare_off = off; /* else left unassigned */
			pthread_mutex_unlock(&r->mu);
		}
		/* one block per hold of the lock: a thread whose ring is
		 * full can copy the next one itself meanwhile */
		int more = 1;
		while (more) {
			pthread_mutex_lock(&r->mu);
			more = !r->free && !drain_locked(r, have_lock, 1) &&
			       atomic_load(&r->consumed) != atomic_load(&r->produced);
			if (!more && !r->free && atomic_load(&r->closing) &&
			    atomic_load(&r->consumed) == atomic_load(&r->produced))
				release_locked(r);
			pthread_mutex_unlock(&r->mu);
		}
		n += atomic_load(&r->consumed) - before;
	}
	return n;
}

/* Whether a ring has blocks waiting to be copied. */
int ss_ring_pending(void)
{
	pthread_mutex_lock(&rings.mu);
	struct ss_ring *r = rings.all;
	pthread_mutex_unlock(&rings.mu);
	for (; r; r = r->next)
		if (!r->free && (atomic_load(&r->consumed) != atomic_load(&r->produced) ||
				 atomic_load(&r->closing)))
			return 1;
	return 0;
}

/* A new ring, free, in the list; NULL when recording stopped.  ss_rt.lock
 * held. */
static struct ss_ring *ring_new(uint64_t size)
{
	uint64_t off = 0;
	struct ss_chunk_header *c = ss_pool_take(size, &off);
	for (int tries = 0; !c && tries < 2 && !ss_rt.stopped; tries++) {
		off = ss_buf_reserve(size);
		c = off ? ss_buf_map(off, size) : NULL;
	}
	if (!c)
		return NULL;
	struct ss_ring *r = ss_calloc(1, sizeof(*r));
	if (!r) {
		munmap(c, size);
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
	r->blocks = (uint64_t *)(h + 1);
	c->magic = SS_CHUNK_MAGIC;
	c->kind = SS_CHUNK_RING;
	c->size = size;
	r->free = 1;
	pthread_mutex_lock(&rings.mu);
	r->next = rings.all;
	rings.all = r;
	pthread_mutex_unlock(&rings.mu);
	return r;
}

/* Take a free ring of `size` bytes out of the list, or NULL. */
static struct ss_ring *ring_take_free(uint64_t size)
{
	struct ss_ring *r = NULL;
	pthread_mutex_lock(&rings.mu);
	for (struct ss_ring *x = rings.all; x; x = x->next)
		if (x->free && x->size == size) {
			r = x;
			r->free = 0;
			break;
		}
	pthread_mutex_unlock(&rings.mu);
	return r;
}

/* When a window opens (ss_rt.lock held): a free ring for every thread of
 * the process that has none, so the workers' first events in the window
 * find one instead of paging in their own during the first step. */
void ss_ring_prepare(void)
{
	int want = 0, have = 0;
	/* the process's threads: "Threads:" of /proc/self/status (opendir
	 * would allocate with the program's malloc) */
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
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
		want -= t->ring != NULL;
	if (want > 64)
		want = 64;
	pthread_mutex_lock(&rings.mu);
	for (struct ss_ring *x = rings.all; x; x = x->next)
		have += x->free && x->size == ss_rt.chunk_bytes;
	pthread_mutex_unlock(&rings.mu);
	for (; have < want; have++)
		if (!ring_new(ss_rt.chunk_bytes))
			break;
}

/* Give the thread a ring (ss_rt.lock held): a free one, one the pool
 * paged in, or a new one.  NULL when recording stopped. */
static struct ss_ring *ring_get(struct ss_thread *t)
{
	uint64_t size = ss_rt.chunk_bytes;
	ss_pool_start(size); /* the thread that copies blocks out */
	struct ss_ring *r = ring_take_free(size);
	if (!r && ring_new(size))
		r = ring_take_free(size);
	if (!r)
		return NULL;
	r->tid = t->tid;
	r->serial = t->serial;
	r->c->tid = t->tid;
	r->c->seq = 0;
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
		atomic_fetch_add(&ss_rt.events, block_events(t->blk, n));
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
	if (!c && !stalled() && (have_lock || !pthread_mutex_trylock(&ss_rt.lock))) {
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
	if (stalled() && !block_free(r, r->begun))
		return NULL;
	/* full: copy the blocks ourselves (the background thread is behind),
	 * else write the block straight into an EVENTS chunk; when neither
	 * can be had right now (the background thread holds the ring or the
	 * file, maybe preempted on a busy machine), yield and look again, at
	 * most SS_SPIN_TRIES times, then drop (counted) rather than wait */
	struct ss_chunk_header *c = NULL;
	for (int i = 0; !block_free(r, r->begun) && i < SS_SPIN_TRIES; i++) {
		if (!pthread_mutex_trylock(&r->mu)) {
			drain_locked(r, have_lock, r->nb);
			pthread_mutex_unlock(&r->mu);
			if (block_free(r, r->begun))
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
	} else if (block_free(r, r->begun)) {
		b = block_at(r, r->begun++);
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

/* Slow path of ss_emit: the thread has no block or its block is full.
 * Stores `word` as the next block's first event, stamped after the switch
 * (the slow path is not the program's time) but before the signals held
 * back meanwhile are delivered: a handler that interrupted it runs right
 * after this event, with its own true timestamps, so it nests under the
 * call it interrupted. */
void ss_buf_refill(struct ss_thread *t, uint64_t word)
{
	/* the ring was full at the last try: count, and look again without
	 * the slow path's system calls until a block is free (or, every
	 * SS_DROP_RETRY events, through it: it may copy blocks itself) */
	if (t->drop && t->ring && !block_free(t->ring, t->ring->begun) && !t->in_slow &&
	    (ss_hot.gate & SS_GATE_EVENTS) && (t->lost % SS_DROP_RETRY) != 0) {
		__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
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
			__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		return;
	}
	t->in_slow = 1;
	if (t->blk && t->pos && t->pos <= t->end + SS_RESERVE)
		ss_buf_fill(t, t->pos); /* an interrupted claim: never a hole */
	/* a block switch takes no lock: the background thread may hold
	 * ss_rt.lock while it reserves file space (the maps are looked at
	 * there too, pool.c) */
	if (t->state == SS_THREAD_NEW || !t->ring) {
		pthread_mutex_lock(&ss_rt.lock);
		ss_fork_resume();
		if (t->state == SS_THREAD_NEW)
			ss_thread_init(t);
		if (!t->ring && !ss_rt.stopped && !ss_rt.disabled)
			ring_get(t);
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
			atomic_fetch_add(&ss_rt.lost, n);
		}
		if (e && t->inherit)
			e = ss_frames_inherit(t, e, t->end - 2, now,
					      SS_EV_KIND(word) == SS_EV_ENTER);
	}
	t->drop = t->ring && !e;
	if (e) {
		uint64_t now = ss_clock_now();
		if (now - t->tbase >= (UINT64_C(1) << 32))
			now = t->tbase;
		t->pos = ss_buf_put(t, e, word, now);
		t->done = t->pos;
	} else if (ss_hot.gate & SS_GATE_EVENTS) {
		__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
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
	if (!t->ring && !ring_get(t))
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
		ss_buf_fill(t, t->pos);
		ss_buf_put_stop(t);
		finish_block(t);
	}
	t->in_slow = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}

/* The thread is done with its ring (it exits): its last block is finished
 * and the background thread copies what is left, then frees the ring. */
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
	atomic_store(&r->closing, 1);
	ss_pool_start(ss_rt.chunk_bytes); /* wake it */
}

/* At process exit, before ss_rt.lock is taken: the calling thread's block
 * is finished (a later event begins a new one), and every finished block
 * of every ring is copied out.  Blocks other threads are still writing
 * stay in their rings, where a reader finds them. */
void ss_ring_flush(struct ss_thread *self)
{
	stall_copy = 0;
	if (self->lost && self->ring && (ss_hot.gate & SS_GATE_EVENTS)) {
		/* events dropped since its last block began: say so now */
		ss_ring_drain_all(0);
		self->drop = 0;
		uint64_t n = __atomic_exchange_n(&self->lost, 0, __ATOMIC_RELAXED);
		ss_emit(SS_EV_WORD(SS_EV_LOST, n & SS_EV_ARG_MASK));
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
		write_lost_locked(r, 0);
		pthread_mutex_unlock(&r->mu);
	}
}

/* At exit (ss_rt.lock held, after ss_pool_trim and ss_ring_flush): an
 * EVENTS chunk at the end of the file is cut to what it holds, the unused
 * part of the others goes back to the file system, and so do the blocks of
 * rings that are empty for good (free, or the exiting thread's, all
 * copied): the trace takes the disk space of its events.  Later events go
 * to new chunks as usual (a punched ring page is a fresh zero page). */
void ss_ring_trim_tail(struct ss_thread *self, int last)
{
	pthread_mutex_lock(&rings.mu);
	struct ss_ring *r = rings.all;
	pthread_mutex_unlock(&rings.mu);
	int fd = ss_buf_fd();
	if (fd < 0)
		return;
	for (; r; r = r->next) {
		if (pthread_mutex_trylock(&r->mu))
			continue;
		if (r->spare_off) { /* reserved, never used: unassigned */
			uint64_t size = ss_rt.chunk_bytes * SS_EV_CHUNK_RINGS;
			if (r->spare_off + size == ss_rt.file_off &&
			    ftruncate(fd, (off_t)r->spare_off) == 0)
				ss_rt.file_off = r->spare_off;
			else
				punch(fd, r->spare_off + 4096, size - 4096);
			r->spare_off = 0;
		}
		if (r->ev_off && r->ev_off + r->ev_size == ss_rt.file_off) {
			uint64_t size = sizeof(struct ss_chunk_header) + r->ev_used;
			if (pwrite(fd, &size, sizeof(size),
				   (off_t)(r->ev_off + offsetof(struct ss_chunk_header, size))) ==
				    (ssize_t)sizeof(size) &&
			    ftruncate(fd, (off_t)(r->ev_off + size)) == 0) {
				ss_rt.file_off = r->ev_off + size;
				r->ev_off = 0; /* the next block opens a new chunk */
			}
		}
		if (!last) {
			pthread_mutex_unlock(&r->mu);
			continue;
		}
		close_ev(r, 1);
		uint64_t ring_off = ring_offset(r);
		if (ring_off && (r->free || (r == self->ring && !self->blk)) &&
		    atomic_load(&r->consumed) == atomic_load(&r->produced)) {
			uint64_t at = ring_off + 4096; /* the headers stay */
			punch(fd, at, r->size - 4096);
		}
		pthread_mutex_unlock(&r->mu);
	}
}

/* In a forked child: the rings are the parent's, which it goes on using. */
void ss_ring_after_fork(void)
{
	struct ss_ring *r = rings.all, *next;
	pthread_mutex_init(&rings.mu, NULL);
	rings.all = NULL;
	for (; r; r = next) {
		next = r->next;
		munmap(r->c, r->size);
		ss_free(r);
	}
}
