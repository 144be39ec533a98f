/* test_half_convert.c: the host-side bf16/fp16 conversions of tuner/half_convert.h.
 * Known bit patterns, every tie between neighbouring 16-bit values (so every binade, the
 * subnormals and the overflow edge), exhaustive round trips, and, where the compiler has
 * _Float16, a sweep against its conversion as an independent oracle. */
#include "kt_test.h"
#include "../../tuner/half_convert.h"

#include <math.h>
#include <stdint.h>

static int bf16_is_nan(uint16_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x007Fu) != 0; }
static int f16_is_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

static void known_patterns(void)
{
    /* bf16 */
    KT_CHECK_INT(kt_f32_to_bf16(1.0f), 0x3F80);
    KT_CHECK_INT(kt_f32_to_bf16(-2.0f), 0xC000);
    KT_CHECK_INT(kt_f32_to_bf16(0.0f), 0x0000);
    KT_CHECK_INT(kt_f32_to_bf16(-0.0f), 0x8000);
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x3F808000u)), 0x3F80);  /* tie, lsb even: down */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x3F818000u)), 0x3F82);  /* tie, lsb odd: up */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x3F808001u)), 0x3F81);  /* just above the tie */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x3F817FFFu)), 0x3F81);  /* just below the tie */
    KT_CHECK_INT(kt_f32_to_bf16(INFINITY), 0x7F80);
    KT_CHECK_INT(kt_f32_to_bf16(-INFINITY), 0xFF80);
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x7F7FFFFFu)), 0x7F80);  /* FLT_MAX rounds to inf */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x7F7F7FFFu)), 0x7F7F);  /* largest finite bf16 */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x00000001u)), 0x0000);  /* float subnormal: down */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x00018000u)), 0x0002);  /* subnormal tie: even */
    KT_CHECK(bf16_is_nan(kt_f32_to_bf16(NAN)));
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0x7F800001u)), 0x7FC0); /* payload only in low bits */
    KT_CHECK_INT(kt_f32_to_bf16(kt_f32_from_bits(0xFFC00000u)), 0xFFC0); /* sign of a NaN kept */
    KT_CHECK(kt_bf16_to_f32(0x3F80) == 1.0f);
    KT_CHECK(kt_bf16_to_f32(0xC049) == -3.140625f);
    KT_CHECK(isinf(kt_bf16_to_f32(0xFF80)) && kt_bf16_to_f32(0xFF80) < 0);
    KT_CHECK(isnan(kt_bf16_to_f32(0x7FC1)));

    /* fp16 */
    KT_CHECK_INT(kt_f32_to_f16(1.0f), 0x3C00);
    KT_CHECK_INT(kt_f32_to_f16(-2.0f), 0xC000);
    KT_CHECK_INT(kt_f32_to_f16(0.0f), 0x0000);
    KT_CHECK_INT(kt_f32_to_f16(-0.0f), 0x8000);
    KT_CHECK_INT(kt_f32_to_f16(65504.0f), 0x7BFF);                     /* largest finite */
    KT_CHECK_INT(kt_f32_to_f16(65520.0f), 0x7C00);                     /* tie above it: to inf */
    KT_CHECK_INT(kt_f32_to_f16(nextafterf(65520.0f, 0.0f)), 0x7BFF);
    KT_CHECK_INT(kt_f32_to_f16(-65520.0f), 0xFC00);
    KT_CHECK_INT(kt_f32_to_f16(1e10f), 0x7C00);
    KT_CHECK_INT(kt_f32_to_f16(INFINITY), 0x7C00);
    KT_CHECK_INT(kt_f32_to_f16(-INFINITY), 0xFC00);
    KT_CHECK_INT(kt_f32_to_f16(1.0f + 0x1p-11f), 0x3C00);             /* tie, lsb even: down */
    KT_CHECK_INT(kt_f32_to_f16(1.0f + 0x3p-11f), 0x3C02);             /* tie, lsb odd: up */
    KT_CHECK_INT(kt_f32_to_f16(0x1p-14f), 0x0400);                    /* smallest normal */
    KT_CHECK_INT(kt_f32_to_f16(nextafterf(0x1p-14f, 0.0f)), 0x0400);  /* rounds up into the normals */
    KT_CHECK_INT(kt_f32_to_f16(0x1p-24f), 0x0001);                    /* smallest subnormal */
    KT_CHECK_INT(kt_f32_to_f16(-0x1p-24f), 0x8001);
    KT_CHECK_INT(kt_f32_to_f16(0x1p-25f), 0x0000);                    /* half of it: tie to even 0 */
    KT_CHECK_INT(kt_f32_to_f16(nextafterf(0x1p-25f, 1.0f)), 0x0001);
    KT_CHECK_INT(kt_f32_to_f16(0x3p-25f), 0x0002);                    /* 1.5 ulp: tie to even 2 */
    KT_CHECK_INT(kt_f32_to_f16(0x5p-25f), 0x0002);                    /* 2.5 ulp: tie to even 2 */
    KT_CHECK_INT(kt_f32_to_f16(0x1p-26f), 0x0000);
    KT_CHECK_INT(kt_f32_to_f16(kt_f32_from_bits(0x00000001u)), 0x0000);
    KT_CHECK_INT(kt_f32_to_f16(0x3FFp-24f), 0x03FF);                  /* largest subnormal */
    KT_CHECK(f16_is_nan(kt_f32_to_f16(NAN)));
    KT_CHECK_INT(kt_f32_to_f16(kt_f32_from_bits(0x7F800001u)), 0x7E00); /* payload only in low bits */
    KT_CHECK_INT(kt_f32_to_f16(kt_f32_from_bits(0xFFC00000u)), 0xFE00);
    KT_CHECK(kt_f16_to_f32(0x3C00) == 1.0f);
    KT_CHECK(kt_f16_to_f32(0x7BFF) == 65504.0f);
    KT_CHECK(kt_f16_to_f32(0x0001) == 0x1p-24f);
    KT_CHECK(kt_f16_to_f32(0x03FF) == 0x3FFp-24f);
    KT_CHECK(kt_f16_to_f32(0x8200) == -0x1p-15f);
    KT_CHECK_INT(kt_f32_bits(kt_f16_to_f32(0x8000)), 0x80000000u);
    KT_CHECK(isinf(kt_f16_to_f32(0xFC00)) && kt_f16_to_f32(0xFC00) < 0);
    KT_CHECK(isnan(kt_f16_to_f32(0x7E01)));
}

