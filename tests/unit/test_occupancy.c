/* test_occupancy: the occupancy model against the figures it must reproduce: the seed's gfx1201
 * measurements, LLVM's occupancy-levels.ll values, the ref's LDS example, gfx942 with AGPRs and
 * the CUDA occupancy calculator's rules for sm_90a. */
#include "kt_test.h"
#include "occupancy.h"

static kt_resources res(int vgpr, int agpr, int sgpr, int lds)
{
    kt_resources r = {0};
    r.vgpr = vgpr;
    r.agpr = agpr;
    r.sgpr = sgpr;
    r.lds_bytes = lds;
    return r;
}

static int waves(const char *target, kt_resources r, int wg)
{
    return occupancy_waves(kt_target_find(target), &r, wg, NULL, 0);
}

static kt_occupancy occ(const char *target, kt_resources r, int wg)
{
    kt_occupancy o;
    occupancy_compute(kt_target_find(target), &r, wg, &o, NULL, 0);
    return o;
}

static void test_seed_gfx1201(void)
{
    /* Seed: 1536/191 = 8.04 -> 8 waves/SIMD; 193 allocates 216 -> 7. */
    kt_occupancy o = occ("gfx1201", res(191, 0, 0, 4096), 64);
    KT_CHECK_INT(o.waves, 8);
    KT_CHECK_INT(o.groups, 16);
    KT_CHECK(strcmp(o.limit, "vgpr") == 0);
    o = occ("gfx1201", res(193, 0, 0, 4096), 64);
    KT_CHECK_INT(o.waves, 7);
    KT_CHECK_INT(o.groups, 14);
    KT_CHECK(strcmp(o.limit, "vgpr") == 0);
    for (int wg = 32; wg <= 256; wg *= 2) KT_CHECK_INT(waves("gfx1201", res(191, 0, 0, 4096), wg), 8);
    /* Workgroups are placed whole: 8-wave workgroups at 193 VGPRs fit 3 to a WGP (24 of the
     * 28 slots), 6 waves/SIMD, where LLVM's workgroup-blind remark says 7. */
    o = occ("gfx1201", res(193, 0, 0, 4096), 256);
    KT_CHECK_INT(o.groups, 3);
    KT_CHECK_INT(o.waves, 6);
    /* Seed's quantized GEMM: 128-thread workgroups, 19712 B LDS -> 3 WG/CU = 6 per WGP,
     * 6 waves/SIMD, LDS-bound; the LDS union (<= 16 KiB) -> 4 WG/CU, 8 waves/SIMD. */
    o = occ("gfx1201", res(141, 0, 0, 19712), 128);
    KT_CHECK_INT(o.groups, 6);
    KT_CHECK_INT(o.waves, 6);
    KT_CHECK(strcmp(o.limit, "lds") == 0);
    o = occ("gfx1201", res(141, 0, 0, 16384), 128);
    KT_CHECK_INT(o.groups, 8);
    KT_CHECK_INT(o.waves, 8);
}

static void test_llvm_levels(void)
{
    /* occupancy-levels.ll, GFX1100 prefix (gfx1100 and gfx1200 share it), wave32. */
    static const int vgpr[] = {96, 128, 168, 200, 256}, want[] = {16, 10, 9, 7, 5};
    for (int i = 0; i < 5; i++) {
        KT_CHECK_INT(waves("gfx1100", res(vgpr[i], 0, 0, 0), 32), want[i]);
        KT_CHECK_INT(waves("gfx1201", res(vgpr[i], 0, 0, 0), 64), want[i]);
    }
    /* At 96 VGPRs the VGPR limit equals the 16 wave slots: the slots are reported. */
    KT_CHECK(strcmp(occ("gfx1201", res(96, 0, 0, 0), 64).limit, "waves") == 0);
    /* wave64 on RDNA: 768 VGPRs per lane, granule 12 -> 128 VGPRs give 5. */
    kt_resources r = res(128, 0, 0, 0);
    r.wave_size = 64;
    KT_CHECK_INT(waves("gfx1100", r, 64), 5);
    /* The ref's LDS example: 8252 B, 64 threads in WGP mode -> 15 WGs x 2 waves / 4 SIMDs -> 8. */
    kt_occupancy o = occ("gfx1100", res(32, 0, 0, 8252), 64);
    KT_CHECK_INT(o.groups, 15);
    KT_CHECK_INT(o.waves, 8);
    KT_CHECK(strcmp(o.limit, "lds") == 0);
}

