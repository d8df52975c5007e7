/*
 * s-step-lambda.cc - fixture: a step function whose body holds lambdas
 * (issue 44, test-args-list.c): their symbols demangle as
 * "train_step(std::vector<int>&)::{lambda(int, int)#1}::operator()...",
 * which are not train_step.  Three steps.
 */
#include <algorithm>
#include <cstdio>
#include <vector>

__attribute__((noinline)) void train_step(std::vector<int> &v)
{
	auto desc = [](int a, int b) { return a > b; };
	std::sort(v.begin(), v.end(), desc);
	std::for_each(v.begin(), v.end(), [](int &x) { x += 1; });
}

int main()
{
	std::vector<int> v = { 3, 1, 2 };
	for (int i = 0; i < 3; i++)
		train_step(v);
	std::printf("%d\n", v[0]);
	return 0;
}
