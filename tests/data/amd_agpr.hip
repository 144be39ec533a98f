/* amd_agpr.hip: gfx942-only fixture. An AccVGPR round trip through inline asm makes the
 * allocator use AGPRs, so .agpr_count is nonzero (gfx90a/gfx942 only; RDNA has no AGPRs). */
extern "C" __attribute__((global)) void k_acc(const float *x, float *y)
{
    int t = __builtin_amdgcn_workitem_id_x();
    float a = x[t], b = x[t + 64];
    float acc, out;
    __asm__ volatile("v_accvgpr_write_b32 %0, %1" : "=a"(acc) : "v"(a));
    __asm__ volatile("v_accvgpr_read_b32 %0, %1" : "=v"(out) : "a"(acc));
    y[t] = out + b;
}