static void test_gfx942(void)
{
    KT_CHECK_INT(waves("gfx942", res(128, 0, 0, 0), 256), 4);
    KT_CHECK_INT(waves("gfx942", res(256, 0, 0, 0), 256), 2);
    KT_CHECK_INT(waves("gfx942", res(72, 0, 0, 0), 64), 7);   /* gfx950 rule in occupancy-levels.ll */
    KT_CHECK_INT(waves("gfx942", res(32, 0, 0, 0), 64), 8);   /* capped by 8 slots */
    /* AGPRs share the 512-entry file; .vgpr_count is already the total align(arch, 4) + agpr,
     * so the AGPR count must not be added again. */
    KT_CHECK_INT(waves("gfx942", res(256, 128, 0, 0), 256), 2);  /* 128 arch + 128 acc */
    KT_CHECK_INT(waves("gfx942", res(134, 2, 0, 0), 256), 3);    /* 132 + 2 = 134 -> 136 */
    KT_CHECK_INT(waves("gfx942", res(129, 0, 0, 0), 256), 3);    /* 129 -> 136 */
    KT_CHECK_INT(waves("gfx942", res(512, 256, 0, 0), 64), 1);
    KT_CHECK_INT(waves("gfx942", res(5, 1, 0, 0), 64), 8);       /* the fixture's k_acc: 5 total, not 9 */
    char why[256];
    KT_CHECK_INT(occupancy_waves(kt_target_find("gfx942"), &(kt_resources){.vgpr = 513, .agpr = 257},
                                 64, why, sizeof why), 0);
    KT_CHECK_CONTAINS(why, "does not fit");
    /* SGPRs still limit on gfx9: > 100 -> 7 waves. */
    kt_occupancy o = occ("gfx942", res(32, 0, 102, 0), 64);
    KT_CHECK_INT(o.waves, 7);
    KT_CHECK(strcmp(o.limit, "sgpr") == 0);
    KT_CHECK_INT(waves("gfx942", res(32, 0, 96, 0), 64), 8);
    KT_CHECK_INT(waves("gfx1201", res(32, 0, 106, 0), 64), 16); /* gfx10+: SGPRs never limit */
    /* LDS: 64 KiB per CU over 4 SIMDs; 16 KiB per 4-wave workgroup -> 4 WGs -> 4 waves/SIMD. */
    o = occ("gfx942", res(32, 0, 0, 16384), 256);
    KT_CHECK_INT(o.groups, 4);
    KT_CHECK_INT(o.waves, 4);
    KT_CHECK(strcmp(o.limit, "lds") == 0);
    /* 16-wave workgroups at 256 VGPRs: 2 waves x 4 SIMDs = 8 slots < 16, nothing resides. */
    o = occ("gfx942", res(256, 0, 0, 0), 1024);
    KT_CHECK_INT(o.waves, 0);
    KT_CHECK(strcmp(o.limit, "vgpr") == 0);
}

static void test_sm90a(void)
{
    /* 255 regs -> 8160 -> 8192 per warp: 2 warps per sub-partition, 8 warps, 2 blocks of 4. */
    kt_occupancy o = occ("sm_90a", res(255, 0, 0, 0), 128);
    KT_CHECK_INT(o.waves, 8);
    KT_CHECK_INT(o.groups, 2);
    KT_CHECK(strcmp(o.limit, "regs") == 0);
    /* 32 regs, 256 threads: registers and warp slots both allow 64 warps; slots are reported. */
    o = occ("sm_90a", res(32, 0, 0, 0), 256);
    KT_CHECK_INT(o.waves, 64);
    KT_CHECK_INT(o.groups, 8);
    KT_CHECK(strcmp(o.limit, "waves") == 0);
    /* 48 KiB static + 1 KiB reserved = 50176 B: 233472 / 50176 = 4 blocks of 4 warps. */
    o = occ("sm_90a", res(32, 0, 0, 49152), 128);
    KT_CHECK_INT(o.waves, 16);
    KT_CHECK_INT(o.groups, 4);
    KT_CHECK(strcmp(o.limit, "smem") == 0);
    /* Per-sub-partition registers: 40 regs = 1280 per warp, 12 per sub-partition -> 48 warps,
     * 24 blocks of 2 (the whole-SM division 65536/1280 = 51 would give 25 blocks, 50 warps). */
    o = occ("sm_90a", res(40, 0, 0, 0), 64);
    KT_CHECK_INT(o.waves, 48);
    KT_CHECK(strcmp(o.limit, "regs") == 0);
    /* 168 regs = 5376 per warp: 3 per sub-partition, 12 warps, one 8-warp block. */
    KT_CHECK_INT(waves("sm_90a", res(168, 0, 0, 0), 256), 8);
    /* One-warp blocks: 32 resident blocks bind before the 64 warp slots. */
    o = occ("sm_90a", res(16, 0, 0, 0), 32);
    KT_CHECK_INT(o.waves, 32);
    KT_CHECK(strcmp(o.limit, "blocks") == 0);
    /* 1024 threads at 255 regs: 32 x 8192 > 65536 registers per block. */
    o = occ("sm_90a", res(255, 0, 0, 0), 1024);
    KT_CHECK_INT(o.waves, 0);
    KT_CHECK(strcmp(o.limit, "regs") == 0);
    KT_CHECK_INT(waves("sm_90a", res(64, 0, 0, 0), 1024), 32);
    KT_CHECK_INT(waves("sm_90a", res(32, 0, 0, 49153), 128), 0);
}

