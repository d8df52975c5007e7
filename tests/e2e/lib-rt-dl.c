/*
 * lib-rt-dl.c - library for s-rt-dl, built twice: with -DLIB_A as
 * librtdla.so (functions dla_entry, dla_inner) and with -DLIB_B as
 * librtdlb.so (dlb_entry, dlb_inner).  The two have the same code and
 * layout, so when one is loaded where the other was, the same addresses
 * mean other functions: the trace must name each call after the library
 * that was loaded when it was made.  FN_entry(n) calls FN_inner n times.
 */
#if defined(LIB_A)
#define FN(x) dla_##x
#elif defined(LIB_B)
#define FN(x) dlb_##x
#else
#error "build with -DLIB_A or -DLIB_B"
#endif

static __attribute__((noinline)) int FN(inner)(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 3;
}

__attribute__((visibility("default"))) int FN(entry)(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += FN(inner)(i);
	return s;
}
