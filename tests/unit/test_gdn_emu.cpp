/* test_gdn_emu.cpp: templates/gdn/decode.hip run on the host (emu_prelude.h: a thread per GPU
 * thread) against the float64 reference, over chains of steps with the state carried: plain
 * decode, and speculative steps of 1 to 4 tokens with random partial acceptance resumed, in
 * one batch with mixed token counts, a padded sequence, scattered slots and both conv-state
 * layouts. Two references: the ABI's own (runtime/gdn_ref.c, pools compared after the chain) and
 * an independent truth for the speculative chains: the plain per-token recurrence over the
 * accepted tokens only, whose outputs every speculative step must reproduce. Variants cover
 * every reduction path of the template at wave 32: rows split in-thread, over lanes, over waves;
 * the q/k norms folded into the row sums (OB 0) and in a pass of their own (OB 2).
 * test_gdn_emu64.cpp is this file at wave 64 (CDNA), over the forms gfx942 builds.
 * Last, the descriptor's own verification set (runtime/op_gdn.c: buffers, fill, args_for, bind,
 * launches, ref_cpu, rel_error, as the worker runs them) on the emulated kernel, within its bound,
 * and a corrupted state element outside it. Links libkt. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#ifndef KT_EMU_ASYNC_COPY
#define KT_EMU_ASYNC_COPY 1   /* the persistent forms copy the next item's state, as sm_80 on do */
#endif
#include "emu_prelude.h"
#include "abi/gdn.h"
#include "runtime/gdn_ref.h"
extern "C" {
#include "runtime/op.h"
}
#include "tuner/random_inputs.h"
#include "kt_test.h"

#define KT_DTYPE bf16
#define KT_DK 128
#define KT_DV 128

struct variant {
    const char *name;
    void (*kernel)(kt_gdn_decode_args);
    int vk, bv, nw, kpt, mt, ps, pf;  /* the kernel's axes; its block is nw * KT_WAVE threads */
};

#if KT_WAVE == 32
namespace va {
#define KT_VK 0
#define KT_BV 128
#define KT_NW 8
#define KT_KPT 8
#define KT_MT 8
#define KT_OB 2
#define KT_PS 0
#define KT_PF 1
#include "gdn_emu_variant.inc"
}
namespace vb {
#define KT_VK 1
#define KT_BV 128
#define KT_NW 8
#define KT_KPT 4
#define KT_MT 8
#define KT_OB 0
#define KT_PS 0
#include "gdn_emu_variant.inc"
}
namespace vc {
#define KT_VK 1
#define KT_BV 32
#define KT_NW 2
#define KT_KPT 8
#define KT_MT 8
#define KT_OB 0
#define KT_PS 2
#include "gdn_emu_variant.inc"
}
namespace vd {
#define KT_VK 0
#define KT_BV 64
#define KT_NW 4
#define KT_KPT 16
#define KT_MT 8
#define KT_OB 0
#define KT_PS 0
#include "gdn_emu_variant.inc"
}

namespace ve {
#define KT_VK 1
#define KT_BV 128
#define KT_NW 16
#define KT_KPT 16
#define KT_MT 1
#define KT_OB 0
#define KT_PS 0
#include "gdn_emu_variant.inc"
}

namespace vf {
#define KT_VK 0
#define KT_BV 64
#define KT_NW 4
#define KT_KPT 16
#define KT_MT 8
#define KT_OB 0
#define KT_PS 2
#include "gdn_emu_variant.inc"
}

static const variant variants[] = {
    {"vk0 bv128 nw8 kpt8 ob2 pf1 (lanes + 8 waves; norms a pass)", va::kernel, 0, 128, 8, 8, 8, 0, 1},
    {"vk1 bv128 nw8 kpt4 (32 lanes, no LDS)", vb::kernel, 1, 128, 8, 4, 8, 0, 0},
    {"vk1 bv32 nw2 kpt8 ps2 (16 lanes, 4 blocks a head; rows in pieces, copy ahead)", vc::kernel, 1, 32, 2, 8, 8, 2, 0},
    {"vk0 bv64 nw4 kpt16 (lanes + 4 waves, 2 blocks a head)", vd::kernel, 0, 64, 4, 16, 8, 0, 0},
    {"vk1 bv128 nw16 kpt16 mt1 (one token a step, replays; a whole head, 8 lanes)", ve::kernel, 1, 128, 16, 16, 1, 0, 0},
    {"vk0 bv64 nw4 kpt16 ps2 (3 blocks step 40 items, copy ahead)", vf::kernel, 0, 64, 4, 16, 8, 2, 0},
};

