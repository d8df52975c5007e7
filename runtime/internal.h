/*
 * internal.h - state shared by the runtime's files.  Nothing here is
 * exported from libstepscope (the library is built -fvisibility=hidden).
 *
 * The hot path touches only `ss_hot` (read-mostly globals on their own
 * cache line) and the calling thread's `ss_tls`.  Everything else is the
 * slow path, guarded by `ss_rt.lock`.
 */
#ifndef SS_INTERNAL_H
#define SS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "format.h"

#define SS_HIDDEN __attribute__((visibility("hidden")))
#define SS_EXPORT __attribute__((visibility("default")))
#define ss_likely(x) __builtin_expect(!!(x), 1)
#define ss_unlikely(x) __builtin_expect(!!(x), 0)

#define SS_RANGE_DEPTH 64
#define SS_META_CHUNK (64 * 1024)

enum ss_thread_state {
	SS_THREAD_NEW = 0,      /* no event yet */
	SS_THREAD_LIVE = 1,     /* registered, has (had) a chunk */
};

/* Per-thread state; the first four fields are the hot path. */
struct ss_thread {
	uint64_t *pos;                 /* next free word */
	uint64_t *end;                 /* end of the block, less SS_RESERVE */
	uint64_t tbase, abase;         /* compact events' bases (format.h) */
	uint64_t *done;                /* words below are stored: [done, pos)
	                                * was claimed by code a signal handler
	                                * interrupted (ss_buf_fill) */
	uint32_t order_left;           /* ENTERs before the next ordered call
	                                * (ss_clock_enter) */
	uint32_t order_depth;          /* t->depth of that call, its EXIT to
	                                * be ordered too; 0 none */
	struct ss_chunk_header *chunk; /* current chunk, NULL if none */
	uint64_t chunk_off;            /* its offset in the file */
	uint64_t tid;
	uint64_t serial;
	uint64_t seq;                  /* chunks opened by this thread */
	uint64_t bseq;                 /* blocks begun in its ring */
	struct ss_ring *ring;          /* its ring (ring.c), NULL if none */
	uint64_t *blk;                 /* the block being written, NULL if none */
	struct ss_chunk_header *ovf;   /* EVENTS chunk blk is in, if not the ring */
	int drop;                      /* the ring was full: counting losses */
	uint64_t lost;                 /* events dropped, not yet reported */
	int in_slow;                   /* re-entrancy guard for the slow path */
	int own;                       /* inside ss_thread_start: the events
	                                * are the runtime's, never recorded
	                                * nor counted as lost */
	int state;                     /* enum ss_thread_state */
	uint32_t step_depth;           /* nesting of step.function here */
	uint32_t range_depth;
	uint64_t range_ids[SS_RANGE_DEPTH];
	uintptr_t stack_lo, stack_hi;  /* for frame-pointer walks, 0 = unknown */
	int stack_busy;                /* ss_thread_stack_find under way */
	struct ss_thread *next;        /* registry of live threads */
	/* shadow of the frames entered while recording (frames.c) */
	struct ss_frame *frames;
	uint32_t depth;                /* open frames, stored or not */
	uint32_t frames_cap;           /* entries `frames` holds */
	int frames_busy;               /* growing: a nested hook stores nothing */
	int inherit;                   /* forked child: replay frames first */
	struct ss_ctx *ctx;            /* ucontext switches (context.c), or NULL */
	struct ss_stats *stats;        /* stats: whole_run counters (stats.c) */
};

/* One open frame: where it sits on the stack, which function it is, and
 * the return address its enter hook was given. */
struct ss_frame {
	uintptr_t sp;
	uintptr_t fn;
	uintptr_t site;
};

/* A thread's ucontext coroutines (context.c): the chain of contexts
 * running one on top of the other, entry 0 the thread's own; each other
 * one's frames are those from `base` up, on the stack [lo, hi).  The
 * frames of a context switched away from wait in `saved`. */
#define SS_CTX_CHAIN 64
#define SS_CTX_SAVED 64
#define SS_CTX_FRAMES 512
struct ss_ctx_link {
	const void *uc;                /* its ucontext_t, as the program names it */
	uintptr_t lo, hi;
	uint32_t base;
};
struct ss_ctx_saved {
	const void *uc;                /* NULL: a free slot */
	uint32_t n;
	struct ss_frame f[SS_CTX_FRAMES];
};
struct ss_ctx {
	uint32_t n;
	uint32_t evict;                /* next slot taken when all are */
	struct ss_ctx_link chain[SS_CTX_CHAIN];
	struct ss_ctx_saved saved[SS_CTX_SAVED];
};

