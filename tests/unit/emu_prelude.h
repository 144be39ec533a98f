/* emu_prelude.h: the kernel language of templates/arch/ emulated on the host, so a template's
 * own code runs on the CPU in tests (tests/unit/test_gdn_emu.cpp): one OS thread per GPU thread,
 * one block at a time, KT_SHARED memory a static of the kernel, barriers and wave shuffles by
 * pthread barriers. It checks a template's indexing, reductions and cross-block protocol, not its
 * speed or a target's rounding of transcendental functions. KT_WAVE: 32 unless defined first. */
#ifndef KT_EMU_PRELUDE_H
#define KT_EMU_PRELUDE_H
#include <pthread.h>
#include <atomic>
#include <mutex>
#include <utility>
#include <cstdint>
#include <cstring>
#include <vector>
#include "tuner/half_convert.h"

#ifndef KT_WAVE
#define KT_WAVE 32
#endif
#define KT_DEVICE inline
#define KT_DEV static inline
#define KT_SHARED static
#define KT_KERNEL(name, threads) void name
#define KT_KERNEL_MIN_BLOCKS(name, threads, blocks) void name

struct alignas(16) kt_emu_v16 { unsigned w[4]; };
struct kt_emu_block {
    int bx, by, bz, gx, threads;
    pthread_barrier_t block;
    std::vector<pthread_barrier_t> waves;
    std::vector<float> xchg;                    /* a float a thread for the shuffles */
    std::vector<float> mma;                     /* a wave's two 16 x 16 operands (kt_mma) */
    std::vector<kt_emu_v16> dyn;                /* the LDS given at launch (kt_emu_dyn_bytes) */
};
static size_t kt_emu_dyn_bytes;                 /* LDS the next kt_emu_run gives each block */
static kt_emu_block *kt_emu_cur;
static thread_local int kt_emu_tid;

