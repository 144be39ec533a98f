/* test_gdn_prefetch_emu.cpp: templates/gdn/decode.hip's PF (the OB forms' L2 prefetch of the state of
 * the block `ahead` on), emulated on the host: for every block, the lines it prefetches are exactly
 * the 128-byte lines the block `ahead` after it in the grid's x, y, z order loads itself (none where
 * that block is past the grid or its sequence is padded, or this one's is). One form a path: the
 * slot read with the metadata (MT 1) and after the state's loads (MT 8), in both state layouts, at
 * several distances. The step's values are not checked here (test_gdn_emu.cpp does). */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include "emu_prelude.h"
#include "abi/gdn.h"
#include "kt_test.h"

#define KT_DTYPE bf16
#define KT_DK 128
#define KT_DV 128

namespace va {
#define KT_VK 0
#define KT_BV 128
#define KT_NW 8
#define KT_KPT 8
#define KT_MT 1
#define KT_OB 2
#define KT_PS 0
#define KT_PF 1
#include "gdn_emu_variant.inc"
}
namespace vb {
#define KT_VK 0
#define KT_BV 64
#define KT_NW 4
#define KT_KPT 16
#define KT_MT 8
#define KT_OB 2
#define KT_PS 0
#define KT_PF 1
#include "gdn_emu_variant.inc"
}
namespace vc {
#define KT_VK 1
#define KT_BV 32
#define KT_NW 2
#define KT_KPT 8
#define KT_MT 1
#define KT_OB 2
#define KT_PS 0
#define KT_PF 1
#include "gdn_emu_variant.inc"
}
namespace vd {
#define KT_VK 1
#define KT_BV 128
#define KT_NW 8
#define KT_KPT 4
#define KT_MT 8
#define KT_OB 2
#define KT_PS 0
#define KT_PF 1
#include "gdn_emu_variant.inc"
}

struct form { const char *name; void (*kernel)(kt_gdn_decode_args); int vk, bv, nw; };
static const form forms[] = {{"vk0 bv128 mt1 (slot with the metadata)", va::kernel, 0, 128, 8},
                             {"vk0 bv64 mt8 (slot after the loads)", vb::kernel, 0, 64, 4},
                             {"vk1 bv32 mt1 (slot with the metadata)", vc::kernel, 1, 32, 2},
                             {"vk1 bv128 mt8 (slot after the loads)", vd::kernel, 1, 128, 8}};

enum { H = 2, HV = 4, DK = 128, DV = 128, KW = 4, CDIM = 2 * H * DK + HV * DV, SLOTS = 12, BATCH = 5, LCOL = KW - 1 + 8 };
static const int slot_of[BATCH] = {7, 2, -1, 10, 4};   /* sequence 2 is padded */

/* the emulation's block id (emu_prelude.h's log) of grid place (vb, h, seq) */
static long block_id(int vb, int h, int seq) { return ((long)seq * 100000 + h) * 1000 + vb; }

static void check_form(const form &f, int ahead)
{
    const long long ssm_slot = (long long)HV * DK * DV;
    std::vector<float> ssm((size_t)(SLOTS * ssm_slot + 32), 0.01f);
    float *pool = (float *)(((uintptr_t)ssm.data() + 127) & ~(uintptr_t)127);   /* lines from the pool's base */
    std::vector<unsigned short> conv((size_t)SLOTS * CDIM * LCOL, 0x3c00), cw((size_t)CDIM * KW, 0x3c00), nw(DV, 0x3f80);
    int qsl[BATCH + 1];
    for (int i = 0; i <= BATCH; i++) qsl[i] = i;   /* one token a sequence */
    std::vector<unsigned short> qkv((size_t)BATCH * CDIM, 0x3c00), z((size_t)BATCH * HV * DV, 0x3c00),
        ab((size_t)BATCH * HV * 2, 0x3c00), out((size_t)BATCH * HV * DV);
    float A_log[HV] = {-1, -1, -1, -1}, dt_bias[HV] = {0, 0, 0, 0};
    std::vector<unsigned> counters((size_t)BATCH * (H + HV), 0u);

    kt_gdn_decode_args a;
    memset(&a, 0, sizeof a);
    a.qkv = qkv.data(); a.z = z.data(); a.a = ab.data(); a.b = ab.data() + BATCH * HV;
    a.A_log = A_log; a.dt_bias = dt_bias; a.conv_weight = cw.data(); a.norm_weight = nw.data();
    a.conv_state = conv.data(); a.ssm_state = pool; a.query_start_loc = qsl; a.state_indices = slot_of; a.out = out.data();
    a.conv_slot_stride = (long long)CDIM * LCOL; a.ssm_slot_stride = ssm_slot; a.conv_chan_stride = LCOL; a.conv_col_stride = 1;
    a.qkv_stride = CDIM; a.z_stride = HV * DV; a.ab_stride = HV; a.out_stride = HV * DV;
    a.batch = BATCH; a.num_k_heads = H; a.num_v_heads = HV; a.dk = DK; a.dv = DV; a.conv_kw = KW; a.conv_len = LCOL;
    a.max_tokens = 1; a.state_vk = f.vk; a.scale = 0.1f; a.norm_eps = 1e-6f; a.counters = counters.data();
    a.ahead = ahead;

    kt_emu_pf_log.clear();
    const int nvb = DV / f.bv, items = nvb * HV * BATCH;
    kt_emu_run(f.kernel, a, nvb, HV, BATCH, f.nw * KT_WAVE);

    std::map<long, std::set<long>> got;   /* issuing block -> its prefetched lines */
    for (const auto &e : kt_emu_pf_log) {
        const long off = (long)(e.second - (const char *)pool);
        KT_CHECK(off >= 0 && off < SLOTS * ssm_slot * 4);
        got[e.first].insert(off / 128);
    }
    int wrong = 0, issuing = 0;
    for (int seq = 0; seq < BATCH; seq++)
        for (int h = 0; h < HV; h++)
            for (int vb = 0; vb < nvb; vb++) {
                std::set<long> want;
                const int wa = (seq * HV + h) * nvb + vb + ahead;
                if (slot_of[seq] >= 0 && wa < items) {
                    const int vba = wa % nvb, ha = wa / nvb % HV, sa = wa / nvb / HV;
                    if (slot_of[sa] >= 0) {   /* the lines block wa loads: its columns' (vk 0) or rows' (vk 1) state */
                        const long head = (long)slot_of[sa] * ssm_slot + (long)ha * DK * DV;
                        for (int i = 0; i < DK; i++)
                            for (int c = vba * f.bv; c < (vba + 1) * f.bv; c++)
                                want.insert((head + (f.vk ? (long)c * DK + i : (long)i * DV + c)) * 4 / 128);
                    }
                }
                const std::set<long> &g = got[block_id(vb, h, seq)];
                wrong += g != want;
                issuing += !g.empty();
            }
    printf("  %-40s ahead %2d: %5zu prefetches from %2d blocks, %d blocks wrong\n", f.name, ahead, kt_emu_pf_log.size(),
           issuing, wrong);
    KT_CHECK_INT(wrong, 0);
    KT_CHECK(ahead >= items || issuing > 0);
}

int main()
{
    for (const form &f : forms)
        for (int ahead : {1, 3, 7, 64}) check_form(f, ahead);
    KT_TEST_END();
}
