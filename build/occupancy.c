/* occupancy.c: resident waves/warps of a kernel from its resources (see occupancy.h).
 *
 * Every limit is first expressed in workgroups per pool (WGP, CU or SM), because workgroups are
 * what the dispatcher places whole: that is how HIP's and CUDA's occupancy queries count. The
 * smallest one binds. AMD waves per SIMD are then ceil(groups * waves_per_group / SIMDs), the
 * busiest SIMD, which is what LLVM's `; Occupancy:` remark reports (its LDS rule rounds up the
 * same way: 15 workgroups of 2 waves over 4 SIMDs -> 8). LLVM's VGPR figure ignores the
 * workgroup size; ours does not, so a workgroup of 8 waves at 193 VGPRs gets 6 waves/SIMD
 * (3 whole workgroups in 28 slots), not LLVM's 7. */
#include <stdio.h>
#include <string.h>
#include "occupancy.h"

/* 1024 threads per workgroup/block is the launch limit of HIP and CUDA on every target here. */
#define OCC_MAX_WG_THREADS 1024
/* NVIDIA allocates registers per SM sub-partition (4 since sm_70); cuda_occupancy.h counts
 * warps per sub-partition, then multiplies, which can be lower than regs_per_sm / regs_per_warp. */
#define OCC_NV_SUBPARTITIONS 4
/* Architected VGPRs a wave can address on every AMD target (v0-v255). */
#define OCC_AMD_MAX_ARCH_VGPR 256

typedef struct occ_limit {
    const char *name;
    int groups;        /* workgroups per pool this resource alone allows */
    char detail[64];   /* the resource figure behind it, for the explanation */
} occ_limit;

typedef struct occ_state {
    occ_limit lim[6];
    int n;
} occ_state;

static int occ_ceil_div(int a, int b) { return (a + b - 1) / b; }
static int occ_round_up(int a, int b) { return b > 0 ? occ_ceil_div(a, b) * b : a; }
static int occ_min(int a, int b) { return a < b ? a : b; }

static occ_limit *occ_add(occ_state *s, const char *name, int groups)
{
    occ_limit *l = &s->lim[s->n++];
    l->name = name;
    l->groups = groups < 0 ? 0 : groups;
    l->detail[0] = '\0';
    return l;
}

/* Record a workgroup that cannot be placed at all. */
static int occ_nofit(kt_occupancy *o, const char *limit, char *why, size_t whylen, const char *msg)
{
    o->waves = 0;
    o->groups = 0;
    o->limit = limit;
    if (why && whylen) snprintf(why, whylen, "does not fit: %s", msg);
    return 0;
}

/* Pick the binding limit (first in insertion order among equals, so slot limits win ties and
 * a kernel at the hardware maximum reads "waves", not a resource) and write the explanation. */
static void occ_finish(kt_occupancy *o, const occ_state *s, const char *unit, int per_group,
                       const char *group_unit, char *why, size_t whylen)
{
    int best = 0;
    for (int i = 1; i < s->n; i++)
        if (s->lim[i].groups < s->lim[best].groups) best = i;
    o->groups = s->lim[best].groups;
    o->limit = s->lim[best].name;
    if (!why || !whylen) return;
    size_t len = (size_t)snprintf(why, whylen, "%s binds: %d %s, %d %s of %d; limits in %s:",
                                  o->limit, o->waves, unit, o->groups, group_unit, per_group, group_unit);
    for (int i = 0; i < s->n && len < whylen; i++)
        len += (size_t)snprintf(why + len, whylen - len, " %s %d%s%s%s", s->lim[i].name, s->lim[i].groups,
                                s->lim[i].detail[0] ? " (" : "", s->lim[i].detail,
                                s->lim[i].detail[0] ? ")" : "");
}

/* gfx8/gfx9 (incl. gfx90a, gfx942) still share the SGPR file between waves; LLVM's
 * getOccupancyWithNumSGPRs thresholds. gfx10+ gives every wave a fixed SGPR allocation. */
static int occ_amd_sgpr_waves(const kt_target *t, int sgpr)
{
    if (sgpr <= 0 || strncmp(t->name, "gfx", 3) != 0) return t->max_waves_per_simd;
    if (t->name[3] != '8' && t->name[3] != '9') return t->max_waves_per_simd;
    int w = sgpr <= 80 ? 10 : sgpr <= 88 ? 9 : sgpr <= 100 ? 8 : 7;
    return occ_min(w, t->max_waves_per_simd);
}

