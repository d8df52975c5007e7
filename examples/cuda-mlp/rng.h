/*
 * rng.h - the seeded generator behind the dataset, the split, the shuffles
 * and the initial weights: splitmix64, plus uniform and normal draws.
 *
 * The helpers are tiny and called once per element, so they are marked
 * no_instrument_function: in a stepscope trace they would be thousands of
 * empty slices.  Never: read the clock or the environment (a --seed must
 * give the same run every time).
 */
#ifndef CUDA_EXAMPLE_RNG_H
#define CUDA_EXAMPLE_RNG_H

#include <math.h>
#include <stdint.h>

#define RNG_FN static inline __attribute__((no_instrument_function))

RNG_FN uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
RNG_FN float rng_uniform(uint64_t *state)
{
	return (float)(rng_next(state) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform integer in [0, n), n > 0. */
RNG_FN int rng_below(uint64_t *state, int n)
{
	return (int)(rng_next(state) % (uint64_t)n);
}

/* Standard normal (Box-Muller; one of the pair is thrown away). */
RNG_FN float rng_normal(uint64_t *state)
{
	float u = rng_uniform(state), v = rng_uniform(state);

	if (u < 1e-7f)
		u = 1e-7f;
	return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

#endif /* CUDA_EXAMPLE_RNG_H */
