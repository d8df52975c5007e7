/*
 * rng.h - a tiny seeded random number generator (splitmix64).
 *
 * Every random choice in the example (data, split, shuffles, weights) comes
 * from one of these, so a run is the same for the same --seed.  The helpers
 * are called once per element, so they are kept out of the profile with
 * no_instrument_function: an entry/exit event pair would cost more than
 * the function does.  Never use rand() or the time as a seed here.
 */
#ifndef MLP_RNG_H
#define MLP_RNG_H

#include <math.h>
#include <stdint.h>

#define MLP_TINY __attribute__((no_instrument_function))

struct rng {
	uint64_t state;
};

MLP_TINY static inline void rng_seed(struct rng *r, uint64_t seed)
{
	r->state = seed;
}

MLP_TINY static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
MLP_TINY static inline float rng_uniform(struct rng *r)
{
	return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* uniform integer in [0, n) */
MLP_TINY static inline int rng_below(struct rng *r, int n)
{
	return (int)(rng_next(r) % (uint64_t)n);
}

/* standard normal (Box-Muller) */
MLP_TINY static inline float rng_normal(struct rng *r)
{
	float u1 = rng_uniform(r), u2 = rng_uniform(r);

	if (u1 < 1e-7f)
		u1 = 1e-7f;
	return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530718f * u2);
}

#endif /* MLP_RNG_H */
