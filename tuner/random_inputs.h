/* random_inputs.h: the random GEMM inputs every verifier draws (the tuner's worker, the device
 * checks, bench spot checks), so all of them see the same distribution from the same generator.
 * Header-only, C11, libc only. Prefix kt_rand_. */
#ifndef KT_RANDOM_INPUTS_H
#define KT_RANDOM_INPUTS_H

#include <stdint.h>
#include "half_convert.h"

/* splitmix64: a full-period 64-bit sequence from any seed, cheap enough for a GiB of inputs. */
static inline uint64_t kt_rand_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1,1), a multiple of 2^-23 so the float is exact, never zero (zeros hide unwritten
 * and misindexed outputs, and run faster than real data), rounded to bf16 (fp16 = 0) or fp16. */
static inline uint16_t kt_rand_input(int fp16, uint64_t *rng)
{
    for (;;) {
        int32_t r = (int32_t)(kt_rand_splitmix64(rng) >> 40) - (1 << 23);
        float x = (float)r * 0x1p-23f;
        uint16_t h = fp16 ? kt_f32_to_f16(x) : kt_f32_to_bf16(x);
        if (h & 0x7FFFu) return h;
    }
}

#endif
