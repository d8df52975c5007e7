/*
 * hooks.c - the hot path: __cyg_profile_func_enter/exit, called by every
 * function compiled with -finstrument-functions, and the public stepscope_*
 * API of stepscope.h.
 *
 * Common case inside an active window: read the clock, store one 8-byte
 * compact event (format.h) in the thread's block, bump a pointer.  No lock, no malloc,
 * no stdio, no syscall; errno is untouched.  Outside a window: one compare
 * against the step function and one test of the gate.  Everything rarer
 * (a full chunk, a step boundary) is in a separate non-inlined function.
 * While recording, the hooks also keep the thread's shadow of open frames
 * (frames.c): one store on enter, one compare on exit.
 * With stats: whole_run (or log.every_n_steps) the gate's SS_GATE_STATS bit
 * stays set for the whole run.  Outside a window such a call is counted
 * by the inlined stats.h path (a cache hit, a push or pop of the shadow
 * stack, no clock read); inside one, or for the step function, the slow
 * function counts it (stats.c) and records it when the recording bits say
 * so.  With stats off the fast path is unchanged.
 * In an executable or library built by stepscope-cc the calls first reach
 * the copies of the fast path it links in (runtime/exe/hooks-exe.c), which
 * tail-call stepscope__hook_enter/exit below when the gate says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "internal.h"
#include "stats.h"

/* Where the frame of the function that called the enter hook sits on the
 * stack: its frame pointer fp when it keeps one (stepscope-cc builds with
 * -fno-omit-frame-pointer; checked through the return address above it,
 * which must be `site`), else sp, its stack pointer at the hook call.
 * Deeper frames always get lower values; siblings called from one place
 * get the same value when they keep frame pointers. */
static inline uintptr_t ss_hook_frame_key_of(uintptr_t fp, uintptr_t sp, void *site)
{
	if (fp - sp < 65536 && !(fp & 7) && ((void **)fp)[1] == site)
		return fp;
	return sp;
}

/* The same from inside a function reached by a tail call from the hook:
 * the frame above its own is the instrumented caller's. */
static inline __attribute__((always_inline)) uintptr_t ss_hook_frame_key(void *site)
{
	uintptr_t *own = __builtin_frame_address(0);
	return ss_hook_frame_key_of(own[0], (uintptr_t)own + 16, site);
}

/* One recorded call in SS_EXIT_ORDER_EVERY per thread has its ENTER and
 * EXIT read after a fence, the others unfenced, each time's low bit saying
 * which (ss_clock_enter/exit, internal.h; issue 46).  Fencing every EXIT
 * (issue 40 item 3) held every call's work in its time but cost the
 * recorded call pair 44-47 ns against 25 (13-20 ns of it on every call, on
 * the development VM's AMD EPYC); the sampled fence costs a counter and a
 * compare a call and two fences every 64th, and the fastest call that
 * `stepscope filter` judges and the report's Min show are taken from the
 * ordered calls, which hold the call's whole work and nothing of the call
 * before (b-dot's 64 dependent adds: its fastest recorded call against
 * its unrecorded time, make bench). */

/* Everything but the common "not recording" case of the enter hook.
 * regs: NULL, or for a function record.args lists, the instrumented
 * caller's registers and stack pointer as the capture stub saved them on
 * its own stack (args.c), where the call's SS_EV_ARGS record is made from
 * right after its ENTER: each call's capture is its own, so a signal
 * handler that records a listed call on top of this one shares nothing
 * with it. */
