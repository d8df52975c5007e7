/*
 * format.h - the raw trace layout, shared by runtime/ and symbolize/.
 *
 * One file per process: <run-dir>/<prog>.<pid>.sstrace.  All integers are
 * little-endian host order (the reader refuses a foreign byte order through
 * the magic).  The file is a fixed header followed by chunks:
 *
 *   [ss_file_header, header_size bytes][chunk][chunk]...
 *
 * Every chunk starts with an ss_chunk_header whose `size` covers the whole
 * chunk, so a reader walks chunks without knowing their kind.  Chunks are
 * reserved with fallocate() and written through MAP_SHARED mappings, so
 * whatever the program stored is in the file even if it dies by SIGKILL.
 * Unwritten space is zero: an event whose `ts` is 0 ends the data of its
 * chunk, a meta record whose `type` is 0 ends the records of its chunk.
 *
 * EVENTS chunks belong to one thread and hold its events as a stream of
 * 64-bit words (version 2, "compact events" below; version 1 files held
 * fixed 16-byte ss_event records and are still read).  RING chunks are a
 * thread's recycled buffer: the thread writes there, a background thread
 * copies full blocks into EVENTS chunks; whatever was not copied yet when
 * the process died is still in the RING chunk and is read from there.
 * META chunks hold variable-length ss_meta records (maps, modules, thread
 * names, strings, calibration points, the end-of-run marker).
 *
 * Never reorder or resize a field: bump SS_VERSION and, when old readers can
 * no longer read the file, SS_MIN_READ_VERSION.
 */
#ifndef SS_FORMAT_H
#define SS_FORMAT_H

#include <stdint.h>

#define SS_MAGIC "SSTRACE1"             /* 8 bytes, no terminator in file */
#define SS_MAGIC_LEN 8
#define SS_VERSION 2
#define SS_MIN_READ_VERSION 2
#define SS_HEADER_SIZE 4096
#define SS_CHUNK_MAGIC 0x4b435353u      /* "SSCK" */
#define SS_FILE_SUFFIX ".sstrace"

enum ss_clock {
	SS_CLOCK_TSC = 1,       /* rdtsc ticks; convert with calibration points */
	SS_CLOCK_MONOTONIC = 2, /* CLOCK_MONOTONIC nanoseconds, no conversion */
};

enum ss_file_flags {
	SS_FILE_TSC_INVARIANT = 1 << 0,
};

struct ss_file_header {
	char magic[SS_MAGIC_LEN];
	uint32_t version;
	uint32_t min_read_version;
	uint32_t header_size;        /* offset of the first chunk */
	uint32_t flags;              /* enum ss_file_flags */
	uint64_t pid;
	uint64_t ppid;
	uint32_t clock;              /* enum ss_clock */
	uint32_t build_id_len;       /* bytes used in build_id */
	/* Clock calibration taken at start: ticks_per_sec is a first estimate;
	 * (calib_ticks, calib_ns) is a pair read back to back.  Later pairs
	 * sit in chunk headers and in SS_META_CALIB records; a reader fits
	 * ns = calib_ns + (ticks - calib_ticks) * 1e9 / rate using the widest
	 * span of pairs it has. */
	uint64_t ticks_per_sec;
	uint64_t calib_ticks;
	uint64_t calib_ns;           /* CLOCK_MONOTONIC */
	uint64_t realtime_ns;        /* CLOCK_REALTIME at calib_ns */
	uint8_t build_id[64];        /* of the executable */
	char hostname[256];
	char exe_path[1024];         /* realpath of /proc/self/exe */
	char cmdline[1024];          /* argv joined by spaces, truncated */
};
_Static_assert(sizeof(struct ss_file_header) <= SS_HEADER_SIZE, "header size");

enum ss_chunk_kind {
	SS_CHUNK_EVENTS = 1,
	SS_CHUNK_META = 2,
	SS_CHUNK_RING = 3,      /* version 2: a thread's ring of blocks */
};

