/*
 * ring-copy.c - the copier's side of the rings: finished blocks of every
 * thread's ring go into EVENTS chunks of the thread (pwrite: no mapping, no
 * page fault in the program), each block cleared once its copy is in the
 * file; a ring whose owner is gone is freed when it is empty; at exit the
 * file's tail is cut to what it holds.  The background thread (pool.c)
 * calls ss_ring_drain_all; a thread whose ring is full copies its own
 * blocks through ss_ring_drain_locked (ring.c).  Lock order as in ring.c:
 * ring->mu, then ss_rt.lock, then the pool's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

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
		size = r->spare_size;
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
	atomic_fetch_add(&ss_rt.events, ss_ring_block_events(b, n));
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
uint64_t ss_ring_block_events(const uint64_t *b, uint64_t n)
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
int ss_ring_drain_locked(struct ss_ring *r, int have_lock, uint64_t most)
{
	uint64_t c = atomic_load_explicit(&r->consumed, memory_order_relaxed);
	uint64_t p = atomic_load_explicit(&r->produced, memory_order_acquire);
	if (p - c > most)
		p = c + most;
	for (; c < p; c++) {
		uint64_t *b = ss_ring_block_at(r, c);
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
			/* clear: the head first (the owner reuses the block
			 * only once `consumed` says so, below), so that a
			 * process killed meanwhile leaves a block that reads
			 * as empty - its copy is in the chunk - rather than a
			 * block record without its time */
			atomic_store_explicit((_Atomic uint64_t *)b, 0, memory_order_relaxed);
			atomic_thread_fence(memory_order_release);
			ss_ring_test_kill("clear");
			memset(b + 1, 0, (size_t)(n - 1) * sizeof(uint64_t));
		}
		atomic_store_explicit(&r->consumed, c + 1, memory_order_release);
	}
	return 0;
}

/* The owner's dropped events that no block of its own says: a block of
 * their own (number lost_seq), copied out like the others.  r->mu held. */
void ss_ring_write_lost_locked(struct ss_ring *r, int have_lock)
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
		r->hdr->lost = 0; /* in the file as a block now */
	}
}

/* The owner is gone: its EVENTS chunk ends where its events end, and what
 * it had left becomes the next owner's chunk (the ring's spare), so a
 * thread costs the file the bytes it wrote, not a whole chunk: threads
 * created and joined one at a time used to take a fresh chunk each, and
 * reached max_trace_mb on reservations alone.  The part left gets its own
 * header (unassigned, serial 0) before the first chunk is cut, so a reader
 * finds a chain of headers at every moment.  A part smaller than a ring
 * is given back to the file system instead (close_ev).  r->mu held. */
static void split_ev(struct ss_ring *r, int have_lock)
{
	const uint64_t hsz = sizeof(struct ss_chunk_header);
	uint64_t keep = hsz + r->ev_used, rest = r->ev_size - keep;
	int fd = r->ev_off && !r->spare_off && rest >= ss_rt.chunk_bytes + hsz
			 ? ev_fd(have_lock) : -1;
	if (fd < 0) {
		close_ev(r, have_lock);
		return;
	}
	struct ss_chunk_header h = {
		.magic = SS_CHUNK_MAGIC,
		.kind = SS_CHUNK_EVENTS,
		.size = rest,
	};
	if (pwrite(fd, &h, sizeof(h), (off_t)(r->ev_off + keep)) != (ssize_t)sizeof(h) ||
	    pwrite(fd, &keep, sizeof(keep),
		   (off_t)(r->ev_off + offsetof(struct ss_chunk_header, size))) !=
		    (ssize_t)sizeof(keep)) {
		close_ev(r, have_lock); /* the first chunk keeps its size, or is cut */
		return;
	}
	r->spare_off = r->ev_off + keep;
	r->spare_size = rest;
	r->ev_off = 0;
}

/* A ring whose owner is gone and whose blocks are all copied: free it
 * for the next thread.  r->mu held. */
