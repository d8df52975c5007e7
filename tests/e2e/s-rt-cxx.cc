/*
 * s-rt-cxx.cc - fixture: C++ exceptions thrown through instrumented frames
 * and caught further up, in a loop.  `s-rt-cxx N`:
 *
 *   main -> ss::rt::Worker::run(N) -> N times Worker::catcher(i) and
 *     Worker::quiet(i), each: try level1 -> level2 (a Guard on its
 *     stack) -> level3 -> thrower<int>() throws; the unwinder runs
 *     ~Guard in level2; the handler in catcher calls after_catch(), the
 *     one in quiet calls nothing.
 *   then main -> no_throw() (a Guard constructed and destroyed normally)
 *   and main -> settle().
 *
 * Names are in a namespace, a class, a template and a constructor and
 * destructor, so the test checks demangling too.
 */
#include <cstdio>
#include <cstdlib>

#include "fixture.h"

DEFINE_SINK;

namespace ss {
namespace rt {

struct Boom {
	int v;
};

struct Guard {
	int id;
	NOINLINE explicit Guard(int i) : id(i)
	{
		SINK(i);
	}
	NOINLINE ~Guard()
	{
		SINK(id);
	}
};

template <typename T> NOINLINE void thrower(T v)
{
	SINK(v);
	throw Boom{(int)v};
}

NOINLINE int level3(int i)
{
	thrower<int>(i);
	SINK(i);
	return 0;
}

NOINLINE int level2(int i)
{
	Guard g(i);
	return level3(i) + 1;
}

NOINLINE int level1(int i)
{
	return level2(i) + 1;
}

NOINLINE void after_catch(int v)
{
	SINK(v);
}

class Worker {
public:
	NOINLINE int catcher(int i);
	NOINLINE int quiet(int i);
	NOINLINE void run(int n);
};

int Worker::catcher(int i)
{
	try {
		return level1(i);
	} catch (const Boom &b) {
		after_catch(b.v);
	}
	return -1;
}

/* The handler calls nothing: the next event is quiet's own exit. */
int Worker::quiet(int i)
{
	try {
		return level1(i);
	} catch (const Boom &b) {
		SINK(b.v);
	}
	return -2;
}

void Worker::run(int n)
{
	for (int i = 0; i < n; i++) {
		SINK(catcher(i));
		SINK(quiet(i));
	}
}

NOINLINE int no_throw(int i)
{
	Guard g(i);
	return i + 1;
}

} // namespace rt
} // namespace ss

NOINLINE void settle(void)
{
	SINK(7);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)std::strtol(argv[1], nullptr, 10) : 5;
	ss::rt::Worker w;
	w.run(n);
	SINK(ss::rt::no_throw(n));
	settle();
	std::printf("done\n");
	return 0;
}
