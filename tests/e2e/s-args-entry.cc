/*
 * s-args-entry.cc - fixture: record.args where the value at the hook is
 * easy to get wrong (issue 44, test-args-entry.c).  The callers log each
 * call's arguments to a ledger before it: "shift N K", "pick B".
 *   shift(long n, long k): changes n in its first statement; at gcc -O2
 *     the register that held n holds n + k by the hook's return address,
 *     and only DWARF location views say which value is the entry's
 *   pick(int, int b): an unnamed parameter before a named one
 *   scale(long flops, long n): a parameter named like the key "flops"
 *     (called with flops = 100 + i, n = i + 1, not in the ledger)
 *   none(int, int): no parameter has a name (called with i, i)
 *   s-args-entry LEDGER
 */
#include <cstdio>
#include <cstdlib>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

volatile long sink;

extern "C" NOINLINE long shift(long n, long k)
{
	n += k;
	sink = sink + n;
	for (long i = 0; i < k; i++)
		sink = sink + i * n;
	return n * 3;
}

extern "C" NOINLINE int pick(int, int b)
{
	sink = sink + b;
	return b * 2;
}

extern "C" NOINLINE long scale(long flops, long n)
{
	sink = sink + flops * n;
	return flops * n;
}

extern "C" NOINLINE int none(int, int)
{
	sink = sink + 1;
	return 1;
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (!f)
		return 2;
	long acc = 0;
	for (long i = 0; i < 3; i++) {
		fprintf(f, "shift %ld %ld\n", 10 * i, i + 1);
		acc += shift(10 * i, i + 1);
		fprintf(f, "pick %d\n", (int)i + 1);
		acc += pick(1001 + (int)i, (int)i + 1);
		acc += scale(100 + i, i + 1) + none((int)i, (int)i);
	}
	fclose(f);
	printf("acc %ld\n", acc);
	return 0;
}