/* Bits of ss_hot.gate.  Bits 0-2 are the event recording (1 recording,
 * 3 a module bound the hooks, 4 stopped); SS_GATE_STATS (stats.c) is set
 * for the whole run when stats: whole_run or log.every_n_steps is on, so
 * the hooks' fast path still tests one value. */
#define SS_GATE_REC 1
#define SS_GATE_EVENTS 7               /* the recording bits */
#define SS_GATE_STATS 8
/* Set from the start until the runtime has started: an instrumented
 * function that runs before our constructor (from .preinit_array, or a
 * library's constructor that runs first) takes the slow path, which starts
 * the runtime there (ss_runtime_early) and records it. */
#define SS_GATE_INIT 16

/* Read-mostly globals tested on every hook call.  The hooks that
 * stepscope-cc links into an executable (runtime/exe/hooks-exe.c) read
 * `gate`, `watch` and `stats_tp` through the pointer stepscope__hooks_attach
 * gives them, and count calls in the stats table (stats.h) themselves: a
 * change to those fields or to that table bumps SS_HOOKS_ABI. */
#define SS_HOOKS_ABI 2
struct ss_hot {
	volatile int gate;             /* 1 while events are recorded; bit 2:
	                                * a module bound the hooks (hooks.c);
	                                * 4: stopped, threads mark it */
	int use_tsc;                   /* clock: rdtsc, else CLOCK_MONOTONIC */
	void *volatile watch;          /* step.function address, NULL if none */
	long stats_tp;                 /* stats: ss_stats_self's offset from the
	                                * thread pointer, set before the gate's
	                                * SS_GATE_STATS bit (stats.c; x86-64) */
	int stacks;                    /* record.stack: capture at each ENTER */
	int filter;                    /* SS_FILTER_SKIP | SS_FILTER_SHORT */
	int args;                      /* record.args matched a function: the
	                                * enter hook's slow path goes through
	                                * ss_args_hook_enter (args.c) */
} __attribute__((aligned(64)));

struct ss_runtime {
	pthread_mutex_t lock;
	int initialized;               /* constructor ran */
	int dormant;                   /* another copy of the runtime is active */
	int disabled;                  /* enabled: false, or a fatal error */
	int secure;                    /* AT_SECURE (setuid, setgid, file
	                                * capabilities): nothing recorded,
	                                * nothing read from the caller */
	int stopped;                   /* size cap / disk full: no more chunks */
	int fd;                        /* trace file, -1 until the first event;
	                                * kept high, close-on-exec, and checked
	                                * against dev/ino before each use */
	dev_t dev;                     /* identity of the file fd must be */
	ino_t ino;
	int hold_fd;                   /* forked child: the parent's trace, held
	                                * (and its lock) until ours is open */
	dev_t hold_dev;
	ino_t hold_ino;
	int spare_fd;                  /* a high slot taken before the program
	                                * had threads (/dev/null, close-on-exec):
	                                * the trace's fd moves onto it (buffer.c
	                                * ss_buf_fd_high), -1 once used */
	dev_t spare_dev;
	ino_t spare_ino;
	pid_t pid;
	uint64_t file_off;             /* end of the file: next chunk goes here */
	uint64_t cap_bytes;            /* max_trace_mb in bytes, 0 = none */
	uint64_t chunk_bytes;          /* events chunk size */
	char dir[4096];                /* run directory */
	char path[5400];               /* this process's trace file */
	int own_dir;                   /* we made the run dir (no `record`) */
	int handed;                    /* config came from STEPSCOPE__CONFIG */
	int fork_resume;               /* forked child: threads to start again
	                                * (ss_fork_resume) */
	struct ss_config cfg;
	struct ss_file_header hdr;     /* template, written when the file opens */
	/* meta chunk being filled */
	char *meta_base, *meta_pos, *meta_end;
	/* steps */
	uint64_t step;                 /* current step number */
	int have_step;                 /* a step has begun */
	uint64_t step_tid;             /* thread that owns step.function */
	int api_steps;                 /* stepscope_step() was called */
	uint64_t start_ticks;
	uintptr_t self_lo, self_hi;    /* our own text, skipped in stack walks */
	/* threads */
	struct ss_thread *threads;
	atomic_uint_fast64_t next_serial;
	atomic_uint_fast64_t events;   /* events in closed chunks */
	atomic_uint_fast64_t lost;
	unsigned long long maps_adds;  /* dl_iterate_phdr dlpi_adds last seen */
	pthread_key_t key;
	/* strings for user ranges */
	const char *str_ptr[1024];
	uint64_t str_id[1024];
	uint64_t next_str;
	int warned_stop;
};