static inline __attribute__((always_inline)) void ss_hook_enter_body(void *fn, void *site,
								       const uint64_t *regs)
{
	if (ss_unlikely(ss_hot.gate & SS_GATE_INIT))
		ss_runtime_early(); /* before our constructor: start now */
	if (fn == ss_hot.watch)
		ss_window_on_enter();
	int g = ss_hot.gate;
	/* stats: whole_run / log.every_n_steps (stats.c); an excluded
	 * function is counted, its time is its caller's, it is never
	 * recorded */
	if (g & SS_GATE_STATS) {
		if (ss_unlikely(ss_hot.filter & SS_FILTER_SKIP) && ss_filter_excluded(fn)) {
			ss_stats_count(fn);
			return;
		}
		ss_stats_enter(fn);
		g &= SS_GATE_EVENTS;
	}
	if (g) {
		struct ss_thread *t = &ss_tls;
		if (ss_unlikely(g != 1) && ss_hooks_gate_slow(g))
			return;
		if (ss_unlikely(ss_hot.filter & SS_FILTER_SKIP) && ss_filter_skip_enter(fn))
			return; /* filter: (filter.h) */
		uintptr_t sp = regs ? ss_hook_frame_key_of(regs[1], regs[SS_ARGS_NREGS], site)
				    : ss_hook_frame_key(site);
		uint32_t d = t->depth;
		/* the top frame sits at or below ours: gone (longjmp) unless
		 * it is our own inlined caller (frames.c decides) */
		if (ss_unlikely(d - 1 < t->frames_cap && t->frames[d - 1].sp <= sp))
			ss_frames_unwind(t, sp, (uintptr_t)site);
		/* the frame is pushed before its ENTER is stored, and taken
		 * so before it is filled in: a signal handler that records on
		 * top of us pushes above it (never over it) and sees no frame
		 * gone (sp above any), and a handler that siglongjmps away
		 * leaves the frame to be found gone (an UNWIND, which the
		 * slicer ignores when the ENTER never made it) */
		d = t->depth;
		if (ss_unlikely(!t->frames)) {
			/* the thread's first recorded call: its shadow is made
			 * on the way (ss_frames_alloc), then this frame goes in */
			ss_emit_fn(SS_EV_ENTER, (uintptr_t)fn);
			d = t->depth;
			if (d < t->frames_cap) {
				t->frames[d].sp = sp;
				t->frames[d].fn = (uintptr_t)fn;
				t->frames[d].site = (uintptr_t)site;
			}
			t->depth = d + 1;
			if (regs)
				ss_args_emit((uintptr_t)fn, regs); /* record.args */
			if (ss_unlikely(ss_hot.stacks))
				ss_stack_capture();
			return;
		}
		if (ss_likely(d < t->frames_cap)) {
			struct ss_frame *f = &t->frames[d];
			f->sp = UINTPTR_MAX;
			atomic_signal_fence(memory_order_seq_cst);
			t->depth = d + 1;
			atomic_signal_fence(memory_order_seq_cst);
			f->fn = (uintptr_t)fn;
			f->site = (uintptr_t)site;
			f->sp = sp;
		} else {
			ss_frames_grow(t, sp, (uintptr_t)fn, (uintptr_t)site);
			t->depth = d + 1;
		}
		atomic_signal_fence(memory_order_seq_cst);
		ss_emit_fn(SS_EV_ENTER, (uintptr_t)fn);
		if (regs)
			ss_args_emit((uintptr_t)fn, regs); /* record.args: args.c */
		if (ss_unlikely(ss_hot.stacks))
			ss_stack_capture(); /* record.stack: stack.c */
	}
}

/* It is reached by a tail call from ss_hook_enter, which pushes nothing,
 * so the frame above this one is the instrumented caller's, as
 * ss_hook_frame_key expects. */
__attribute__((noinline, used)) void ss_hook_enter_slow(void *fn, void *site)
{
	ss_hook_enter_body(fn, site, NULL);
}

/* Called by record.args' capture stub (args.c) for a listed function. */
__attribute__((noinline, used)) void ss_hook_enter_args(void *fn, void *site,
							  const uint64_t *regs)
{
	ss_hook_enter_body(fn, site, regs);
}

__attribute__((noinline)) static void ss_hook_exit_slow(void *fn, void *site)
{
	(void)site;
	if (ss_unlikely(ss_hot.gate & SS_GATE_INIT))
		ss_runtime_early();
	int g = ss_hot.gate;
	/* stats: whole_run / log.every_n_steps (stats.c) */
	if (g & SS_GATE_STATS) {
		ss_stats_exit(fn);
		if (ss_unlikely(ss_hot.filter & SS_FILTER_SKIP) && ss_filter_excluded(fn))
			g = 0; /* not recorded */
		g &= SS_GATE_EVENTS;
	}
	if (g && (ss_likely(g == 1) || !ss_hooks_gate_slow(g)) &&
	    !(ss_unlikely(ss_hot.filter & SS_FILTER_SKIP) && ss_filter_skip_exit(fn))) {
		struct ss_thread *t = &ss_tls;
		/* filter.min_duration_us: a short leaf call is taken back */
		if (!(ss_unlikely(ss_hot.filter & SS_FILTER_SHORT) && ss_filter_take_back(fn)))
			ss_emit_fn(SS_EV_EXIT, (uintptr_t)fn); /* ss_clock_exit */
		/* popped after its EXIT is stored: a handler that siglongjmps
		 * out from between leaves the frame to be found gone, so the
		 * call ends unwound instead of open (the slicer ignores the
		 * UNWIND of a frame that did end) */
		atomic_signal_fence(memory_order_seq_cst);
		uint32_t d = t->depth;
		if (ss_likely(d - 1 < t->frames_cap &&
			      t->frames[d - 1].fn == (uintptr_t)fn))
			t->depth = d - 1;
		else
			ss_frames_exit_slow(t, (uintptr_t)fn);
	}
	if (fn == ss_hot.watch)
		ss_window_on_exit();
}