struct ss_chunk_header {
	uint32_t magic;              /* SS_CHUNK_MAGIC */
	uint32_t kind;               /* enum ss_chunk_kind */
	uint64_t size;               /* whole chunk, header included */
	uint64_t tid;                /* EVENTS: OS thread id; META: 0 */
	uint64_t seq;                /* EVENTS: per-thread chunk number from 0 */
	uint64_t calib_ticks;        /* clock pair read when the chunk opened */
	uint64_t calib_ns;
	uint64_t used;               /* payload bytes, written when the chunk is
	                              * closed; 0 = unknown, scan to the first
	                              * zero record */
	uint64_t serial;             /* EVENTS: process-unique thread serial from
	                              * 1 (tids can be reused; serials are not) */
};
_Static_assert(sizeof(struct ss_chunk_header) == 64, "chunk header size");

/* Version 1 event, and what a reader decodes every event into: `ts` in the
 * file's clock (never 0), `word` = kind << 56 | arg. */
struct ss_event {
	uint64_t ts;
	uint64_t word;
};
_Static_assert(sizeof(struct ss_event) == 16, "event size");

#define SS_EV_SHIFT 56
#define SS_EV_ARG_MASK ((UINT64_C(1) << SS_EV_SHIFT) - 1)
#define SS_EV_KIND(w) ((unsigned)((w) >> SS_EV_SHIFT))
#define SS_EV_ARG(w) ((w) & SS_EV_ARG_MASK)
#define SS_EV_WORD(kind, arg) (((uint64_t)(kind) << SS_EV_SHIFT) | (uint64_t)(arg))

enum ss_event_kind {
	SS_EV_ENTER = 1,        /* arg: function address */
	SS_EV_EXIT = 2,         /* arg: function address */
	SS_EV_STEP = 3,         /* arg: step number that begins here */
	SS_EV_RANGE_PUSH = 4,   /* arg: string id (SS_META_STRING) */
	SS_EV_RANGE_POP = 5,    /* arg: string id */
	SS_EV_WINDOW_OPEN = 6,  /* arg: step number; recording starts */
	SS_EV_WINDOW_CLOSE = 7, /* arg: step number; recording stops */
	SS_EV_LOST = 8,         /* arg: events dropped on this thread before */
	SS_EV_STOP = 9,         /* arg: enum ss_stop_reason; recording ended */
	/* arg: function address | enum ss_unwind_reason << SS_UNWIND_SHIFT: a
	 * frame the runtime found gone without its EXIT (longjmp, pthread_exit,
	 * exit()); it ends here, with every frame opened after it. */
	SS_EV_UNWIND = 10,
	/* arg: function address: a frame open in the parent when this process
	 * forked; a child's first events, outermost frame first.  Also the
	 * frames of a ucontext switched to again, outermost first, after the
	 * UNWINDs (SS_UNWIND_SUSPENDED) that closed them. */
	SS_EV_INHERIT = 11,
	/* arg: stack id (SS_META_STACKDEF): the native call stack of the
	 * innermost open frame without one, which is the ENTER just before
	 * it (record.stack; see docs/stacks.md) */
	SS_EV_STACK = 12,
	SS_EV_BASE = 13,        /* version 2 only: see "Compact events" */
	SS_EV_PAD = 14,
	SS_EV_BLOCK = 15,
	/* A listed function's call (record.args, runtime/args.c): what its
	 * parameters' DWARF locations need at the enter hook, written right
	 * after its ENTER; compact long record only, n = 4 .. 2^22 - 1 (see
	 * "Compact events" and struct ss_args_head below). */
	SS_EV_ARGS = 16,
	/* Recorded allocations (memory.allocations, runtime/alloc.c; CUDA
	 * spaces from runtime/gpu*.c), compact long records only, written
	 * into the allocating thread's own ring: the reader attributes one by
	 * position to the innermost open recorded call of that thread.
	 *   SS_EV_ALLOC n = 3: addr, size (bytes asked for), space
	 *   SS_EV_FREE  n = 2: addr, space
	 * space: bits 0..7 enum ss_alloc_space, bits 8..31 the CUDA device
	 * ordinal (0 for the heap).  realloc is a FREE of the old block then
	 * an ALLOC of the new one, in that order, also when it stays in
	 * place; a failed call (NULL) writes nothing, free(NULL) nothing. */
	SS_EV_ALLOC = 17,
	SS_EV_FREE = 18,
};

