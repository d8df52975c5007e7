/*
 * buffer.c - the trace file and the per-thread event chunks in it.
 *
 * Design: the file is created on a process's first event (so uninstrumented
 * programs that inherit the preload leave no empty traces).  Each thread
 * writes fixed 16-byte events into a chunk of the file reserved with
 * fallocate(), mapped MAP_SHARED and pre-faulted for writing (ss_buf_prefault)
 * before a thread gets it: stores land in the page
 * cache, so a process killed by SIGKILL or the OOM killer keeps everything
 * it recorded, and a full disk shows up as an error here instead of SIGBUS.
 * When a chunk fills, the thread takes the slow path below: close it, reserve
 * the next one.  That is the only place the hot path can make a syscall.
 *
 * The descriptor is the program's to close: daemons and launchers close
 * every fd above 2 and then open their own files, which get our number.
 * So the runtime's fd is kept high (F_DUPFD_CLOEXEC near RLIMIT_NOFILE),
 * close-on-exec, and its identity (st_dev, st_ino) is checked before every
 * use (once per chunk, never per event); a lost descriptor is reopened by
 * path, else recording stops with one warning and a STOP marker.  Chunks
 * already mapped stay valid whatever happens to the descriptor.
 *
 * Signal paths: a hook may run in a signal handler on top of any of this
 * (the hot path in internal.h, or a slow path here).  Slow paths hold
 * asynchronous signals while they move the thread's block; the hot path
 * claims words with one instruction and ss_buf_fill closes claims a
 * handler interrupted.  Nothing on these paths allocates or locks.
 *
 * Never: write into a file the runtime did not create, block the program
 * (the lock is held for a few syscalls only), kill it, or lose data silently - a dropped event is counted and reported in the
 * trace (SS_EV_LOST) and a stop is marked (SS_EV_STOP) with one warning.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static void stop_recording(int reason, const char *why);

/* The number of a high slot, taken while there is one thread.  Growing the
 * kernel's fd table to a high number waits for an RCU grace period when
 * the table is shared, that is once the program has a second thread: 6-16
 * ms on the development VM, in the step where the first window opened (the
 * trace file is created there).  A slot taken at start-up, while the table
 * is the main thread's alone, grows it for some 20 us; the trace's fd is
 * then moved onto that slot (dup3), which never grows the table. */
void ss_buf_fd_reserve(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	int hi = ss_buf_fd_high(fd);
	struct stat st;
	if (hi == fd || fstat(hi, &st)) {
		close(hi);
		return;
	}
	ss_rt.spare_dev = st.st_dev;
	ss_rt.spare_ino = st.st_ino;
	ss_rt.spare_fd = hi;
}

/* Move fd out of the program's way: a close-on-exec copy near the top of
 * RLIMIT_NOFILE (at least 1000), the original closed; onto the slot that
 * ss_buf_fd_reserve took, while the program has left it alone.  Returns
 * the fd to use (fd itself if no higher number is free). */
int ss_buf_fd_high(int fd)
{
	int spare = ss_rt.spare_fd;
	if (spare >= 0) {
		ss_rt.spare_fd = -1;
		if (ss_buf_fd_is(spare, ss_rt.spare_dev, ss_rt.spare_ino) &&
		    dup3(fd, spare, O_CLOEXEC) == spare) {
			close(fd);
			return spare;
		}
	}
	struct rlimit rl;
	long base = 1000;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (long)rl.rlim_cur - 64 > base)
		base = (long)rl.rlim_cur - 64;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	if (hi < 0)
		hi = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

/* 1 if fd is open on the file (dev, ino). */
int ss_buf_fd_is(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && !fstat(fd, &st) && st.st_dev == dev && st.st_ino == ino;
}

/* The trace file's descriptor, checked: still the file we created, else
 * reopened by path (and checked again); -1 when it is lost, recording
 * stopped.  A descriptor that is no longer ours is never closed or used:
 * it belongs to the program now.  Lock held. */
