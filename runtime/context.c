/*
 * context.c - ucontext coroutines: swapcontext is wrapped so that the
 * shadow of open frames (frames.c) follows the program from one context
 * to the other instead of taking a switch for a longjmp.
 *
 * Design: each recording thread that switches gets a chain of the
 * contexts running one on top of the other (struct ss_ctx, internal.h):
 * entry 0 is the thread's own; swapcontext(o, u) to a context not on the
 * chain pushes u, whose frames then nest above the frame that switched
 * (foo > bar, as the call to swapcontext in foo reads), and its stack's
 * range (u->uc_stack) is kept; swapcontext back to one below on the chain
 * (a coroutine yields) suspends the contexts above it: their frames are
 * saved under their ucontext_t's address and closed with one UNWIND each,
 * reason SS_UNWIND_SUSPENDED, innermost first; when such a context is
 * switched to again its frames are pushed back with one INHERIT each,
 * outermost first, so the rest of each call nests under the call that
 * resumed it (slices clipped at the begin: `report` counts the call
 * once).  While a context other than the thread's own is on top, an
 * enter on its stack never takes the frames below its base for gone
 * (frames.c, ss_frames_floor): a coroutine's stack may lie anywhere,
 * also above the switching frame inside the caller's own frame (a local
 * array), which looks like a longjmp.
 * A context left without swapcontext (its function returned to uc_link,
 * setcontext) stays on the chain until an enter or a switch finds the
 * stack pointer outside its stack; it is dropped then.
 *
 * Only in libstepscope.so (a static program calls libc's swapcontext
 * directly; there, a switch to a stack outside the open frames' reach is
 * left alone as before).  Slow path only: nothing here runs in a hook.
 * Never: allocate with malloc (the thread's table is one mapping), or
 * change what swapcontext does.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "internal.h"

typedef int swap_fn(ucontext_t *, const ucontext_t *);
static _Atomic(swap_fn *) real_swap;

static struct ss_ctx *ctx_map(void)
{
	void *p = mmap(NULL, sizeof(struct ss_ctx), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Frames [from, to) of the shadow kept for context `uc`: its slot, a
 * free one, or with all taken the next in turn (contexts never switched
 * to again, abandoned, hold them; the one it had loses its frames). */
static void ctx_save(struct ss_ctx *c, struct ss_thread *t, const void *uc,
		     uint32_t from, uint32_t to)
{
	struct ss_ctx_saved *s = NULL;
	for (uint32_t i = 0; i < SS_CTX_SAVED && !s; i++)
		if (c->saved[i].uc == uc)
			s = &c->saved[i];
	for (uint32_t i = 0; i < SS_CTX_SAVED && !s; i++)
		if (!c->saved[i].uc)
			s = &c->saved[i];
	if (!s)
		s = &c->saved[c->evict++ % SS_CTX_SAVED];
	uint32_t n = to - from;
	if (n > SS_CTX_FRAMES)
		n = SS_CTX_FRAMES;
	memcpy(s->f, &t->frames[from], n * sizeof(*s->f));
	s->n = n;
	s->uc = uc;
}

/* Context uc's saved frames, if any, back on top of the shadow. */
static void ctx_restore(struct ss_ctx *c, struct ss_thread *t, const void *uc)
{
	for (uint32_t i = 0; i < SS_CTX_SAVED; i++) {
		struct ss_ctx_saved *s = &c->saved[i];
		if (s->uc != uc)
			continue;
		for (uint32_t k = 0; k < s->n; k++) {
			const struct ss_frame *f = &s->f[k];
			uint32_t d = t->depth;
			ss_emit(SS_EV_WORD(SS_EV_INHERIT, f->fn & SS_EV_ARG_MASK));
			if (d < t->frames_cap)
				t->frames[d] = *f;
			else
				ss_frames_grow(t, f->sp, f->fn, f->site);
			t->depth = d + 1;
		}
		s->uc = NULL;
		s->n = 0;
		return;
	}
}

/* swapcontext(o, u) on recording thread t, from a frame at sp. */
static void ctx_switch(struct ss_thread *t, const void *o, const ucontext_t *u,
		       uintptr_t sp)
{
	struct ss_ctx *c = t->ctx;
	if (!c && !(c = t->ctx = ctx_map()))
		return;
	if (!c->n) {
		memset(&c->chain[0], 0, sizeof(c->chain[0]));
		c->n = 1;
	}
	ss_frames_floor(t, sp); /* drop contexts left behind our back */
	uint32_t depth = t->depth;
	if (depth > t->frames_cap)
		return; /* unstored frames: the shadow cannot follow */
	uint32_t top = c->n - 1, j = top;
	c->chain[top].uc = o;
	while (j-- > 0 && c->chain[j].uc != u)
		;
	if (j < top) {
		/* back to context j (a yield): the ones above it stop here */
		uint32_t end = depth;
		for (uint32_t i = top; i > j; i--) {
			uint32_t b = c->chain[i].base < end ? c->chain[i].base : end;
			ctx_save(c, t, c->chain[i].uc, b, end);
			end = b;
		}
		uint32_t d;
		while ((d = t->depth) > end) {
			ss_emit(SS_EV_WORD(SS_EV_UNWIND,
					   (t->frames[d - 1].fn & SS_EV_ARG_MASK) |
					   ((uint64_t)SS_UNWIND_SUSPENDED << SS_UNWIND_SHIFT)));
			atomic_signal_fence(memory_order_seq_cst);
			t->depth = d - 1;
		}
		c->n = j + 1;
		return;
	}
	if (c->n == SS_CTX_CHAIN)
		return; /* nested too deep: frames.c's rules alone */
	struct ss_ctx_link *l = &c->chain[c->n];
	l->uc = u;
	l->base = depth;
	l->lo = (uintptr_t)u->uc_stack.ss_sp;
	l->hi = l->lo + u->uc_stack.ss_size;
	if (l->hi < l->lo)
		l->hi = l->lo;
	atomic_signal_fence(memory_order_seq_cst);
	c->n++;
	ctx_restore(c, t, u);
}

/* The wrapper: libc's swapcontext after the bookkeeping.  When the
 * program switches back to o, it returns here on o's stack. */
SS_EXPORT int swapcontext(ucontext_t *o, const ucontext_t *u)
{
	swap_fn *f = atomic_load_explicit(&real_swap, memory_order_relaxed);
	if (!f) {
		f = (swap_fn *)dlsym(RTLD_NEXT, "swapcontext");
		if (!f)
			return -1;
		atomic_store_explicit(&real_swap, f, memory_order_relaxed);
	}
	struct ss_thread *t = &ss_tls;
	if ((ss_hot.gate & SS_GATE_REC) && t->frames && o && u && !t->in_slow)
		ctx_switch(t, o, u, (uintptr_t)__builtin_frame_address(0));
	return f(o, u);
}