enum ss_alloc_space {
	SS_SPACE_HEAP = 0,           /* malloc family (C++ new/delete too) */
	SS_SPACE_CUDA_DEVICE = 1,    /* cudaMalloc, cudaMallocAsync */
	SS_SPACE_CUDA_PINNED = 2,    /* cudaMallocHost (pinned host) */
	SS_SPACE_CUDA_MANAGED = 3,   /* cudaMallocManaged */
};
/* In an SS_EV_ALLOC's space: the ALLOC undoes the thread's FREE just
 * before it (a realloc that failed: the block is still the program's).
 * Neither is an allocation or a free; readers drop both. */
#define SS_SPACE_AGAIN (UINT64_C(1) << 63)
#define SS_SPACE_KIND(s) ((unsigned)((s) & 0xffu))
#define SS_SPACE_DEVICE(s) ((unsigned)(((s) >> 8) & 0xffffffu))
#define SS_SPACE(kind, dev) ((uint64_t)(kind) | ((uint64_t)(dev) & 0xffffffu) << 8)

/*
 * Compact events (version 2).  An EVENTS chunk's payload, and each block of
 * a RING chunk, is a stream of little-endian 64-bit words; a zero word ends
 * it.  Decoding keeps two bases, set by SS_EV_BLOCK and SS_EV_BASE records:
 * tbase (file clock) and abase (an address).  For a word w:
 *
 *   k  = (w >> 32) & 3
 *   dt = w & 0xffffffff                       ts = tbase + dt
 *   k == 1: ENTER, k == 2: EXIT, one word:   fn = abase + (w >> 34)
 *   k == 3: a long record, 1 + n words:
 *           kind = (w >> 34) & 0xff          (enum ss_event_kind)
 *           n    = w >> 42                   payload words that follow
 *                                            (0..3 but for SS_EV_ARGS
 *                                            and SS_EV_PAD: bits 44..63
 *                                            are 0 in every other record)
 *   k == 0 (w != 0): corrupt.
 *
 * Long records:
 *   SS_EV_BLOCK  n = 3: seq, tbase, abase.  Begins every block; sets both
 *                bases; its own ts is the new tbase (dt is 0).  seq counts
 *                the thread's blocks from 0: a block found twice (copied
 *                to an EVENTS chunk and still in the RING chunk) is the
 *                same block, the longer copy wins.
 *   SS_EV_BASE   n = 2: tbase, abase.  Sets both bases; ts = the new tbase.
 *   SS_EV_ARGS   n >= 4: struct ss_args_head, its registers, then its
 *                stack windows (see struct ss_args_head).
 *   SS_EV_PAD    n = 0..3 (or more): nothing, its n words included (a slot the
 *                writer gave back; a claim a signal handler found open,
 *                ss_buf_fill; the head of a long record whose payload is
 *                being stored).
 *   SS_EV_ALLOC  n = 3: addr, size, space; SS_EV_FREE n = 2: addr, space
 *                (see enum ss_event_kind).
 *   any other    n = 1: payload = the version 1 arg (ENTER and EXIT of an
 *                address outside [abase, abase + 2^30) take this form).
 * The writer stores payload words before the head word, so a record whose
 * head is still 0 (the process died while writing it) is simply absent.
 * An EVENTS chunk is a sequence of whole blocks, each starting with its
 * SS_EV_BLOCK record; `used` counts payload bytes (a multiple of 8).
 */
#define SS_CW_DT(w) ((uint32_t)(w))
#define SS_CW_K(w) ((unsigned)((w) >> 32) & 3u)
#define SS_CW_ADDR(w) ((w) >> 34)
#define SS_CW_KIND(w) ((unsigned)((w) >> 34) & 0xffu)
#define SS_CW_N(w) ((unsigned)((w) >> 42) & 0x3fffffu)
#define SS_CW_N_MAX 0x3fffffu
#define SS_CW_ADDR_BITS 30
/* SS_EV_ARGS (record.args): the payload of the record that follows a
 * listed function's ENTER.  Words, in order: this head (4 words), `nregs`
 * register values (x86-64: rbx, rbp, r12, r13, r14, r15: the callee-saved
 * registers of the function's frame, as they were when it called the enter
 * hook), then `nwin` stack windows, each an address word, a length word
 * (bytes, a multiple of 8) and that many bytes copied from the thread's
 * stack, and last one word SS_ARGS_END (so the record never ends in a
 * word that could pass for a compact ENTER, runtime/filter.c's take-back).
 * Everything a parameter's DWARF location can refer to at `pc`,
 * evaluated offline (symbolize/names/args-dw.c); nothing is decoded at
 * run time. */