extern struct ss_hot ss_hot SS_HIDDEN;
extern struct ss_runtime ss_rt SS_HIDDEN;
extern __thread struct ss_thread ss_tls
	__attribute__((tls_model("initial-exec"))) SS_HIDDEN;

/* clock.c */
static inline uint64_t ss_clock_now(void);
SS_HIDDEN void ss_clock_init(struct ss_file_header *h);
SS_HIDDEN uint64_t ss_clock_mono_ns(void);
SS_HIDDEN uint64_t ss_clock_realtime_ns(void);
SS_HIDDEN void ss_clock_pair(uint64_t *ticks, uint64_t *ns);

/* buffer.c: chunks of the trace file */
SS_HIDDEN void ss_buf_refill(struct ss_thread *t, uint64_t word); /* ring.c */
SS_HIDDEN void ss_emit_wide(struct ss_thread *t, uint64_t *e, uint64_t word, uint64_t now,
			       uint64_t tb, uint64_t ab); /* buffer.c */
SS_HIDDEN void ss_emit_far(struct ss_thread *t, uint64_t *e, unsigned n,
			   uint64_t word, uint64_t now);
SS_HIDDEN uint64_t *ss_buf_put(struct ss_thread *t, uint64_t *e, uint64_t word,
			       uint64_t now);
SS_HIDDEN void ss_buf_mark_stop(struct ss_thread *t); /* ring.c */
#include <signal.h>
SS_HIDDEN void ss_buf_hold_signals(sigset_t *old);
SS_HIDDEN uint64_t *ss_buf_put_block(struct ss_thread *t, uint64_t *e, uint64_t now,
				     uint64_t ab);
SS_HIDDEN void ss_buf_put_stop(struct ss_thread *t);
SS_HIDDEN void *ss_buf_chunk_alloc(uint64_t size);
SS_HIDDEN uint64_t ss_buf_reserve(uint64_t size);
SS_HIDDEN void *ss_buf_map(uint64_t off, uint64_t size);
SS_HIDDEN void *ss_buf_map_lazy(uint64_t off, uint64_t size, uint64_t now);
SS_HIDDEN void ss_buf_prefault(void *p, uint64_t size);
SS_HIDDEN void ss_buf_touch(void *p, uint64_t size);
SS_HIDDEN void ss_buf_ready(struct ss_thread *t); /* ring.c */
SS_HIDDEN void ss_buf_fill(struct ss_thread *t, uint64_t *to);

/* ring.c: each thread's ring of blocks, copied out in the background */
SS_HIDDEN uint64_t ss_ring_drain_all(int have_lock);
SS_HIDDEN int ss_ring_pending(void);
SS_HIDDEN void ss_ring_close(struct ss_thread *t);
SS_HIDDEN void ss_ring_flush(struct ss_thread *self);
SS_HIDDEN void ss_ring_after_fork(void);
SS_HIDDEN int ss_ring_stalled(void); /* tests: nothing copies (ring.c) */
SS_HIDDEN void ss_ring_test_switches(void); /* tests: read at start (ring.c) */
SS_HIDDEN void ss_ring_prepare(int lazy); /* lock held: a window opens */
SS_HIDDEN int ss_ring_missing(void);  /* lock held: rings the threads lack */
SS_HIDDEN void ss_ring_trim_tail(struct ss_thread *self, int last); /* lock held: exit */
SS_HIDDEN int ss_buf_open_file(void);
SS_HIDDEN int ss_buf_fd(void);
SS_HIDDEN int ss_buf_fd_high(int fd);
SS_HIDDEN void ss_buf_fd_reserve(void);   /* start-up, before any thread */
SS_HIDDEN int ss_buf_fd_is(int fd, dev_t dev, ino_t ino);
SS_HIDDEN void ss_buf_after_fork(void);

/* pool.c: chunks prepared ahead by a background thread */
SS_HIDDEN void ss_pool_start(uint64_t size);
SS_HIDDEN void ss_pool_fill(uint64_t size);
SS_HIDDEN void ss_pool_early(uint64_t size);            /* lock held */
SS_HIDDEN int ss_pool_rings_early(void);                 /* lock held */
SS_HIDDEN int ss_pool_populate_later(void *p, uint64_t len);
SS_HIDDEN void ss_pool_release(void);                   /* lock held */
SS_HIDDEN struct ss_chunk_header *ss_pool_take(uint64_t size, uint64_t *offp);
SS_HIDDEN void ss_pool_retire(struct ss_chunk_header *c);
SS_HIDDEN void ss_pool_after_fork(void);
SS_HIDDEN void ss_pool_trim(void);

