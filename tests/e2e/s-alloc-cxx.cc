/*
 * s-alloc-cxx.cc - fixture: C++ new and delete under memory.allocations
 * (test-alloc.c test_cxx).  Each of 6 steps (train_step, steps 2..4
 * recorded by the test): make_tensor news a Tensor (sizeof 32) and its
 * float[256] data (1024 bytes); train_step deletes both; grow() pushes 100
 * ints into a std::vector that reserve(64)s first, so it allocates 256
 * then 512 bytes and frees the 256 (libstdc++ doubles the capacity); the
 * vector dies at the end of grow.  Everything is freed in the step it was
 * allocated in.  Prints "tensor 32 data 1024".
 */
#include <cstdio>
#include <vector>

#include "fixture.h"

DEFINE_SINK;

struct Tensor {
	float *data;
	long n, pad[2];
};

NOINLINE Tensor *make_tensor(long n)
{
	Tensor *t = new Tensor;
	t->data = new float[n];
	t->n = n;
	return t;
}

NOINLINE void grow()
{
	std::vector<int> v;
	v.reserve(64);
	for (int i = 0; i < 100; i++)
		v.push_back(i);
	SINK(v[99]);
}

NOINLINE void train_step()
{
	Tensor *t = make_tensor(256);
	SINK(t->data[0] = 1);
	grow();
	delete[] t->data;
	delete t;
}

int main()
{
	for (int s = 0; s < 6; s++)
		train_step();
	std::printf("tensor %zu data %zu\n", sizeof(Tensor), 256 * sizeof(float));
	return 0;
}