enum ss_args_arch {
	SS_ARGS_X86_64 = 1,
};
struct ss_args_head {
	uint32_t arch;               /* enum ss_args_arch */
	uint16_t nregs;
	uint16_t nwin;
	uint64_t fn;                 /* the function (its ENTER's address) */
	uint64_t pc;                 /* return address of its enter hook call */
	uint64_t sp;                 /* its stack pointer at that call (the
	                              * hook's CFA): x86-64 rsp after the call
	                              * returns */
};
_Static_assert(sizeof(struct ss_args_head) == 32, "args head size");
#define SS_ARGS_END SS_CW_LONG(SS_EV_ARGS, 0, 0)

#define SS_CW_LONG(kind, n, dt) \
	((uint64_t)(uint32_t)(dt) | UINT64_C(3) << 32 | (uint64_t)(kind) << 34 | \
	 (uint64_t)(n) << 42)
#define SS_CW_SHORT(k, dt, da) \
	((uint64_t)(uint32_t)(dt) | (uint64_t)(k) << 32 | (uint64_t)(da) << 34)

/* A RING chunk: ss_chunk_header (kind SS_CHUNK_RING, tid and serial of the
 * thread that owns it, serial 0 when free), this header, then `nblocks`
 * blocks of `block_bytes`.  A block whose first word is 0 is empty.  A
 * reader takes everything up to a block's first zero head word as data, so
 * a block is all zero again before it is reused (no words of its previous
 * use may follow the records of the new one). */
struct ss_ring_header {
	uint32_t block_bytes;        /* multiple of 64 */
	uint32_t nblocks;
	uint64_t lost;               /* events the owner dropped that no LOST
	                              * record counts yet (the process may die
	                              * before one is written): 0 = none */
	uint64_t lost_seq;           /* the block number the LOST record for
	                              * them gets; a reader that finds none
	                              * counts `lost` as a block of that number */
	uint64_t reserved[5];
};
_Static_assert(sizeof(struct ss_ring_header) == 64, "ring header size");

#define SS_UNWIND_SHIFT 48
#define SS_UNWIND_FN(arg) ((arg) & ((UINT64_C(1) << SS_UNWIND_SHIFT) - 1))
#define SS_UNWIND_WHY(arg) ((unsigned)((arg) >> SS_UNWIND_SHIFT) & 0xff)

enum ss_unwind_reason {
	SS_UNWIND_SKIPPED = 0,     /* the stack went above it (longjmp,
	                            * an exception through uninstrumented code) */
	SS_UNWIND_THREAD_EXIT = 1, /* its thread ended (pthread_exit) */
	SS_UNWIND_EXIT = 2,        /* the process exited (exit() inside it) */
	SS_UNWIND_SUSPENDED = 3,   /* its ucontext was switched away from
	                            * (swapcontext back to the context that
	                            * resumed it); if it is switched to again,
	                            * INHERIT events reopen its frames */
};

enum ss_stop_reason {
	SS_STOP_SIZE_CAP = 1,
	SS_STOP_DISK_FULL = 2,
	SS_STOP_ERROR = 3,
};

/* Meta records: 8-byte aligned, `size` covers header and payload. */
struct ss_meta {
	uint16_t type;               /* enum ss_meta_type, 0 = end of chunk */
	uint16_t reserved;
	uint32_t size;
	uint64_t ts;                 /* file clock when written */
};
_Static_assert(sizeof(struct ss_meta) == 16, "meta header size");