#else
/* wave 64 (test_gdn_emu64.cpp: CDNA's waves): the forms gfx942 builds without spilling, the row sums
 * over half a wave and 8 waves (VK 0), over 16-lane groups four to a wave (VK 1, 4 blocks a head) */
namespace va {
#define KT_VK 0
#define KT_BV 128
#define KT_NW 8
#define KT_KPT 8
#define KT_MT 8
#define KT_OB 0
#define KT_PS 0
#include "gdn_emu_variant.inc"
}
namespace vb {
#define KT_VK 1
#define KT_BV 32
#define KT_NW 8
#define KT_KPT 4
#define KT_MT 8
#define KT_OB 0
#define KT_PS 0
#include "gdn_emu_variant.inc"
}
namespace vc {
#define KT_VK 1
#define KT_BV 32
#define KT_NW 8
#define KT_KPT 4
#define KT_MT 8
#define KT_OB 0
#define KT_PS 2
#include "gdn_emu_variant.inc"
}
static const variant variants[] = {
    {"w64 vk0 bv128 nw8 kpt8 (half-wave lanes + 8 waves)", va::kernel, 0, 128, 8, 8, 8, 0, 0},
    {"w64 vk1 bv32 nw8 kpt4 (16 lanes, 4 blocks a head)", vb::kernel, 1, 32, 8, 4, 8, 0, 0},
    {"w64 vk1 bv32 nw8 kpt4 ps2 (3 blocks step 80 items, no copy)", vc::kernel, 1, 32, 8, 4, 8, 2, 0},
};
#endif

enum { H = 2, HV = 4, DK = 128, DV = 128, KW = 4, CDIM = 2 * H * DK + HV * DV, SLOTS = 12, BATCH = 5, LCOL = KW - 1 + 8 };
static const int slot_of[BATCH] = {7, 2, -1, 10, 4};   /* sequence 2 is padded */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(double lo, double hi) { return lo + (hi - lo) * (double)(kt_rand_splitmix64(&rng) >> 11) * 0x1p-53; }
static unsigned short bf(double x) { return kt_f32_to_bf16((float)x); }

struct pools {
    std::vector<unsigned short> conv;
    std::vector<float> ssm, log;
    std::vector<double> rconv, rssm, rlog;
};

static double rel(const std::vector<double> &ref, const double *x, size_t n, const size_t *idx = nullptr)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t k = idx ? idx[i] : i;
        if (!std::isfinite(x[k])) return INFINITY;
        num += (x[k] - ref[k]) * (x[k] - ref[k]);
        den += ref[k] * ref[k];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* One chain: steps of per-sequence token counts; spec 1 for speculative steps. */