/* meta.c: variable-length records (call with ss_rt.lock held) */
SS_HIDDEN int ss_meta_write(uint16_t type, const void *a, size_t alen,
			    const void *b, size_t blen);
SS_HIDDEN int ss_meta_write_ts(uint16_t type, uint64_t ts, const void *a,
			       size_t alen, const void *b, size_t blen);
SS_HIDDEN void ss_meta_maps(void);
SS_HIDDEN void ss_meta_maps_if_changed(void);
SS_HIDDEN void ss_meta_thread_name(uint64_t tid);
SS_HIDDEN void ss_meta_calib(void);
struct dl_phdr_info;
SS_HIDDEN void ss_meta_build_id(struct dl_phdr_info *info, uint8_t *id,
				uint32_t *len);

/* frames.c: frames that never return (longjmp, pthread_exit, exit) */
SS_HIDDEN void ss_frames_alloc(struct ss_thread *t);
SS_HIDDEN void ss_frames_release(struct ss_thread *t);
SS_HIDDEN void ss_frames_grow(struct ss_thread *t, uintptr_t sp, uintptr_t fn,
			       uintptr_t site);
SS_HIDDEN void ss_frames_unwind(struct ss_thread *t, uintptr_t sp, uintptr_t site);
SS_HIDDEN uint32_t ss_frames_floor(struct ss_thread *t, uintptr_t sp);
SS_HIDDEN void ss_frames_exit_slow(struct ss_thread *t, uintptr_t fn);
SS_HIDDEN void ss_frames_unwind_all(struct ss_thread *t, unsigned why);
SS_HIDDEN void ss_frames_forget_all(void);
SS_HIDDEN uint64_t *ss_frames_inherit(struct ss_thread *t, uint64_t *e,
				       uint64_t *end, uint64_t now, int entering);
SS_HIDDEN int ss_hooks_gate_slow(int gate);

/* thread.c */
SS_HIDDEN void ss_thread_init(struct ss_thread *t);
/* The calling thread t's stack into t->stack_lo and stack_hi, looked up
 * on the first call only (a system call and the loader's lock: never on
 * the hooks' common path); 1 when they are known. */
static inline int ss_thread_stack_bounds(struct ss_thread *t)
{
	if (!t->stack_hi) {
		pthread_attr_t a;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &a))
			return 0;
		if (!pthread_attr_getstack(&a, &addr, &size)) {
			t->stack_lo = (uintptr_t)addr;
			t->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&a);
	}
	return t->stack_hi != 0;
}
/* The same from /proc/self/maps with open, read and close only: no lock,
 * no malloc, safe in a signal handler (record.args' capture path). */
SS_HIDDEN int ss_thread_stack_find(struct ss_thread *t);
SS_HIDDEN uint64_t ss_gettid(void);
SS_HIDDEN void ss_thread_exit(void *arg);
SS_HIDDEN void ss_thread_after_fork(void);
/* Start one of the runtime's threads, named name, with every signal
 * blocked (it takes none meant for the program).  glibc gives it its TLS
 * from the loader's calloc and, in a forked child, frees the parent's
 * threads' through free: the program's own allocator if it has one.
 * Those calls are the runtime's: while they run, this thread's events
 * take the slow path, which drops them uncounted (ss_buf_refill).  0 or
 * pthread_create's error. */
SS_HIDDEN int ss_thread_start(pthread_t *th, void *(*fn)(void *), void *arg,
			      const char *name);
SS_HIDDEN int ss_thread_own_count(void); /* the runtime's threads */

/* window.c: steps and schedules */
SS_HIDDEN int ss_window_init(void);
SS_HIDDEN void ss_window_on_enter(void);
SS_HIDDEN void ss_window_on_exit(void);
SS_HIDDEN void ss_window_begin_step(struct ss_thread *t, uint64_t step,
				    uint64_t ts);
SS_HIDDEN void ss_window_api_step(void);

/* stats.c: whole-run call counts (stats: whole_run, log.every_n_steps) */
struct ss_stats;
/* direct.c: a run without record and without a config (before main:
 * smaller defaults; at exit: one line saying what it wrote) */
