/*
 * s-cc-range.c - annotated code (stepscope.h): ranges and stepscope_step,
 * built through a CMake compiler launcher alone, plain
 * `cc -finstrument-functions` and pkg-config, so that it links without
 * libstepscope.  Prints "recording N" (stepscope_recording() inside the
 * loop: 1 when the runtime is there and records, 0 without it).
 * Calls: main 1, work 3; ranges "outer" 1, "iter" 3; 3 stepscope_step()s.
 * It includes stepscope.h as README.md says to (__has_include, no-op
 * macros where it is missing), so plain `cc s-cc-range.c` builds too.
 */
#include <stdio.h>

#include "fixture.h"

/* the guarded include README.md documents: built with no -I and no
 * stepscope installed, the annotations compile to nothing */
#if defined(__has_include)
#if __has_include(<stepscope.h>)
#include <stepscope.h>
#endif
#endif
#ifndef STEPSCOPE_RANGE
#define STEPSCOPE_RANGE(name) ((void)(name))
#define stepscope_step() ((void)0)
#define stepscope_range_push(name) ((void)(name))
#define stepscope_range_pop() ((void)0)
#define stepscope_recording() 0
#endif

DEFINE_SINK;

static NOINLINE int work(int x)
{
	STEPSCOPE_RANGE("iter");
	return SINK(x * 3);
}

int main(void)
{
	int rec = 0;
	stepscope_range_push("outer");
	for (int i = 0; i < 3; i++) {
		work(i);
		rec |= stepscope_recording();
		stepscope_step();
	}
	stepscope_range_pop();
	printf("recording %d sink %ld\n", rec, (long)fixture_sink);
	return 0;
}