static void chain(const variant &v, int spec, int ds_layout, int norm, int steps)
{
    const int conv_chan = ds_layout ? 1 : LCOL, conv_col = ds_layout ? CDIM : 1;
    const long long conv_slot = (long long)CDIM * LCOL, ssm_slot = (long long)HV * DK * DV;
    const long long log_slot = (long long)HV * KT_GDN_MAX_TOKENS * DV * 2;
    pools p;
    p.conv.resize((size_t)(SLOTS * conv_slot));
    p.ssm.resize((size_t)(SLOTS * ssm_slot));
    p.log.resize((size_t)(SLOTS * log_slot));
    for (auto &x : p.conv) x = bf(urand(-1, 1));
    for (auto &x : p.ssm) x = (float)urand(-1, 1);
    for (size_t i = 0; i < p.log.size(); i += 2) { p.log[i] = (float)urand(-1, 1); p.log[i + 1] = (float)urand(-0.5, -0.01); }
    for (auto x : p.conv) p.rconv.push_back(kt_bf16_to_f32(x));
    p.rssm.assign(p.ssm.begin(), p.ssm.end());
    p.rlog.assign(p.log.begin(), p.log.end());
    /* the truth's own pools: plain semantics, the history in columns 0 .. kw-2 of the same layout */
    std::vector<double> tconv = p.rconv, tssm = p.rssm;
    const std::vector<unsigned short> conv0 = p.conv;

    std::vector<unsigned short> cw((size_t)CDIM * KW), nw(DV);
    for (auto &x : cw) x = bf(urand(-0.6, 0.6));
    for (auto &x : nw) x = bf(urand(0.5, 1.5));
    float A_log[HV], dt_bias[HV];
    /* the last value head decays hard (g down to about -160): a few tokens take the multi-token
     * forms' decay scale below its fold threshold, and e^g to zero */
    for (int h = 0; h < HV; h++) {
        A_log[h] = h == HV - 1 ? (float)urand(2.5, 4) : (float)urand(-3, -1);
        dt_bias[h] = (float)urand(-1, 1);
    }
    std::vector<unsigned> counters((size_t)BATCH * (H + HV), 0u);

    int na[BATCH] = {0, 0, 0, 0, 0};   /* the first step follows a prefill: nothing to replay */
    double worst_out = 0, worst_truth = 0;
    for (int st = 0; st < steps; st++) {
        int n[BATCH], qsl[BATCH + 1] = {0};
        for (int i = 0; i < BATCH; i++) {
            n[i] = spec ? 1 + (int)(kt_rand_splitmix64(&rng) % (v.mt < 4 ? v.mt : 4)) : 1;
            qsl[i + 1] = qsl[i] + n[i];
        }
        const int T = qsl[BATCH], qkv_stride = CDIM + 16, zs = HV * DV + 8;
        std::vector<unsigned short> qkv((size_t)T * qkv_stride), z((size_t)T * zs), ab((size_t)T * HV * 2);
        for (auto &x : qkv) x = bf(urand(-1, 1));
        for (auto &x : z) x = bf(urand(-2, 2));
        for (auto &x : ab) x = bf(urand(-2, 2));
        std::vector<unsigned short> out((size_t)T * HV * DV, 0x7FC1u);   /* NaN: unwritten rows stay so */
        std::vector<double> rout((size_t)T * HV * DV, 0.0);

        kt_gdn_decode_args a;
        memset(&a, 0, sizeof a);
        a.qkv = qkv.data(); a.z = z.data(); a.a = ab.data(); a.b = ab.data() + (size_t)T * HV;
        a.A_log = A_log; a.dt_bias = dt_bias; a.conv_weight = cw.data(); a.norm_weight = norm ? nw.data() : nullptr;
        a.conv_state = p.conv.data(); a.ssm_state = p.ssm.data(); a.spec_log = spec ? p.log.data() : nullptr;
        a.query_start_loc = qsl; a.state_indices = slot_of; a.num_accepted = spec ? na : nullptr;
        a.out = out.data();
        a.conv_slot_stride = conv_slot; a.ssm_slot_stride = ssm_slot; a.log_slot_stride = log_slot;
        a.conv_chan_stride = conv_chan; a.conv_col_stride = conv_col;
        a.qkv_stride = qkv_stride; a.z_stride = zs; a.ab_stride = HV; a.out_stride = HV * DV;
        a.batch = BATCH; a.num_k_heads = H; a.num_v_heads = HV; a.dk = DK; a.dv = DV;
        a.conv_kw = KW; a.conv_len = LCOL; a.max_tokens = 4; a.scale = 1.0f / sqrtf((float)DK); a.norm_eps = 1e-6f;
        a.counters = counters.data();
        /* PF's L2 prefetch of the block 3 on (its lines, exactly: test_gdn_prefetch_emu.cpp) */
        a.ahead = 3;
        kt_emu_pf_log.clear();
        if (v.ps) {   /* fewer blocks than items: each steps several, odd strides over heads and sequences */
            kt_emu_dyn_bytes = (size_t)DK * v.bv * 4;
            kt_emu_run(v.kernel, a, 3, 1, 1, v.nw * KT_WAVE);
            kt_emu_dyn_bytes = 0;
        } else {
            kt_emu_run(v.kernel, a, DV / v.bv, HV, BATCH, v.nw * KT_WAVE);
        }
        for (unsigned c : counters) KT_CHECK_INT(c, 0);
        KT_CHECK(v.pf ? !kt_emu_pf_log.empty() : kt_emu_pf_log.empty());   /* only where built */

        kt_gdn_ref_pools rp = {p.rconv.data(), p.rssm.data(), p.rlog.data(), v.vk};
        kt_gdn_ref_step(&a, 0, &rp, rout.data());

        std::vector<double> kout(out.size());
        std::vector<size_t> live;
        for (int i = 0; i < BATCH; i++)
            for (long long e = (long long)qsl[i] * HV * DV; e < (long long)qsl[i + 1] * HV * DV; e++) {
                kout[(size_t)e] = kt_bf16_to_f32(out[(size_t)e]);
                if (slot_of[i] >= 0) live.push_back((size_t)e);
                else KT_CHECK(out[(size_t)e] == 0x7FC1u);   /* padded: untouched */
            }
        const double eo = rel(rout, kout.data(), live.size(), live.data());
        worst_out = eo > worst_out ? eo : worst_out;

        if (spec) {
            /* the truth: the plain recurrence from the committed state over the step's tokens ... */
            std::vector<double> c2 = tconv, s2 = tssm, tout(out.size(), 0.0);
            kt_gdn_decode_args ta = a;
            ta.num_accepted = nullptr; ta.spec_log = nullptr;
            kt_gdn_ref_pools tp = {c2.data(), s2.data(), nullptr, v.vk};
            kt_gdn_ref_step(&ta, 0, &tp, tout.data());
            const double et = rel(tout, kout.data(), live.size(), live.data());
            worst_truth = et > worst_truth ? et : worst_truth;
            /* ... then committed over the tokens the next step accepts */
            int acc[BATCH], aq[BATCH + 1] = {0};
            for (int i = 0; i < BATCH; i++) {
                acc[i] = 1 + (int)(kt_rand_splitmix64(&rng) % (unsigned)n[i]);
                aq[i + 1] = aq[i] + acc[i];
            }
            std::vector<unsigned short> q2((size_t)aq[BATCH] * qkv_stride), z2((size_t)aq[BATCH] * zs), ab2((size_t)aq[BATCH] * HV * 2);
            for (int i = 0; i < BATCH; i++)
                for (int t = 0; t < acc[i]; t++) {
                    const int from = qsl[i] + t, to = aq[i] + t;
                    memcpy(&q2[(size_t)to * qkv_stride], &qkv[(size_t)from * qkv_stride], sizeof(unsigned short) * qkv_stride);
                    memcpy(&ab2[(size_t)to * HV], &ab[(size_t)from * HV], sizeof(unsigned short) * HV);
                    memcpy(&ab2[(size_t)(aq[BATCH] + to) * HV], &ab[(size_t)(T + from) * HV], sizeof(unsigned short) * HV);
                }
            std::vector<double> dummy((size_t)aq[BATCH] * HV * DV);
            ta.qkv = q2.data(); ta.z = z2.data(); ta.a = ab2.data(); ta.b = ab2.data() + (size_t)aq[BATCH] * HV;
            ta.query_start_loc = aq; ta.norm_weight = nullptr;
            kt_gdn_ref_pools cp = {tconv.data(), tssm.data(), nullptr, v.vk};
            kt_gdn_ref_step(&ta, 0, &cp, dummy.data());
            /* the kernel's next step declares exactly these acceptances */
            for (int i = 0; i < BATCH; i++) na[i] = acc[i];
        }
    }
    /* the pools against the ABI's reference: the ssm state (fp32), the conv state (exact copies
     * of 16-bit inputs), the log */
    std::vector<double> ks(p.ssm.begin(), p.ssm.end()), kc(p.conv.size()), kl(p.log.begin(), p.log.end());
    for (size_t i = 0; i < p.conv.size(); i++) kc[i] = kt_bf16_to_f32(p.conv[i]);
    const double es = rel(p.rssm, ks.data(), ks.size()), ec = rel(p.rconv, kc.data(), kc.size());
    const double el = spec ? rel(p.rlog, kl.data(), kl.size()) : 0.0;
    /* slot 0 belongs to no sequence: untouched */
    int slot0 = memcmp(&p.conv[0], &conv0[0], sizeof(unsigned short) * (size_t)conv_slot) == 0;
    printf("  %-52s %s%s%s: out %.2e (truth %.2e) ssm %.2e conv %.2e log %.2e\n", v.name, spec ? "spec" : "plain",
           ds_layout ? " ds" : "", norm ? " norm" : "", worst_out, worst_truth, es, ec, el);
    KT_CHECK(worst_out < 1e-2);
    KT_CHECK(!spec || worst_truth < 2e-2);
    KT_CHECK(es < 1e-4);
    KT_CHECK(ec == 0.0);
    KT_CHECK(el < 1e-4);
    KT_CHECK(slot0);
}


