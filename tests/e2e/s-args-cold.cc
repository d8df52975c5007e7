/*
 * s-args-cold.cc - fixture: a C++ method split hot/cold (issue 44,
 * test-args-clone.c test_cxx_cold): Layer::forward throws on a bad shape,
 * so g++ -O2 moves the throw to "Layer::forward(int, int) [clone .cold]"
 * and the method's DWARF has DW_AT_ranges and no low_pc.  main prints each
 * call's own values: "forward this B T" (%p, decimal).
 *
 *   s-args-cold [CALLS]
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

struct Layer {
	float w[16];
	__attribute__((noinline)) float forward(int B, int T);
};

float Layer::forward(int B, int T)
{
	if (B <= 0 || T <= 0)
		throw std::invalid_argument("s-args-cold: bad shape");
	float s = 0;
	for (int i = 0; i < B * T; i++)
		s += w[i % 16];
	return s;
}

int main(int argc, char **argv)
{
	Layer l{};
	int n = argc > 1 ? atoi(argv[1]) : 3;
	float s = 0;

	for (int k = 0; k < n; k++) {
		s += l.forward(4 + k, 64 + 2 * k);
		printf("forward %p %d %d\n", (void *)&l, 4 + k, 64 + 2 * k);
	}
	return s > 1;
}
