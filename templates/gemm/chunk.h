/* chunk.h: 8-element chunks of a 16-bit row straight from global memory into registers, for the
 * weight-streaming GEMMs (skinny.hip, swapab.hip), and the 16-byte test wgmma.hip's copies use.
 * Included after the target's prelude. */
#ifndef KT_GEMM_CHUNK_H
#define KT_GEMM_CHUNK_H

/* A row may be read 16 bytes at a time when the base is 16-byte aligned and every row starts on a
 * 16-byte boundary (ld a multiple of 8 elements). */
KT_DEV bool kt_vec16_ok(const void *p, int ld)
{
    return ((long long)p & 15) == 0 && (ld & 7) == 0;
}

/* row[k..k+8), zero past len; one 16-byte load when vec and the chunk is whole, else element by
 * element (ragged K, unaligned rows). */
KT_DEV kt_v16 kt_chunk(const unsigned short *row, int k, int len, bool vec)
{
    if (vec && k + 8 <= len) return kt_ldg16(row + k);
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        unsigned lo = k + 2 * i < len ? row[k + 2 * i] : 0u;
        unsigned hi = k + 2 * i + 1 < len ? row[k + 2 * i + 1] : 0u;
        w[i] = lo | (hi << 16);
    }
    return kt_v16_make(w[0], w[1], w[2], w[3]);
}

#endif