static int occ_amd(const kt_target *t, const kt_resources *r, int wg, kt_occupancy *o,
                   char *why, size_t whylen)
{
    char msg[128];
    int wave = r->wave_size ? r->wave_size : t->wave_size;
    int regs = t->regs_per_simd, gran = t->reg_granule;
    /* RDNA runs wave64 as two wave32 halves: each wave holds twice the lanes, so the per-lane
     * file and granule halve (1536/24 -> 768/12 on gfx11/12; LLVM: wave64 128 VGPRs -> 5). */
    if (wave == 2 * t->wave_size) { regs /= 2; gran /= 2; }
    else if (wave != t->wave_size) {
        snprintf(msg, sizeof msg, "wave size %d is not supported on %s", wave, t->name);
        return occ_nofit(o, "wg_size", why, whylen, msg);
    }
    int simds = t->simds_per_pool;
    int wpg = occ_ceil_div(wg, wave);
    int slots = t->max_waves_per_simd * simds;
    if (wpg > slots) {
        snprintf(msg, sizeof msg, "%d waves per workgroup > %d wave slots per pool", wpg, slots);
        return occ_nofit(o, "waves", why, whylen, msg);
    }

    /* gfx90a/942: AGPRs follow the architected VGPRs (aligned to 4) in one 512-entry file, and the
     * metadata's .vgpr_count already is that total (LLVM emits align(arch, 4) + agpr there; a
     * gfx942 fixture with 1 AGPR reads .vgpr_count 5). Elsewhere AGPRs (gfx908) are a separate
     * file of the same size, so the larger one counts. */
    int nvgpr = t->unified_agpr ? r->vgpr : (r->vgpr > r->agpr ? r->vgpr : r->agpr);
    if ((!t->unified_agpr && r->vgpr > OCC_AMD_MAX_ARCH_VGPR) || nvgpr > t->max_regs_per_thread) {
        snprintf(msg, sizeof msg, "%d VGPRs (+%d AGPRs) exceed %d per wave", r->vgpr, r->agpr,
                 t->max_regs_per_thread);
        return occ_nofit(o, "vgpr", why, whylen, msg);
    }
    const int lds_total = r->lds_bytes + r->lds_dynamic_bytes;   /* AMD: one limit, static or not */
    if (lds_total > t->lds_per_workgroup) {
        snprintf(msg, sizeof msg, "%d B LDS > %d B per workgroup", lds_total, t->lds_per_workgroup);
        return occ_nofit(o, "lds", why, whylen, msg);
    }

    occ_state s = {0};
    occ_add(&s, "waves", slots / wpg);
    if (t->max_blocks_per_pool > 0) occ_add(&s, "blocks", t->max_blocks_per_pool);
    if (nvgpr > 0) {
        int alloc = occ_round_up(nvgpr, gran);
        int vw = occ_min(regs / alloc, t->max_waves_per_simd);
        occ_limit *l = occ_add(&s, "vgpr", vw * simds / wpg);
        snprintf(l->detail, sizeof l->detail, "%d VGPRs alloc %d of %d: %d waves/SIMD", nvgpr, alloc, regs, vw);
    }
    int sw = occ_amd_sgpr_waves(t, r->sgpr);
    if (sw < t->max_waves_per_simd) {
        occ_limit *l = occ_add(&s, "sgpr", sw * simds / wpg);
        snprintf(l->detail, sizeof l->detail, "%d SGPRs: %d waves/SIMD", r->sgpr, sw);
    }
    if (lds_total > 0) {
        int alloc = occ_round_up(lds_total, t->lds_granule);
        occ_limit *l = occ_add(&s, "lds", t->lds_per_pool / alloc);
        snprintf(l->detail, sizeof l->detail, "%d B alloc %d of %d", lds_total, alloc, t->lds_per_pool);
    }
    int best = s.lim[0].groups;
    for (int i = 1; i < s.n; i++) best = occ_min(best, s.lim[i].groups);
    o->waves = occ_ceil_div(best * wpg, simds);
    occ_finish(o, &s, "waves/SIMD", wpg, "WG/pool", why, whylen);
    if (o->groups == 0) {
        /* e.g. 16-wave workgroups at 256 VGPRs on gfx942: 2 waves/SIMD x 4 SIMDs < 16. */
        snprintf(msg, sizeof msg, "%s leaves room for less than one workgroup of %d waves", o->limit, wpg);
        return occ_nofit(o, o->limit, why, whylen, msg);
    }
    return o->waves;
}

