/* half_convert.h: float32 <-> bf16 / fp16 on the host, bit-exact, round-to-nearest-even.
 *
 * The device checks round their random inputs with these before uploading them, and compute the
 * float64 reference from the rounded values, so the reference sees exactly the numbers the kernel
 * sees. The kernels' own conversions (templates/arch) are meant to be bit-identical to these.
 *
 * Done on the integer bit patterns, not with casts to _Float16/__bf16, so the result does not
 * depend on the compiler, its flags or the host's rounding mode. NaNs stay NaN (quieted, sign and
 * top payload bits kept); overflow goes to infinity as IEEE RNE says (fp16: |x| >= 65520 -> inf). */
#ifndef KT_HALF_CONVERT_H
#define KT_HALF_CONVERT_H

#include <stdint.h>
#include <string.h>

static inline uint32_t kt_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float kt_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* bf16 is the top half of a float32: round the low 16 bits away, ties to even. */
static inline uint16_t kt_f32_to_bf16(float f)
{
    uint32_t u = kt_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)           /* NaN: truncating could leave an inf */
        return (uint16_t)((u >> 16) | 0x0040u);    /* set the quiet bit */
    /* Adding 0x7FFF rounds up anything above the halfway point; the extra 1 when the kept lsb
     * is odd turns the exact tie upwards (to even). A carry into the exponent is the right
     * answer, and from the largest finite values it gives inf, as RNE requires. */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float kt_bf16_to_f32(uint16_t h)
{
    return kt_f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t kt_f32_to_f16(float f)
{
    uint32_t u = kt_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t ax = u & 0x7FFFFFFFu;

    if (ax > 0x7F800000u)                          /* NaN: quiet it, keep the top payload bits */
        return (uint16_t)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
    if (ax >= 0x477FF000u)                         /* >= 65520, halfway from 65504 to 2^16: inf */
        return (uint16_t)(sign | 0x7C00u);
    if (ax >= 0x38800000u) {                       /* >= 2^-14: a normal fp16 */
        uint32_t r = ax - 0x38000000u;             /* rebias the exponent: 127 - 15 = 112 << 23 */
        r += 0xFFFu + ((r >> 13) & 1u);            /* RNE on the 13 dropped bits, as for bf16 */
        return (uint16_t)(sign | (r >> 13));
    }
    /* Below 2^-14: an fp16 subnormal m * 2^-24. With the implicit bit, the float is
     * mant * 2^(e-150), so m = mant * 2^(e-126) = mant >> (126 - e), rounded to nearest even. */
    uint32_t e = ax >> 23;
    if (e < 102)                                   /* < 2^-25: under half the smallest subnormal */
        return sign;
    uint32_t mant = (ax & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - e;                      /* 14 .. 24 */
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;                                       /* q = 0x400 is 2^-14, the smallest normal */
    return (uint16_t)(sign | q);
}

static inline float kt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    uint32_t u;

    if (e == 0x1F) {                               /* inf, or NaN with its payload kept */
        u = sign | 0x7F800000u | (m << 13);
    } else if (e != 0) {                           /* normal */
        u = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0) {                           /* signed zero */
        u = sign;
    } else {                                       /* subnormal m * 2^-24: normalize it */
        uint32_t fe = 113;                         /* float exponent of 2^-14 */
        while (!(m & 0x400u)) {
            m <<= 1;
            fe--;
        }
        u = sign | (fe << 23) | ((m & 0x3FFu) << 13);
    }
    return kt_f32_from_bits(u);
}

#endif
