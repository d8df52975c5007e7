/*
 * window.c - training steps and the schedule that decides which are kept.
 *
 * A step begins at each entry of `step.function` on the thread that first
 * called it (recursive entries do not count), or at each stepscope_step().
 * At every step boundary the schedule (schedule.c) says NONE, WARMUP or
 * RECORD; the global gate opens for RECORD steps and closes otherwise.  Each
 * boundary is a SS_META_STEP record; a window opening also records the
 * frames open on the stepping thread (SS_META_STACK), found by walking frame
 * pointers, so the symbolizer can show main and the training loop clipped
 * to the window.  Everything here runs once per step, never per call.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "schedule.h"

static int self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo &&
		    me < lo + ph->p_memsz) {
			ss_rt.self_lo = lo;
			ss_rt.self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Text of the modules built with -finstrument-functions: a frame walk
 * stops at the first frame outside them. */
#define INST_MAX 64
static uintptr_t inst_lo[INST_MAX], inst_hi[INST_MAX];
static size_t inst_n;
static unsigned long long inst_adds;
static uint64_t step_size; /* the step function's symbol size, 0 unknown */

static int adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* Lock held (or before main). */
static void inst_refresh(void)
{
	unsigned long long adds = 0;
	dl_iterate_phdr(adds_cb, &adds);
	if (inst_n && adds == inst_adds)
		return;
	inst_adds = adds;
	inst_n = ss_elfsym_instrumented(inst_lo, inst_hi, INST_MAX);
}

static int instrumented(uintptr_t pc)
{
	for (size_t i = 0; i < inst_n; i++)
		if (pc >= inst_lo[i] && pc < inst_hi[i])
			return 1;
	return 0;
}

/* The top of the calling thread's stack, for the frame walk, 0 if
 * unknown.  The walk only climbs (each frame above the one before), so
 * the top is all it needs.  For the process's first thread that is the
 * stack pointer the loader started it with (__libc_stack_end): every
 * frame of main and below it lies under it.  Its full bounds
 * (ss_thread_stack_bounds) would cost the window's opening a read of
 * /proc/self/maps by pthread_getattr_np (0.2-0.4 ms on the development
 * VM); another thread's come from its descriptor, without one. */
extern void *__libc_stack_end __attribute__((weak));

static uintptr_t stack_top(struct ss_thread *t, uintptr_t fp)
{
	uintptr_t top = &__libc_stack_end ? (uintptr_t)__libc_stack_end : 0;
	/* the forked child of another thread has that thread's stack: fp is
	 * then far below the first thread's (the kernel leaves at least
	 * 128 MiB under the stack's top for it to grow) */
	if (!t->stack_hi && t->tid == (uint64_t)ss_rt.pid && top > fp && top - fp < (64u << 20))
		return top;
	return ss_thread_stack_bounds(t) ? t->stack_hi : 0;
}

/* Return addresses of the calling thread's open frames, innermost first,
 * leaving out the runtime's own frames.  The walk stops at the first frame
 * of code not built with -finstrument-functions (libc's start code, a
 * thread trampoline, a library calling back): such frames were never
 * recorded as calls, and without frame pointers there the chain beyond is
 * not to be trusted. */
