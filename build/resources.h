/* resources.h: what a compiled kernel costs the hardware, as read back from its ELF. */
#ifndef KT_RESOURCES_H
#define KT_RESOURCES_H

typedef struct kt_resources {
    int vgpr;            /* AMD .vgpr_count: architected VGPRs per work-item, on gfx90a/942 the
                            unified total align(arch, 4) + agpr; NVIDIA registers per thread */
    int sgpr;            /* AMD SGPRs per wave (0 on NVIDIA) */
    int agpr;            /* AMD AccVGPRs (gfx90a/942), else 0 */
    int lds_bytes;       /* static LDS / shared memory per workgroup */
    int lds_dynamic_bytes; /* added by every launch (not in the code object: the recipe's figure
                            for a template that declares its shared memory at launch); 0 else */
    int scratch_bytes;   /* private segment / stack frame per work-item */
    int vgpr_spills;     /* AMD .vgpr_spill_count; NVIDIA: spill stores+loads if known, else 0 */
    int sgpr_spills;     /* AMD .sgpr_spill_count */
    int wave_size;       /* 32 or 64 (NVIDIA: 32) */
    int max_wg_size;     /* max flat workgroup size the code was compiled for (0 if not recorded) */
} kt_resources;

#endif
