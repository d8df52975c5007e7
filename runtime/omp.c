/*
 * omp.c - OpenMP parallel regions built by gcc, recorded on every thread of
 * the team.
 *
 * gcc adds the -finstrument-functions hooks before it outlines a parallel
 * region, so the outlined body (`main._omp_fn.0`) has none: what it calls is
 * recorded on the worker threads, but not the region itself.  libgomp starts
 * every such region through a few entry points that take the outlined
 * function and its data, run it on each thread of the team (the calling
 * thread included) and return only after the region has ended.  This file
 * defines those entry points: each hands libgomp a trampoline instead of the
 * outlined function, with a small frame on the caller's stack (alive until
 * the region ends) that holds the real function and data.  The trampoline
 * calls the enter hook with the outlined function's address, the function,
 * then the exit hook, so the region shows up under its ELF name
 * (`main._omp_fn.0`) with what it calls nested inside, once per thread.
 *
 * These are the runtime's only definitions of another library's symbols,
 * and they carry libgomp's symbol versions as non-default versions
 * (GOMP_parallel@GOMP_4.0, not @@): the link editor never binds a
 * program's reference to them, so a program still links against libgomp
 * and keeps it needed under --as-needed, and a static link never pulls
 * this file in.  The dynamic loader, which matches a reference's version
 * by name, finds them first because this library comes before libgomp in
 * the search order (linked before the -lgomp that gcc adds last, or
 * preloaded by `stepscope record`).  The real entry point is looked up
 * by the same version after this library (dlvsym(RTLD_NEXT), once).
 *
 * On the thread that starts the region, the time after its own share of
 * the work until the team is done (libgomp's end barrier, code without
 * hooks that would show as self time of the caller) is the user range
 * SS_OMP_WAIT, so the wait is named in the trace and the report; the time
 * from the entry point until its own share begins (libgomp starting or
 * waking the team: on an oversubscribed machine, milliseconds) is the
 * range SS_OMP_START, so the caller's self time holds only its own work.
 *
 * clang's regions go through libomp's __kmpc_fork_call and are instrumented
 * by clang itself; nothing here sees them.  A program without OpenMP never
 * calls these.  Never: wrap when the runtime is dormant (another copy
 * records) or disabled, wrap a region twice (a libgomp entry point that
 * calls another through its PLT), or change the team, the data or the
 * order of anything libgomp does.
 */
#include <dlfcn.h>

#include "internal.h"

typedef void ss_omp_fn(void *);

/* What the trampoline of one region needs; lives on the stack of the
 * thread that starts the region. */
struct ss_omp_region {
	ss_omp_fn *fn;
	void *data;
	struct ss_thread *starter;  /* the thread that started the region */
	int starting;               /* SS_OMP_START is open on the starter */
	int waiting;                /* it opened the SS_OMP_WAIT range */
};

#define SS_OMP_START "omp start: wait for the team"
#define SS_OMP_WAIT "omp barrier: wait for the team"

void stepscope_range_push(const char *name);
void stepscope_range_pop(void);

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/* Runs on every thread of the team.  The hooks see it as the caller of the
 * outlined function: it keeps a frame pointer (the runtime is built with
 * -fno-omit-frame-pointer) and `site` is its own return address, as an
 * instrumented function's would be. */
__attribute__((noinline)) static void ss_omp_trampoline(void *arg)
{
	struct ss_omp_region *r = arg;
	void *site = __builtin_return_address(0);
	if (r->starter == &ss_tls && r->starting) { /* its share begins */
		r->starting = 0;
		stepscope_range_pop();
	}
	__cyg_profile_func_enter((void *)r->fn, site);
	r->fn(r->data);
	__cyg_profile_func_exit((void *)r->fn, site);
	if (r->starter == &ss_tls) { /* the rest is the end barrier's wait */
		stepscope_range_push(SS_OMP_WAIT);
		r->waiting = 1;
	}
	__asm__ volatile("" ::: "memory"); /* no tail call: keep the frame */
}

/* Wrap this region?  Only when this copy of the runtime records, and the
 * region is not ours already. */
static inline int ss_omp_wrap(ss_omp_fn *fn)
{
	return ss_rt.initialized && !ss_rt.dormant && !ss_rt.disabled &&
	       fn != ss_omp_trampoline;
}