/* The worker's flow over the descriptor, the kernel emulated. */
static void descriptor_flow(const variant &v, const char *key)
{
    const kt_op *op = kt_op_find("gdn_decode");
    KT_CHECK(op != nullptr);
    if (!op) return;
    kt_problem p;
    char err[256];
    KT_CHECK(kt_problem_parse(key, &p, err, sizeof err) == 0);
    char params[160];
    snprintf(params, sizeof params, "{\"dtype\":\"bf16\",\"VK\":%d,\"DK\":128,\"DV\":128,\"BV\":%d,\"NW\":%d,\"KPT\":%d,\"PS\":%d}",
             v.vk, v.bv, v.nw, v.kpt, v.ps);
    kt_variant kv;
    KT_CHECK(kt_variant_parse(op, params, &kv, nullptr, 0, err, sizeof err) == 0);
    kt_op_buffer bufs[KT_OP_MAX_BUFFERS];
    const int nb = op->buffers(&p, bufs);
    std::vector<void *> dev((size_t)nb), init((size_t)nb);
    uint64_t r = 42;
    for (int i = 0; i < nb; i++) {
        const size_t bytes = (bufs[i].bytes + 15) / 16 * 16;
        dev[(size_t)i] = aligned_alloc(16, bytes);
        init[(size_t)i] = aligned_alloc(16, bytes);
        if (bufs[i].role & KT_BUF_IN) op->fill(&p, i, dev[(size_t)i], bufs[i].bytes, &r);
        else memset(dev[(size_t)i], 0xFF, bufs[i].bytes);   /* poisoned outputs */
        memcpy(init[(size_t)i], dev[(size_t)i], bufs[i].bytes);
    }
    kt_gdn_decode_args a;
    op->args_for(&a, &p, dev.data());
    std::vector<unsigned> counters((size_t)(op->workspace_bytes(&kv, &p, 132, 0) / 4), 0u);
    void *ws[1] = {counters.data()};
    long long wsb[1] = {(long long)counters.size() * 4};
    op->bind(&a, &kv, &p, 132, ws, wsb);
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    KT_CHECK(op->launches(&kv, &p, KT_WAVE, 132, l) == 1);
    KT_CHECK((int)l[0].dims.block[0] == v.nw * KT_WAVE);
    KT_CHECK(v.ps == 0 || ((int)l[0].dims.grid[1] == 1 && (int)l[0].dims.shared == 128 * v.bv * 4));
    kt_emu_dyn_bytes = l[0].dims.shared;
    kt_emu_run(v.kernel, a, (int)l[0].dims.grid[0], (int)l[0].dims.grid[1], (int)l[0].dims.grid[2], v.nw * KT_WAVE);
    kt_emu_dyn_bytes = 0;
    for (unsigned c : counters) KT_CHECK_INT(c, 0);
    std::vector<double> ref(op->ref_count(&p));
    op->ref_cpu(&p, init.data(), ref.data());
    const double e = op->rel_error(&p, dev.data(), ref.data()), bound = op->error_bound(p.dtype);
    /* one state element off by 1% of its value: 100x the pools' weight puts it past the bound */
    float *ssm = (float *)dev[5];
    const int live_slot = (int)p.dim[8];   /* sequence 0's slot (op_gdn.c: batch - i) */
    const long long at = (long long)live_slot * p.dim[3] * 128 * 128 + 777;
    ssm[at] += 0.05f * (fabsf(ssm[at]) + 1.0f);
    const double e2 = op->rel_error(&p, dev.data(), ref.data());
    printf("  %-52s %s: error %.2e (bound %.0e); one state element off: %.2e\n", v.name, key, e, bound, e2);
    KT_CHECK(e < bound);
    KT_CHECK(e2 > bound);
    for (int i = 0; i < nb; i++) { free(dev[(size_t)i]); free(init[(size_t)i]); }
}