int ss_buf_fd(void)
{
	if (ss_rt.fd < 0)
		return -1;
	if (ss_buf_fd_is(ss_rt.fd, ss_rt.dev, ss_rt.ino))
		return ss_rt.fd;
	ss_rt.fd = -2; /* not ours: forget the number, keep "file open" state */
	int fd = open(ss_rt.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && ss_buf_fd_is(fd, ss_rt.dev, ss_rt.ino)) {
		fd = ss_buf_fd_high(fd);
		flock(fd, LOCK_SH | LOCK_NB); /* `record` waits while we write */
		ss_rt.fd = fd;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	stop_recording(SS_STOP_ERROR, "the program closed the trace file's descriptor "
		       "and the file cannot be reopened");
	return -1;
}

static const char *prog_name(void)
{
	const char *slash = strrchr(ss_rt.hdr.exe_path, '/');
	return slash ? slash + 1 : ss_rt.hdr.exe_path;
}

/* In a forked child: the parent's descriptor is not closed (it may be the
 * program's by now, which the identity check tells) but held, with the
 * parent's lock on its trace, until the child's own file is open: `record`
 * then waits for a daemon()'d child from its fork on. */
void ss_buf_after_fork(void)
{
	if (ss_rt.fd >= 0 && ss_buf_fd_is(ss_rt.fd, ss_rt.dev, ss_rt.ino)) {
		if (ss_rt.hold_fd >= 0 &&
		    ss_buf_fd_is(ss_rt.hold_fd, ss_rt.hold_dev, ss_rt.hold_ino))
			close(ss_rt.hold_fd);
		ss_rt.hold_fd = ss_rt.fd;
		ss_rt.hold_dev = ss_rt.dev;
		ss_rt.hold_ino = ss_rt.ino;
	}
	ss_rt.fd = -1;
}

/* Create this process's file and write its header.  The file is new
 * (O_EXCL: never an existing file, nor a symlink someone left at its
 * name, which O_NOFOLLOW says again) and owner-only, 0600 as perf's
 * perf.data: a name taken (an exec'd image of the same program and pid,
 * a pid reused, anything planted) moves on to <prog>.<pid>.<n>.sstrace,
 * n = 1..99 (docs/robustness.md, "Security").  Lock held. */
int ss_buf_open_file(void)
{
	if (ss_rt.fd != -1)
		return ss_rt.fd >= 0 ? 0 : -1;
	if (ss_rt.stopped || ss_rt.disabled)
		return -1;
	char path[sizeof(ss_rt.path) + 1200];
	int fd = -1;
	for (int n = 0; n < 100 && fd < 0; n++) {
		if (n == 0)
			snprintf(path, sizeof(path), "%s/%s.%d%s", ss_rt.dir,
				 prog_name(), (int)ss_rt.pid, SS_FILE_SUFFIX);
		else /* the name is taken */
			snprintf(path, sizeof(path), "%s/%s.%d.%d%s", ss_rt.dir,
				 prog_name(), (int)ss_rt.pid, n, SS_FILE_SUFFIX);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		ss_warn("cannot create trace file in %s: %s; not recording",
			ss_rt.dir, strerror(errno));
		ss_rt.disabled = 1;
		ss_hot.gate = 0;
		return -1;
	}
	static char page[SS_HEADER_SIZE];
	memset(page, 0, sizeof(page));
	ss_rt.hdr.pid = (uint64_t)ss_rt.pid;
	ss_rt.hdr.ppid = (uint64_t)getppid();
	ss_clock_pair(&ss_rt.hdr.calib_ticks, &ss_rt.hdr.calib_ns);
	memcpy(page, &ss_rt.hdr, sizeof(ss_rt.hdr));
	if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page)) {
		ss_warn("cannot write %s: %s; not recording", path, strerror(errno));
		close(fd);
		unlink(path);
		ss_rt.disabled = 1;
		ss_hot.gate = 0;
		return -1;
	}
	struct stat st;
	fd = ss_buf_fd_high(fd);
	fstat(fd, &st);
	ss_rt.dev = st.st_dev;
	ss_rt.ino = st.st_ino;
	/* held while this process may still write: `record` waits for it */
	flock(fd, LOCK_SH | LOCK_NB);
	ss_rt.fd = fd;
	if (ss_rt.hold_fd >= 0) { /* the parent's trace, held since fork */
		if (ss_buf_fd_is(ss_rt.hold_fd, ss_rt.hold_dev, ss_rt.hold_ino))
			close(ss_rt.hold_fd);
		ss_rt.hold_fd = -1;
	}
	ss_rt.file_off = SS_HEADER_SIZE;
	snprintf(ss_rt.path, sizeof(ss_rt.path), "%s", path);
	/* the first meta chunk: config, maps and modules */
	char cfg[8192];
	size_t n = ss_config_dump(&ss_rt.cfg, cfg, sizeof(cfg));
	if (n >= sizeof(cfg))
		n = sizeof(cfg) - 1;
	cfg[n] = 0;
	ss_meta_write(SS_META_CONFIG, cfg, n + 1, NULL, 0);
	ss_filter_write_meta(); /* the cost of a recorded call */
	ss_meta_maps();
	return 0;
}

