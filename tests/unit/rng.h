/* rng.h — a deterministic generator for the unit tests, so that failures reproduce
 * (xorshift64*). */
#ifndef SRD_TEST_RNG_H
#define SRD_TEST_RNG_H
#include <stdint.h>

typedef struct Rng {
    uint64_t s;
} Rng;

static inline uint64_t rng_next(Rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [lo, hi). */
static inline double rng_uniform(Rng *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in 0 .. n-1. */
static inline int rng_int(Rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

#endif
