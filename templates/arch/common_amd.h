/* common_amd.h: the part of the kernel language the three AMD preludes (gfx12.h, gfx11.h,
 * cdna.h) share. Included by them only; a template includes its target's prelude.
 *
 * Two compilers read this file: Debian's clang-19 with -nogpuinc (no HIP headers, so nothing
 * like __global__ or threadIdx exists) and hipcc (ROCm 5.2, clang-15), which force-includes the
 * real HIP headers. So everything is spelled with clang attributes and __builtin_amdgcn_*
 * builtins under kt_/KT_ names of our own: nothing here depends on, or collides with, what the
 * HIP headers define.
 *
 * With KT_LAYOUT_ONLY defined (the host test tests/unit/test_fragment_layouts.cpp) only the
 * host-portable integer helpers below are compiled. */
#ifndef KT_ARCH_COMMON_AMD_H
#define KT_ARCH_COMMON_AMD_H

#ifdef KT_LAYOUT_ONLY
#define KT_LAYOUT_FN static constexpr inline
#else
#define KT_LAYOUT_FN static constexpr inline __attribute__((host, device))
#endif

/* float32 bits -> bf16 bits, round to nearest even; NaN stays NaN (quiet bit set, sign and top
 * payload kept). Bit-identical to kt_f32_to_bf16 in tuner/half_convert.h. gfx11/gfx12
 * have no bf16 convert instruction at all, so this is the conversion on every AMD target. */
KT_LAYOUT_FN unsigned short kt_bf16_bits_rne(unsigned int u)
{
    return (u & 0x7FFFFFFFu) > 0x7F800000u
               ? (unsigned short)((u >> 16) | 0x0040u)
               : (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

#ifndef KT_LAYOUT_ONLY

/* KT_DEVICE: a device function always inlined into the kernel; KT_DEV adds internal linkage
 * (explicit template specializations take KT_DEVICE: they may not repeat the storage class). */
#define KT_DEVICE inline __attribute__((device, always_inline))
#define KT_DEV static KT_DEVICE
#define KT_SHARED __attribute__((shared))
/* extern "C", by-value argument struct, and the exact block size as the flat workgroup bound so
 * the register allocator may use everything a wave of that block size can have. */
#define KT_KERNEL(name, threads) \
    extern "C" __attribute__((global, amdgpu_flat_work_group_size(1, (threads)))) void name
/* NVIDIA's resident-blocks bound has no counterpart the recipes use here: the recipes keep blocks 0 */
#define KT_KERNEL_MIN_BLOCKS(name, threads, blocks) KT_KERNEL(name, threads)

/* Vector views of 16-bit arrays (LDS tiles, A, W): may_alias, since the same bytes are written
 * as one type and read as another. */
typedef unsigned int kt_u32x4 __attribute__((ext_vector_type(4), may_alias));
typedef short kt_s16x4 __attribute__((ext_vector_type(4), may_alias));
typedef short kt_s16x8 __attribute__((ext_vector_type(8), may_alias));
typedef short kt_s16x16 __attribute__((ext_vector_type(16)));
typedef _Float16 kt_h16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 kt_h16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 kt_h16x16 __attribute__((ext_vector_type(16)));
typedef float kt_f32x4 __attribute__((ext_vector_type(4)));
typedef float kt_f32x8 __attribute__((ext_vector_type(8)));

/* ---- ids. Kernels are launched with 1-D blocks, so lane and wave follow from the flat id;
 * readfirstlane tells the compiler the wave id is wave-uniform (scalar address math). ---- */
KT_DEV int kt_thread_id(void) { return (int)__builtin_amdgcn_workitem_id_x(); }
KT_DEV int kt_block_id_x(void) { return (int)__builtin_amdgcn_workgroup_id_x(); }
KT_DEV int kt_block_id_y(void) { return (int)__builtin_amdgcn_workgroup_id_y(); }
KT_DEV int kt_block_id_z(void) { return (int)__builtin_amdgcn_workgroup_id_z(); }
/* the dispatch packet's grid size is in work-items */
KT_DEV int kt_grid_blocks_x(void) { return (int)(__builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x()); }
KT_DEV int kt_grid_blocks_y(void) { return (int)(__builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y()); }
KT_DEV int kt_lane_id(void) { return kt_thread_id() & (KT_WAVE - 1); }
KT_DEV int kt_wave_id(void) { return __builtin_amdgcn_readfirstlane(kt_thread_id() / KT_WAVE); }

/* Workgroup barrier: LDS writes before it are visible after. The barriers order LDS only; global
 * memory handed between blocks has its own fences (kt_fence_device). A prelude may give the
 * instructions (KT_AMD_BARRIER_ASM, gfx11 and gfx12): there the workgroup-scope fences that
 * __syncthreads has also wait for every global load in flight (WGP mode, and gfx12 even in CU
 * mode; seen in clang 19's ISA), which drains a register prefetch at each barrier. The asm waits
 * for this wave's LDS operations only, and its memory clobber keeps the compiler from moving
 * memory accesses across it. */
KT_DEV void kt_barrier(void)
{
#ifdef KT_AMD_BARRIER_ASM
    asm volatile(KT_AMD_BARRIER_ASM ::: "memory");
#else
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
#endif
}

/* the wave's LDS writes seen by its other lanes' reads after it: a wave's LDS operations run in
 * order, so only the compiler must keep them so */
KT_DEV void kt_wave_sync(void)
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

/* Butterfly shuffle through ds_bpermute (byte addresses); lane ^ mask stays inside the wave. */
KT_DEV float kt_shfl_xor(float v, int mask)
{
    int src = (kt_lane_id() ^ mask) << 2;
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src, __builtin_bit_cast(int, v)));
}