enum ss_meta_type {
	/* payload: text of /proc/self/maps, NUL-terminated.  A later MAPS
	 * record adds to earlier ones (a reader keeps every mapping it has
	 * seen, so code of a dlclose'd library still resolves). */
	SS_META_MAPS = 1,
	SS_META_MODULE = 2,      /* struct ss_meta_module + path, NUL-terminated */
	SS_META_THREAD = 3,      /* struct ss_meta_thread */
	SS_META_STRING = 4,      /* uint64_t id, then NUL-terminated text */
	SS_META_CALIB = 5,       /* struct ss_meta_calib */
	SS_META_END = 6,         /* struct ss_meta_end: the process ended cleanly */
	SS_META_CONFIG = 7,      /* text: the effective config, key=value lines */
	SS_META_STEP = 8,        /* struct ss_meta_step: a step began */
	/* struct ss_meta_stack + n return addresses: the frames open on the
	 * stepping thread when a window opened (innermost first), so a reader
	 * can show the enclosing frames clipped to the window. */
	SS_META_STACK = 9,
	SS_META_COUNTER = 10,    /* struct ss_meta_counter: a memory sample */
	/* struct ss_meta_stackdef + n return addresses (innermost first, the
	 * first one inside the entered function): a stack that SS_EV_STACK
	 * events refer to by id, written once per thread that saw it. */
	SS_META_STACKDEF = 11,
	/* struct ss_meta_stats + n struct ss_meta_stats_entry: one thread's
	 * whole-run call counts (stats: whole_run).  Written at each window
	 * opening, at thread exit and at process exit; a later record for the
	 * same serial replaces the earlier ones.  Newer runtimes append n
	 * uint64_t after the entries: each entry's first caller on the thread
	 * (the function below its first call; 0: the thread's start).  A
	 * record without them is shorter; readers that do not know them read
	 * the n entries alone. */
	SS_META_STATS = 12,
	/* struct ss_meta_overhead: the calibrated cost of one recorded call
	 * pair (filter.c), measured once at start-up */
	SS_META_OVERHEAD = 13,
	/* struct ss_meta_exit_order: how ENTER and EXIT clock reads are
	 * ordered (runtime/internal.h ss_clock_enter/exit, issue 46): one call
	 * in `every` per thread has its ENTER read once everything before it
	 * has completed and its EXIT once its own instructions have (a fence
	 * before each), both times even; every other ENTER and EXIT is read
	 * unfenced, when issued, and its time is odd (the low bit is set: a
	 * tick later at most).  Written once when the file opens.  A trace
	 * without it: every call's times ordered (older runtimes fenced every
	 * EXIT). */
	SS_META_EXIT_ORDER = 14,
	/* struct ss_meta_rank: the MPI rank of the process, from the
	 * launcher's environment at start and again from MPI once it is
	 * initialised (the last record wins), with a (ticks, CLOCK_MONOTONIC,
	 * CLOCK_REALTIME) triple read together: the host's wall-clock mapping
	 * (docs/mpi.md). */
	SS_META_RANK = 20,
	/* struct ss_meta_sync: a clock-sync point; ts is the file clock when
	 * every rank left the same barrier (libstepscope-mpi, docs/mpi.md). */
	SS_META_SYNC = 21,
	/* struct ss_meta_window_open: what the runtime did when a window
	 * opened (maps snapshot, frame walk, stats, filter, the stepping
	 * thread's first chunk), from ts to end_ts; the window's first step
	 * (its SS_META_STEP) begins at end_ts, so none of it is step time. */
	SS_META_WINDOW_OPEN = 22,
	/* GPU activity from CUPTI (gpu.enabled, runtime/gpu.c, docs/cuda.md).
	 * Times in these records are CUPTI's GPU clock (ns); a GPU_CLOCK
	 * record pairs one reading of it with the file clock. */
	SS_META_GPU_CLOCK = 30,  /* struct ss_meta_gpu_clock */
	SS_META_GPU_KERNEL = 31, /* struct ss_meta_gpu_kernel + name, NUL-terminated */
	SS_META_GPU_COPY = 32,   /* struct ss_meta_gpu_copy: memcpy or memset */
	SS_META_GPU_API = 33,    /* struct ss_meta_gpu_api + name, NUL-terminated */
	/* struct ss_meta_switch + n struct ss_switch: intervals one thread
	 * spent switched out by the kernel while events were recorded
	 * (record.sched, runtime/sched.c, docs/trace-format.md "Context
	 * switches").  Times are CLOCK_MONOTONIC ns (perf's clock), not the
	 * file clock.  Readers that do not know the type skip it. */
	SS_META_SWITCH = 40,
	/* struct ss_meta_switch with n 0: this thread has no switch ring
	 * (the kernel refused to map one, kernel.perf_event_mlock_kb, or
	 * more threads than the runtime watches at once): its time is not
	 * split into on and off the CPU.  Readers that do not know it skip
	 * it. */
	SS_META_SWITCH_NONE = 41,
	/* struct ss_meta_switch, all 0 but lost (the process's count): the
	 * rings were read to the process's end (exit(), _exit, _Exit).  A
	 * trace with SWITCH records and none of these ended otherwise (a
	 * fatal signal, exit_group): the switches since the rings were last
	 * read are missing.  Readers that do not know it skip it. */
	SS_META_SWITCH_END = 42,
	/* struct ss_meta_alloc_live + n struct ss_alloc_block: the blocks
	 * allocated while recording (SS_EV_ALLOC) that were still not freed
	 * when the process exited, written once at exit (memory.allocations,
	 * stepscope memory --leaks).  A trace without it (the process died,
	 * or an older runtime) has no leak verdict.  46, 47: issue 34 (host),
	 * 48, 49: issue 34 (CUDA). */
	SS_META_ALLOC_LIVE = 45,
	/* struct ss_meta_cost: what recording cost this process as it ran
	 * (runtime/cost.c): its CPU time while events were recorded, the part
	 * of it stepscope's background thread took, and the hook calls that
	 * ran but left no event.  Written at each window's close and at exit;
	 * the last record wins.  A trace without it (an older runtime) has
	 * only the calibration (SS_META_OVERHEAD).  51-54: issue 35. */
	SS_META_COST = 50,
};
/* Every type, now and to come, is at most this: a reader takes a larger
 * one for a damaged header (symbolize/read/reader-iter.c). */
