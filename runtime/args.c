/*
 * args.c - record.args: the calls of listed functions keep what their
 * parameters' DWARF locations need at the enter hook (docs/shapes.md).
 *
 * How: at start-up the listed names and globs are resolved to addresses
 * through the modules' symbol tables (elfsym.c) into a small open-addressing
 * set, and ss_hot.args is set when one matched.  Then the enter hook's slow
 * path goes through ss_args_hook_enter, an assembly stub that saves the
 * instrumented caller's callee-saved registers as they are at the hook
 * (the hooks before it only test and tail-call, so they are untouched) and
 * its stack pointer in its own frame, reached only for a listed function
 * (the hooks test the set inline: ss_args_listed, internal.h), and calls
 * the ordinary slow path with them (ss_hook_enter_args, hooks.c).
 * Right after a listed call's ENTER, ss_args_emit stores one SS_EV_ARGS
 * record (format.h) in the thread's block: the registers, the return
 * address of the hook call (where the DWARF locations are looked up
 * offline), and copies of the caller's stack: its frame from sp to its
 * frame pointer and 48 bytes above (saved fp, return address, 4 stack
 * arguments) when that is at most 512 bytes, else [sp, sp + 512) and 256
 * bytes below the frame pointer and 48 above, all inside the thread's
 * stack.  symbolize
 * evaluates the locations (names/args-dw.c); nothing DWARF happens here.
 *
 * Must never: lock, allocate, make a system call or take stdio per call
 * (the thread's stack bounds are read once per thread, when it is
 * registered, with system calls only); keep any part of a capture where a
 * signal handler's capture could change it; read outside the
 * thread's stack; write a record that does not fit its block whole; cost
 * a function that is not listed more than the set test, or anything at
 * all without record.args.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define SS_ARGS_LOW 512             /* bytes copied from sp up */
#define SS_ARGS_FP_BELOW 256        /* and around a frame pointer above that */
#define SS_ARGS_FP_ABOVE 48        /* saved fp, return address, 4 stack arguments */
#define SS_ARGS_GLOBS (SS_CONFIG_LIST_MAX / 2) /* as many as the list can hold */

uintptr_t ss_args_set[SS_ARGS_SLOTS];

/* ------------------------------------------------------------ start-up */

/* The list's globs, each a NUL-terminated piece of a copy of it: every
 * one is kept, whatever its length or place in the list (a 369-character
 * mangled C++ name, the 65th glob). */
struct ss_args_globs {
	char text[SS_CONFIG_LIST_MAX];
	const char *pat[SS_ARGS_GLOBS];
	unsigned char hit[SS_ARGS_GLOBS];
	size_t n, used;
};

/* gcc's and clang's outlined OpenMP bodies are not the user's functions */
static int ss_args_outlined(const char *name)
{
	return strstr(name, "._omp_fn.") || strstr(name, ".omp_outlined") ||
	       strstr(name, "._omp_cpyfn.");
}

static void ss_args_add(struct ss_args_globs *g, uintptr_t addr)
{
	for (size_t s = ss_args_hash(addr);; s = (s + 1) & (SS_ARGS_SLOTS - 1)) {
		if (ss_args_set[s] == addr)
			return;
		if (!ss_args_set[s]) {
			ss_args_set[s] = addr;
			g->used++;
			return;
		}
	}
}

/* A symbol: listed when a glob matches it; every glob that matches it is
 * marked as used (the others are tested only until they match once). */
static int ss_args_match(uintptr_t addr, const char *name, void *ctx)
{
	struct ss_args_globs *g = ctx;
	int listed = 0;
	if (!addr || ss_args_outlined(name) || g->used >= SS_ARGS_SLOTS / 2)
		return 0;
	for (size_t i = 0; i < g->n; i++) {
		if ((listed && g->hit[i]) || fnmatch(g->pat[i], name, 0))
			continue;
		g->hit[i] = 1;
		if (!listed)
			ss_args_add(g, addr);
		listed = 1;
	}
	return 0;
}

/* One line naming the globs that matched nothing, as the list has them. */
static void ss_args_say_unmatched(const struct ss_args_globs *g)
{
	char line[512];
	size_t at = 0, left = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (g->hit[i])
			continue;
		size_t len = strlen(g->pat[i]);
		if (at + len + 8 < sizeof(line) - 24)
			at += (size_t)snprintf(line + at, sizeof(line) - at, "%s'%s'", at ? ", " : "",
					       g->pat[i]);
		else
			left++;
	}
	if (!at)
		return;
	if (left)
		snprintf(line + at, sizeof(line) - at, " and %zu more", left);
	ss_warn("record.args: no instrumented function matches %s", line);
}

