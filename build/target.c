/* target.c: the target table. Figures are from ../shared/ref/code-objects.md (checked against
 * LLVM AMDGPUUsage, occupancy-levels.ll and the CUDA occupancy rules); the seed's gfx1201
 * measurements (191 VGPRs -> 8 waves/SIMD, 193 -> 7) are reproduced by tests/unit/test_occupancy. */
#include <stdio.h>
#include <string.h>
#include "target.h"

static const kt_target kt_targets[] = {
    /* name      vendor          prelude          mma            wave lds/wg lds/pool simds regs  gran waves maxr blk  ldsg  rsv  agpr */
    {"gfx1201", KT_VENDOR_AMD,    "arch/gfx12.h",  "wmma-gfx12",  32, 65536, 131072, 4,   1536, 24,  16,   256, 0,   512,  0,    0},
    {"gfx1100", KT_VENDOR_AMD,    "arch/gfx11.h",  "wmma-gfx11",  32, 65536, 131072, 4,   1536, 24,  16,   256, 0,   512,  0,    0},
    {"gfx942",  KT_VENDOR_AMD,    "arch/cdna.h",   "mfma-cdna3",  64, 65536, 65536,  4,   512,  8,   8,    512, 0,   512,  0,    1},
    {"gfx90a",  KT_VENDOR_AMD,    "arch/cdna.h",   "mfma-cdna2",  64, 65536, 65536,  4,   512,  8,   8,    512, 0,   512,  0,    1},
    {"sm_90a",  KT_VENDOR_NVIDIA, "arch/sm90.h",   "mma-sync",    32, 49152,  233472, 1,  65536, 256, 64,   255, 32,  128,  1024, 0},
};

int kt_target_lds_at_launch_max(const kt_target *t)
{
    return t->vendor == KT_VENDOR_NVIDIA ? t->lds_per_pool - t->lds_reserved_per_block : t->lds_per_workgroup;
}

int kt_target_count(void) { return (int)(sizeof kt_targets / sizeof kt_targets[0]); }

const kt_target *kt_target_at(int i)
{
    return (i >= 0 && i < kt_target_count()) ? &kt_targets[i] : NULL;
}

const kt_target *kt_target_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < kt_target_count(); i++)
        if (strcmp(kt_targets[i].name, name) == 0) return &kt_targets[i];
    return NULL;
}

const kt_target *kt_target_for_arch(const char *arch)
{
    if (!arch || !*arch) return NULL;
    const kt_target *t = kt_target_find(arch);
    if (t) return t;
    char with_a[40];
    snprintf(with_a, sizeof with_a, "%sa", arch);
    return kt_target_find(with_a);
}