#define SS_META_TYPE_MAX 255

struct ss_meta_cost {
	uint64_t cpu_ns;             /* the process's CPU time (every thread)
	                              * while a window was open */
	uint64_t bg_cpu_ns;          /* of it, the background thread's
	                              * (stepscope-buf: copying blocks out,
	                              * reading switches) */
	uint64_t wall_ns;            /* time windows were open */
	uint64_t skipped;            /* hook calls (ENTERs) a filter left out
	                              * while recording (exclude, include,
	                              * max_depth) */
	uint64_t taken_back;         /* calls filter.min_duration took back */
	uint64_t windows;            /* windows counted */
	uint64_t skip_pair_ns;       /* what a call filter.exclude leaves out
	                              * costs (ENTER and EXIT), calibrated at
	                              * start-up as the recorded pair is; 0 not
	                              * measured (no filter.exclude) */
	uint64_t open_ns;            /* wall time the stepping thread spent
	                              * opening the windows (file, maps, rings:
	                              * SS_META_WINDOW_OPEN), in cpu_ns too */
	/* The steps as the program's own clock sees them, in ticks, step
	 * boundary to step boundary on the stepping thread (issue 48): a
	 * record of 64 bytes (older runtimes) has none of these */
	uint64_t rec_step_ticks;     /* recorded steps that the next boundary
	                              * closed, their openings included */
	uint64_t rec_steps;
	uint64_t tail_step_ticks;    /* a recorded step that exit closed
	                              * (program teardown included) */
	uint64_t tail_steps;
	uint64_t ref_step_ticks;     /* unrecorded steps but the first, less
	                              * the runtime's own work at their
	                              * boundary (what STEPSCOPE_DISABLE=1
	                              * would not do) */
	uint64_t ref_steps;
	uint64_t first_step_ticks;   /* the first step when unrecorded, less
	                              * the runtime's work at its boundary */
	uint64_t first_steps;        /* 1 when first_step_ticks was measured */
};
_Static_assert(sizeof(struct ss_meta_cost) == 128, "cost size");
#define SS_META_COST_V1_SIZE 64 /* before the step figures */

struct ss_meta_alloc_live {
	uint64_t n;                  /* struct ss_alloc_block that follow */
	uint64_t untracked;          /* blocks allocated while recording that
	                              * the runtime could not follow (its
	                              * table was full): they may be leaks too */
	uint64_t reserved[2];
};
_Static_assert(sizeof(struct ss_meta_alloc_live) == 32, "alloc live size");

struct ss_alloc_block {
	uint64_t addr;
	uint64_t space;              /* as in SS_EV_ALLOC */
};
_Static_assert(sizeof(struct ss_alloc_block) == 16, "alloc block size");

struct ss_meta_switch {
	uint64_t tid;                /* OS thread id */
	uint64_t serial;             /* its serial (EVENTS chunks) */
	uint64_t n;                  /* struct ss_switch that follow */
	uint64_t lost;               /* switch records the kernel dropped on
	                              * this thread (its ring overflowed)
	                              * since the previous record */
};
_Static_assert(sizeof(struct ss_meta_switch) == 32, "switch header size");