static void test_edges(void)
{
    char why[256];
    const kt_target *t = kt_target_find("gfx1201");
    kt_resources r = res(64, 0, 0, 65537);
    KT_CHECK_INT(occupancy_waves(t, &r, 64, why, sizeof why), 0);
    KT_CHECK_CONTAINS(why, "65537 B LDS");
    r = res(64, 0, 0, 65536);
    KT_CHECK_INT(occupancy_waves(t, &r, 64, why, sizeof why), 1); /* 2 WGs x 2 waves / 4 SIMDs */
    r = res(257, 0, 0, 0);
    KT_CHECK_INT(occupancy_waves(t, &r, 64, why, sizeof why), 0);
    r = res(64, 0, 0, 0);
    KT_CHECK_INT(occupancy_waves(t, &r, 0, why, sizeof why), 0);
    KT_CHECK_INT(occupancy_waves(t, &r, 1025, why, sizeof why), 0);
    KT_CHECK_CONTAINS(why, "1025");
    r.max_wg_size = 256;
    KT_CHECK_INT(occupancy_waves(t, &r, 512, why, sizeof why), 0);
    KT_CHECK_CONTAINS(why, "compiled for");
    r.max_wg_size = 0;
    /* The explanation names the binding limit and every limit's figure. */
    r = res(191, 0, 0, 4096);
    KT_CHECK_INT(occupancy_waves(t, &r, 64, why, sizeof why), 8);
    KT_CHECK_CONTAINS(why, "vgpr binds: 8 waves/SIMD, 16 WG/pool");
    KT_CHECK_CONTAINS(why, "191 VGPRs alloc 192");
    KT_CHECK_CONTAINS(why, "lds 32");
    /* A tiny buffer truncates, never overflows. */
    char tiny[8];
    KT_CHECK_INT(occupancy_waves(t, &r, 64, tiny, sizeof tiny), 8);
    KT_CHECK_INT(strlen(tiny), 7);
}

/* Shared memory taken at launch: it is charged like static, and past the static 48 KiB on sm_90a
 * only up to the opt-in maximum (228 KiB less the 1 KiB reserve); AMD has one limit either way. */
static void test_dynamic_shared(void)
{
    kt_resources r = res(170, 0, 0, 0);
    r.lds_dynamic_bytes = 4 * 48 * 1024 + 1024;   /* wgmma 128x256x64, 4 stages */
    kt_occupancy o = occ("sm_90a", r, 256);
    KT_CHECK_INT(o.waves, 8);
    KT_CHECK_INT(o.groups, 1);
    r = res(106, 0, 0, 0);
    r.lds_dynamic_bytes = 4 * 32 * 1024 + 1024;   /* 132096 B + 1 KiB reserve: one block, by smem */
    o = occ("sm_90a", r, 256);
    KT_CHECK_INT(o.groups, 1);
    KT_CHECK(strcmp(o.limit, "smem") == 0);
    KT_CHECK_INT(kt_target_lds_at_launch_max(kt_target_find("sm_90a")), 232448);
    r.lds_dynamic_bytes = 232448;
    KT_CHECK_INT(occ("sm_90a", r, 128).groups, 1);
    r.lds_dynamic_bytes = 232449;
    KT_CHECK_INT(waves("sm_90a", r, 128), 0);
    r = res(32, 0, 0, 49152);                      /* static alone keeps the 48 KiB limit */
    r.lds_bytes = 49153;
    KT_CHECK_INT(waves("sm_90a", r, 128), 0);
    r = res(64, 0, 16, 16384);
    r.lds_dynamic_bytes = 49152;                   /* gfx1201: 64 KiB together */
    KT_CHECK(waves("gfx1201", r, 128) > 0);
    r.lds_dynamic_bytes = 49153;
    KT_CHECK_INT(waves("gfx1201", r, 128), 0);
}

int main(void)
{
    test_dynamic_shared();
    test_seed_gfx1201();
    test_llvm_levels();
    test_gfx942();
    test_sm90a();
    test_edges();
    KT_TEST_END();
}
