/* rng.h: a small seeded generator (splitmix64). No hidden global state: callers own the
 * state, and every seed used in a measurement is recorded with its results. */
#ifndef UTIL_RNG_H
#define UTIL_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s;
} rng_state;

static inline void rng_seed(rng_state *r, uint64_t seed) { r->s = seed; }

static inline uint64_t rng_u64(rng_state *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n), n > 0. */
static inline uint32_t rng_below(rng_state *r, uint32_t n) { return (uint32_t)(rng_u64(r) % n); }

/* Uniform float in [0, 1). */
static inline float rng_unit(rng_state *r) { return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f); }

#endif
