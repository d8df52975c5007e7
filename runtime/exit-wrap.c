/*
 * exit-wrap.c - _exit and _Exit, which end the process without running
 * its destructors: what only the runtime's memory holds is saved first.
 * The events are in the trace file already (buffer.c, ring.c); the context
 * switches the kernel wrote into the threads' perf rings since the
 * background thread last read them are not (record.sched, sched.c), so
 * they are read here.  Then the process ends as glibc's _exit does, with
 * exit_group.
 *
 * Only in libstepscope.so (preloaded or linked): a static program calls
 * libc's own.  exit() does not come here (glibc calls its internal _exit),
 * nor does a raw exit_group or a fatal signal: the trace says those, as
 * before, by what it lacks.  Never: allocate, wait more than the 50 ms
 * sched.c allows, or touch anything in a vfork child, which shares the
 * parent's memory (sched.c checks the pid).
 */
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>

#include "internal.h"

SS_EXPORT void _exit(int status)
{
	ss_sched_exit_now();
	for (;;)
		syscall(SYS_exit_group, status);
}

SS_EXPORT void _Exit(int status)
{
	_exit(status);
}
