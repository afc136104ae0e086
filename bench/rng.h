/* The seeded generator every part of feedbench draws from: sample sizes and payloads (formats),
 * shuffles (sampler), compute-time jitter (accelerators), offsets and names of the write
 * workloads. A header of its own so that none of those parts includes another's for it.
 *
 * splitmix64 (Steele, Lea, Flood 2014): one 64-bit state word, full period, and good enough
 * equidistribution for sizes and shuffles; not a cryptographic generator.
 */
#ifndef FEEDBENCH_RNG_H
#define FEEDBENCH_RNG_H

#include <math.h>
#include <stdint.h>

/* Next value; advances *state. */
static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A state derived from a seed and two coordinates (file, index): the same triple always gives
 * the same stream, neighbouring triples unrelated ones. */
static inline uint64_t rng_mix3(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t s = seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);

	splitmix64(&s);
	return s;
}

/* Uniform integer in [0, n) without modulo bias worth noticing (multiply-shift). n > 0. */
static inline uint64_t rng_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)splitmix64(state) * n) >> 64);
}

/* Standard normal variate (Box-Muller from two uniforms in (0, 1] and [0, 1)). */
static inline double rng_normal(uint64_t *state)
{
	double u1 = ((double)(splitmix64(state) >> 11) + 1.0) / 9007199254740993.0;
	double u2 = (double)(splitmix64(state) >> 11) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

#endif
