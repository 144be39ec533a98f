/* amd_kernels.hip: fixture kernels for the AMDGPU code-object reader (tests/unit/test_elf_amdgpu.c).
 * Plain clang-19 HIP with no headers, so kernels are declared with attributes, not macros.
 * Each kernel exercises one resource field; make_fixtures.sh compiles this for gfx1201, gfx1100, gfx942. */

/* k_axpy: the baseline, no LDS, no scratch, default 1024-thread bound. */
extern "C" __attribute__((global)) void k_axpy(float a, const float *x, float *y, int n)
{
    int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
    if (i < n) y[i] = a * x[i] + y[i];
}

/* k_lds: 4096 bytes of static LDS and a 256-thread bound (.max_flat_workgroup_size). */
__attribute__((shared)) float kt_tile[1024];
extern "C" __attribute__((global)) __attribute__((amdgpu_flat_work_group_size(1, 256)))
void k_lds(const float *x, float *y)
{
    int t = __builtin_amdgcn_workitem_id_x();
    kt_tile[t] = x[t];
    __builtin_amdgcn_s_barrier();
    y[t] = kt_tile[255 - t] + kt_tile[t ^ 1];
}

/* k_scratch: a runtime-indexed 2 KiB private array cannot live in registers, so it goes to
 * scratch (.private_segment_fixed_size > 0) without any register spill. */
extern "C" __attribute__((global)) void k_scratch(const int *idx, float *y, int n)
{
    float priv[512];
    int t = __builtin_amdgcn_workitem_id_x();
    for (int i = 0; i < 512; i++) priv[i] = (float)(i * t);
    float s = 0;
    for (int i = 0; i < n; i++) s += priv[idx[i] & 511];
    y[t] = s;
}

/* k_spill: 32 live values under a 16-VGPR cap force VGPR spills (.vgpr_spill_count > 0). */
extern "C" __attribute__((global)) __attribute__((amdgpu_num_vgpr(16)))
void k_spill(const float *x, float *y)
{
    int t = __builtin_amdgcn_workitem_id_x();
    float v[32];
#pragma unroll
    for (int i = 0; i < 32; i++) v[i] = x[t + i * 64];
    float s = 0;
#pragma unroll
    for (int i = 0; i < 32; i++) s = s * v[i] + v[(i * 7 + 1) & 31];
#pragma unroll
    for (int i = 0; i < 32; i++) y[t + i * 64] = v[i] * s;
}

/* k_sspill: twelve uniform loop invariants under a tight SGPR cap force SGPR spills.
 * gfx942 needs a looser cap than gfx11/12 or allocation fails outright. */
#if defined(__gfx942__)
#define KT_SSPILL_SGPRS 20
#else
#define KT_SSPILL_SGPRS 16
#endif
extern "C" __attribute__((global)) __attribute__((amdgpu_num_sgpr(KT_SSPILL_SGPRS)))
void k_sspill(const int *x, int *y, int a0, int a1, int a2, int a3, int a4, int a5,
              int a6, int a7, int a8, int a9, int a10, int a11)
{
    int t = __builtin_amdgcn_workitem_id_x();
    int s = 0;
    for (int i = 0; i < x[0]; i++) {
        s = (s * a0 + a1) ^ a2;
        s += a3 * a4 - a5;
        s ^= a6 + a7 * a8;
        s += a9 * a10 + a11 + i;
    }
    y[t] = s + a0 * a11;
}