static void stop_recording(int reason, const char *why)
{
	ss_rt.stopped = reason;
	/* 4: threads still recording mark the stop in their own stream at
	 * their next hook call (hooks.c), then record nothing more */
	ss_hot.gate = ((ss_hot.gate & SS_GATE_EVENTS) ? 4 : 0) |
		      (ss_hot.gate & SS_GATE_STATS); /* stats go on (stats.c) */
	if (!ss_rt.warned_stop) {
		ss_rt.warned_stop = 1;
		ss_warn("%s; recording stopped, the program continues (trace: %s)",
			why, ss_rt.path);
	}
}

/* Reserve `size` bytes at the end of the file; returns the offset, or 0
 * when recording stops.  The chunk is self-describing from this moment:
 * its header (an unassigned events chunk, serial 0) is written with pwrite
 * before anything else, so a process that dies while the chunk is being
 * paged in leaves no hole a reader would stop at.  Lock held. */
uint64_t ss_buf_reserve(uint64_t size)
{
	if (ss_buf_open_file() < 0)
		return 0;
	uint64_t off = ss_rt.file_off;
	if (ss_rt.cap_bytes && off + size > ss_rt.cap_bytes) {
		char why[128];
		snprintf(why, sizeof(why), "trace reached max_trace_mb=%lld",
			 (long long)ss_rt.cfg.max_trace_mb);
		stop_recording(SS_STOP_SIZE_CAP, why);
		return 0;
	}
	struct ss_chunk_header h = {
		.magic = SS_CHUNK_MAGIC,
		.kind = SS_CHUNK_EVENTS,
		.size = size,
	};
	int err = 0;
	for (int tries = 0;; tries++) {
		int fd = ss_buf_fd();
		if (fd < 0)
			return 0;
		err = posix_fallocate(fd, (off_t)off, (off_t)size);
		if (err == EOPNOTSUPP || err == EINVAL)
			err = ftruncate(fd, (off_t)(off + size)) ? errno : 0;
		if (!err && pwrite(fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h))
			err = errno ? errno : EIO;
		/* the program closed the descriptor between the check and
		 * the call (closefrom in another thread than the pool's):
		 * check again, which reopens it, and retry */
		if (err == EBADF && tries < 2)
			continue;
		break;
	}
	if (err) {
		char why[160];
		snprintf(why, sizeof(why), "cannot grow the trace file: %s",
			 strerror(err));
		stop_recording(err == ENOSPC ? SS_STOP_DISK_FULL : SS_STOP_ERROR, why);
		return 0;
	}
	ss_rt.file_off = off + size;
	return off;
}