/* The definition of NAME@VER after this library, cached in *slot. */
static void *ss_omp_next(void **slot, const char *name, const char *ver)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlvsym(RTLD_NEXT, name, ver);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

/* No OpenMP runtime after us: cannot happen for a program that bound
 * NAME@VER to us at load time unless libgomp went away; run the region on
 * this thread alone, which is what a team of one does. */
static void ss_omp_missing(const char *name, ss_omp_fn *fn, void *data)
{
	static int warned;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		ss_warn("%s: no OpenMP runtime after libstepscope in the search "
			"order; running the region on one thread", name);
	fn(data);
}

/* One entry point, NAME@VER(fn, data, PARAMS...), defined as ss_omp_NAME
 * and renamed by .symver.  ARGS are PARAMS' names. */
#define SS_OMP_ENTRY(name, ver, params, args)                                  \
	__asm__(".symver ss_omp_" #name ", " #name "@" ver ", remove");        \
	SS_EXPORT void ss_omp_##name(ss_omp_fn *fn, void *data params);        \
	void ss_omp_##name(ss_omp_fn *fn, void *data params)                   \
	{                                                                      \
		static void *next;                                             \
		void (*real)(ss_omp_fn *, void *params) =                      \
			(void (*)(ss_omp_fn *, void *params))ss_omp_next(      \
				&next, #name, ver);                            \
		if (!real) {                                                   \
			ss_omp_missing(#name, fn, data);                       \
			return;                                                \
		}                                                              \
		if (!ss_omp_wrap(fn)) {                                        \
			real(fn, data args);                                   \
			return;                                                \
		}                                                              \
		struct ss_omp_region r = { fn, data, &ss_tls, 1, 0 };          \
		stepscope_range_push(SS_OMP_START);                            \
		real(ss_omp_trampoline, &r args);                              \
		if (r.starting || r.waiting) /* one of them, never both */     \
			stepscope_range_pop();                                 \
		__asm__ volatile("" ::: "memory"); /* r lives until here */    \
	}

#define P_PAR , unsigned num_threads, unsigned flags
#define A_PAR , num_threads, flags
/* parallel for with schedule(dynamic|guided|static, chunk) */
#define P_LOOP , unsigned num_threads, long start, long end, long incr, \
	long chunk, unsigned flags
#define A_LOOP , num_threads, start, end, incr, chunk, flags
/* parallel for with schedule(runtime) */
#define P_LOOPR , unsigned num_threads, long start, long end, long incr, \
	unsigned flags
#define A_LOOPR , num_threads, start, end, incr, flags
#define P_SECT , unsigned num_threads, unsigned count, unsigned flags
#define A_SECT , num_threads, count, flags

/* #pragma omp parallel, and parallel for with a static schedule (gcc
 * >= 4.9; the older GOMP_parallel_start/_end pair is not wrapped).  The
 * versions are libgomp's; runtime/libstepscope.map defines the nodes. */
SS_OMP_ENTRY(GOMP_parallel, "GOMP_4.0", P_PAR, A_PAR)
SS_OMP_ENTRY(GOMP_parallel_loop_static, "GOMP_4.0", P_LOOP, A_LOOP)
SS_OMP_ENTRY(GOMP_parallel_loop_dynamic, "GOMP_4.0", P_LOOP, A_LOOP)
SS_OMP_ENTRY(GOMP_parallel_loop_guided, "GOMP_4.0", P_LOOP, A_LOOP)
SS_OMP_ENTRY(GOMP_parallel_loop_runtime, "GOMP_4.0", P_LOOPR, A_LOOPR)
SS_OMP_ENTRY(GOMP_parallel_sections, "GOMP_4.0", P_SECT, A_SECT)
SS_OMP_ENTRY(GOMP_parallel_loop_nonmonotonic_dynamic, "GOMP_4.5", P_LOOP, A_LOOP)
SS_OMP_ENTRY(GOMP_parallel_loop_nonmonotonic_guided, "GOMP_4.5", P_LOOP, A_LOOP)
SS_OMP_ENTRY(GOMP_parallel_loop_nonmonotonic_runtime, "GOMP_5.0", P_LOOPR, A_LOOPR)
SS_OMP_ENTRY(GOMP_parallel_loop_maybe_nonmonotonic_runtime, "GOMP_5.0", P_LOOPR, A_LOOPR)
