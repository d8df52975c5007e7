/*
 * s-step-cxx.cc - fixture for test-rt-cxx's step.function cases: a C++
 * training loop whose step function has a mangled symbol.  `s-step-cxx N`:
 *
 *   main -> N times train_step(Model*, int) -> update(float),
 *     update(double) and ss::Trainer::step(int).
 *
 * update is overloaded, so "update" alone names two functions.
 */
#include <cstdio>
#include <cstdlib>

#include "fixture.h"

DEFINE_SINK;

struct Model {
	float w;
	double v;
};

NOINLINE void update(float x)
{
	SINK((int)x);
}

NOINLINE void update(double x)
{
	SINK((int)x + 1);
}

namespace ss {
struct Trainer {
	NOINLINE int step(int i);
};

int Trainer::step(int i)
{
	SINK(i);
	return i;
}
} // namespace ss

NOINLINE void train_step(Model *m, int i)
{
	ss::Trainer t;
	update(m->w);
	update(m->v);
	SINK(t.step(i));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)std::strtol(argv[1], nullptr, 10) : 4;
	Model m{1.0f, 2.0};
	for (int i = 0; i < n; i++)
		train_step(&m, i);
	std::printf("done\n");
	return 0;
}