KT_DEV int kt_thread_id(void) { return kt_emu_tid; }
KT_DEV int kt_block_id_x(void) { return kt_emu_cur->bx; }
KT_DEV int kt_block_id_y(void) { return kt_emu_cur->by; }
KT_DEV int kt_block_id_z(void) { return kt_emu_cur->bz; }
KT_DEV int kt_grid_blocks_x(void) { return kt_emu_cur->gx; }
KT_DEV int kt_lane_id(void) { return kt_emu_tid % KT_WAVE; }
KT_DEV int kt_wave_id(void) { return kt_emu_tid / KT_WAVE; }
KT_DEV void kt_barrier(void) { pthread_barrier_wait(&kt_emu_cur->block); }
KT_DEV void kt_wave_sync(void) { pthread_barrier_wait(&kt_emu_cur->waves[kt_wave_id()]); }
/* every lane of the wave takes part, as the templates call it (wave-uniform control flow) */
KT_DEV float kt_shfl_xor(float v, int mask)
{
    pthread_barrier_t *w = &kt_emu_cur->waves[kt_wave_id()];
    kt_emu_cur->xchg[kt_emu_tid] = v;
    pthread_barrier_wait(w);
    const float r = kt_emu_cur->xchg[kt_wave_id() * KT_WAVE + (kt_lane_id() ^ mask)];
    pthread_barrier_wait(w);
    return r;
}
KT_DEV void kt_fence_device(void) { std::atomic_thread_fence(std::memory_order_seq_cst); }
KT_DEV unsigned kt_atomic_add_device(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
KT_DEV unsigned short kt_load_coherent_u16(const unsigned short *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

struct kt_bf16 { unsigned short bits; };
struct kt_f16 { unsigned short bits; };
KT_DEV float kt_to_float(kt_bf16 h) { return kt_bf16_to_f32(h.bits); }
KT_DEV float kt_to_float(kt_f16 h) { return kt_f16_to_f32(h.bits); }
template <class T> KT_DEV T kt_from_float(float f);
template <> inline kt_bf16 kt_from_float<kt_bf16>(float f) { return kt_bf16{kt_f32_to_bf16(f)}; }
template <> inline kt_f16 kt_from_float<kt_f16>(float f) { return kt_f16{kt_f32_to_f16(f)}; }

typedef kt_emu_v16 kt_v16;
KT_DEV kt_v16 kt_v16_make(unsigned a, unsigned b, unsigned c, unsigned d) { return kt_v16{{a, b, c, d}}; }
KT_DEV unsigned kt_v16_word(kt_v16 v, int i) { return v.w[i]; }
KT_DEV kt_v16 kt_ldg16(const void *p) { return *(const kt_v16 *)p; }
KT_DEV void kt_sts16(void *p, kt_v16 v) { *(kt_v16 *)p = v; }

/* arch/copy_ops.h's LDS at launch (its file is not read: the guard is taken) */
#define KT_ARCH_COPY_OPS_H
#define KT_DYNAMIC_SHARED(type, name) type *name = (type *)kt_emu_cur->dyn.data()
KT_DEV bool kt_dynamic_shared_fits(unsigned bytes) { return kt_emu_cur->dyn.size() * sizeof(kt_v16) >= bytes; }
/* the global -> LDS copy, done at its issue (a test that wants a template's copying path defines
 * KT_EMU_ASYNC_COPY 1 before this file; 0, the targets without the copy: gfx11, gfx12) */
#ifndef KT_EMU_ASYNC_COPY
#define KT_EMU_ASYNC_COPY 0
#endif
#define KT_ASYNC_COPY KT_EMU_ASYNC_COPY
KT_DEV unsigned kt_lds_addr(const void *p) { return (unsigned)((const char *)p - (const char *)kt_emu_cur->dyn.data()); }
KT_DEV void kt_copy16_async(unsigned lds, const void *src) { memcpy((char *)kt_emu_cur->dyn.data() + lds, src, 16); }
KT_DEV void kt_copy_commit(void) {}
KT_DEV void kt_copy_wait(void) {}
template <int N> KT_DEV void kt_copy_wait_pending(void) {}
/* the L2 prefetch: logged as (issuing block, address), the block as (z * 100000 + y) * 1000 + x */
inline std::mutex kt_emu_pf_mu;
inline std::vector<std::pair<long, const char *>> kt_emu_pf_log;
KT_DEV void kt_prefetch_l2(const void *p)
{
    std::lock_guard<std::mutex> g(kt_emu_pf_mu);
    kt_emu_pf_log.push_back({((long)kt_emu_cur->bz * 100000 + kt_emu_cur->by) * 1000 + kt_emu_cur->bx, (const char *)p});
}
constexpr bool kt_has_l2_prefetch = true;

/* 16 x 16 x 16 fragments in one target's layout (KT_EMU_LAYOUT: 0 gfx12's, 1 sm_90's mma.sync,
 * 2 CDNA's at wave 64), its index math read from the prelude itself (KT_LAYOUT_ONLY: the part
 * tests/unit/test_fragment_layouts.cpp checks), the product emulated over the wave: each lane
 * publishes its operand elements, then reads its accumulator's row and column. C += A W^T, A
 * [m][k], W [n][k]. */
#ifndef KT_EMU_LAYOUT
#define KT_EMU_LAYOUT (KT_WAVE == 64 ? 2 : 0)
#endif
#define KT_LAYOUT_ONLY
#if KT_EMU_LAYOUT == 0
#include "arch/gfx12.h"
#elif KT_EMU_LAYOUT == 1
#include "arch/sm90.h"
#else
#include "arch/cdna.h"
#endif
#undef KT_LAYOUT_ONLY
static_assert(kt_frag_lanes == KT_WAVE, "the layout's wave is the emulation's");
struct kt_frag_a { unsigned short v[kt_frag_ab_elems]; };
struct kt_frag_b { unsigned short v[kt_frag_ab_elems]; };
struct kt_acc { float v[kt_acc_elems]; };
KT_DEV void kt_acc_zero(kt_acc &c) { for (float &x : c.v) x = 0.0f; }
KT_DEV float kt_acc_get(const kt_acc &c, int i) { return c.v[i]; }
KT_DEV void kt_acc_set(kt_acc &c, int i, float v) { c.v[i] = v; }
KT_DEV void kt_load_a(kt_frag_a &f, const unsigned short *t, int ld, int lane)
{
    for (int e = 0; e < kt_frag_ab_elems; e++) f.v[e] = t[kt_frag_a_row(lane, e) * ld + kt_frag_a_k(lane, e)];
}
KT_DEV void kt_load_b(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    for (int e = 0; e < kt_frag_ab_elems; e++) f.v[e] = t[kt_frag_b_n(lane, e) * ld + kt_frag_b_k(lane, e)];
}
template <class T> KT_DEV void kt_mma(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    const int w = kt_emu_tid / KT_WAVE, lane = kt_emu_tid % KT_WAVE;
    float *A = &kt_emu_cur->mma[(size_t)w * 512], *B = A + 256;
    for (int e = 0; e < kt_frag_ab_elems; e++) {
        A[kt_frag_a_row(lane, e) * 16 + kt_frag_a_k(lane, e)] = kt_to_float(T{a.v[e]});
        B[kt_frag_b_n(lane, e) * 16 + kt_frag_b_k(lane, e)] = kt_to_float(T{b.v[e]});
    }
    pthread_barrier_wait(&kt_emu_cur->waves[(size_t)w]);
    for (int i = 0; i < kt_acc_elems; i++) {
        const int r = kt_acc_row(lane, i), n = kt_acc_col(lane, i);
        float s = c.v[i];
        for (int k = 0; k < 16; k++) s += A[r * 16 + k] * B[n * 16 + k];
        c.v[i] = s;
    }
    pthread_barrier_wait(&kt_emu_cur->waves[(size_t)w]);
}

KT_DEV float kt_exp2(float x) { return exp2f(x); }

/* arch/prefill_ops.h's operations, which it leaves to the emulation (and arch/attn_ops.h, which
 * the templates include for NVIDIA's [k][n] fragment load, skipped): NVIDIA's P is the A operand
 * element for element and V the B operand of a [key][d] tile; AMD's (gfx12, CDNA: one
 * accumulator column a lane) P is the B operand, V^T the A one, its k slot e holding the key of
 * P's accumulator row e. */
#define KT_ARCH_ATTN_OPS_NV_H
#define KT_ARCH_ATTN_OPS_AMD_H
static_assert(kt_frag_ab_elems == kt_acc_elems, "P from the accumulators element for element");
template <class T> KT_DEV unsigned kt_round2(float lo, float hi)
{
    return kt_from_float<T>(lo).bits | (unsigned)kt_from_float<T>(hi).bits << 16;
}
template <class T> KT_DEV void kt_p_frag(kt_frag_a &p, const kt_acc &s)
{
    for (int e = 0; e < kt_frag_ab_elems; e++) p.v[e] = kt_from_float<T>(s.v[e]).bits;
}
KT_DEV void kt_load_v(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    for (int e = 0; e < kt_frag_ab_elems; e++)
        f.v[e] = KT_EMU_LAYOUT == 1 ? t[kt_frag_b_k(lane, e) * ld + kt_frag_b_n(lane, e)]
                                    : t[kt_acc_row(lane, e) * ld + kt_frag_a_row(lane, e)];
}
/* both of prefill_ops.h's products in the target's orientation: NVIDIA's (S = Q K^T, O += P V) the
 * product itself, AMD's (S^T = K Q^T, O^T += V^T P^T) with the operands swapped, their A and B
 * fragments holding a row a lane alike (the static_assert below) */
template <class T> KT_DEV void kt_oriented_mma(kt_acc &c, const kt_frag_a &x, const kt_frag_b &y)
{
    if (KT_EMU_LAYOUT == 1) {
        kt_mma<T>(c, x, y);
    } else {
        kt_frag_a a;
        kt_frag_b b;
        memcpy(a.v, y.v, sizeof a.v);
        memcpy(b.v, x.v, sizeof b.v);
        kt_mma<T>(c, a, b);
    }
}
constexpr bool kt_emu_ab_alike()
{
    for (int l = 0; l < kt_frag_lanes; l++)
        for (int e = 0; e < kt_frag_ab_elems; e++)
            if (kt_frag_a_row(l, e) != kt_frag_b_n(l, e) || kt_frag_a_k(l, e) != kt_frag_b_k(l, e)) return false;
    return true;
}
static_assert(KT_EMU_LAYOUT == 1 || kt_emu_ab_alike(), "AMD: an A fragment read as a B one holds the same elements");
template <class T> KT_DEV void kt_score_mma(kt_acc &s, const kt_frag_a &q, const kt_frag_b &k) { kt_oriented_mma<T>(s, q, k); }
template <class T> KT_DEV void kt_pv_mma(kt_acc &o, const kt_frag_a &p, const kt_frag_b &v) { kt_oriented_mma<T>(o, p, v); }

/* Runs kernel(args) over a grid, block after block, a thread each of `threads`: one pool of OS
 * threads a launch, every thread stepping through the blocks in order between two barriers (a
 * thread an emulated thread a block spent more time creating threads than emulating them) */
template <class Args> struct kt_emu_launch {
    void (*kernel)(Args);
    Args args;
    int gx, gy, gz;
    kt_emu_block b;
    pthread_barrier_t step;
    static void *run(void *p)
    {
        auto *job = (std::pair<kt_emu_launch *, int> *)p;
        kt_emu_launch &l = *job->first;
        kt_emu_tid = job->second;
        for (int n = 0; n < l.gx * l.gy * l.gz; n++) {
            if (kt_emu_tid == 0) {   /* the block's own state, fresh, while the others wait */
                l.b.bx = n % l.gx; l.b.by = n / l.gx % l.gy; l.b.bz = n / (l.gx * l.gy);
                l.b.xchg.assign((size_t)l.b.threads, 0.0f);
                l.b.mma.assign((size_t)(l.b.threads / KT_WAVE) * 512, 0.0f);
                /* NaN in every 16- and 32-bit view: a read of LDS the block never wrote poisons
                 * what it feeds, as the device's leftovers may */
                l.b.dyn.assign((kt_emu_dyn_bytes + 15) / 16, kt_emu_v16{{~0u, ~0u, ~0u, ~0u}});
            }
            pthread_barrier_wait(&l.step);
            l.kernel(l.args);
            pthread_barrier_wait(&l.step);
        }
        return nullptr;
    }
};
template <class Args> void kt_emu_run(void (*kernel)(Args), Args args, int gx, int gy, int gz, int threads)
{
    kt_emu_launch<Args> l;
    l.kernel = kernel; l.args = args; l.gx = gx; l.gy = gy; l.gz = gz;
    l.b.threads = threads;
    l.b.gx = gx;
    pthread_barrier_init(&l.b.block, nullptr, (unsigned)threads);
    l.b.waves.resize((size_t)(threads / KT_WAVE));
    for (auto &w : l.b.waves) pthread_barrier_init(&w, nullptr, KT_WAVE);
    pthread_barrier_init(&l.step, nullptr, (unsigned)threads);
    kt_emu_cur = &l.b;
    std::vector<pthread_t> th((size_t)threads);
    std::vector<std::pair<kt_emu_launch<Args> *, int>> jobs((size_t)threads);
    for (int t = 0; t < threads; t++) {
        jobs[(size_t)t] = {&l, t};
        pthread_create(&th[(size_t)t], nullptr, &kt_emu_launch<Args>::run, &jobs[(size_t)t]);
    }
    for (auto &t : th) pthread_join(t, nullptr);
    pthread_barrier_destroy(&l.step);
    pthread_barrier_destroy(&l.b.block);
    for (auto &w : l.b.waves) pthread_barrier_destroy(&w);
}

#endif