static size_t walk_frames(struct ss_thread *t, uint64_t *out, size_t max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = fp, hi = stack_top(t, fp);
	if (!hi)
		return 0;
	size_t n = 0;
	while (n < max && fp >= lo && fp + 16 <= hi && !(fp & 7)) {
		uintptr_t next = ((uintptr_t *)fp)[0];
		uintptr_t ret = ((uintptr_t *)fp)[1];
		if (!ret)
			break;
		if (ret < ss_rt.self_lo || ret >= ss_rt.self_hi) {
			if (!instrumented(ret))
				break;
			out[n++] = ret;
		}
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

/* When the stepping thread entered the step boundary (CLOCK_MONOTONIC),
 * before it took the lock: a window's opening is timed from there
 * (cost.c); 0 unknown. */
static __thread uint64_t entered_ns __attribute__((tls_model("initial-exec")));

/* How many steps ahead of a window the background thread prepares it
 * (ss_pool_early).  One step was not enough for the first window of a
 * run: in it the thread opens the file, makes the rings and pages in the
 * pool's chunks (2-3 ms of its time on the development VM, more on a
 * busy machine), and a window's first step that finds the pool empty
 * pages in chunks itself.  Two steps ahead hold the chunks one step
 * longer. */
#define EARLY_STEPS 2

static int window_soon(const struct ss_config *c, uint64_t step)
{
	for (uint64_t k = 1; k <= EARLY_STEPS; k++)
		if (ss_schedule_action(c, step + k) == SS_STEP_RECORD)
			return 1;
	return 0;
}

/* Lock held.  `t` is the stepping thread. */
__attribute__((noinline)) void ss_window_begin_step(struct ss_thread *t,
						    uint64_t step, uint64_t ts)
{
	const struct ss_config *c = &ss_rt.cfg;
	enum ss_step_action act = ss_schedule_action(c, step);
	ss_stats_on_step(step); /* log.every_n_steps, before a window opens */
	ss_rt.step = step;
	ss_rt.have_step = 1;
	ss_memory_on_step(step);
	if (t->state == SS_THREAD_NEW)
		ss_thread_init(t);
	struct ss_meta_step m = {
		.step = step,
		.tid = t->tid,
		.serial = t->serial,
		.action = act,
		.cycle = ss_schedule_cycle(c, step),
	};
	if (act == SS_STEP_RECORD && !(ss_hot.gate & SS_GATE_EVENTS) && !ss_rt.stopped &&
	    !ss_rt.disabled) {
		/* the work of opening a window is done first and the step
		 * begins after it (SS_META_WINDOW_OPEN spans it): creating the
		 * file, maps, stats, the frame walk, the filter and the
		 * threads' first chunks are no step's time */
		ss_cost_opening(entered_ns); /* but recording's cost (cost.c) */
		if (ss_rt.fd >= 0)
			ss_meta_maps_if_changed();
		else
			ss_buf_open_file(); /* config, calibration, maps */
		ss_stats_write_all(); /* stats: whole_run, kept if the run dies */
		uint64_t frames[128];
		inst_refresh();
		size_t n = walk_frames(t, frames, 128);
		/* in step.function mode the innermost frame is the step
		 * function itself, whose entry is recorded right after;
		 * unless the function was inlined there: then it is the
		 * caller's, which stays (checked at the first window: a
		 * frame inside the function's symbol, as start-up found it,
		 * is its own without reading the symbol tables again) */
		static int step_inlined = -1;
		uintptr_t fn = (uintptr_t)ss_hot.watch;
		if (ss_hot.watch && n && step_inlined < 0)
			step_inlined = frames[0] >= fn && frames[0] - fn < step_size ? 0 :
				ss_elfsym_step_inlined(c->step_function, ss_hot.watch, frames[0]);
		size_t skip = (ss_hot.watch && n && step_inlined != 1) ? 1 : 0;
		ss_frames_forget_all();
		ss_filter_on_window();
		ss_buf_ready(t);
		if (!ss_pool_rings_early())
			ss_ring_prepare(0); /* the other threads' rings */
		ss_pool_fill(ss_rt.chunk_bytes); /* chunks for rings that overflow */
		uint64_t begin = ss_clock_now_ordered();
		struct ss_meta_window_open w = { t->tid, t->serial, step, begin };
		ss_meta_write_ts(SS_META_WINDOW_OPEN, ts, &w, sizeof(w), NULL, 0);
		ss_meta_write_ts(SS_META_STEP, begin, &m, sizeof(m), NULL, 0);
		struct ss_meta_stack s = { t->tid, t->serial, n - skip };
		ss_meta_write_ts(SS_META_STACK, begin, &s, sizeof(s), frames + skip,
				 (n - skip) * sizeof(uint64_t));
		ss_hot.gate = (ss_hot.gate & SS_GATE_STATS) | SS_GATE_REC;
		ss_pool_start(ss_rt.chunk_bytes); /* wake it: chunks for the window */
	} else {
		if (act != SS_STEP_RECORD)
			ss_hot.gate &= SS_GATE_STATS;
		ss_meta_write_ts(SS_META_STEP, ts, &m, sizeof(m), NULL, 0);
		/* a window opens within EARLY_STEPS steps: the background
		 * thread opens the file and pages in the threads' rings and
		 * the pool's chunks meanwhile (pool.c), so that the opening
		 * only takes them */
		if (act != SS_STEP_RECORD && !ss_rt.stopped && !ss_rt.disabled &&
		    window_soon(c, step))
			ss_pool_early(ss_rt.chunk_bytes);
	}
	ss_gpu_on_window(!!(ss_hot.gate & SS_GATE_EVENTS));
	ss_sched_on_window(!!(ss_hot.gate & SS_GATE_EVENTS));
	ss_cost_on_window(!!(ss_hot.gate & SS_GATE_EVENTS)); /* cost.c */
	ss_cost_on_step(ts, !!(ss_hot.gate & SS_GATE_EVENTS)); /* the step's time */
	/* nothing left to record: the pool's chunks go back now (pool.c);
	 * stop watching, unless steps still count (stats: whole_run,
	 * log.every_n_steps, and memory.enabled: memory_profile.json has an
	 * entry every memory.every_n_steps steps of the whole run) or a few
	 * more unrecorded steps are to be timed against the recorded ones
	 * (cost.c, SS_COST_AFTER_STEPS) */
	if (act != SS_STEP_RECORD && ss_schedule_done(c, step + 1))
		ss_pool_release();
	if (act != SS_STEP_RECORD && ss_schedule_done(c, step + 1) &&
	    c->stats != SS_STATS_WHOLE_RUN && c->log_every_n_steps <= 0 &&
	    !c->memory_enabled && !ss_cost_want_steps())
		ss_hot.watch = NULL;
}

/* 0, or -1 when this process is not to be recorded (its step.function
 * is missing).  The first process of a run started without `record` says
 * so in one line (ss_rt_refuse) and runs unrecorded; any other process
 * runs untouched, with one line on stderr if it was built with
 * instrumentation. */
int ss_window_init(void)
{
	const struct ss_config *c = &ss_rt.cfg;
	dl_iterate_phdr(self_cb, (void *)(uintptr_t)&ss_window_init);
	ss_hot.gate = c->mode == SS_SCHED_ALL;
	if (!ss_hot.gate)
		inst_refresh(); /* before main, not in the first recorded step */
	else
		ss_cost_on_window(1); /* the whole run: its cost from here */
	if (c->step_function[0]) {
		char err[512], where[SS_CONFIG_PATH_MAX + 80];
		void *fn = ss_elfsym_lookup(c->step_function, &step_size, err, sizeof(err));
		if (!fn) {
			ss_hot.gate = 0;
			if (ss_rt.handed) {
				uintptr_t lo, hi;
				if (ss_elfsym_instrumented(&lo, &hi, 1))
					ss_warn("%s; this process runs unrecorded", err);
				return -1;
			}
			char msg[sizeof(where) + sizeof(err)];
			ss_config_where(c, "step.function", where, sizeof(where));
			snprintf(msg, sizeof(msg), "%s%s", where, err);
			ss_rt_refuse(msg);
			return -1;
		}
		ss_hot.watch = fn;
	} else if (c->mode != SS_SCHED_ALL) {
		/* stepscope_step() mode: the program starts in step 0 */
		pthread_mutex_lock(&ss_rt.lock);
		ss_window_begin_step(&ss_tls, 0, ss_clock_now_ordered());
		pthread_mutex_unlock(&ss_rt.lock);
	}
	return 0;
}

__attribute__((noinline)) void ss_window_on_enter(void)
{
	struct ss_thread *t = &ss_tls;
	if (t->in_slow)
		return;
	if (!t->tid)
		t->tid = ss_gettid();
	if (ss_rt.step_tid && ss_rt.step_tid != t->tid)
		return;
	if (t->step_depth++ > 0)
		return; /* recursive entry: same step */
	uint64_t ts = ss_clock_now_ordered();
	entered_ns = ss_clock_mono_ns();
	t->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	ss_fork_resume();
	if (!ss_rt.step_tid)
		ss_rt.step_tid = t->tid;
	if (ss_rt.step_tid == t->tid && ss_hot.watch)
		ss_window_begin_step(t, ss_rt.have_step ? ss_rt.step + 1 : 0, ts);
	pthread_mutex_unlock(&ss_rt.lock);
	t->in_slow = 0;
}

void ss_window_on_exit(void)
{
	struct ss_thread *t = &ss_tls;
	if (t->step_depth && t->tid == ss_rt.step_tid)
		t->step_depth--;
}

/* stepscope_step(): ends the current step and begins the next. */
__attribute__((noinline)) void ss_window_api_step(void)
{
	struct ss_thread *t = &ss_tls;
	if (ss_rt.dormant || ss_rt.disabled || !ss_rt.initialized || t->in_slow)
		return;
	if (ss_rt.cfg.step_function[0])
		return; /* step.function decides the steps */
	uint64_t ts = ss_clock_now_ordered();
	entered_ns = ss_clock_mono_ns();
	t->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	if (!ss_rt.have_step) /* whole-run mode: step 0 began at start */
		ss_window_begin_step(t, 0, ss_rt.start_ticks);
	ss_window_begin_step(t, ss_rt.step + 1, ts);
	pthread_mutex_unlock(&ss_rt.lock);
	t->in_slow = 0;
}
