/*
 * test-recursion.c - end to end: s-recursion (naive fib, is_even/is_odd,
 * a 3000-deep chain) at gcc/clang -O0/-O2.  Exact call counts and depths are
 * computed here from the same recurrences the fixture uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

enum { FIB_N = 15, EVEN_N = 25, DEEP_N = 3000 };

/* Calls fib(n) makes, itself included. */
static size_t fib_calls(int n)
{
	return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2);
}

/* Frames of fib on the stack at the deepest point of fib(n). */
static int fib_depth(int n)
{
	if (n < 2)
		return 1;
	int a = fib_depth(n - 1), b = fib_depth(n - 2);
	return 1 + (a > b ? a : b);
}

/* Calls of is_even and is_odd made by is_even(n). */
static void parity_calls(unsigned n, size_t *even, size_t *odd)
{
	*even = *odd = 0;
	int in_even = 1;
	for (;;) {
		if (in_even)
			(*even)++;
		else
			(*odd)++;
		if (n == 0)
			return;
		n--;
		in_even = !in_even;
	}
}

static void test_recursion(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char args[64];
	snprintf(args, sizeof(args), "%d %d %d", FIB_N, EVEN_N, DEEP_N);
	struct ss_e2e_trace *tr = ss_e2e_profile(t, "recursion", NULL, args);

	/* The fixture computed what we think it computed. */
	SS_E2E_CHECK(t, strstr(t->out, "fib(15) = 610") != NULL,
		     "fixture output: expected \"fib(15) = 610\", got:\n%s",
		     t->out);

	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);

	size_t nfib = fib_calls(FIB_N);
	SS_E2E_EXPECT_CALLS(t, tr, "fib", 0, nfib);
	int want_depth = fib_depth(FIB_N);
	int got_depth = ss_e2e_max_chain(tr, "fib");
	SS_E2E_CHECK(t, got_depth == want_depth,
		     "deepest fib chain: expected %d, got %d", want_depth,
		     got_depth);
	/* every fib but the first is directly inside a fib */
	size_t fib_in_fib = 0, fib_in_main = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "fib") != 0)
			continue;
		const char *p = ss_e2e_parent_name(tr, s);
		fib_in_fib += p && !strcmp(p, "fib");
		fib_in_main += p && !strcmp(p, "main");
	}
	SS_E2E_CHECK(t, fib_in_main == 1 && fib_in_fib == nfib - 1,
		     "fib parents: expected 1 in main and %zu in fib, got %zu "
		     "and %zu",
		     nfib - 1, fib_in_main, fib_in_fib);

	size_t even, odd;
	parity_calls(EVEN_N, &even, &odd);
	SS_E2E_EXPECT_CALLS(t, tr, "is_even", 0, even);
	SS_E2E_EXPECT_CALLS(t, tr, "is_odd", 0, odd);
	SS_E2E_EXPECT_INSIDE(t, tr, "is_odd", "is_even");
	int chain = ss_e2e_max_chain(tr, "is_even");
	SS_E2E_CHECK(t, (size_t)chain == even,
		     "is_even frames on the deepest stack: expected %zu, got %d",
		     even, chain);

	SS_E2E_EXPECT_CALLS(t, tr, "down", 0, DEEP_N + 1);
	chain = ss_e2e_max_chain(tr, "down");
	SS_E2E_CHECK(t, chain == DEEP_N + 1,
		     "deepest down chain: expected %d, got %d", DEEP_N + 1,
		     chain);

	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0,
			    1 + nfib + even + odd + DEEP_N + 1);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_recursion),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