/* Before main, after the filter's calibration: names to addresses. */
void ss_args_init(void)
{
	static struct ss_args_globs g;
	char *p = g.text;

	memcpy(g.text, ss_rt.cfg.record_args, sizeof(g.text));
	g.text[sizeof(g.text) - 1] = 0;
	g.n = g.used = 0;
	while (*p && g.n < SS_ARGS_GLOBS) {
		p += strspn(p, ", \t");
		size_t n = strcspn(p, ", \t");
		if (!n)
			break;
		g.hit[g.n] = 0;
		g.pat[g.n++] = p;
		p += n;
		if (*p)
			*p++ = 0;
	}
	if (!g.n)
		return;
#if defined(__x86_64__)
	ss_elfsym_each_function(ss_args_match, &g);
	if (g.used >= SS_ARGS_SLOTS / 2)
		ss_warn("record.args matches more than %d functions; the others keep no arguments",
			SS_ARGS_SLOTS / 2);
	else
		ss_args_say_unmatched(&g);
	ss_hot.args = g.used != 0;
#else
	ss_warn("record.args works on x86-64 only; arguments are not recorded");
#endif
}

/* ------------------------------------------------------------ hook path */

#if defined(__x86_64__)
/* Reached by a tail call from the hooks (hooks.c, ss_hook_enter_go), so
 * [rsp] is the return address into the instrumented function and every
 * callee-saved register still holds its value there.  They are saved,
 * with the caller's sp, in this stub's own frame (rbx rbp r12 r13 r14 r15
 * sp), and ss_hook_enter_args records the call from there: nothing of a
 * capture is kept outside its own stack frame, so a signal handler that
 * records a listed call at any instant of another's capture finds nothing
 * half written, and nested handlers each have their own. */
__asm__(".text\n"
	".globl ss_args_hook_enter\n"
	".hidden ss_args_hook_enter\n"
	".type ss_args_hook_enter,@function\n"
	"ss_args_hook_enter:\n"
	".cfi_startproc\n"
	"	subq $56, %rsp\n"
	".cfi_adjust_cfa_offset 56\n"
	"	movq %rbx, 0(%rsp)\n"
	"	movq %rbp, 8(%rsp)\n"
	"	movq %r12, 16(%rsp)\n"
	"	movq %r13, 24(%rsp)\n"
	"	movq %r14, 32(%rsp)\n"
	"	movq %r15, 40(%rsp)\n"
	"	leaq 64(%rsp), %rax\n" /* the caller's sp: above our 56 bytes
					* and its return address */
	"	movq %rax, 48(%rsp)\n"
	"	movq %rsp, %rdx\n"
	"	call ss_hook_enter_args\n"
	"	addq $56, %rsp\n"
	".cfi_adjust_cfa_offset -56\n"
	"	ret\n"
	".cfi_endproc\n"
	".size ss_args_hook_enter, .-ss_args_hook_enter\n");

/* n words from the program's stack: a plain loop, which the compiler
 * must not turn into a call of memcpy (an ASan-built program's memcpy
 * checks the caller's frame, whose red zones it poisons, and stopped the
 * program at its first listed call).  On the loaded 2-CPU development VM
 * (tests/bench/args.sh, best of 9, 2 runs each, interleaved) a listed
 * call cost +352 and +425 ns with this loop, +300 and +420 with rep
 * movsq, +220 to +379 with memcpy: within the machine's noise. */
#if defined(__clang__)
__attribute__((no_builtin("memcpy")))
#else
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void ss_args_copy(uint64_t *restrict dst, uintptr_t src, size_t n)
{
	const uint64_t *s = (const uint64_t *)src;
	for (size_t i = 0; i < n; i++)
		dst[i] = s[i];
}
#else
void ss_args_hook_enter(void *fn, void *site)
{
	ss_hook_enter_slow(fn, site);
}

static inline void ss_args_copy(uint64_t *dst, uintptr_t src, size_t n)
{
	const volatile uint64_t *s = (const volatile uint64_t *)src;
	for (size_t i = 0; i < n; i++)
		dst[i] = s[i];
}
#endif

/* The payload of one record (format.h, struct ss_args_head): its length
 * in words, filled into out when out is not NULL. */
