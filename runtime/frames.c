/*
 * frames.c - the shadow of each thread's open frames, so that a frame which
 * never returns is closed where the runtime learns it is gone instead of
 * swallowing every later call as its child.
 *
 * Design: while recording, the enter hook pushes (sp, fn) on the thread's
 * shadow, where sp says where the frame sits on the stack (its frame
 * pointer, checked, or the stack pointer at the hook call; hooks.c): lower
 * for every deeper frame of the same stack, equal for siblings.  A frame whose exit hook runs is popped
 * (hooks.c, inline).  The slow paths here handle the rest:
 *   - an enter at an sp at or above a shadow frame means that frame is gone
 *     (longjmp, siglongjmp, an exception through uninstrumented code, a
 *     forced unwind): it is popped with an SS_EV_UNWIND event;
 *   - an exit whose function is not on top closes everything above the
 *     nearest frame of that function (the slicer does the same);
 *   - at thread exit (pthread key destructor) and process exit (library
 *     destructor) every frame still open is gone: one UNWIND each;
 *   - a forked child replays its inherited frames as SS_EV_INHERIT events
 *     at the start of its first chunk, so its calls nest under them.
 * The shadow lives in an anonymous mapping grown with mmap, never malloc,
 * so a signal handler that records is safe.  It only describes frames
 * entered while recording: frames opened earlier are the slicer's business
 * (SS_META_STACK), and a window that opens again starts from empty.
 *
 * ucontext coroutines (context.c): while the thread runs a context it
 * switched to, an enter on that context's stack never takes the frames
 * below the context's base (the switching frame and its callers, on
 * another stack) for gone, wherever the coroutine's stack lies: a local
 * array of the switching function sits above its frame and looked like a
 * longjmp that left it (ss_frames_floor).
 * Never: pop on a jump to another stack (sigaltstack, coroutines: more than
 * SS_FRAMES_JUMP above the top frame, or inside a context's own stack),
 * block, or take the lock on the hot path.
 */
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define SS_FRAMES_FIRST 4096u            /* entries; 96 KiB, touched lazily */
#define SS_FRAMES_MAX (1u << 22)         /* deeper frames are not stored */
#define SS_FRAMES_JUMP ((uintptr_t)1 << 28)