static int no_populate; /* the kernel has no MADV_POPULATE_WRITE */

static void *map_chunk(uint64_t off, uint64_t size);

/* Map a reserved chunk, its pages populated.  No lock needed: the
 * descriptor is checked again, and if it is no longer ours the chunk is
 * left unassigned (ss_buf_reserve reopens or stops at the next chunk). */
void *ss_buf_map(uint64_t off, uint64_t size)
{
	void *p = map_chunk(off, size);
	if (p)
		ss_buf_prefault(p, size);
	return p;
}

/* The same, on a program's thread that cannot wait for a whole chunk (a
 * window opens and the background thread had no ring ready): its first
 * `now` bytes populated here, the rest by the background thread in
 * pieces (pool.c ss_pool_populate_later), which the thread's first
 * events do not reach before it is done, or reach with a page fault. */
void *ss_buf_map_lazy(uint64_t off, uint64_t size, uint64_t now)
{
	void *p = map_chunk(off, size);
	if (!p)
		return NULL;
	if (now >= size || no_populate || !ss_pool_populate_later((char *)p + now, size - now))
		now = size;
	ss_buf_prefault(p, now);
	return p;
}

static void *map_chunk(uint64_t off, uint64_t size)
{
	int fd = ss_rt.fd;
	if (!ss_buf_fd_is(fd, ss_rt.dev, ss_rt.ino))
		return NULL;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED && errno == EBADF)
		return NULL; /* closed since the check: left unassigned */
	if (p == MAP_FAILED) {
		char why[160];
		snprintf(why, sizeof(why), "cannot map the trace file: %s",
			 strerror(errno));
		stop_recording(SS_STOP_ERROR, why);
		return NULL;
	}
	return p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* A store from user mode to every page of [p, p + size), p page-aligned,
 * that changes nothing: an atomic OR of 0 into the page's first word, so
 * that a thread recording into the same page meanwhile (a ring whose
 * rest the background thread populates while its thread records into
 * its start, pool.c populate_later) loses no store. */
void ss_buf_touch(void *p, uint64_t size)
{
	for (uint64_t o = 0; o < size; o += 4096)
		__atomic_fetch_or((uint64_t *)((char *)p + o), 0, __ATOMIC_RELAXED);
}

/* Make every page of a fresh chunk writable now, so that the thread that
 * records into it takes no page fault.  MAP_POPULATE is not enough: on a
 * shared file mapping it maps the pages read-only, and the first store to
 * each 4 KiB page still faults (the file system's page_mkwrite: block
 * allocation, dirty accounting) inside whatever user function was running.
 * MADV_POPULATE_WRITE (Linux >= 5.14) takes those write faults here, in one
 * call; older kernels get the same by a store to every page.  The store
 * writes back the byte it read: the chunk's header, already in the file,
 * stays intact, and nobody else writes an unassigned chunk.  Pages the
 * kernel writes back later (dirty_expire, memory pressure) are made
 * read-only again and fault once more on the next store: rare, not zero.
 * Under a hypervisor that keeps its own page tables the kernel's
 * populating is not enough either: the first store from user mode to each
 * page still exits to the hypervisor (6 us a page on the development VM,
 * 1.5 ms a 1 MiB ring, invisible to perf inside the guest), which was most
 * of the first recorded step's excess (issue 46); ss_buf_touch takes it
 * here, on the thread that pages the chunk in. */
void ss_buf_prefault(void *p, uint64_t size)
{
	if (!no_populate && madvise(p, size, MADV_POPULATE_WRITE) == 0) {
		ss_buf_touch(p, size);
		return;
	}
	if (errno == EINVAL)
		no_populate = 1; /* kernel without it: touch from now on */
	volatile char *b = p;
	for (uint64_t o = 4095; o < size; o += 4096)
		b[o] = b[o];
}