/* The hooks proper; the program binds to them through the IFUNCs below.
 * Outside a window they test one combined condition (the step function,
 * or the gate) and return: no frame is set up, nothing is pushed (hence
 * no frame pointer here), and the rest is a tail call. */
#define SS_FAST __attribute__((optimize("omit-frame-pointer")))

/* What a hook does once the gate (g) or the step function (w) says it
 * must: count (stats only: stats.h, no clock), or the slow path.  Shared
 * by the hooks here and stepscope__hook_enter/exit below. */
static inline __attribute__((always_inline)) void ss_hook_enter_go(void *fn, void *site,
								     int g, void *w)
{
	if (g == SS_GATE_STATS && fn != w)
		ss_stats_hook_enter(fn);
	else if (ss_unlikely(ss_hot.args) && ss_args_listed((uintptr_t)fn))
		ss_args_hook_enter(fn, site); /* record.args: then the slow path */
	else
		ss_hook_enter_slow(fn, site);
}

static inline __attribute__((always_inline)) void ss_hook_exit_go(void *fn, void *site,
								    int g, void *w)
{
	if (g == SS_GATE_STATS && fn != w)
		ss_stats_hook_exit(fn);
	else
		ss_hook_exit_slow(fn, site);
}

SS_FAST static void ss_hook_enter(void *fn, void *site)
{
	void *w = ss_hot.watch;
	int g = ss_hot.gate;
	if (ss_unlikely((fn == w) | (g != 0)))
		ss_hook_enter_go(fn, site, g, w);
}

SS_FAST static void ss_hook_exit(void *fn, void *site)
{
	void *w = ss_hot.watch;
	int g = ss_hot.gate;
	if (ss_unlikely((fn == w) | (g != 0)))
		ss_hook_exit_go(fn, site, g, w);
}

/* IFUNC resolvers: the dynamic loader calls one whenever it binds a
 * module's reference to a hook, i.e. when a module that was built with
 * -finstrument-functions is loaded (BIND_NOW) or makes its first call
 * (lazy binding) - in both cases before any of its events.  The resolver
 * only flags the gate (bit 2, while recording); the next hook call then
 * snapshots the maps, so a library is named even if it is dlclose'd or
 * the process dies right after.  Nothing here may need relocations or
 * libc: it can run before the runtime itself is relocated. */