static void *frames_map(size_t n)
{
	void *p = mmap(NULL, n * sizeof(struct ss_frame), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* First event of a thread (lock held).  A forked child keeps the shadow
 * it inherited. */
void ss_frames_alloc(struct ss_thread *t)
{
	if (t->frames)
		return;
	t->frames = frames_map(SS_FRAMES_FIRST);
	t->frames_cap = t->frames ? SS_FRAMES_FIRST : 0;
	t->depth = 0;
}

void ss_frames_release(struct ss_thread *t)
{
	struct ss_frame *f = t->frames;
	size_t cap = t->frames_cap;
	t->frames_cap = 0;
	t->depth = 0;
	atomic_signal_fence(memory_order_seq_cst);
	t->frames = NULL;
	if (f)
		munmap(f, cap * sizeof(*f));
	struct ss_ctx *c = t->ctx;
	t->ctx = NULL;
	if (c)
		munmap(c, sizeof(*c));
}

/* Push with the shadow full: double it, or count the frame unstored. */
__attribute__((noinline)) void ss_frames_grow(struct ss_thread *t, uintptr_t sp,
					       uintptr_t fn, uintptr_t site)
{
	uint32_t d = t->depth;
	if (t->frames_busy || !t->frames || d != t->frames_cap ||
	    t->frames_cap >= SS_FRAMES_MAX)
		return; /* beyond the stored part: counted in depth only */
	t->frames_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	size_t cap = t->frames_cap;
	struct ss_frame *old = t->frames, *n = frames_map(cap * 2);
	if (n) {
		memcpy(n, old, cap * sizeof(*n));
		n[d].sp = sp;
		n[d].fn = fn;
		n[d].site = site;
		atomic_signal_fence(memory_order_seq_cst);
		t->frames = n;
		t->frames_cap = (uint32_t)(cap * 2);
		atomic_signal_fence(memory_order_seq_cst);
		munmap(old, cap * sizeof(*old));
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->frames_busy = 0;
}

/* The lowest depth a jump at `sp` can unwind to: the base of the
 * coroutine running on top (context.c) when sp is on its stack, else 0.
 * Contexts on top whose stack sp has left, or whose base the frames went
 * below, were left without swapcontext (returned to uc_link, setcontext):
 * they are dropped. */
uint32_t ss_frames_floor(struct ss_thread *t, uintptr_t sp)
{
	struct ss_ctx *c = t->ctx;
	if (!c)
		return 0;
	while (c->n > 1) {
		const struct ss_ctx_link *l = &c->chain[c->n - 1];
		if (l->base <= t->depth && sp >= l->lo && sp < l->hi)
			return l->base;
		c->n--;
	}
	return 0;
}

/* An enter at `sp` from return address `site`: the frames on top below
 * it are gone, and so is one at the same place entered from another call
 * site (a sibling; hooks of functions inlined into one frame share its
 * place and its return address, so they never look like siblings); never
 * those below the running coroutine's base. */
__attribute__((noinline)) void ss_frames_unwind(struct ss_thread *t, uintptr_t sp,
						 uintptr_t site)
{
	uint32_t d, floor = ss_frames_floor(t, sp);
	while ((d = t->depth) > floor && d - 1 < t->frames_cap) {
		const struct ss_frame *f = &t->frames[d - 1];
		if (f->sp > sp || sp - f->sp > SS_FRAMES_JUMP ||
		    (f->sp == sp && f->site == site))
			break;
		ss_emit(SS_EV_WORD(SS_EV_UNWIND,
				   (f->fn & SS_EV_ARG_MASK) |
				   ((uint64_t)SS_UNWIND_SKIPPED << SS_UNWIND_SHIFT)));
		atomic_signal_fence(memory_order_seq_cst);
		t->depth = d - 1; /* after its UNWIND: see the exit hook */
	}
}

/* An exit of `fn` that is not the stored top frame. */
__attribute__((noinline)) void ss_frames_exit_slow(struct ss_thread *t, uintptr_t fn)
{
	uint32_t d = t->depth;
	if (!d)
		return;
	if (d > t->frames_cap) { /* the top is not stored: trust the exit */
		t->depth = d - 1;
		return;
	}
	/* the nearest frame of fn and everything above it end here; with
	 * none, fn began before recording and every stored frame is gone
	 * (the slicer closes its frames the same way) */
	while (d && t->frames[d - 1].fn != fn)
		d--;
	t->depth = d ? d - 1 : 0;
}

/* Every frame of the calling thread is gone (thread or process exit).
 * Their UNWINDs go outermost first: the slicer closes a frame and all
 * above it at the first, together and parent first, so frames that end
 * in one clock tick still nest in a viewer (the later UNWINDs find their
 * frame closed; a recursive function's find the next one). */
void ss_frames_unwind_all(struct ss_thread *t, unsigned why)
{
	if (!(ss_hot.gate & 1))
		return;
	uint32_t n = t->depth < t->frames_cap ? t->depth : t->frames_cap;
	for (uint32_t i = 0; i < n; i++)
		ss_emit(SS_EV_WORD(SS_EV_UNWIND, (t->frames[i].fn & SS_EV_ARG_MASK) |
						 ((uint64_t)why << SS_UNWIND_SHIFT)));
	t->depth = 0;
}

/* A window opens (lock held): no thread has a recorded frame open. */
void ss_frames_forget_all(void)
{
	for (struct ss_thread *t = ss_rt.threads; t; t = t->next) {
		t->depth = 0;
		if (t->ctx)
			t->ctx->n = 0;
	}
	ss_tls.depth = 0;
	if (ss_tls.ctx)
		ss_tls.ctx->n = 0;
}

/* A forked child's first chunk: its open frames, outermost first, as
 * long records from e on, ending before `end`; returns the next free word.
 * `entering`: the top frame is the one whose ENTER is being stored (the
 * hook pushes it first), not one of the parent's. */
uint64_t *ss_frames_inherit(struct ss_thread *t, uint64_t *e, uint64_t *end, uint64_t now,
			    int entering)
{
	uint32_t depth = t->depth - (entering && t->depth);
	uint32_t n = depth < t->frames_cap ? depth : t->frames_cap;
	t->inherit = 0;
	uint32_t room = e < end ? (uint32_t)(end - e) / 2 : 0;
	if (n > room) {
		/* the rest are not in the trace: forget them (the frame being
		 * entered goes down with them) */
		if (entering && t->depth && n < t->frames_cap)
			t->frames[n] = t->frames[t->depth - 1];
		n = room;
		t->depth = n + (entering != 0);
	}
	for (uint32_t i = 0; i < n; i++)
		e = ss_buf_put(t, e, SS_EV_WORD(SS_EV_INHERIT, t->frames[i].fn & SS_EV_ARG_MASK),
			       now);
	return e;
}
