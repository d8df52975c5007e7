/*
 * s-names.c - fixture for test-names: a global function, a static one and,
 * when given a library path, a library loaded with dlopen, called and
 * closed again.  Each definition carries an "L:" marker on the line of its
 * name: the test reads the expected line numbers from here.
 * Usage: s-names [LIB.so]
 */
#include <dlfcn.h>
#include <stdio.h>

static __attribute__((noinline)) int st_helper(int x) /* L:st_helper */
{
	__asm__ volatile("" ::: "memory");
	return x * 2;
}

__attribute__((noinline)) int gl_work(int x) /* L:gl_work */
{
	return st_helper(x) + 1;
}

int main(int argc, char **argv) /* L:main */
{
	int s = 0;

	for (int i = 0; i < 3; i++)
		s += gl_work(i);
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*entry)(int);
		if (!h) {
			fprintf(stderr, "s-names: %s\n", dlerror());
			return 1;
		}
		*(void **)&entry = dlsym(h, "dl_entry");
		if (!entry)
			return 1;
		s += entry(s);
		dlclose(h);
	}
#ifdef SS_NAMES_CHANGED
	s += 1000;
#endif
	printf("%d\n", s);
	return 0;
}
