/* Fixture kernel for tests/unit/test_isa_stats.c (gfx1201): one wave, A/B fragments staged
 * through LDS, a K loop with two WMMA per iteration. Header-less HIP: clang builtins only. */
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef float v8f __attribute__((ext_vector_type(8)));

extern "C" __attribute__((global)) void k(const v8h *a, const v8h *b, v8f *c, int ksteps)
{
    __attribute__((shared)) v8h sa[32], sb[32];
    int lane = __builtin_amdgcn_workitem_id_x();
    v8f acc = {};
    for (int s = 0; s < ksteps; s++) {
        sa[lane] = a[s * 32 + lane];
        sb[lane] = b[s * 32 + lane];
        __builtin_amdgcn_s_barrier();
        v8h fa = sa[lane ^ 1], fb = sb[lane ^ 2];
        acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(fa, fb, acc);
        acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(fb, fa, acc);
        __builtin_amdgcn_s_barrier();
    }
    c[lane] = acc;
}
