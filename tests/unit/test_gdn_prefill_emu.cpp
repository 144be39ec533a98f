/* test_gdn_prefill_emu.cpp: templates/gdn/prefill.hip's four kernels run on the host
 * (emu_prelude.h, in sm_90's mma.sync fragment layout unless KT_EMU_LAYOUT says otherwise) over a
 * batch of sequences of mixed lengths (none a multiple of the chunk, one shorter than the conv's
 * history, one of a single token), scattered slots, non-zero initial conv and ssm states, one
 * sequence without an initial state and one padded, the gated norm on and off, both state
 * layouts, both conv-state layouts. The truth: runtime/gdn_ref.c's plain decode step (float64)
 * applied token after token to each sequence: a prefill must leave the slot as that many decode
 * steps would, and write the same outputs. Checked: every live output row within the bound,
 * padded rows untouched, the ssm state within its bound, the conv state's columns exact, slots
 * no sequence owns bit-identical. Links libkt (gdn_ref.c). */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#ifndef KT_EMU_LAYOUT
#define KT_EMU_LAYOUT 1
#define KT_EMU_CONV_VEC8 1   /* sm_90's conv of 8 channels a load, where the call's strides allow it */
#endif
#include "emu_prelude.h"
#include "abi/gdn_prefill.h"
#include "runtime/gdn_ref.h"
#include "tuner/random_inputs.h"
#include "kt_test.h"

#define KT_DTYPE bf16
#define KT_DK 128
#define KT_DV 128

struct variant {
    const char *name;
    void (*prep)(kt_gdn_prefill_args), (*wy)(kt_gdn_prefill_args), (*state)(kt_gdn_prefill_args),
        (*out)(kt_gdn_prefill_args);
    size_t lds_prep, lds_wy, lds_state, lds_out;
    int bt, vk, bv, nw, pf;
};

#define VARIANT_ROW(ns, bt, vk, bv, nw, pf, label)                                                             \
    {label, ns::kernel_prep, ns::kernel_wy, ns::kernel, ns::kernel_out, sizeof(ns::kt_conv_smem),              \
     sizeof(ns::kt_wy_smem), sizeof(ns::kt_state_smem), sizeof(ns::kt_out_smem), bt, vk, bv, nw, pf}

namespace pa {
#define KT_BT 64
#define KT_VK 0
#define KT_BV 32
#define KT_NW 4
#define KT_PF 1
#include "gdn_prefill_emu_variant.inc"
}
namespace pc {
#define KT_BT 16
#define KT_VK 0
#define KT_BV 16
#define KT_NW 1
#define KT_PF 0
#include "gdn_prefill_emu_variant.inc"
}
namespace pd {
#define KT_BT 32
#define KT_VK 1
#define KT_BV 16
#define KT_NW 8
#define KT_PF 2
#include "gdn_prefill_emu_variant.inc"
}
namespace pe {
#define KT_BT 16
#define KT_VK 0
#define KT_BV 32
#define KT_NW 2
#define KT_PF 2
#include "gdn_prefill_emu_variant.inc"
}

namespace pg {
#define KT_BT 64
#define KT_VK 0
#define KT_BV 16
#define KT_NW 8
#define KT_PF 3
#include "gdn_prefill_emu_variant.inc"
}
namespace ph {
#define KT_BT 32
#define KT_VK 1
#define KT_BV 32
#define KT_NW 4
#define KT_PF 4
#include "gdn_prefill_emu_variant.inc"
}
namespace pk {
#define KT_BT 64
#define KT_VK 1
#define KT_BV 16
#define KT_NW 8
#define KT_PF 4
#include "gdn_prefill_emu_variant.inc"
}
namespace pi {
#define KT_BT 64
#define KT_VK 0
#define KT_BV 16
#define KT_NW 8
#define KT_PF 5
#include "gdn_prefill_emu_variant.inc"
}
namespace pj {
#define KT_BT 16
#define KT_VK 1
#define KT_BV 16
#define KT_NW 8
#define KT_PF 5
#include "gdn_prefill_emu_variant.inc"
}

