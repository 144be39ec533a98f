/* test_q_split.c: decode.hip's F8 form meets K with q as two e4m3 terms a row (kt_q_split): x = q /
 * s_r, s_r = 2^(E - 7) from the exponent field E of the row's largest |q|, hi = e4m3(x) and lo =
 * e4m3(x - hi), both rounded to nearest even. The claim the kernel rests on, checked over every
 * positive bf16 at every row scale it can get: hi + lo == x exactly from 2^-9 of the row's largest up,
 * and within 2^-17 of it below (an e4m3 subnormal step, halved). The e4m3 rounding here is a search of all 256 codes (runtime's
 * decoder), independent of the hardware's conversion it stands for. */
#include "kt_test.h"
#include "runtime/attn_common.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* the nearest e4m3 value, ties to the even code; saturating at +-448 as cvt .satfinite does */
static double e4m3_rne(double v)
{
    double best = 0.0, dbest = INFINITY;
    int best_code = 0;
    for (int c = 0; c < 256; c++) {
        if ((c & 0x7f) == 0x7f) continue;   /* NaN */
        const double x = kt_attn_e4m3_value((uint8_t)c), d = fabs(x - v);
        if (d < dbest || (d == dbest && (c & 1) == 0 && (best_code & 1) == 1)) {
            best = x;
            dbest = d;
            best_code = c;
        }
    }
    return best;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* the kernel's row scale (decode.hip kt_q_split) from the row's largest |q| */
static void row_scale(float amax, float *s, float *inv)
{
    uint32_t u;
    memcpy(&u, &amax, sizeof u);
    const int e = (int)((u >> 23) & 0xffu);
    const int zero = amax == 0.0f || e <= 7;
    *s = zero ? 1.0f : bits_float((uint32_t)(e - 7) << 23);
    *inv = zero ? 1.0f : bits_float((uint32_t)(254 - e + 7) << 23);
}

int main(void)
{
    /* e4m3's rounding oracle: a few known values */
    KT_CHECK(e4m3_rne(1.0) == 1.0 && e4m3_rne(1.0625) == 1.0 && e4m3_rne(1.1875) == 1.25);
    KT_CHECK(e4m3_rne(500.0) == 448.0 && e4m3_rne(0x1p-10) == 0.0 && e4m3_rne(0x1p-9) == 0x1p-9);

    int wrong = 0, checked = 0;
    double worst_below = 0.0;
    /* row maxima over every binade a bf16 row can have (the largest of 1, 1.5, 1.99 x 2^k) */
    const float mant[3] = {1.0f, 1.5f, 1.9921875f};
    for (int k = -100; k <= 100; k += 7) {
        for (int m = 0; m < 3; m++) {
            const float amax = ldexpf(mant[m], k);
            float s, inv;
            row_scale(amax, &s, &inv);
            KT_CHECK(amax * inv >= 128.0f && amax * inv < 256.0f);   /* under e4m3's 448 */
            KT_CHECK(s * inv == 1.0f);
            /* every positive bf16 up to the row's largest */
            for (uint32_t b = 1; b < 0x7f80u; b++) {
                const float q = bits_float(b << 16);
                if (q > amax) break;
                const double x = (double)q * inv;   /* exact: a power of two */
                const double hi = e4m3_rne(x), lo = e4m3_rne(x - hi);
                checked++;
                if (q >= amax * 0x1p-9f) {
                    wrong += hi + lo != x;
                } else {
                    const double err = fabs(hi + lo - x) / ((double)amax * inv);
                    if (err > worst_below) worst_below = err;
                }
            }
        }
    }
    if (wrong) fprintf(stderr, "q split: %d of %d values above 2^-10 of the row's largest not exact\n", wrong, checked);
    KT_CHECK_INT(wrong, 0);
    fprintf(stderr, "q split: worst error below 2^-9 of the row's largest: %.3g of it\n", worst_below);
    KT_CHECK(worst_below <= 0x1p-17);
    KT_CHECK(checked > 100000);
    KT_TEST_END();
}