SS_HIDDEN void ss_direct_defaults(struct ss_config *c);
SS_HIDDEN void ss_direct_say_exit(void);
SS_HIDDEN void ss_direct_note_config(const struct ss_config *c);
SS_HIDDEN void ss_stats_init(void);    /* before main: sets SS_GATE_STATS */
SS_HIDDEN void ss_stats_enter(void *fn);
SS_HIDDEN void ss_stats_exit(void *fn);
SS_HIDDEN void ss_stats_count(void *fn); /* filtered out: calls only */
/* lock held: */
SS_HIDDEN void ss_stats_write(struct ss_thread *t); /* SS_META_STATS */
SS_HIDDEN void ss_stats_write_all(void);            /* every live thread */
SS_HIDDEN void ss_stats_on_step(uint64_t step);     /* log.every_n_steps */
SS_HIDDEN void ss_stats_close_frames(struct ss_thread *t); /* own thread */
SS_HIDDEN void ss_stats_release(struct ss_thread *t);      /* thread exit */
SS_HIDDEN void ss_stats_after_fork(struct ss_thread *t);
SS_HIDDEN void ss_stats_after_fork_resume(void); /* lock held */

/* memory.c: the memory poller thread (memory.enabled) */
SS_HIDDEN void ss_memory_start(void);
SS_HIDDEN void ss_memory_on_step(uint64_t step); /* lock held; never blocks */
SS_HIDDEN void ss_memory_stop(void);
SS_HIDDEN void ss_memory_after_fork(void); /* lock held: the poller again */
/* runtime.c: the first hook call came before our constructor */
SS_HIDDEN void ss_runtime_early(void);
/* runtime.c: a forked child's first slow path (lock held) */
SS_HIDDEN void ss_fork_resume(void);

/* gpu.c: CUPTI activity (gpu.enabled) */
SS_HIDDEN void ss_gpu_on_window(int open); /* lock held */
SS_HIDDEN void ss_gpu_stop(void);          /* lock not held */
SS_HIDDEN void ss_gpu_alloc_load(void *cupti); /* lock held (gpu-alloc.c) */

/* args.c: record.args (docs/shapes.md).  The hooks test the set inline
 * and go through the capture stub only for a listed function: a function
 * that is not listed pays one probe of the set. */
#define SS_ARGS_SLOTS 1024          /* listed addresses: at most half */
#define SS_ARGS_NREGS 6             /* rbx rbp r12 r13 r14 r15, then sp */
SS_HIDDEN extern uintptr_t ss_args_set[SS_ARGS_SLOTS];
static inline size_t ss_args_hash(uintptr_t a)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 54) & (SS_ARGS_SLOTS - 1);
}
static inline int ss_args_listed(uintptr_t a)
{
	for (size_t i = ss_args_hash(a);; i = (i + 1) & (SS_ARGS_SLOTS - 1)) {
		uintptr_t v = ss_args_set[i];
		if (v == a)
			return 1;
		if (!v)
			return 0;
	}
}
SS_HIDDEN void ss_args_init(void);            /* before main */
SS_HIDDEN void ss_args_hook_enter(void *fn, void *site); /* tail-called */
/* right after fn's ENTER, from the registers the stub saved */
SS_HIDDEN void ss_args_emit(uintptr_t fn, const uint64_t *regs);
SS_HIDDEN void ss_hook_enter_slow(void *fn, void *site); /* hooks.c */
SS_HIDDEN void ss_hook_enter_args(void *fn, void *site, const uint64_t *regs);

/* sched.c: context switches of the recorded threads (record.sched) */
SS_HIDDEN void ss_sched_thread_add(struct ss_thread *t);  /* lock held, own thread */
SS_HIDDEN void ss_sched_thread_gone(struct ss_thread *t); /* lock held */
SS_HIDDEN void ss_sched_on_window(int open); /* lock held: each step boundary */
SS_HIDDEN void ss_sched_drain(void);         /* lock not held: pool thread */
SS_HIDDEN void ss_sched_stop(void);          /* lock held: at exit */
SS_HIDDEN void ss_sched_exit_now(void);      /* lock not held: _exit */
SS_HIDDEN void ss_sched_after_fork(void);