static int occ_nvidia(const kt_target *t, const kt_resources *r, int wg, kt_occupancy *o,
                      char *why, size_t whylen)
{
    char msg[128];
    int wpb = occ_ceil_div(wg, t->wave_size);
    if (wpb > t->max_waves_per_simd) {
        snprintf(msg, sizeof msg, "%d warps per block > %d per SM", wpb, t->max_waves_per_simd);
        return occ_nofit(o, "waves", why, whylen, msg);
    }
    if (r->vgpr > t->max_regs_per_thread) {
        snprintf(msg, sizeof msg, "%d registers > %d per thread", r->vgpr, t->max_regs_per_thread);
        return occ_nofit(o, "regs", why, whylen, msg);
    }
    /* beyond the static 48 KiB a block may have what the SM holds less the driver's reserve, once
     * the launcher opts in (dynamic shared memory only) */
    const int smem_total = r->lds_bytes + r->lds_dynamic_bytes;
    const int smem_limit = r->lds_dynamic_bytes ? kt_target_lds_at_launch_max(t) : t->lds_per_workgroup;
    if (smem_total > smem_limit) {
        snprintf(msg, sizeof msg, "%d B shared > %d B per block", smem_total, smem_limit);
        return occ_nofit(o, "smem", why, whylen, msg);
    }
    int rpw = occ_round_up(r->vgpr * t->wave_size, t->reg_granule);
    /* The hardware's per-block check assumes the block's warps spread over all sub-partitions
     * (cuda_occupancy.h "regsAssumedPerCTA"); the block register limit equals the SM's file. */
    if (rpw * occ_round_up(wpb, OCC_NV_SUBPARTITIONS) > t->regs_per_simd) {
        snprintf(msg, sizeof msg, "%d warps x %d registers per warp > %d per block", wpb, rpw, t->regs_per_simd);
        return occ_nofit(o, "regs", why, whylen, msg);
    }

    occ_state s = {0};
    occ_add(&s, "waves", t->max_waves_per_simd / wpb);
    if (t->max_blocks_per_pool > 0) occ_add(&s, "blocks", t->max_blocks_per_pool);
    if (rpw > 0) {
        int warps = (t->regs_per_simd / OCC_NV_SUBPARTITIONS / rpw) * OCC_NV_SUBPARTITIONS;
        occ_limit *l = occ_add(&s, "regs", warps / wpb);
        snprintf(l->detail, sizeof l->detail, "%d regs: %d per warp, %d warps", r->vgpr, rpw, warps);
    }
    /* Shared memory is always charged: the driver reserves lds_reserved_per_block per block. */
    int smem = occ_round_up(smem_total + t->lds_reserved_per_block, t->lds_granule);
    if (smem > 0) {
        occ_limit *l = occ_add(&s, "smem", t->lds_per_pool / smem);
        snprintf(l->detail, sizeof l->detail, "%d B alloc %d of %d", smem_total, smem, t->lds_per_pool);
    }
    int best = s.lim[0].groups;
    for (int i = 1; i < s.n; i++) best = occ_min(best, s.lim[i].groups);
    o->waves = best * wpb;
    occ_finish(o, &s, "warps/SM", wpb, "blocks/SM", why, whylen);
    if (o->groups == 0) {
        snprintf(msg, sizeof msg, "%s leaves room for less than one block of %d warps", o->limit, wpb);
        return occ_nofit(o, o->limit, why, whylen, msg);
    }
    return o->waves;
}

int occupancy_compute(const kt_target *t, const kt_resources *r, int wg_threads,
                      kt_occupancy *out, char *why, size_t whylen)
{
    kt_occupancy local;
    kt_occupancy *o = out ? out : &local;
    char msg[128];
    if (why && whylen) why[0] = '\0';
    if (!t || !r) return occ_nofit(o, "wg_size", why, whylen, "no target or resources");
    if (wg_threads <= 0 || wg_threads > OCC_MAX_WG_THREADS) {
        snprintf(msg, sizeof msg, "workgroup of %d threads (1..%d)", wg_threads, OCC_MAX_WG_THREADS);
        return occ_nofit(o, "wg_size", why, whylen, msg);
    }
    /* A kernel compiled for a smaller maximum workgroup fails to launch with a larger one. */
    if (r->max_wg_size > 0 && wg_threads > r->max_wg_size) {
        snprintf(msg, sizeof msg, "workgroup of %d threads > %d the code was compiled for",
                 wg_threads, r->max_wg_size);
        return occ_nofit(o, "wg_size", why, whylen, msg);
    }
    return t->vendor == KT_VENDOR_NVIDIA ? occ_nvidia(t, r, wg_threads, o, why, whylen)
                                         : occ_amd(t, r, wg_threads, o, why, whylen);
}

int occupancy_waves(const kt_target *t, const kt_resources *r, int wg_threads, char *why, size_t whylen)
{
    return occupancy_compute(t, r, wg_threads, NULL, why, whylen);
}