enum ss_switch_flags {
	SS_SWITCH_PREEMPTED = 1 << 0, /* switched out while runnable (its time
	                               * slice ended, a higher priority task
	                               * woke); else it blocked (sleep, lock,
	                               * I/O, page fault) */
	SS_SWITCH_FROM_START = 1 << 1, /* already out when recording began:
	                                * out_ns is that time */
	SS_SWITCH_TO_END = 1 << 2,     /* still out when recording stopped:
	                                * in_ns is that time */
};

struct ss_switch {
	uint64_t out_ns;             /* CLOCK_MONOTONIC: switched out */
	uint64_t in_ns;              /* CLOCK_MONOTONIC: back on a CPU */
	uint32_t flags;              /* enum ss_switch_flags */
	uint32_t reserved;
};
_Static_assert(sizeof(struct ss_switch) == 24, "switch size");

struct ss_meta_gpu_clock {
	uint64_t gpu_ns;             /* cuptiGetTimestamp() */
	uint64_t ticks;              /* file clock read right after */
};
_Static_assert(sizeof(struct ss_meta_gpu_clock) == 16, "gpu clock size");

struct ss_meta_gpu_kernel {
	uint64_t start, end;         /* GPU clock, ns */
	uint32_t correlation;        /* ties it to its launch (SS_META_GPU_API) */
	uint32_t device, stream;
	int32_t grid[3], block[3];
	uint32_t reserved;
};
_Static_assert(sizeof(struct ss_meta_gpu_kernel) == 56, "gpu kernel size");

enum ss_gpu_copy_kind {
	SS_GPU_MEMSET = 0,           /* else CUPTI's CUpti_ActivityMemcpyKind: */
	SS_GPU_HTOD = 1,
	SS_GPU_DTOH = 2,
	SS_GPU_DTOD = 8,
};

struct ss_meta_gpu_copy {
	uint64_t start, end;         /* GPU clock, ns */
	uint64_t bytes;
	uint32_t correlation;
	uint32_t device, stream;
	uint32_t kind;               /* enum ss_gpu_copy_kind (CUPTI copyKind) */
};
_Static_assert(sizeof(struct ss_meta_gpu_copy) == 40, "gpu copy size");

struct ss_meta_gpu_api {
	uint64_t start, end;         /* GPU clock, ns */
	uint32_t correlation;
	uint32_t cbid;               /* CUPTI callback id */
	uint32_t tid;                /* OS thread id */
	uint32_t driver;             /* 1: driver API, 0: runtime API */
};
_Static_assert(sizeof(struct ss_meta_gpu_api) == 32, "gpu api size");

enum ss_rank_source {
	SS_RANK_ENV_OMPI = 1,        /* OMPI_COMM_WORLD_RANK / _SIZE */
	SS_RANK_ENV_PMI = 2,         /* PMI_RANK / PMI_SIZE (MPICH, Hydra) */
	SS_RANK_ENV_SLURM = 3,       /* SLURM_PROCID / SLURM_NTASKS */
	SS_RANK_MPI = 4,             /* MPI_Comm_rank(MPI_COMM_WORLD) */
};

struct ss_meta_rank {
	uint64_t rank;
	uint64_t size;               /* world size */
	uint32_t source;             /* enum ss_rank_source */
	uint32_t reserved;
	uint64_t ticks;              /* file clock ... */
	uint64_t mono_ns;            /* ... CLOCK_MONOTONIC ... */
	uint64_t real_ns;            /* ... and CLOCK_REALTIME, read together */
};
_Static_assert(sizeof(struct ss_meta_rank) == 48, "rank size");

struct ss_meta_sync {
	uint64_t round;              /* 0, 1, ...: the same on every rank */
	uint64_t real_ns;            /* CLOCK_REALTIME right after ts */
};

struct ss_meta_window_open {
	uint64_t tid;                /* the stepping thread */
	uint64_t serial;
	uint64_t step;               /* the window's first step */
	uint64_t end_ts;             /* same clock as ts: the work's end */
};

enum ss_step_action {
	SS_STEP_NONE = 0,        /* skipped or waiting: nothing recorded */
	SS_STEP_WARMUP = 1,      /* tracing warms up, events dropped */
	SS_STEP_RECORD = 2,      /* active: events recorded */
};

