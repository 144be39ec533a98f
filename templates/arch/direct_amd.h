/* direct_amd.h: direct fragments (docs/templates.md) from a lane's 16-byte chunks, the same code
 * for the three AMD preludes. Included by gfx12.h, gfx11.h and cdna.h after they define their
 * fragment types and kt_direct_* layout; the chunk-to-element maps are theirs. With s and e
 * compile-time constants after unrolling, each element is a register pick and a shift. */
#ifndef KT_ARCH_DIRECT_AMD_H
#define KT_ARCH_DIRECT_AMD_H

KT_DEV void kt_frag_a_direct(kt_frag_a &f, const kt_v16 (&v)[kt_direct_chunks], int s)
{
#pragma unroll
    for (int e = 0; e < kt_frag_ab_elems; e++) f.v[e] = kt_direct_half(v, kt_direct_a_src(s, e));
}
KT_DEV void kt_frag_b_direct(kt_frag_b &f, const kt_v16 (&v)[kt_direct_chunks], int s)
{
#pragma unroll
    for (int e = 0; e < kt_frag_ab_elems; e++) f.v[e] = kt_direct_half(v, kt_direct_b_src(s, e));
}

#endif