/* cost.c: what recording costs the process as it runs (SS_META_COST) */
SS_HIDDEN void ss_cost_on_window(int open); /* lock held: each step boundary */
SS_HIDDEN void ss_cost_opening(uint64_t entered_ns); /* lock held: a window starts to open */
SS_HIDDEN void ss_cost_on_exit(uint64_t end); /* lock held: at exit, `end` its first tick */
SS_HIDDEN void ss_cost_on_step(uint64_t ts, int rec); /* lock held: each boundary */
SS_HIDDEN int ss_cost_want_steps(void);    /* lock held: time more steps */
#define SS_COST_AFTER_STEPS 8             /* unrecorded steps timed after the last window */
SS_HIDDEN void ss_cost_bg_started(void);    /* the background thread, at its start */
SS_HIDDEN void ss_cost_set_skip_ns(uint64_t ns); /* filter.c's calibration */

/* stack.c: native call stacks at recorded entries (record.stack) */
SS_HIDDEN void ss_stack_init(void);     /* before main; sets ss_hot.stacks */
SS_HIDDEN void ss_stack_capture(void);  /* right after an ENTER was emitted */

/* elfsym.c: find a function's address in the loaded program by name,
 * and its symbol's size in *size (when size is not NULL) */
SS_HIDDEN void *ss_elfsym_lookup(const char *name, uint64_t *size, char *err, size_t errlen);
/* Executable address ranges of the loaded modules built with
 * -finstrument-functions; fills up to max, returns how many. */
SS_HIDDEN size_t ss_elfsym_instrumented(uintptr_t *lo, uintptr_t *hi, size_t max);
/* Name of the function that starts at `addr` (dynamic symbols, then the
 * module's .symtab), copied into buf; 0, or -1 if none. */
SS_HIDDEN int ss_elfsym_name(uintptr_t addr, char *buf, size_t len);
/* Whether the step function `fn` ran inlined in the code at `pc` (its
 * entry hook's return address); says so once on stderr (elfsym.c). */
SS_HIDDEN int ss_elfsym_step_inlined(const char *name, void *fn, uintptr_t pc);

/* rank.c: the MPI rank from the launcher's environment (SS_META_RANK) */
SS_HIDDEN void ss_rank_init(void);
SS_HIDDEN int ss_rank_launcher(const char *exe); /* mpirun & co: stay out */
/* filter.c: the filter keys and the cost of a recorded call */
#define SS_FILTER_SKIP 1               /* exclude, include or max_depth */
#define SS_FILTER_SHORT 2              /* min_duration_us */
SS_HIDDEN int ss_filter_init(void);    /* before main: sets ss_hot.filter; -1: refused */
SS_HIDDEN void ss_rt_refuse(const char *what); /* one line; the program runs unrecorded */
SS_HIDDEN void ss_filter_calibrate(void); /* before main, one thread */
SS_HIDDEN void ss_filter_write_meta(void);  /* lock held: SS_META_OVERHEAD */
SS_HIDDEN void ss_filter_on_window(void);   /* lock held: a window opens */
SS_HIDDEN int ss_filter_take_back(void *fn);
/* the exclusion test the hooks inline: filter.h */
/* elfsym.c: fn(address, name, ctx) for every FUNC symbol of each module
 * built with -finstrument-functions (both symbol tables) */
SS_HIDDEN void ss_elfsym_each_function(int (*fn)(uintptr_t addr, const char *name,
						 void *ctx), void *ctx);
/* exec.c: children started with their own environment join the run */
/* before main, after the config; weak: libstepscope.a leaves exec.c out */
SS_HIDDEN void ss_exec_capture(void) __attribute__((weak));

/* The runtime's own memory.  A program may define malloc and free itself
 * (arena allocators, leak checkers): the runtime never calls them, but
 * glibc's allocator by its own names, so the program's counts and hooks
 * see the program alone.  Library calls that would allocate for us
 * (fopen, opendir, strdup, setenv, realpath without a buffer) are not
 * used either.  The one exception: pthread_create, whose thread gets its
 * TLS vector from the loader's calloc, the program's if it has one. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
/* dlopen for the optional libraries (libunwind, NVML, CUPTI); NULL in
 * libstepscope.a, which never names dlopen (dl.c: glibc's static dlopen
 * warns at every -static link). */
void *ss_dlopen(const char *lib, int flags) SS_HIDDEN;
/* 1 in libstepscope.a: every ss_dlopen fails */
int ss_dl_missing(void) SS_HIDDEN;
/* Why the last ss_dlopen failed (dlerror's text, which may be NULL) */
const char *ss_dlerror(void) SS_HIDDEN;
#define ss_malloc(n) __libc_malloc(n)
#define ss_calloc(k, n) __libc_calloc(k, n)
#define ss_realloc(p, n) __libc_realloc(p, n)
#define ss_free(p) __libc_free(p)
#include <string.h>
static inline char *ss_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = ss_malloc(len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = 0;
	}
	return p;
}
#define ss_strdup(s) ss_strndup(s, strlen(s))

