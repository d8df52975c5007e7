/*
 * stepscope.h - optional annotations for programs profiled with stepscope.
 *
 * Nothing here is needed to profile a program: building it through
 * stepscope-cc records every instrumented call.  These calls mark training
 * steps and name ranges of code, like torch.profiler's prof.step() and
 * record_function().
 *
 * stepscope-cc and `pkg-config --cflags stepscope` define STEPSCOPE_ENABLED.
 * Without it every call below compiles to nothing, so annotated code builds
 * and runs unchanged without stepscope.  Where this header itself may be
 * missing, include it under __has_include(<stepscope.h>) and define the
 * calls as no-ops when STEPSCOPE_RANGE is left undefined (README.md,
 * "Annotations", has the block to copy).
 */
#ifndef STEPSCOPE_H
#define STEPSCOPE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STEPSCOPE_ENABLED) && STEPSCOPE_ENABLED

/*
 * The functions are weak references, called through the inline helpers
 * below only when some loaded library defines them.  So annotated code
 * links whether or not the link names libstepscope (a CMake compiler
 * launcher without a linker launcher, plain `cc -finstrument-functions`),
 * does nothing when run without the runtime, and records when `stepscope
 * record` preloads it.
 */

/* End the current training step and begin the next one.  The program starts
 * in step 0; the k-th call begins step k.  Use it instead of `step.function`
 * in the config when no single function marks a step. */
__attribute__((weak)) void stepscope_step(void);

/* Open a named range on the calling thread; it shows as a slice named `name`
 * nested in the calls around it.  `name` is copied on first use. */
__attribute__((weak)) void stepscope_range_push(const char *name);

/* Close the innermost range opened on the calling thread. */
__attribute__((weak)) void stepscope_range_pop(void);

/* 1 while the runtime records events (inside an active step), else 0. */
__attribute__((weak)) int stepscope_recording(void);

/* Not for direct use: the calls above go through these (never recorded as
 * calls themselves, and always inlined, so that they never show as a frame
 * of the stack the runtime records when a step begins). */
#define STEPSCOPE__HELPER                                                      \
	__attribute__((no_instrument_function, always_inline, unused)) static inline
STEPSCOPE__HELPER void
stepscope__step(void)
{
	if (stepscope_step)
		stepscope_step();
}
STEPSCOPE__HELPER void
stepscope__range_push(const char *name)
{
	if (stepscope_range_push)
		stepscope_range_push(name);
}
STEPSCOPE__HELPER void
stepscope__range_pop(void)
{
	if (stepscope_range_pop)
		stepscope_range_pop();
}
STEPSCOPE__HELPER int
stepscope__recording(void)
{
	return stepscope_recording ? stepscope_recording() : 0;
}
STEPSCOPE__HELPER int
stepscope__range_begin(const char *name)
{
	stepscope__range_push(name);
	return 0;
}
STEPSCOPE__HELPER void
stepscope__range_end(int *unused)
{
	(void)unused;
	stepscope__range_pop();
}

#define stepscope_step() stepscope__step()
#define stepscope_range_push(name) stepscope__range_push(name)
#define stepscope_range_pop() stepscope__range_pop()
#define stepscope_recording() stepscope__recording()

#define STEPSCOPE__CAT2(a, b) a##b
#define STEPSCOPE__CAT(a, b) STEPSCOPE__CAT2(a, b)
/* A range closed automatically when the enclosing scope ends (GCC, clang). */
#define STEPSCOPE_RANGE(name)                                                  \
	int STEPSCOPE__CAT(stepscope__range_, __LINE__)                        \
		__attribute__((cleanup(stepscope__range_end), unused)) =       \
			stepscope__range_begin(name)

#else /* built without stepscope: everything is a no-op */

static inline void stepscope_step(void) {}
static inline void stepscope_range_push(const char *name) { (void)name; }
static inline void stepscope_range_pop(void) {}
static inline int stepscope_recording(void) { return 0; }
#define STEPSCOPE_RANGE(name) ((void)(name))

#endif

#ifdef __cplusplus
}
#endif

#endif /* STEPSCOPE_H */