static size_t ss_args_layout(const uint64_t *regs, struct ss_thread *t, uintptr_t fn,
			     uint64_t *out)
{
	uintptr_t sp = regs[SS_ARGS_NREGS], lo = sp, hi, fp = regs[1];
	uintptr_t w2lo = 0, w2hi = 0;
	size_t n = 4 + SS_ARGS_NREGS;
	/* stepscope-cc keeps frame pointers: the frame is [sp, fp + 16)
	 * and the stack arguments lie above it; a frame of no more than
	 * SS_ARGS_LOW bytes is copied whole with SS_ARGS_FP_ABOVE bytes of
	 * them, anything else as [sp, sp + SS_ARGS_LOW) and around fp */
	if (!(fp & 7) && fp > lo && fp + SS_ARGS_FP_ABOVE - lo <= SS_ARGS_LOW)
		hi = fp + SS_ARGS_FP_ABOVE;
	else
		hi = lo + SS_ARGS_LOW;
	if (hi > t->stack_hi)
		hi = t->stack_hi;
	if (lo < t->stack_lo || lo >= hi)
		lo = hi = 0;
	/* a frame pointer above the first window: -O0 locals below it */
	if (hi && !(fp & 7) && fp + SS_ARGS_FP_ABOVE > hi &&
	    fp + SS_ARGS_FP_ABOVE <= t->stack_hi && fp - sp < (1u << 20)) {
		w2lo = fp - SS_ARGS_FP_BELOW < hi ? hi : fp - SS_ARGS_FP_BELOW;
		w2hi = fp + SS_ARGS_FP_ABOVE;
	}
	unsigned nwin = (hi > lo) + (w2hi > w2lo);
	n += 2 * nwin + (hi - lo) / 8 + (w2hi - w2lo) / 8 + 1;
	if (!out)
		return n;
	/* pc: the return address of the hook call, just below sp */
	struct ss_args_head h = { SS_ARGS_X86_64, SS_ARGS_NREGS, (uint16_t)nwin, fn,
				  ((const uint64_t *)sp)[-1], sp };
	memcpy(out, &h, sizeof(h));
	uint64_t *o = out + 4;
	memcpy(o, regs, SS_ARGS_NREGS * sizeof(*regs));
	o += SS_ARGS_NREGS;
	if (hi > lo) {
		*o++ = lo;
		*o++ = hi - lo;
		ss_args_copy(o, lo, (hi - lo) / 8);
		o += (hi - lo) / 8;
	}
	if (w2hi > w2lo) {
		*o++ = w2lo;
		*o++ = w2hi - w2lo;
		ss_args_copy(o, w2lo, (w2hi - w2lo) / 8);
		o += (w2hi - w2lo) / 8;
	}
	*o = SS_ARGS_END;
	return n;
}

/* Right after fn's ENTER was stored (hooks.c, for a call that came
 * through the stub): its SS_EV_ARGS record, from the registers the stub
 * saved.  The thread's stack bounds were found when it was registered
 * (thread.c); without them (a thread registered before record.args was
 * read, a handler that interrupted the lookup) they are looked up here,
 * by system calls only, and a call whose bounds stay unknown keeps its
 * registers and no stack. */
void ss_args_emit(uintptr_t fn, const uint64_t *regs)
{
	struct ss_thread *t = &ss_tls;
	if (ss_unlikely(!t->stack_hi))
		ss_thread_stack_find(t);
	size_t n = ss_args_layout(regs, t, fn, NULL);
	/* A signal handler that records between the claim and the last
	 * store changes t->pos (before the head: the words stay a PAD) or
	 * moves the thread to a new block (after: the old one may be copied
	 * out without the record); either way the record goes again after
	 * the handler's events, up to 4 times.  The reader keeps the first
	 * ARGS of a call (a copy that made it both times is one). */
	for (int tries = 0; tries < 4; tries++) {
		uint64_t *e, *blk;
		int refilled = 0;
		for (;;) {
			blk = t->blk;
			e = t->pos;
			if (!e || e + 1 + n >= t->end) {
				/* the block is full: the next one takes a
				 * one-word ARGS that says "none" (the reader
				 * ignores it) */
				if (refilled || !e)
					return;
				ss_buf_refill(t, SS_EV_WORD(SS_EV_ARGS, 0));
				refilled = 1;
				continue;
			}
			if (ss_unlikely(e != t->done)) {
				ss_buf_fill(t, e);
				continue;
			}
			if (ss_likely(ss_claim(&t->pos, e, e + 1 + n)))
				break;
		}
		atomic_signal_fence(memory_order_seq_cst);
		uint64_t now = ss_clock_now(), tb = t->tbase;
		atomic_signal_fence(memory_order_seq_cst);
		e[0] = SS_CW_LONG(SS_EV_PAD, n, 0); /* until the head: skip it all */
		atomic_signal_fence(memory_order_seq_cst);
		if (ss_unlikely(t->pos != e + 1 + n))
			continue; /* the capture is in the stub's frame,
				   * untouched by the handler */
		if (ss_unlikely(((now - tb) >> 32) != 0)) {
			atomic_signal_fence(memory_order_seq_cst);
			t->done = e + 1 + n;
			return;
		}
		ss_args_layout(regs, t, fn, e + 1);
		atomic_signal_fence(memory_order_seq_cst);
		e[0] = SS_CW_LONG(SS_EV_ARGS, n, now - tb);
		atomic_signal_fence(memory_order_seq_cst);
		if (ss_likely(t->blk == blk)) {
			if (t->done == e)
				t->done = e + 1 + n;
			return;
		}
	}
}