/* Every 16-bit pattern decodes and encodes back to itself (NaNs: stay NaN with the sign kept;
 * quiet NaNs keep their payload). Counting failures keeps one bad pattern from printing 65536 lines. */
static void round_trips(void)
{
    int bad_bf16 = 0, bad_f16 = 0;
    for (uint32_t h = 0; h <= 0xFFFFu; h++) {
        uint16_t b = kt_f32_to_bf16(kt_bf16_to_f32((uint16_t)h));
        if (bf16_is_nan((uint16_t)h)) {
            if (!bf16_is_nan(b) || (b & 0x8000u) != (h & 0x8000u) || ((h & 0x40u) && b != h))
                bad_bf16++;
        } else if (b != h) {
            bad_bf16++;
        }
        uint16_t f = kt_f32_to_f16(kt_f16_to_f32((uint16_t)h));
        if (f16_is_nan((uint16_t)h)) {
            if (!f16_is_nan(f) || (f & 0x8000u) != (h & 0x8000u) || ((h & 0x200u) && f != h))
                bad_f16++;
        } else if (f != h) {
            bad_f16++;
        }
    }
    KT_CHECK_INT(bad_bf16, 0);
    KT_CHECK_INT(bad_f16, 0);
}

/* For every pair of neighbouring finite values lo < hi of one sign: the exact midpoint goes to
 * the one with the even pattern, a float ulp either side goes to the nearer one. The midpoint is
 * exact in float because both formats carry fewer significant bits than float. The last pair
 * (largest finite, next pattern = inf) checks the overflow edge the same way. */
static void all_ties(int is_f16)
{
    uint32_t last = is_f16 ? 0x7BFFu : 0x7F7Fu;
    int bad = 0;
    for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
        for (uint32_t h = 0; h <= last; h++) {
            uint16_t lo = (uint16_t)(sign | h), hi = (uint16_t)(sign | (h + 1));
            double dlo = is_f16 ? kt_f16_to_f32(lo) : kt_bf16_to_f32(lo);
            double dhi;
            if (h == last) /* the would-be next value past the largest finite one */
                dhi = is_f16 ? (sign ? -65536.0 : 65536.0) : (sign ? -0x1p128 : 0x1p128);
            else
                dhi = is_f16 ? kt_f16_to_f32(hi) : kt_bf16_to_f32(hi);
            float mid = (float)((dlo + dhi) / 2);
            /* hi has the larger magnitude: "above" moves away from zero, "below" towards it */
            float below = nextafterf(mid, 0.0f), above = nextafterf(mid, sign ? -INFINITY : INFINITY);
            uint16_t even = (h & 1u) ? hi : lo;
            uint16_t (*cvt)(float) = is_f16 ? kt_f32_to_f16 : kt_f32_to_bf16;
            if (cvt(mid) != even || cvt(below) != lo || cvt(above) != hi)
                bad++;
        }
    }
    KT_CHECK_INT(bad, 0);
}

#ifdef __FLT16_MAX__
/* The compiler's own float -> _Float16 conversion (libgcc soft-fp or F16C, both IEEE RNE) as an
 * oracle, over a stride through all float patterns that reaches every exponent and tail. */
static void against_float16(void)
{
    int bad = 0, compared = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) {
        float f = kt_f32_from_bits((uint32_t)u);
        volatile float vf = f;
        _Float16 h = (_Float16)vf;
        uint16_t want;
        memcpy(&want, &h, sizeof want);
        uint16_t got = kt_f32_to_f16(f);
        compared++;
        if (isnan(f) ? !f16_is_nan(got) : got != want)
            bad++;
    }
    KT_CHECK(compared > 1000000);
    KT_CHECK_INT(bad, 0);
}
#endif

int main(void)
{
    known_patterns();
    round_trips();
    all_ties(0);
    all_ties(1);
#ifdef __FLT16_MAX__
    against_float16();
#endif
    KT_TEST_END();
}
