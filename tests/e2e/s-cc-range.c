/*
 * s-cc-range.c - annotated code (stepscope.h): ranges and stepscope_step,
 * built through a CMake compiler launcher alone, plain
 * `cc -finstrument-functions` and pkg-config, so that it links without
 * libstepscope.  Prints "recording N" (stepscope_recording() inside the
 * loop: 1 when the runtime is there and records, 0 without it).
 * Calls: main 1, work 3; ranges "outer" 1, "iter" 3; 3 stepscope_step()s.
 */
#include <stdio.h>

#include "fixture.h"
#include "stepscope.h"

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
