/*
 * hooks-exe.c - the hooks that stepscope-cc links into each executable
 * and shared library it builds (build/lib/libstepscope-hooks.a), so that
 * their instrumented calls reach them with a direct call instead of
 * through the PLT into libstepscope.so.  They are hidden: the module does
 * not export them, and modules built otherwise still bind the hooks to
 * the runtime's own.  Each module has its own copy and attaches on its
 * first call, which also has the runtime snapshot the maps (a library
 * loaded while recording), as the runtime's IFUNC resolvers do.
 *
 * Design: the runtime stays in libstepscope.so.  Each hook here reads the
 * runtime's gate and step function (struct ss_hot, through a pointer that
 * stepscope__hooks_attach hands out once) and returns when neither says
 * to do anything: the idle cost of an instrumented call is two loads, a
 * compare and a return.  Anything else goes on, by tail calls (nothing
 * pushed, so the runtime still finds the instrumented caller's frame right
 * above its own), to the runtime's hooks proper, which test again.  Until
 * the first call the pointer names a gate of our own with SS_GATE_INIT
 * set, so that call attaches; a runtime built for another ss_hot layout
 * gets every call forwarded.
 *
 * With `stats: whole_run` (the gate is SS_GATE_STATS alone) a call is
 * counted here, in the thread's stats table (stats.h, ss_stats_try_enter/
 * exit, found at %fs:stats_tp), with no call into the runtime: the indirect
 * jump there cost a stats trainer 0.2x the empty hooks' time (issue 36).
 * Anything the table cannot take at once (a first call, a miss) goes on to
 * the runtime as before.
 *
 * Never: keep state of its own beyond that pointer, or record anything
 * itself - one process has one runtime (runtime.c, other_copy_active).
 */
#include "../internal.h"
#include "../stats.h"

/* libstepscope.so (hooks.c); the hooks are called through the GOT (one
 * indirect jump, no PLT stub), bound when the module is loaded */
extern const void *stepscope__hooks_attach(unsigned abi);
extern void stepscope__hook_enter(void *fn, void *site) __attribute__((noplt));
extern void stepscope__hook_exit(void *fn, void *site) __attribute__((noplt));

/* nothing pushed on the way to the runtime (see above) */
#define SS_EXE_FAST __attribute__((optimize("omit-frame-pointer")))
#define SS_EXE_HOOK __attribute__((visibility("hidden"))) SS_EXE_FAST

static const struct ss_hot ss_exe_boot = { .gate = SS_GATE_INIT }; /* not attached */
static const struct ss_hot ss_exe_fwd = { .gate = SS_GATE_REC };   /* forward all */
static const struct ss_hot *ss_exe_hot = &ss_exe_boot;

/* The first call (of any thread): attach, then as any forwarded call. */
__attribute__((noinline)) SS_EXE_FAST static void ss_exe_attach(void)
{
	const struct ss_hot *h = stepscope__hooks_attach(SS_HOOKS_ABI);
	__atomic_store_n(&ss_exe_hot, h ? h : &ss_exe_fwd, __ATOMIC_RELAXED);
}

/* The calling thread's stats table (NULL: none yet), x86-64 only. */
static inline struct ss_stats *ss_exe_stats(const struct ss_hot *h)
{
#if defined(__x86_64__)
	struct ss_stats *s;
	__asm__("mov %%fs:(%1), %0" : "=r"(s) : "r"(h->stats_tp));
	return s;
#else
	(void)h;
	return NULL;
#endif
}

SS_EXE_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	const struct ss_hot *h = __atomic_load_n(&ss_exe_hot, __ATOMIC_RELAXED);
	void *w = h->watch;
	int g = h->gate;
	if (ss_likely(fn != w)) {
		if (ss_likely(!g))
			return;
		if (ss_likely(g == SS_GATE_STATS) && ss_stats_try_enter(ss_exe_stats(h), fn))
			return;
	}
	if (ss_unlikely(h == &ss_exe_boot))
		ss_exe_attach();
	stepscope__hook_enter(fn, site);
}

SS_EXE_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	const struct ss_hot *h = __atomic_load_n(&ss_exe_hot, __ATOMIC_RELAXED);
	void *w = h->watch;
	int g = h->gate;
	if (ss_likely(fn != w)) {
		if (ss_likely(!g))
			return;
		if (ss_likely(g == SS_GATE_STATS) && ss_stats_try_exit(ss_exe_stats(h), fn))
			return;
	}
	if (ss_unlikely(h == &ss_exe_boot))
		ss_exe_attach();
	stepscope__hook_exit(fn, site);
}
