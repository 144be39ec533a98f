/* sm90_async.h: Hopper's asynchronous units for the sm_90a-only templates (gemm/wgmma.hip):
 * cp.async (global -> shared without registers, zero-filling what it does not read), the
 * warpgroup matrix instruction wgmma.mma_async reading both operands from shared memory through
 * 64-bit matrix descriptors, and the fences that order them. Included after arch/sm90.h.
 *
 * Shared-memory operand layout (K-major, what the descriptors below describe): a tile of R rows of
 * RB = 32, 64 or 128 bytes (16, 32 or 64 16-bit elements of K), rows consecutive, 16-byte chunk c
 * of row r stored at chunk c ^ ((r * RB / 128) % (RB / 16)) of its row (the hardware's RB-byte
 * swizzle: address bits 4.. XORed with bits 7..), the tile based on a multiple of 8 * RB bytes.
 * 8 rows make one swizzle atom; atoms follow each other every 8 * RB bytes (the descriptor's
 * stride byte offset). A k16 slice of the tile starts 32 bytes further into the atom's rows. */
#ifndef KT_ARCH_SM90_ASYNC_H
#define KT_ARCH_SM90_ASYNC_H

/* Byte offset of 16-byte chunk c of row r in a swizzled tile of rb-byte rows. */
KT_DEV unsigned kt_swz_offset(int r, int c, int rb)
{
    return (unsigned)(r * rb + ((c ^ ((r * rb >> 7) & (rb / 16 - 1))) << 4));
}

KT_DEV unsigned kt_smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* 16 bytes from global src to shared dst; bytes src_bytes..15 are written as zeros and src is not
 * read past src_bytes (0 reads nothing, but src must still be a valid address). .cg: the operands
 * are streamed through L2, not kept in L1. */
KT_DEV void kt_cp_async16(unsigned dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
/* 16 bytes from global src to shared dst, all of them read. */
KT_DEV void kt_cp_async16_whole(unsigned dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
}
KT_DEV void kt_cp_async_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kPending> KT_DEV void kt_cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;" :: "n"(kPending) : "memory");
}
KT_DEV void kt_sts16_addr(unsigned dst, kt_v16 v)
{
    asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};" :: "r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
/* Shared memory written by this thread (cp.async, st.shared) becomes visible to the async proxy
 * (wgmma's operand reads) once a barrier follows. */
KT_DEV void kt_fence_proxy_async(void) { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

/* mbarrier objects (8 bytes of shared memory at addr) for the warp-specialized template
 * (gemm/wgmma_ws.hip). A phase completes when `count` arrivals have been made; waits name the
 * parity of the phase they wait for (a fresh barrier counts as having completed the phase of
 * parity 1). Initialisation is made visible to the block by a barrier. */
KT_DEV void kt_mbar_init(unsigned addr, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(addr), "r"(count) : "memory");
}
KT_DEV void kt_mbar_arrive(unsigned addr)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(addr) : "memory");
}
/* The arrival is made by the hardware once every cp.async this thread issued before it has
 * landed; .noinc: it is one of the `count` the barrier was made with. */
KT_DEV void kt_mbar_arrive_cp_async(unsigned addr)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(addr) : "memory");
}
KT_DEV void kt_mbar_wait(unsigned addr, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "r"(parity) : "memory");
    } while (!done);
}

/* Matrix descriptor of a K-major swizzled tile at shared address addr (layout above): start
 * address >> 4 in bits 0-13, leading byte offset (unused by swizzled K-major; 1) in 16-29, stride
 * byte offset 8 * rb >> 4 in 32-45, base offset 0 (tiles are atom-aligned) in 49-51, swizzle mode
 * in 62-63 (1: 128 B, 2: 64 B, 3: 32 B). */
KT_DEV unsigned long long kt_wgmma_desc(unsigned addr, int rb)
{
    const unsigned long long mode = rb == 128 ? 1ull : rb == 64 ? 2ull : 3ull;
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) |
           ((unsigned long long)((8 * rb) >> 4) << 32) | (mode << 62);
}

