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

/* D[64 x N] += A[64 x 16] . B[N x 16]^T, both K-major in shared memory (descriptors da, db), fp32
 * accumulators: lane l of warp w of the warpgroup holds, for each 8-column block j, d[4j + 2h + e]
 * = D[16w + l/4 + 8h][8j + 2(l%4) + e] (the m16n8 pattern, once per warp and column block). */
#define KT_WGMMA_N8(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3"  \
                 "}, %4, %5, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N16(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7"  \
                 "}, %8, %9, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N32(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"  \
                 "}, %16, %17, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N64(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"  \
                 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N128(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"  \
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"  \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"  \
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]),  \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]),  \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]),  \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]),  \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N144(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n144k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"  \
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"  \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"  \
                 "%64,%65,%66,%67,%68,%69,%70,%71"  \
                 "}, %72, %73, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]),  \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]),  \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]),  \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]),  \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63]),  \
                   "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N192(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n192k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"  \
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"  \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"  \
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"  \
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"  \
                 "}, %96, %97, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]),  \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]),  \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]),  \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]),  \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63]),  \
                   "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]),  \
                   "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]),  \
                   "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]),  \
                   "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N224(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n224k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"  \
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"  \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"  \
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"  \
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"  \
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111"  \
                 "}, %112, %113, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]),  \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]),  \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]),  \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]),  \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63]),  \
                   "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]),  \
                   "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]),  \
                   "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]),  \
                   "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95]),  \
                   "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]),  \
                   "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111])  \
                 : "l"(da), "l"(db))

#define KT_WGMMA_N256(ty, d, da, db) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." ty "." ty " {"  \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"  \
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"  \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"  \
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"  \
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"  \
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"  \
                 "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"  \
                 "}, %128, %129, p, 1, 1, 0, 0;\n}\n"  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]),  \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]),  \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]),  \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]),  \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63]),  \
                   "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]),  \
                   "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]),  \
                   "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]),  \
                   "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95]),  \
                   "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]),  \
                   "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111]),  \
                   "+f"((d)[112]), "+f"((d)[113]), "+f"((d)[114]), "+f"((d)[115]), "+f"((d)[116]), "+f"((d)[117]), "+f"((d)[118]), "+f"((d)[119]),  \
                   "+f"((d)[120]), "+f"((d)[121]), "+f"((d)[122]), "+f"((d)[123]), "+f"((d)[124]), "+f"((d)[125]), "+f"((d)[126]), "+f"((d)[127])  \
                 : "l"(da), "l"(db))
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