static const variant variants[] = {
    VARIANT_ROW(pa, 64, 0, 32, 4, 1, "bt64 vk0 bv32 nw4 pf1 (2 key splits, 2 token tiles each)"),
    VARIANT_ROW(pc, 16, 0, 16, 1, 0, "bt16 vk0 bv16 nw1 pf0"),
    VARIANT_ROW(pd, 32, 1, 16, 8, 2, "bt32 vk1 bv16 nw8 pf2 (8 key splits, 2 token tiles: 4 units or 2 owned; LDS a chunk ahead)"),
    VARIANT_ROW(pe, 16, 0, 32, 2, 2, "bt16 vk0 bv32 nw2 pf2 (no key split: LDS two chunks ahead)"),
    VARIANT_ROW(pg, 64, 0, 16, 8, 3, "bt64 vk0 bv16 nw8 pf3 (8 key splits, a unit each or 4 owning none; fragments, each reloaded once used)"),
    VARIANT_ROW(ph, 32, 1, 32, 4, 4, "bt32 vk1 bv32 nw4 pf4 (2 value tiles, 2 key splits, 3 chunks; fragments, the next chunk's in a second set)"),
    VARIANT_ROW(pk, 64, 1, 16, 8, 4, "bt64 vk1 bv16 nw8 pf4 (K-last: 8 key splits, a unit each or 4 owning none; the next chunk's in a second set)"),
    VARIANT_ROW(pi, 64, 0, 16, 8, 5, "bt64 vk0 bv16 nw8 pf5 (the step one product: kd folded into C and B, vn made by out)"),
    VARIANT_ROW(pj, 16, 1, 16, 8, 5, "bt16 vk1 bv16 nw8 pf5 (folded, one token tile)"),
};

enum { H = 1, HV = 2, DK = 128, DV = 128, KW = 4, CDIM = 2 * H * DK + HV * DV, SLOTS = 8, LCOL = KW - 1 + 8 };
/* lengths: two chunks and a bit, exactly 64, one token, padded, under the history, long */
static const int lens[] = {37, 64, 1, 5, 2, 70};
static const int slot_of[] = {3, 0, 5, -1, 6, 1};
static const int init_of[] = {1, 0, 1, 1, 1, 1};
enum { BATCH = sizeof lens / sizeof lens[0] };

static uint64_t rng = 0x5851f42d4c957f2dull;
static double urand(double lo, double hi) { return lo + (hi - lo) * (double)(kt_rand_splitmix64(&rng) >> 11) * 0x1p-53; }
static unsigned short bf(double x) { return kt_f32_to_bf16((float)x); }

/* max |x - ref| / max |ref| over the indices given */
static double rel_inf(const std::vector<double> &ref, const std::vector<double> &x, const std::vector<size_t> &idx)
{
    double num = 0, den = 0;
    for (size_t k : idx) {
        if (!std::isfinite(x[k])) return INFINITY;
        num = fmax(num, fabs(x[k] - ref[k]));
        den = fmax(den, fabs(ref[k]));
    }
    return den > 0 ? num / den : num;
}

/* runtime/op_gdn_prefill.h's (a C header): the LDS each launch is given, and whether _prep runs */
extern "C" void kt_gdn_prefill_lds(int bt, int dk, int dv, int bv, int nw, int pf, int lds[4]);
extern "C" int kt_gdn_prefill_runs_prep(int wave_size, int bt);

/* odd: z, out and qkv rows an element longer than hv x dv and the conv's channels (odd strides:
 * out's stores and z's loads an element at a time where the layout would pair them, the conv a
 * channel at a time where it would take 8 a 16-byte load). split: the state pass and out a part of
 * the chunks at a time, as the runtime's plan cuts them (its parts cut sequences in the middle: a
 * part's state pass resumes each from the state the part before left in its slot) */
