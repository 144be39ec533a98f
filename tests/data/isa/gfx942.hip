/* Fixture kernels for tests/unit/test_isa_stats.c (gfx942). kloops has two loops: the K loop
 * (4 MFMA per iteration) and a wider epilogue loop with one MFMA and much more VALU work, so
 * "widest backward branch" and "most MFMA" pick different loops. clang also lays out a backward
 * jump there that closes no cycle (the zero-trip path), which must not count as a loop. */
typedef _Float16 v4h __attribute__((ext_vector_type(4)));
typedef float v4f __attribute__((ext_vector_type(4)));

extern "C" __attribute__((global)) void kloops(const v4h *a, const v4h *b, v4f *c, const float *s,
                                               int ksteps, int nepi)
{
    __attribute__((shared)) v4h sa[64];
    int lane = __builtin_amdgcn_workitem_id_x();
    v4f acc = {};
#pragma clang loop unroll(disable)
    for (int k = 0; k < ksteps; k++) {
        sa[lane] = a[k * 64 + lane];
        __builtin_amdgcn_s_barrier();
        v4h fa = sa[lane ^ 1], fb = b[k * 64 + lane];
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fa, fb, acc, 0, 0, 0);
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fb, fa, acc, 0, 0, 0);
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fa, fa, acc, 0, 0, 0);
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fb, fb, acc, 0, 0, 0);
        __builtin_amdgcn_s_barrier();
    }
#pragma clang loop unroll(disable)
    for (int e = 0; e < nepi; e++) {
        float x = s[e * 64 + lane];
        for (int i = 0; i < 4; i++) acc[i] = __builtin_fmaf(acc[i], x, x * x) / (1.0f + x);
        v4h h = {(_Float16)acc[0], (_Float16)acc[1], (_Float16)acc[2], (_Float16)acc[3]};
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(h, h, acc, 0, 0, 0);
    }
    c[lane] = acc;
}

/* A second kernel in the same code object, so selection by name is exercised. */
extern "C" __attribute__((global)) void kplain(float *p)
{
    int lane = __builtin_amdgcn_workitem_id_x();
    p[lane] = p[lane] * 2.0f + 1.0f;
}
