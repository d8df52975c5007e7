/*
 * dl.c - dlopen for the runtime's optional libraries (libunwind for
 * record.stack, NVML for the memory poller, CUPTI for the GPU).
 *
 * Design: libstepscope.so calls the C library's dlopen.  libstepscope.a,
 * which stepscope-cc links into -static programs, is built with
 * SS_DL_NONE and never names dlopen: glibc's static dlopen carries a
 * link-time warning ("Using 'dlopen' in statically linked applications
 * requires ..."), printed on every link that names the symbol (even
 * weakly) and fatal under -Wl,--fatal-warnings, where the program alone
 * links without one.  There every ss_dlopen fails and each caller says in
 * its one line what it goes without (docs/stepscope-cc.md).
 *
 * Never: name dlopen in the static archive.
 */
#include <dlfcn.h>

#include "internal.h"

#ifdef SS_DL_NONE

void *ss_dlopen(const char *lib, int flags)
{
	(void)lib;
	(void)flags;
	return NULL;
}

int ss_dl_missing(void)
{
	return 1;
}

const char *ss_dlerror(void)
{
	return "a static program loads no library";
}

#else

void *ss_dlopen(const char *lib, int flags)
{
	return dlopen(lib, flags);
}

int ss_dl_missing(void)
{
	return 0;
}

const char *ss_dlerror(void)
{
	return dlerror();
}

#endif