int main(void)
{
#if KT_WAVE == 32
    /* the gated norm on every variant: where BV < DV the head's last block applies it */
    for (const variant &v : variants) {
        chain(v, 0, 0, 1, 2);
        chain(v, 1, v.vk, 1, 4);
        chain(v, 1, !v.vk, 0, 2);
    }
    descriptor_flow(variants[0], "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=4 norm=1 vk=0 q<=4 batch<=8");
    descriptor_flow(variants[1], "gdn_decode bf16 dk=128 dv=128 hk=1 hv=2 kw=4 norm=0 vk=1 q<=1 batch<=8");
    descriptor_flow(variants[2], "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=3 norm=0 vk=1 q<=8 batch<=4");
    descriptor_flow(variants[3], "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=4 norm=1 vk=0 q<=4 batch<=8");
    descriptor_flow(variants[5], "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=4 norm=1 vk=0 q<=4 batch<=8");
#else
    chain(variants[0], 0, 0, 1, 2);
    chain(variants[0], 1, 1, 1, 3);
    chain(variants[1], 1, 0, 0, 3);
    chain(variants[1], 1, 1, 1, 3);
    descriptor_flow(variants[1], "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=4 norm=0 vk=1 q<=4 batch<=8");
    chain(variants[2], 0, 0, 1, 2);
    chain(variants[2], 1, 1, 1, 3);
    descriptor_flow(variants[2], "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=4 norm=1 vk=1 q<=4 batch<=8");
#endif
    KT_TEST_END();
}