static void run(const variant &v, int norm, int ds_layout, int odd, int split)
{
    int qsl[BATCH + 1] = {0};
    for (int i = 0; i < BATCH; i++) qsl[i + 1] = qsl[i] + lens[i];
    const int T = qsl[BATCH];
    const int conv_chan = ds_layout ? 1 : LCOL, conv_col = ds_layout ? CDIM : 1;
    const long long conv_slot = (long long)CDIM * LCOL, ssm_slot = (long long)HV * DK * DV;
    const int os = HV * DV + odd, qs = CDIM + odd;   /* z's and out's row strides, qkv's */

    std::vector<unsigned short> qkv((size_t)T * qs), z((size_t)T * os), a((size_t)T * HV), b((size_t)T * HV);
    std::vector<unsigned short> cw((size_t)CDIM * KW), nw(DV), out((size_t)T * os, 0x7fc1);
    std::vector<float> A_log(HV), dt_bias(HV);
    for (auto &x : qkv) x = bf(urand(-1, 1));
    for (auto &x : z) x = bf(urand(-2, 2));
    for (auto &x : a) x = bf(urand(-3, 3));
    for (auto &x : b) x = bf(urand(-3, 3));
    for (auto &x : cw) x = bf(urand(-0.6, 0.6));
    for (auto &x : nw) x = bf(urand(0.5, 1.5));
    /* head 0 remembers (a decay of e^-0.1 a token at most: the state a chunk carries is most of what
     * the next one reads, so a part resumed from the wrong state shows), head 1 forgets within a
     * few tokens as most of a model's heads do */
    for (int h = 0; h < HV; h++) {
        A_log[h] = (float)log(h == 0 ? urand(0.02, 0.1) : urand(1, 16));
        dt_bias[h] = (float)urand(-1, 1);
    }
    std::vector<unsigned short> conv((size_t)(SLOTS * conv_slot));
    std::vector<float> ssm((size_t)(SLOTS * ssm_slot));
    for (auto &x : conv) x = bf(urand(-1, 1));
    for (auto &x : ssm) x = (float)urand(-0.5, 0.5);
    const std::vector<unsigned short> conv0 = conv;
    const std::vector<float> ssm0 = ssm;

    /* the truth: plain decode steps, token by token, from the same pools (zeroed where a sequence
     * has no initial state: the history columns and the state) */
    std::vector<double> rconv(conv.size()), rssm(ssm.begin(), ssm.end()), rout(out.size(), 0.0);
    for (size_t i = 0; i < conv.size(); i++) rconv[i] = kt_bf16_to_f32(conv[i]);
    kt_gdn_ref_pools pools = {rconv.data(), rssm.data(), nullptr, v.vk};
    for (int i = 0; i < BATCH; i++) {
        const int s = slot_of[i];
        if (s < 0) continue;
        if (!init_of[i]) {
            for (int c = 0; c < CDIM; c++)
                for (int u = 0; u < KW - 1; u++) rconv[(size_t)(s * conv_slot + (long long)c * conv_chan + u * conv_col)] = 0.0;
            for (long long e = 0; e < ssm_slot; e++) rssm[(size_t)(s * ssm_slot + e)] = 0.0;
        }
        for (int t = 0; t < lens[i]; t++) {
            kt_gdn_decode_args d = {};
            const int q2[2] = {qsl[i] + t, qsl[i] + t + 1};
            d.qkv = qkv.data(); d.z = z.data(); d.a = a.data(); d.b = b.data();
            d.A_log = A_log.data(); d.dt_bias = dt_bias.data(); d.conv_weight = cw.data();
            d.norm_weight = norm ? nw.data() : nullptr;
            d.query_start_loc = q2; d.state_indices = &slot_of[i];
            d.conv_slot_stride = conv_slot; d.ssm_slot_stride = ssm_slot;
            d.conv_chan_stride = conv_chan; d.conv_col_stride = conv_col;
            d.qkv_stride = qs; d.z_stride = os; d.ab_stride = HV; d.out_stride = os;
            d.batch = 1; d.num_k_heads = H; d.num_v_heads = HV; d.dk = DK; d.dv = DV;
            d.conv_kw = KW; d.conv_len = LCOL; d.max_tokens = 1; d.state_vk = v.vk;
            d.scale = 1.0f / sqrtf((float)DK); d.norm_eps = 1e-6f;
            kt_gdn_ref_step(&d, 0, &pools, rout.data());
        }
    }

    /* the kernels */
    const int chunks = T / v.bt + BATCH;
    std::vector<unsigned short> wq((size_t)chunks * H * v.bt * DK), wk(wq.size()), ww((size_t)chunks * HV * v.bt * DK),
        wu((size_t)chunks * HV * v.bt * DV), wvn(wu.size()), wh((size_t)chunks * HV * DV * DK), wkd(ww.size()),
        wc((size_t)chunks * HV * DK * DK), wb((size_t)chunks * HV * DV * DK);
    std::vector<float> wg((size_t)chunks * HV * v.bt);
    kt_gdn_prefill_args A = {};
    A.qkv = qkv.data(); A.z = z.data(); A.a = a.data(); A.b = b.data();
    A.A_log = A_log.data(); A.dt_bias = dt_bias.data(); A.conv_weight = cw.data();
    A.norm_weight = norm ? nw.data() : nullptr;
    A.conv_state = conv.data(); A.ssm_state = ssm.data();
    A.query_start_loc = qsl; A.state_indices = slot_of; A.has_initial_state = init_of;
    A.out = out.data();
    A.conv_slot_stride = conv_slot; A.ssm_slot_stride = ssm_slot;
    A.conv_chan_stride = conv_chan; A.conv_col_stride = conv_col;
    A.qkv_stride = qs; A.z_stride = os; A.ab_stride = HV; A.out_stride = os;
    A.batch = BATCH; A.num_k_heads = H; A.num_v_heads = HV; A.dk = DK; A.dv = DV; A.conv_kw = KW;
    A.tokens = T; A.state_vk = v.vk; A.scale = 1.0f / sqrtf((float)DK); A.norm_eps = 1e-6f;
    A.chunks = chunks;
    A.chunk_begin = 0;
    A.chunk_end = chunks;
    A.ws_q = wq.data(); A.ws_k = wk.data(); A.ws_w = ww.data(); A.ws_u = wu.data();
    A.ws_vn = wvn.data(); A.ws_h = wh.data(); A.ws_kd = wkd.data(); A.ws_g = wg.data();
    A.ws_c = wc.data(); A.ws_b = wb.data();
    if (kt_gdn_prefill_runs_prep(KT_WAVE, v.bt)) {   /* the descriptor's launches: _prep first where it says */
        kt_emu_dyn_bytes = v.lds_prep;
        kt_emu_run(v.prep, A, chunks, H, 1, 4 * KT_WAVE);
    }
    /* the runtime's bind_launch: part j's chunks [cut[j], cut[j + 1]); wy of part j just before its
     * state pass (the device may run wy's later parts beside it), out of part j after the state
     * pass of part j + 1 (the device may run it as late as that: out must need nothing that pass
     * overwrites). split: three parts, cut one chunk into the sequence without an initial state
     * (its resume must read the slot, not zeros) and one chunk into the longest (one launch a part,
     * not a chunk: every emulated launch spawns its blocks' threads) */
    int cut[4] = {0, chunks, chunks, chunks}, parts = 1;
    if (split) {
        cut[1] = qsl[1] / v.bt + 1 + 1;
        cut[2] = qsl[5] / v.bt + 5 + 1;
        cut[3] = chunks;
        parts = 3;
    }
    for (int j = 0; j <= parts; j++) {
        if (j < parts) {
            A.chunk_begin = cut[j];
            A.chunk_end = cut[j + 1];
            kt_emu_dyn_bytes = v.lds_wy;
            kt_emu_run(v.wy, A, A.chunk_end - A.chunk_begin, H, 1, 4 * KT_WAVE);
            kt_emu_dyn_bytes = v.lds_state;
            kt_emu_run(v.state, A, DV / v.bv, HV, BATCH, v.nw * KT_WAVE);
        }
        if (j > 0) {
            A.chunk_begin = cut[j - 1];
            A.chunk_end = cut[j];
            kt_emu_dyn_bytes = v.lds_out;
            kt_emu_run(v.out, A, A.chunk_end - A.chunk_begin, HV, 1, v.bt / 16 * KT_WAVE);
        }
    }

    /* outputs of live sequences; padded ones untouched */
    std::vector<double> gout(out.size());
    for (size_t i = 0; i < out.size(); i++) gout[i] = kt_bf16_to_f32(out[i]);
    std::vector<size_t> live;
    int untouched = 1;
    for (int i = 0; i < BATCH; i++)
        for (int t = qsl[i]; t < qsl[i + 1]; t++)
            for (int j = 0; j < HV * DV; j++) {
                const size_t k = (size_t)t * os + (size_t)j;
                if (slot_of[i] >= 0) live.push_back(k);
                else untouched &= out[k] == 0x7fc1;
            }
    const double e_out = rel_inf(rout, gout, live);

    /* pools: owned slots against the truth, others bit-identical */
    std::vector<double> gssm(ssm.begin(), ssm.end());
    std::vector<size_t> owned_ssm;
    int conv_exact = 1, others = 1;
    for (int s = 0; s < SLOTS; s++) {
        int owned = 0;
        for (int i = 0; i < BATCH; i++) owned |= slot_of[i] == s;
        for (long long e = 0; e < ssm_slot; e++) {
            const size_t k = (size_t)(s * ssm_slot + e);
            if (owned) owned_ssm.push_back(k);
            else others &= ssm[k] == ssm0[k];
        }
        for (long long e = 0; e < conv_slot; e++) {
            const size_t k = (size_t)(s * conv_slot + e);
            if (owned) conv_exact &= (double)kt_bf16_to_f32(conv[k]) == rconv[k];
            else others &= conv[k] == conv0[k];
        }
    }
    const double e_ssm = rel_inf(rssm, gssm, owned_ssm);
    printf("  %-20s norm %d conv layout %d%s, %d part%s: out %.2e, ssm %.2e, conv %s, padded %s, other slots %s\n", v.name, norm,
           ds_layout, odd ? " odd strides" : "", split ? 3 : 1, split ? "s" : "", e_out, e_ssm, conv_exact ? "exact" : "WRONG", untouched ? "untouched" : "WRITTEN",
           others ? "identical" : "CHANGED");
    /* the bounds: bf16 operands of every product (q, k, w, u, vn, h, P rounded) against a float64
     * recurrence over up to 70 tokens */
    KT_CHECK(e_out < 2e-2);
    KT_CHECK(e_ssm < 2e-2);
    KT_CHECK(conv_exact);
    KT_CHECK(untouched);
    KT_CHECK(others);
}


int main(void)
{
    int odd = 0;
    for (const variant &v : variants) {
        /* the descriptor gives each kernel at least its struct (else the kernel returns at once) */
        int lds[4];
        kt_gdn_prefill_lds(v.bt, DK, DV, v.bv, v.nw, v.pf, lds);
        KT_CHECK(v.lds_prep <= (size_t)lds[0] && v.lds_wy <= (size_t)lds[1] && v.lds_state <= (size_t)lds[2] &&
                 v.lds_out <= (size_t)lds[3]);
        /* both z / out paths (paired words, elements) under the norm and without it, over the variants;
         * the second in parts in sm_90's layout (the parts' chunk ranges are the same code in every
         * layout; a split run costs ~14 s of emulation) */
        run(v, 1, 0, odd, 0);
        run(v, 0, 1, !odd, KT_EMU_LAYOUT == 1);
        odd = !odd;
    }
    KT_TEST_END();
}