static void ss_hooks_flag_maps(void)
{
	int g = __atomic_load_n(&ss_hot.gate, __ATOMIC_RELAXED);
	while ((g & SS_GATE_REC) && !(g & 6) &&
	       !__atomic_compare_exchange_n(&ss_hot.gate, &g, g | 2, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

typedef void ss_hook_fn(void *, void *);

static ss_hook_fn *ss_hooks_resolve_enter(void)
{
	ss_hooks_flag_maps();
	return ss_hook_enter;
}

static ss_hook_fn *ss_hooks_resolve_exit(void)
{
	return ss_hook_exit;
}

SS_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
	__attribute__((ifunc("ss_hooks_resolve_enter")));
SS_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
	__attribute__((ifunc("ss_hooks_resolve_exit")));

/* The hooks that stepscope-cc links into an executable or shared library
 * (runtime/exe/hooks-exe.c): they test the gate themselves, through the
 * pointer this returns (NULL: built for another layout of ss_hot, they
 * then forward every call), and call stepscope__hook_enter/exit below
 * (ss_hook_enter/exit without the test) only when the gate or the step
 * function says so, through the GOT (no PLT stub).  The calls between are tail
 * calls, so the frame above the slow functions is still the instrumented
 * caller's.  Whichever copy of the runtime the program binds these names
 * to is the one its other modules bind the hooks to (the first in the
 * lookup order), so one process never records into two runtimes. */
SS_EXPORT const void *stepscope__hooks_attach(unsigned abi)
{
	/* a module's first hook call, before any of its events: as the
	 * resolvers above, snapshot the maps (a library loaded now) */
	ss_hooks_flag_maps();
	return abi == SS_HOOKS_ABI ? (const void *)&ss_hot : NULL;
}

/* The linked hooks tested the gate already: only the dispatch is left. */
SS_EXPORT SS_FAST void stepscope__hook_enter(void *fn, void *site)
{
	ss_hook_enter_go(fn, site, ss_hot.gate, ss_hot.watch);
}

SS_EXPORT SS_FAST void stepscope__hook_exit(void *fn, void *site)
{
	ss_hook_exit_go(fn, site, ss_hot.gate, ss_hot.watch);
}

/* The gate is not plain 1.  4: recording stopped (buffer.c), mark it in
 * this thread's stream and drop the event (returns 1).  Bit 2: a module
 * bound the hooks since the last look, snapshot the maps.  `g` holds the
 * recording bits only (SS_GATE_EVENTS). */
__attribute__((noinline)) int ss_hooks_gate_slow(int g)
{
	struct ss_thread *t = &ss_tls;
	if (g == 4) {
		ss_buf_mark_stop(t);
		return 1;
	}
	__atomic_fetch_and(&ss_hot.gate, ~2, __ATOMIC_RELAXED);
	if (t->in_slow)
		return 0;
	t->in_slow = 1;
	int saved = errno;
	pthread_mutex_lock(&ss_rt.lock);
	if (ss_rt.fd >= 0)
		ss_meta_maps_if_changed();
	pthread_mutex_unlock(&ss_rt.lock);
	errno = saved;
	t->in_slow = 0;
	return 0;
}

SS_EXPORT void stepscope_step(void)
{
	ss_window_api_step();
}

SS_EXPORT int stepscope_recording(void)
{
	return (ss_hot.gate & 1) != 0;
}

/* ---------------------------------------------------------------- ranges
 * Range names are interned by content: a lock-free open-addressing table
 * of copies, each published once with its id (SS_META_STRING). */
#define STR_SLOTS 1024

struct str_slot {
	_Atomic(const char *) text;
	uint64_t hash;
	uint64_t id;
};
static struct str_slot str_table[STR_SLOTS];

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint64_t string_id(const char *name)
{
	uint64_t h = str_hash(name);
	for (unsigned i = 0; i < STR_SLOTS; i++) {
		struct str_slot *s = &str_table[(h + i) % STR_SLOTS];
		const char *text = atomic_load_explicit(&s->text, memory_order_acquire);
		if (!text) {
			/* not there: add it under the lock */
			uint64_t id = 0;
			pthread_mutex_lock(&ss_rt.lock);
			text = atomic_load_explicit(&s->text, memory_order_acquire);
			if (!text) {
				char *copy = ss_strdup(name);
				if (copy) {
					id = ++ss_rt.next_str;
					s->hash = h;
					s->id = id;
					ss_meta_write(SS_META_STRING, &id, sizeof(id), copy,
						      strlen(copy) + 1);
					atomic_store_explicit(&s->text, copy,
							      memory_order_release);
				}
			}
			pthread_mutex_unlock(&ss_rt.lock);
			if (!text)
				return id;
		}
		if (s->hash == h && !strcmp(text, name))
			return s->id;
	}
	return 0; /* table full: shows as an unnamed range */
}

SS_EXPORT void stepscope_range_push(const char *name)
{
	struct ss_thread *t = &ss_tls;
	if (ss_rt.dormant || t->in_slow || !name)
		return;
	uint64_t id = 0;
	if (ss_hot.gate & SS_GATE_EVENTS) {
		t->in_slow = 1;
		id = string_id(name);
		t->in_slow = 0;
	}
	if (t->range_depth < SS_RANGE_DEPTH)
		t->range_ids[t->range_depth] = id;
	t->range_depth++;
	if ((ss_hot.gate & SS_GATE_EVENTS) && id)
		ss_emit(SS_EV_WORD(SS_EV_RANGE_PUSH, id));
}

SS_EXPORT void stepscope_range_pop(void)
{
	struct ss_thread *t = &ss_tls;
	if (ss_rt.dormant || t->in_slow || !t->range_depth)
		return;
	t->range_depth--;
	uint64_t id = t->range_depth < SS_RANGE_DEPTH ? t->range_ids[t->range_depth] : 0;
	if ((ss_hot.gate & SS_GATE_EVENTS) && id)
		ss_emit(SS_EV_WORD(SS_EV_RANGE_POP, id));
}