/* 2^x, fp32, for softmax: llvm.exp2 (v_exp_f32 with the backend's denormal range handling; -inf
 * gives +0). Not __builtin_amdgcn_exp2f: hipcc 5.2's clang 15 (gfx90a here) does not have it. */
KT_DEV float kt_exp2(float x) { return __builtin_exp2f(x); }

/* ---- cross-block handoff (split-K reduced in the launch, templates/abi/gemm.h): writes made
 * visible device-wide before a counter bump, and loads that read what other blocks wrote ---- */
KT_DEV void kt_fence_device(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
KT_DEV unsigned kt_atomic_add_device(unsigned *p, unsigned v)
{
    return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
KT_DEV float kt_load_coherent(const float *p) { return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
KT_DEV unsigned short kt_load_coherent_u16(const unsigned short *p)
{
    return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

/* ---- 16-bit storage types and their conversions ---- */
struct kt_bf16 { unsigned short bits; };
struct kt_f16 { unsigned short bits; };

KT_DEV float kt_to_float(kt_bf16 h) { return __builtin_bit_cast(float, (unsigned int)h.bits << 16); }
KT_DEV float kt_to_float(kt_f16 h) { return (float)__builtin_bit_cast(_Float16, h.bits); }
template <class T> KT_DEV T kt_from_float(float f);
template <> KT_DEVICE kt_bf16 kt_from_float<kt_bf16>(float f)
{
    return kt_bf16{kt_bf16_bits_rne(__builtin_bit_cast(unsigned int, f))};
}
/* v_cvt_f16_f32 rounds by the MODE register, round-to-nearest-even in every HIP kernel, and
 * keeps fp16 denormals (the f16 denormal mode is preserve by default). */
template <> KT_DEVICE kt_f16 kt_from_float<kt_f16>(float f)
{
    return kt_f16{__builtin_bit_cast(unsigned short, (_Float16)f)};
}

/* ---- 16-byte moves (global <-> registers <-> LDS); callers guarantee 16-byte alignment ---- */
typedef kt_u32x4 kt_v16;
KT_DEV kt_v16 kt_v16_make(unsigned a, unsigned b, unsigned c, unsigned d)
{
    kt_v16 v = {a, b, c, d};
    return v;
}
KT_DEV kt_v16 kt_ldg16(const void *p) { return *(const kt_v16 *)p; }
KT_DEV void kt_sts16(void *p, kt_v16 v) { *(kt_v16 *)p = v; }
KT_DEV unsigned kt_v16_word(kt_v16 v, int i) { return v[i]; }

/* Half i (0..8*chunks-1) of a lane's direct chunks; with i a compile-time constant it folds to a
 * register pick and a shift. */
KT_DEV short kt_direct_half(const kt_v16 *v, int i) { return (short)(v[i / 8][(i % 8) / 2] >> (16 * (i % 2))); }

#endif /* KT_LAYOUT_ONLY */
#endif
