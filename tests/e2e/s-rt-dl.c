/*
 * s-rt-dl.c - fixture: libraries loaded with dlopen, used and closed again
 * before the program ends.
 *
 *   s-rt-dl lazy|now INNER: with RTLD_LAZY or RTLD_NOW, three rounds, each
 *   in main -> use_lib(): dlopen, FN_entry(INNER) twice (FN_inner INNER
 *   times each), dlclose.  Rounds: ./librtdla.so (dla_*), ./librtdlb.so
 *   (dlb_*), ./librtdla.so again.  Then main -> after_libs().  Prints
 *   "lib PATH ADDR" with the address of FN_entry in each round (the test
 *   says whether a library came back at the same place).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE int use_lib(const char *path, const char *entry, int flags, int inner)
{
	void *h = dlopen(path, flags);
	if (!h) {
		fprintf(stderr, "s-rt-dl: %s\n", dlerror());
		return -1;
	}
	int (*fn)(int) = (int (*)(int))dlsym(h, entry);
	if (!fn) {
		fprintf(stderr, "s-rt-dl: %s\n", dlerror());
		return -1;
	}
	printf("lib %s %p\n", path, (void *)fn);
	for (int i = 0; i < 2; i++)
		SINK(fn(inner));
	return dlclose(h);
}

NOINLINE void after_libs(void)
{
	SINK(1);
}

int main(int argc, char **argv)
{
	int flags = argc > 1 && !strcmp(argv[1], "now") ? RTLD_NOW : RTLD_LAZY;
	int inner = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 10;
	if (use_lib("./librtdla.so", "dla_entry", flags, inner) ||
	    use_lib("./librtdlb.so", "dlb_entry", flags, inner) ||
	    use_lib("./librtdla.so", "dla_entry", flags, inner))
		return 1;
	after_libs();
	return 0;
}