static void release_locked(struct ss_ring *r, int have_lock)
{
	ss_ring_write_lost_locked(r, have_lock);
	split_ev(r, have_lock);
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
	if (ss_ring_stalled())
		return 0;
	pthread_mutex_lock(&ss_rings.mu);
	struct ss_ring *r = ss_rings.all;
	pthread_mutex_unlock(&ss_rings.mu);
	/* rings are only ever added at the head and never freed */
	for (; r; r = r->next) {
		if (r->free)
			continue;
		uint64_t before = atomic_load(&r->consumed);
		if (before == atomic_load(&r->produced) && !atomic_load(&r->closing))
			continue;
		/* the owner's next EVENTS chunk is reserved here, without
		 * the ring's lock: a thread whose ring is full never finds
		 * it held during a file-system call that may take long.
		 * Only when the chunk it fills has less than a ring's worth
		 * of room left (a whole ring is what a thread copies itself
		 * at once): a chunk reserved for each owner of a ring would
		 * cost every short-lived thread a chunk */
		uint64_t size = ss_rt.chunk_bytes * SS_EV_CHUNK_RINGS;
		pthread_mutex_lock(&r->mu);
		int want = !r->spare_off &&
			   (!r->ev_off || r->ev_size - sizeof(struct ss_chunk_header) -
						      r->ev_used < ss_rt.chunk_bytes);
		pthread_mutex_unlock(&r->mu);
		if (want && !ss_rt.stopped) {
			pthread_mutex_lock(&ss_rt.lock);
			uint64_t off = ss_buf_reserve(size);
			pthread_mutex_unlock(&ss_rt.lock);
			pthread_mutex_lock(&r->mu);
			if (!r->spare_off) { /* else left unassigned */
				r->spare_off = off;
				r->spare_size = size;
			}
			pthread_mutex_unlock(&r->mu);
		}
		/* one block per hold of the lock: a thread whose ring is
		 * full can copy the next one itself meanwhile */
		int more = 1;
		while (more) {
			pthread_mutex_lock(&r->mu);
			more = !r->free && !ss_ring_drain_locked(r, have_lock, 1) &&
			       atomic_load(&r->consumed) != atomic_load(&r->produced);
			if (!more && !r->free && atomic_load(&r->closing) &&
			    atomic_load(&r->consumed) == atomic_load(&r->produced))
				release_locked(r, have_lock);
			pthread_mutex_unlock(&r->mu);
		}
		n += atomic_load(&r->consumed) - before;
	}
	return n;
}

/* The owner is gone (ss_ring_close, on its way out, ss_rt.lock held): what
 * it left is copied and the ring freed at once when nobody holds it, so
 * the next thread takes this ring and the rest of its chunk.  Left to the
 * background thread, threads created one after another while it was
 * behind each took a new ring and chunk (54 rings for 2,000 threads on a
 * busy machine).  Never waits: a ring someone holds is the background
 * thread's to finish. */
void ss_ring_release_gone(struct ss_ring *r)
{
	if (ss_ring_stalled() || pthread_mutex_trylock(&r->mu))
		return;
	if (!r->free && !ss_ring_drain_locked(r, 1, UINT64_MAX) &&
	    atomic_load(&r->consumed) == atomic_load(&r->produced))
		release_locked(r, 1);
	pthread_mutex_unlock(&r->mu);
}

/* Whether a ring has blocks waiting to be copied. */
int ss_ring_pending(void)
{
	pthread_mutex_lock(&ss_rings.mu);
	struct ss_ring *r = ss_rings.all;
	pthread_mutex_unlock(&ss_rings.mu);
	for (; r; r = r->next)
		if (!r->free && (atomic_load(&r->consumed) != atomic_load(&r->produced) ||
				 atomic_load(&r->closing)))
			return 1;
	return 0;
}

/* At exit (ss_rt.lock held, after ss_pool_trim and ss_ring_flush): an
 * EVENTS chunk at the end of the file is cut to what it holds, the unused
 * part of the others goes back to the file system, and so do the blocks of
 * rings that are empty for good (free, or the exiting thread's, all
 * copied): the trace takes the disk space of its events.  Later events go
 * to new chunks as usual (a punched ring page is a fresh zero page). */
void ss_ring_trim_tail(struct ss_thread *self, int last)
{
	pthread_mutex_lock(&ss_rings.mu);
	struct ss_ring *r = ss_rings.all;
	pthread_mutex_unlock(&ss_rings.mu);
	int fd = ss_buf_fd();
	if (fd < 0)
		return;
	for (; r; r = r->next) {
		if (pthread_mutex_trylock(&r->mu))
			continue;
		if (r->spare_off) { /* reserved, never used: unassigned */
			uint64_t size = r->spare_size;
			if (r->spare_off + size == ss_rt.file_off &&
			    ftruncate(fd, (off_t)r->spare_off) == 0)
				ss_rt.file_off = r->spare_off;
			else /* its header stays */
				punch(fd, r->spare_off + sizeof(struct ss_chunk_header),
				      size - sizeof(struct ss_chunk_header));
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
