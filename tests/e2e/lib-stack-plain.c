/*
 * lib-stack-plain.c - a shared library built WITHOUT -finstrument-functions
 * (plain cc -shared -fPIC, by test-stack-lib.c), with frame pointers or
 * without them at -O2: code stepscope has no hooks in, that calls back into
 * an instrumented program, like a BLAS or a CUDA runtime calling a host
 * callback.
 *
 *   plain_outer(cb, n)  calls plain_inner(cb, i) for i = 0 .. n-1
 *   plain_inner(cb, i)  calls cb(i)
 *
 * Both are exported (so their frames are named from the library's symbol
 * table, with no debug info) and neither call is a tail call, so each
 * function keeps a frame of its own below the callback.
 */

typedef void (*plain_cb)(int);

volatile long plain_calls;

__attribute__((noinline)) void plain_inner(plain_cb cb, int i)
{
	cb(i);
	plain_calls++; /* after the call: no tail call */
}

__attribute__((noinline)) void plain_outer(plain_cb cb, int n)
{
	for (int i = 0; i < n; i++)
		plain_inner(cb, i);
	plain_calls += n;
}
