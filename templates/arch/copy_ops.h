/* copy_ops.h: the block's LDS given at launch, 16-byte copies global -> LDS that hold no registers
 * while in flight, and the L2 prefetch (included after the prelude, by the templates that move
 * data so: attn/decode.hip, attn/prefill.hip and gdn/prefill.hip through arch/prefill_ops.h,
 * gdn/decode.hip).
 *   KT_DYNAMIC_SHARED(T, name)   the block's LDS, all of it given at launch (sm_90 gives a block
 *                                more than 48 KiB only so);
 *   kt_dynamic_shared_fits(n)    whether the launch gave at least n bytes (a kernel returns
 *                                before touching LDS it was not given);
 *   KT_ASYNC_COPY                1 where 16 bytes go global -> LDS without registers (cp.async,
 *                                sm_80 and later); AMD's gfx11 / gfx12 have no such copy: there
 *                                the issue does nothing and a template must not call it;
 *   kt_lds_addr(p)               the LDS address of p (computed once, offsets added as integers);
 *   kt_copy16_async(addr, src)   the issue, 16-byte aligned both sides, not kept in L1;
 *   kt_copy_commit()             closes the thread's group of copies (an empty group is legal);
 *   kt_copy_wait()               waits for all of the thread's groups;
 *   kt_copy_wait_pending<N>()    waits until at most N of its newest groups are in flight;
 *   kt_prefetch_l2(p)            p's line brought into L2 ahead of its loads, no register held
 *                                (NVIDIA); kt_has_l2_prefetch says whether the target has such an
 *                                instruction (AMD: none that fills L2 alone: the call does nothing).
 * A copy is visible to its own thread after the wait, to the block after a barrier too. */
#ifndef KT_ARCH_COPY_OPS_H
#define KT_ARCH_COPY_OPS_H

#if defined(KT_ARCH_SM90_H)
#define KT_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
KT_DEV bool kt_dynamic_shared_fits(unsigned bytes)
{
    unsigned n;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    return n >= bytes;
}
#define KT_ASYNC_COPY 1
KT_DEV unsigned kt_lds_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
KT_DEV void kt_copy16_async(unsigned lds, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(lds), "l"(src) : "memory");
}
KT_DEV void kt_copy_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
KT_DEV void kt_copy_wait(void) { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
template <int N> KT_DEV void kt_copy_wait_pending(void) { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
KT_DEV void kt_prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
constexpr bool kt_has_l2_prefetch = true;
#else
#define KT_DYNAMIC_SHARED(type, name) extern __attribute__((shared)) __attribute__((aligned(16))) type name[]
/* the dispatch packet's group_segment_size (static + dynamic LDS): its eighth dword */
KT_DEV bool kt_dynamic_shared_fits(unsigned bytes)
{
    const __attribute__((address_space(4))) unsigned *pk = (const __attribute__((address_space(4))) unsigned *)__builtin_amdgcn_dispatch_ptr();
    return pk[7] >= bytes;
}
#define KT_ASYNC_COPY 0
KT_DEV unsigned kt_lds_addr(const void *) { return 0u; }
KT_DEV void kt_copy16_async(unsigned, const void *) {}
KT_DEV void kt_copy_commit(void) {}
KT_DEV void kt_copy_wait(void) {}
template <int N> KT_DEV void kt_copy_wait_pending(void) {}
KT_DEV void kt_prefetch_l2(const void *p) { __builtin_prefetch(p, 0, 1); }
constexpr bool kt_has_l2_prefetch = false;   /* the builtin emits nothing into L2 alone */
#endif

#endif