/* warn once-style helper: "stepscope: ..." on stderr, never blocks long */
SS_HIDDEN void ss_warn(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------ clock */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <time.h>

static inline uint64_t ss_clock_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (ss_likely(ss_hot.use_tsc))
		return __rdtsc();
#elif defined(__aarch64__)
	if (ss_likely(ss_hot.use_tsc)) {
		uint64_t v;
		__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
		return v;
	}
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The clock read in program order: the processor may run an rdtsc ahead
 * of the instructions before it (and let later ones run ahead of it), so
 * a step mark read plainly can come out a few ticks before the EXIT the
 * thread stored just before it (seen: a call ending 1 ns after the
 * ProfilerStep it began in).  The fences keep the read after every earlier
 * instruction and before every later one, the next event's read included.
 * For the rare marks that events are ordered against, not for events. */
static inline uint64_t ss_clock_now_ordered(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (ss_likely(ss_hot.use_tsc)) {
		_mm_lfence();
		uint64_t v = __rdtsc();
		_mm_lfence();
		return v;
	}
#elif defined(__aarch64__)
	if (ss_likely(ss_hot.use_tsc)) {
		uint64_t v;
		__asm__ volatile("isb; mrs %0, cntvct_el0; isb" : "=r"(v) : : "memory");
		return v;
	}
#endif
	return ss_clock_now();
}

/* The clock reads of ENTERs and EXITs (issue 46).  Unfenced, rdtsc runs
 * as soon as it is issued, ahead of instructions still in flight: an EXIT
 * is read before the call's last instructions have run, and an ENTER
 * before the previous call's: a 64-term dot product (64 dependent adds,
 * 33 ns) measured 20 ns at its fastest, and `stepscope filter` judged it a
 * 2 ns helper (issue 40 item 3).  A fence before every EXIT's read fixed
 * that for 13-20 ns a recorded call on the development VM (44-47 ns a pair
 * against 25), on every call, for what only a call's fastest time needs.
 * So one call in SS_EXIT_ORDER_EVERY per thread is ordered: its ENTER is
 * read between two fences (once everything before it has completed, so
 * the work of the call before it cannot leak in, and before any of the
 * call's own instructions start: fenced before only, its fastest dot
 * product once measured 31 ns for 36) and its EXIT after one (once its own
 * instructions have completed), both stored with an even time; every other ENTER
 * and EXIT is read unfenced and stored with an odd time (the low bit set,
 * a tick at most).  The call is known at its EXIT by its depth (the frame
 * pushed before its ENTER is stored, popped after its EXIT); a deeper
 * call chosen meanwhile takes the place, and the outer one's EXIT is then
 * unordered.  The trace says so (SS_META_EXIT_ORDER); a reader takes a
 * function's fastest call from its calls with both times even
 * (slices-walk.c, agg.c), totals from all of them (an early read moves a
 * few ns between a call and its caller).  The slow paths that read the
 * clock again store an odd time (buffer.c, ring.c). */
#define SS_EXIT_ORDER_EVERY 64

static inline uint64_t ss_clock_fenced(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (ss_likely(ss_hot.use_tsc)) {
		_mm_lfence();
		return __rdtsc();
	}
#elif defined(__aarch64__)
	if (ss_likely(ss_hot.use_tsc)) {
		uint64_t v;
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
		return v;
	}
#endif
	atomic_signal_fence(memory_order_seq_cst);
	return ss_clock_now();
}

static inline uint64_t ss_clock_enter(struct ss_thread *t)
{
	uint32_t n = t->order_left;
	if (ss_unlikely(n == 0)) {
		t->order_left = SS_EXIT_ORDER_EVERY - 1;
		t->order_depth = t->depth;
		return ss_clock_now_ordered() & ~UINT64_C(1);
	}
	t->order_left = n - 1;
	return ss_clock_now() | 1;
}

static inline uint64_t ss_clock_exit(struct ss_thread *t)
{
	if (ss_unlikely(t->order_depth == t->depth)) {
		t->order_depth = 0;
		return ss_clock_fenced() & ~UINT64_C(1);
	}
	return ss_clock_now() | 1;
}

/* Words kept free at the end of every block: a STOP mark always fits. */
#define SS_RESERVE 2
#define SS_ABASE(fn) ((fn) > (UINT64_C(1) << 29) ? (fn) - (UINT64_C(1) << 29) : 0)

/* Move the thread's write position from e to n, in one instruction that a
 * signal handler of this thread cannot split: 0 when a handler moved it
 * first (it recorded events there; the caller tries again after them).
 * A plain load and store would lose the handler's events to this one.
 * No lock prefix on x86: only this thread writes its own position. */
static inline int ss_claim(uint64_t **pos, uint64_t *e, uint64_t *n)
{
#if defined(__x86_64__)
	uint64_t *prev = e;
	__asm__ volatile("cmpxchgq %2, %1" : "+a"(prev), "+m"(*pos) : "r"(n) : "memory", "cc");
	return prev == e;
#else
	return __atomic_compare_exchange_n(pos, &e, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

/* Append one event on the calling thread (format.h, "Compact events").
 * The slot is claimed (ss_claim) before the clock is read and before
 * anything is stored, so a signal handler that records events in between
 * takes the next slots instead of overwriting this one; if one did, this
 * event goes after the handler's (slow path), stamped after them, so the
 * stream's order and its times agree.  The bases are read before
 * the claim and checked again after it: a handler that moved them (a
 * rebase, a new block) in between sends this event to the slow path,
 * which gives the slot back or pads it and stores the event after the
 * handler's.  A claim always starts at t->done, the end of the words
 * stored: a hook running in a handler on top of another claim finds pos
 * past done and closes that claim first (ss_buf_fill: PAD words), so a
 * handler that leaves by siglongjmp leaves no zero word behind.  An
 * address outside the base's window (an instrumented
 * shared library, far from the executable) takes a long record, without
 * a system call; a full block or a timestamp 2^32 ticks past the base take
 * the slow path. */
static inline void ss_emit_fn(unsigned k, uintptr_t fn)
{
	struct ss_thread *t = &ss_tls;
	uint64_t tb = t->tbase, ab = t->abase;
	uint64_t *e;
	for (;;) {
		e = t->pos;
		if (ss_unlikely(e >= t->end)) {
			ss_buf_refill(t, SS_EV_WORD(k, fn));
			return;
		}
		if (ss_unlikely(e != t->done)) {
			ss_buf_fill(t, e); /* we interrupted a claim: close it */
			continue;
		}
		if (ss_likely(ss_claim(&t->pos, e, e + 1)))
			break;
	}
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t now = k == SS_EV_EXIT ? ss_clock_exit(t) : ss_clock_enter(t);
	uint64_t dt = now - tb, da = (uint64_t)fn - ab;
	atomic_signal_fence(memory_order_seq_cst);
	if (ss_unlikely(((dt >> 32) | (da >> SS_CW_ADDR_BITS)) != 0 ||
			tb != t->tbase || ab != t->abase || t->pos != e + 1)) {
		ss_emit_wide(t, e, SS_EV_WORD(k, fn), now, tb, ab);
		return;
	}
	*e = SS_CW_SHORT(k, dt, da);
	atomic_signal_fence(memory_order_seq_cst);
	t->done = e + 1;
}

/* Any other event: a long record of two words (head after payload). */
static inline void ss_emit(uint64_t word)
{
	struct ss_thread *t = &ss_tls;
	uint64_t tb = t->tbase;
	uint64_t *e;
	for (;;) {
		e = t->pos;
		if (ss_unlikely(e + 1 >= t->end)) {
			ss_buf_refill(t, word);
			return;
		}
		if (ss_unlikely(e != t->done)) {
			ss_buf_fill(t, e);
			continue;
		}
		if (ss_likely(ss_claim(&t->pos, e, e + 2)))
			break;
	}
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t now = ss_clock_now();
	uint64_t dt = now - tb;
	atomic_signal_fence(memory_order_seq_cst);
	if (ss_unlikely((dt >> 32) != 0 || tb != t->tbase || t->pos != e + 2)) {
		ss_emit_far(t, e, 2, word, now);
		return;
	}
	e[0] = SS_CW_LONG(SS_EV_PAD, 1, 0); /* until the head: skip both */
	atomic_signal_fence(memory_order_seq_cst);
	e[1] = SS_EV_ARG(word);
	atomic_signal_fence(memory_order_seq_cst);
	e[0] = SS_CW_LONG(SS_EV_KIND(word), 1, dt);
	atomic_signal_fence(memory_order_seq_cst);
	t->done = e + 2;
}

#endif /* SS_INTERNAL_H */