struct ss_meta_step {
	uint64_t step;               /* number of the step that begins at ts */
	uint64_t tid;                /* thread that began it */
	uint64_t serial;             /* that thread's serial */
	uint32_t action;             /* enum ss_step_action of this step */
	uint32_t cycle;              /* schedule cycle of the step, from 0 */
};

struct ss_meta_stack {
	uint64_t tid;
	uint64_t serial;
	uint64_t n;                  /* return addresses that follow */
};

struct ss_meta_stackdef {
	uint64_t id;                 /* process-unique, from 1 */
	uint64_t n;                  /* return addresses that follow */
};
_Static_assert(sizeof(struct ss_meta_stackdef) == 16, "stackdef size");

/* Whole-run statistics of one thread (SS_META_STATS).  Counts cover the
 * activations that returned before the record was written (exact); an
 * activation inside another of the same function adds to calls and self,
 * not to total.  Times are in the file's clock (ticks), sampled when
 * sample_ticks is not 0. */
struct ss_meta_stats {
	uint64_t tid;
	uint64_t serial;
	uint64_t n;                  /* entries that follow */
	uint64_t steps;              /* steps begun in the process so far */
	uint64_t dropped;            /* hook calls not counted (a signal
	                              * handler re-entered the table, or no
	                              * memory for it) */
	uint64_t sample_ticks;       /* 0: every call timed (older runtimes);
	                              * else times are sampled estimates, one
	                              * look at the stacks every sample_ticks
	                              * (the step function's total is exact) */
};
_Static_assert(sizeof(struct ss_meta_stats) == 48, "stats size");

struct ss_meta_stats_entry {
	uint64_t fn;                 /* function address; 0: every function
	                              * that found the table full */
	uint64_t calls;
	uint64_t total_ticks;
	uint64_t self_ticks;
};
_Static_assert(sizeof(struct ss_meta_stats_entry) == 32, "stats entry size");

/* What one recorded call (an ENTER and its EXIT through the hooks) costs
 * the program, measured at start-up off the program's clock: the median of
 * a few rounds of `pairs` back-to-back pairs into a scratch buffer.
 * inside_ticks: the shortest time the calibration's empty calls measured
 * between their ENTER and EXIT, the part of a call's own hooks inside its
 * measured time (0: not measured, a trace written before it was). */
struct ss_meta_overhead {
	uint64_t pair_ticks;         /* in the file clock */
	uint64_t pair_ns;
	uint64_t pairs;              /* pairs per round */
	uint64_t inside_ticks;       /* in the file clock; 0 unknown */
};
_Static_assert(sizeof(struct ss_meta_overhead) == 32, "overhead size");

/* SS_META_EXIT_ORDER: a call whose ENTER and EXIT times are both even was
 * read in order (nothing before it inside, all of it inside), one in
 * `every`; an odd time was read unfenced. */
struct ss_meta_exit_order {
	uint32_t every;              /* 1 call in `every` is ordered */
	uint32_t reserved;           /* 0 */
};
_Static_assert(sizeof(struct ss_meta_exit_order) == 8, "exit order size");

struct ss_meta_module {
	uint64_t load_bias;          /* dlpi_addr */
	uint32_t build_id_len;
	uint8_t build_id[64];
	uint32_t reserved;
	/* char path[] follows */
};

struct ss_meta_thread {
	uint64_t tid;
	char name[16];               /* as in /proc/self/task/<tid>/comm */
};

/* One value of a counter track ("host.rss", "host.rss_peak", "cuda:0.used",
 * "cuda:0.total", "cuda:0.process"; bytes), written by the memory poller
 * when the value changed: it holds until the next record of its track. */
struct ss_meta_counter {
	uint64_t value;
	char track[48];              /* NUL-terminated */
};
_Static_assert(sizeof(struct ss_meta_counter) == 56, "counter size");

struct ss_meta_calib {
	uint64_t ticks;
	uint64_t ns;
};

struct ss_meta_end {
	uint64_t events;             /* events written by all threads
	                              * (version 2: BLOCK, BASE and PAD
	                              * records are not events) */
	uint64_t lost;               /* events dropped by all threads */
	uint64_t last_step;          /* last step begun, or UINT64_MAX if none */
	int32_t exit_status;         /* as passed to exit(), -1 if unknown */
	uint32_t reserved;
};

#endif /* SS_FORMAT_H */
