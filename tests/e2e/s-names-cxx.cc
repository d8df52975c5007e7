/*
 * s-names-cxx.cc - C++ fixture for test-names: a member of a class
 * template in nested namespaces, a function template, a free function in a
 * namespace and a lambda.  "L:" markers give the expected lines.
 */
#include <cstdio>

namespace outer {
namespace inner {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get() const /* L:get */
	{
		return v;
	}
};

__attribute__((noinline)) int twice(int x) /* L:twice */
{
	return 2 * x;
}
} // namespace inner
} // namespace outer

template <int N> __attribute__((noinline)) int addn(int x) /* L:addn */
{
	return x + N;
}

int main() /* L:main */
{
	outer::inner::Box<long> b{3};
	auto lam = [](int x) { return x + 1; }; /* L:lambda */
	int (*volatile fp)(int) = lam;  /* called through a pointer: not inlined */
	int s = (int)b.get() + outer::inner::twice(2) + addn<5>(1) + fp(2);
	std::printf("%d\n", s);
	return 0;
}
