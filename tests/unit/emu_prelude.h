/* emu_prelude.h: the kernel language of templates/arch/ emulated on the host, so a template's
 * own code runs on the CPU in tests (tests/unit/test_gdn_emu.cpp): one OS thread per GPU thread,
 * one block at a time, KT_SHARED memory a static of the kernel, barriers and wave shuffles by
 * pthread barriers. It checks a template's indexing, reductions and cross-block protocol, not its
 * speed or a target's rounding of transcendental functions. KT_WAVE: 32 unless defined first. */
#ifndef KT_EMU_PRELUDE_H
#define KT_EMU_PRELUDE_H
#include <pthread.h>
#include <atomic>
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

struct kt_emu_block {
    int bx, by, bz, threads;
    pthread_barrier_t block;
    std::vector<pthread_barrier_t> waves;
    std::vector<float> xchg;                    /* a float a thread for the shuffles */
};
static kt_emu_block *kt_emu_cur;
static thread_local int kt_emu_tid;

KT_DEV int kt_thread_id(void) { return kt_emu_tid; }
KT_DEV int kt_block_id_x(void) { return kt_emu_cur->bx; }
KT_DEV int kt_block_id_y(void) { return kt_emu_cur->by; }
KT_DEV int kt_block_id_z(void) { return kt_emu_cur->bz; }
KT_DEV int kt_lane_id(void) { return kt_emu_tid % KT_WAVE; }
KT_DEV int kt_wave_id(void) { return kt_emu_tid / KT_WAVE; }
KT_DEV void kt_barrier(void) { pthread_barrier_wait(&kt_emu_cur->block); }
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

struct kt_bf16 { unsigned short bits; };
struct kt_f16 { unsigned short bits; };
KT_DEV float kt_to_float(kt_bf16 h) { return kt_bf16_to_f32(h.bits); }
KT_DEV float kt_to_float(kt_f16 h) { return kt_f16_to_f32(h.bits); }
template <class T> KT_DEV T kt_from_float(float f);
template <> inline kt_bf16 kt_from_float<kt_bf16>(float f) { return kt_bf16{kt_f32_to_bf16(f)}; }
template <> inline kt_f16 kt_from_float<kt_f16>(float f) { return kt_f16{kt_f32_to_f16(f)}; }

struct alignas(16) kt_v16 { unsigned w[4]; };
KT_DEV kt_v16 kt_v16_make(unsigned a, unsigned b, unsigned c, unsigned d) { return kt_v16{{a, b, c, d}}; }
KT_DEV unsigned kt_v16_word(kt_v16 v, int i) { return v.w[i]; }

/* Runs kernel(args) over a grid, block after block, a thread each of `threads`. */
template <class Args> struct kt_emu_launch {
    void (*kernel)(Args);
    Args args;
    static void *run(void *p)
    {
        auto *job = (std::pair<kt_emu_launch *, int> *)p;
        kt_emu_tid = job->second;
        job->first->kernel(job->first->args);
        return nullptr;
    }
};
template <class Args> void kt_emu_run(void (*kernel)(Args), Args args, int gx, int gy, int gz, int threads)
{
    kt_emu_launch<Args> l{kernel, args};
    for (int z = 0; z < gz; z++)
        for (int y = 0; y < gy; y++)
            for (int x = 0; x < gx; x++) {
                kt_emu_block b;
                b.bx = x; b.by = y; b.bz = z; b.threads = threads;
                pthread_barrier_init(&b.block, nullptr, (unsigned)threads);
                b.waves.resize((size_t)(threads / KT_WAVE));
                for (auto &w : b.waves) pthread_barrier_init(&w, nullptr, KT_WAVE);
                b.xchg.assign((size_t)threads, 0.0f);
                kt_emu_cur = &b;
                std::vector<pthread_t> th((size_t)threads);
                std::vector<std::pair<kt_emu_launch<Args> *, int>> jobs((size_t)threads);
                for (int t = 0; t < threads; t++) {
                    jobs[(size_t)t] = {&l, t};
                    pthread_create(&th[(size_t)t], nullptr, &kt_emu_launch<Args>::run, &jobs[(size_t)t]);
                }
                for (auto &t : th) pthread_join(t, nullptr);
                pthread_barrier_destroy(&b.block);
                for (auto &w : b.waves) pthread_barrier_destroy(&w);
            }
}

#endif