/* Reserve `size` bytes at the end of the file and map them.  Lock held. */
void *ss_buf_chunk_alloc(uint64_t size)
{
	uint64_t off = ss_buf_reserve(size);
	return off ? ss_buf_map(off, size) : NULL;
}

/* Asynchronous signals held back (faults stay deliverable). */
void ss_buf_hold_signals(sigset_t *old)
{
	sigset_t hold;
	sigfillset(&hold);
	sigdelset(&hold, SIGSEGV);
	sigdelset(&hold, SIGBUS);
	sigdelset(&hold, SIGILL);
	sigdelset(&hold, SIGFPE);
	sigdelset(&hold, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &hold, old);
}

/* Store `word` (a version 1 event word) at e, stamped `now`, in the
 * thread's current bases: one compact word for an ENTER or EXIT inside
 * the address window, else a long record.  The caller made sure now is
 * within 2^32 ticks of tbase and that the words fit.  Returns the next
 * free word.  Nothing else may write to the thread's block meanwhile
 * (signals held, or the slots claimed). */
uint64_t *ss_buf_put(struct ss_thread *t, uint64_t *e, uint64_t word, uint64_t now)
{
	unsigned kind = SS_EV_KIND(word);
	uint64_t arg = SS_EV_ARG(word), dt = now - t->tbase;
	if ((kind == SS_EV_ENTER || kind == SS_EV_EXIT) &&
	    arg - t->abase < (UINT64_C(1) << SS_CW_ADDR_BITS)) {
		*e = SS_CW_SHORT(kind, dt, arg - t->abase);
		return e + 1;
	}
	e[1] = arg;
	atomic_signal_fence(memory_order_seq_cst);
	e[0] = SS_CW_LONG(kind, 1, dt);
	return e + 2;
}

/* New bases: tbase `now`, abase `ab`.  Three words. */
static uint64_t *put_base(struct ss_thread *t, uint64_t *e, uint64_t now, uint64_t ab)
{
	e[1] = now;
	e[2] = ab;
	atomic_signal_fence(memory_order_seq_cst);
	e[0] = SS_CW_LONG(SS_EV_BASE, 2, 0);
	t->tbase = now;
	t->abase = ab;
	return e + 3;
}

/* The head of a block: its number and the bases.  Four words. */
uint64_t *ss_buf_put_block(struct ss_thread *t, uint64_t *e, uint64_t now, uint64_t ab)
{
	e[1] = t->bseq++;
	e[2] = now;
	e[3] = ab;
	atomic_signal_fence(memory_order_seq_cst);
	e[0] = SS_CW_LONG(SS_EV_BLOCK, 3, 0);
	t->tbase = now;
	t->abase = ab;
	return e + 4;
}

/* Recording stopped: the mark, in the words every block keeps free. */
void ss_buf_put_stop(struct ss_thread *t)
{
	ss_buf_fill(t, t->pos); /* an interrupted claim below the mark */
	uint64_t now = ss_clock_now();
	if (now - t->tbase >= (UINT64_C(1) << 32))
		now = t->tbase; /* no room for a new base: stamp it at the base */
	t->pos = ss_buf_put(t, t->pos, SS_EV_WORD(SS_EV_STOP, (uint64_t)ss_rt.stopped), now);
	t->done = t->pos;
}

/* Words of the record whose head is w (a stored, non-zero head). */
static unsigned record_words(uint64_t w)
{
	return SS_CW_K(w) == 3 ? 1 + SS_CW_N(w) : 1;
}

/* The thread's block holds claimed words that were never stored: a signal
 * handler is running on top of the code that claimed them, and may leave
 * by siglongjmp, so that code may never store them.  Every such word in
 * [t->done, to) becomes a PAD record now; the interrupted code, if it
 * resumes, stores over them (a whole record, or its words again after the
 * handler's) or pads them itself.  Multi-word records store their head as
 * a PAD over their payload before the payload (ss_emit, ss_emit_wide), so
 * a stored word here is always a head and the walk stays on records.  A
 * reader never finds a zero word before the end of a block, which is what
 * ends one.  Async-signal-safe: plain loads and stores of the thread's own
 * words; a handler that interrupts this walk does the same walk. */