KT_DEV void kt_wgmma_fence(void) { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
KT_DEV void kt_wgmma_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int kPending> KT_DEV void kt_wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(kPending) : "memory");
}
/* Keeps the compiler from moving accumulator reads or writes across a wgmma fence or wait. */
template <int kN> KT_DEV void kt_wgmma_fence_acc(float (&d)[kN])
{
#pragma unroll
    for (int i = 0; i < kN; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* The instruction names its N/2 accumulators one by one (operands %0 .. %N/2-1, the two
 * descriptors after them), so the operand text is assembled from blocks of four numbers
 * (KT_WG_R4_<first>, each after the first led by a comma) and the constraint list from
 * KT_WG_ACC<count>(d, first). */
#define KT_WG_R4_0 "%0,%1,%2,%3"
#define KT_WG_R4_4 ",%4,%5,%6,%7"
#define KT_WG_R4_8 ",%8,%9,%10,%11"
#define KT_WG_R4_12 ",%12,%13,%14,%15"
#define KT_WG_R4_16 ",%16,%17,%18,%19"
#define KT_WG_R4_20 ",%20,%21,%22,%23"
#define KT_WG_R4_24 ",%24,%25,%26,%27"
#define KT_WG_R4_28 ",%28,%29,%30,%31"
#define KT_WG_R4_32 ",%32,%33,%34,%35"
#define KT_WG_R4_36 ",%36,%37,%38,%39"
#define KT_WG_R4_40 ",%40,%41,%42,%43"
#define KT_WG_R4_44 ",%44,%45,%46,%47"
#define KT_WG_R4_48 ",%48,%49,%50,%51"
#define KT_WG_R4_52 ",%52,%53,%54,%55"
#define KT_WG_R4_56 ",%56,%57,%58,%59"
#define KT_WG_R4_60 ",%60,%61,%62,%63"
#define KT_WG_R4_64 ",%64,%65,%66,%67"
#define KT_WG_R4_68 ",%68,%69,%70,%71"
#define KT_WG_R4_72 ",%72,%73,%74,%75"
#define KT_WG_R4_76 ",%76,%77,%78,%79"
#define KT_WG_R4_80 ",%80,%81,%82,%83"
#define KT_WG_R4_84 ",%84,%85,%86,%87"
#define KT_WG_R4_88 ",%88,%89,%90,%91"
#define KT_WG_R4_92 ",%92,%93,%94,%95"
#define KT_WG_R4_96 ",%96,%97,%98,%99"
#define KT_WG_R4_100 ",%100,%101,%102,%103"
#define KT_WG_R4_104 ",%104,%105,%106,%107"
#define KT_WG_R4_108 ",%108,%109,%110,%111"
#define KT_WG_R4_112 ",%112,%113,%114,%115"
#define KT_WG_R4_116 ",%116,%117,%118,%119"
#define KT_WG_R4_120 ",%120,%121,%122,%123"
#define KT_WG_R4_124 ",%124,%125,%126,%127"
#define KT_WG_R16(a, b, c, d) KT_WG_R4_##a KT_WG_R4_##b KT_WG_R4_##c KT_WG_R4_##d
#define KT_WG_R64_0 KT_WG_R16(0, 4, 8, 12) KT_WG_R16(16, 20, 24, 28) KT_WG_R16(32, 36, 40, 44) KT_WG_R16(48, 52, 56, 60)
#define KT_WG_R64_64 KT_WG_R16(64, 68, 72, 76) KT_WG_R16(80, 84, 88, 92) KT_WG_R16(96, 100, 104, 108) KT_WG_R16(112, 116, 120, 124)
#define KT_WG_ACC4(d, i) "+f"((d)[(i)]), "+f"((d)[(i) + 1]), "+f"((d)[(i) + 2]), "+f"((d)[(i) + 3])
#define KT_WG_ACC16(d, i) KT_WG_ACC4(d, i), KT_WG_ACC4(d, (i) + 4), KT_WG_ACC4(d, (i) + 8), KT_WG_ACC4(d, (i) + 12)
#define KT_WG_ACC64(d, i) KT_WG_ACC16(d, i), KT_WG_ACC16(d, (i) + 16), KT_WG_ACC16(d, (i) + 32), KT_WG_ACC16(d, (i) + 48)
#define KT_WGMMA_ASM(ty, n, regs, descs, da, db, ...)                                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                     \
                 "wgmma.mma_async.sync.aligned.m64n" n "k16.f32." ty "." ty " {" regs "}, " descs \
                 ", p, 1, 1, 0, 0;\n}\n" : __VA_ARGS__ : "l"(da), "l"(db))

/* D[64 x N] += A[64 x 16] . B[N x 16]^T, both K-major in shared memory (descriptors da, db), fp32
 * accumulators: lane l of warp w of the warpgroup holds, for each 8-column block j, d[4j + 2h + e]
 * = D[16w + l/4 + 8h][8j + 2(l%4) + e] (the m16n8 pattern, once per warp and column block). */
#define KT_WGMMA_N8(ty, d, da, db) KT_WGMMA_ASM(ty, "8", KT_WG_R4_0, "%4, %5", da, db, KT_WG_ACC4(d, 0))
#define KT_WGMMA_N16(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "16", KT_WG_R4_0 KT_WG_R4_4, "%8, %9", da, db, KT_WG_ACC4(d, 0), KT_WG_ACC4(d, 4))
#define KT_WGMMA_N32(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "32", KT_WG_R16(0, 4, 8, 12), "%16, %17", da, db, KT_WG_ACC16(d, 0))
#define KT_WGMMA_N64(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "64", KT_WG_R16(0, 4, 8, 12) KT_WG_R16(16, 20, 24, 28), "%32, %33", da, db, KT_WG_ACC16(d, 0), \
                 KT_WG_ACC16(d, 16))
