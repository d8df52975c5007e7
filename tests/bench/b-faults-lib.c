/*
 * b-faults-lib.c - the shared library half of b-faults built with
 * -DSS_BENCH_LIB_LEAF: one tiny leaf, instrumented like the program.
 */
static volatile unsigned long lib_sink;

__attribute__((noinline)) void lib_leaf(unsigned long i)
{
	lib_sink += i;
	__asm__ volatile("" ::: "memory");
}