void ss_buf_fill(struct ss_thread *t, uint64_t *to)
{
	uint64_t *w = t->done;
	if (t->blk && w >= t->blk && w < to) {
		while (w < to) {
			if (!*w) {
				*w = SS_CW_LONG(SS_EV_PAD, 0, 0);
				w++;
			} else {
				w += record_words(*w);
			}
		}
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->done = to;
}

/* ss_emit_fn's event did not fit one word.  The common case, an address
 * outside the window of the block's address base (the executable's and a
 * shared library's functions called in turn), is stored as a long record
 * right there: its second word is claimed after the first, in one
 * instruction a signal handler cannot split, so no signal needs holding
 * and the program's thread makes no system call.  Anything else (a handler
 * recorded in between or moved the bases, the block is full, the time is
 * too far from the base) goes to ss_emit_far. */
void ss_emit_wide(struct ss_thread *t, uint64_t *e, uint64_t word, uint64_t now,
		  uint64_t tb, uint64_t ab)
{
	uint64_t dt = now - tb;
	if ((dt >> 32) == 0 && tb == t->tbase && ab == t->abase && e + 2 <= t->end &&
	    ss_claim(&t->pos, e + 1, e + 2)) {
		e[0] = SS_CW_LONG(SS_EV_PAD, 1, 0); /* until the head: skip both */
		atomic_signal_fence(memory_order_seq_cst);
		e[1] = SS_EV_ARG(word);
		atomic_signal_fence(memory_order_seq_cst);
		e[0] = SS_CW_LONG(SS_EV_KIND(word), 1, dt);
		atomic_signal_fence(memory_order_seq_cst);
		t->done = e + 2;
		return;
	}
	ss_emit_far(t, e, 1, word, now);
}

/* Slow path of ss_emit_fn / ss_emit for an event that does not fit the
 * bases (or whose bases a signal handler moved while it was being
 * stored).  Its `n` claimed words at e are given back when nothing was
 * stored after them, else padded; the event is then stored at the end,
 * after a new base when its time is too far from the old one.  Signals
 * are held meanwhile, so nothing else writes to the block. */
void ss_emit_far(struct ss_thread *t, uint64_t *e, unsigned n, uint64_t word, uint64_t now)
{
	int saved = errno;
	sigset_t old;
	ss_buf_hold_signals(&old);
	ss_buf_fill(t, e); /* claims below ours that a jump may have left */
	if (t->pos == e + n) {
		t->pos = e;
		t->done = e;
	} else {
		/* a handler recorded after our words: the event goes after
		 * its events, so it is stamped after them too */
		for (unsigned i = 0; i < n; i++)
			e[i] = SS_CW_LONG(SS_EV_PAD, 0, 0);
		now = ss_clock_now() | 1; /* an EXIT read again: unordered */
	}
	uint64_t *p = t->pos;
	if (!p || t->end - p < 5) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		ss_buf_refill(t, word);
		return;
	}
	if ((int64_t)(now - t->tbase) < 0)
		now = t->tbase | 1; /* a handler's events came first (odd: an
				     * EXIT's time moved is not ordered) */
	if (now - t->tbase >= (UINT64_C(1) << 32)) {
		uint64_t ab = t->abase, fn = SS_EV_ARG(word);
		unsigned kind = SS_EV_KIND(word);
		if ((kind == SS_EV_ENTER || kind == SS_EV_EXIT) &&
		    fn - ab >= (UINT64_C(1) << SS_CW_ADDR_BITS))
			ab = SS_ABASE(fn);
		p = put_base(t, p, now, ab);
	}
	p = ss_buf_put(t, p, word, now);
	atomic_signal_fence(memory_order_seq_cst);
	t->pos = p;
	t->done = p;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}