#define KT_WGMMA_N128(ty, d, da, db) KT_WGMMA_ASM(ty, "128", KT_WG_R64_0, "%64, %65", da, db, KT_WG_ACC64(d, 0))
#define KT_WGMMA_N144(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "144", KT_WG_R64_0 KT_WG_R4_64 KT_WG_R4_68, "%72, %73", da, db, KT_WG_ACC64(d, 0), \
                 KT_WG_ACC4(d, 64), KT_WG_ACC4(d, 68))
#define KT_WGMMA_N192(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "192", KT_WG_R64_0 KT_WG_R16(64, 68, 72, 76) KT_WG_R16(80, 84, 88, 92), "%96, %97", da, db, \
                 KT_WG_ACC64(d, 0), KT_WG_ACC16(d, 64), KT_WG_ACC16(d, 80))
#define KT_WGMMA_N224(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "224", KT_WG_R64_0 KT_WG_R16(64, 68, 72, 76) KT_WG_R16(80, 84, 88, 92) KT_WG_R16(96, 100, 104, 108), \
                 "%112, %113", da, db, KT_WG_ACC64(d, 0), KT_WG_ACC16(d, 64), KT_WG_ACC16(d, 80), KT_WG_ACC16(d, 96))
#define KT_WGMMA_N256(ty, d, da, db) \
    KT_WGMMA_ASM(ty, "256", KT_WG_R64_0 KT_WG_R64_64, "%128, %129", da, db, KT_WG_ACC64(d, 0), KT_WG_ACC64(d, 64))

template <class T, int kN> struct kt_wgmma_op;
#define KT_WGMMA_OP(T, ty, n)                                                                      \
    template <> struct kt_wgmma_op<T, n> {                                                         \
        static KT_DEVICE void run(float (&d)[n / 2], unsigned long long da, unsigned long long db) \
        { KT_WGMMA_N##n(ty, d, da, db); }                                                          \
    };
KT_WGMMA_OP(kt_bf16, "bf16", 8)
KT_WGMMA_OP(kt_bf16, "bf16", 16)
KT_WGMMA_OP(kt_bf16, "bf16", 32)
KT_WGMMA_OP(kt_bf16, "bf16", 64)
KT_WGMMA_OP(kt_bf16, "bf16", 128)
KT_WGMMA_OP(kt_bf16, "bf16", 144)
KT_WGMMA_OP(kt_bf16, "bf16", 192)
KT_WGMMA_OP(kt_bf16, "bf16", 224)
KT_WGMMA_OP(kt_bf16, "bf16", 256)
KT_WGMMA_OP(kt_f16, "f16", 8)
KT_WGMMA_OP(kt_f16, "f16", 16)
KT_WGMMA_OP(kt_f16, "f16", 32)
KT_WGMMA_OP(kt_f16, "f16", 64)
KT_WGMMA_OP(kt_f16, "f16", 128)
KT_WGMMA_OP(kt_f16, "f16", 144)
KT_WGMMA_OP(kt_f16, "f16", 192)
KT_WGMMA_OP(kt_f16, "f16", 224)
KT_WGMMA_OP(kt_f16, "f16", 256)

#endif
