/* target.h: the one table that describes every GPU target ktune builds for.
 * Adding a target is adding a row here and a prelude in templates/arch/. */
#ifndef KT_TARGET_H
#define KT_TARGET_H

typedef enum { KT_VENDOR_AMD = 1, KT_VENDOR_NVIDIA = 2 } kt_vendor;

typedef struct kt_target {
    const char *name;          /* "gfx1201", "sm_90a" */
    kt_vendor vendor;
    const char *prelude;       /* header under templates/, e.g. "arch/gfx12.h" */
    const char *mma;           /* matrix instruction family, e.g. "wmma-gfx12" */
    int wave_size;             /* lanes per wave / warp */
    int lds_per_workgroup;     /* bytes one workgroup/block may allocate */
    int lds_per_pool;          /* bytes of the LDS/shared pool workgroups share (WGP in WGP mode, CU, SM) */
    int simds_per_pool;        /* SIMDs fed by that pool (AMD); 1 on NVIDIA (the SM is the unit) */
    int regs_per_simd;         /* AMD: VGPRs per SIMD lane (1536 on RDNA3/4); NVIDIA: registers per SM */
    int reg_granule;           /* AMD: VGPR allocation granule; NVIDIA: registers per warp allocation unit */
    int max_waves_per_simd;    /* AMD: wave slots per SIMD; NVIDIA: warps per SM */
    int max_regs_per_thread;   /* 256 VGPRs (512 with AGPRs on gfx90a/942), 255 on NVIDIA */
    int max_blocks_per_pool;   /* resident workgroup/block cap per pool (0 = none modelled) */
    int lds_granule;           /* allocation granule of LDS/shared memory, bytes */
    int lds_reserved_per_block;/* bytes the hardware reserves per block (1 KiB on sm_80+) */
    int unified_agpr;          /* 1 where AGPRs share the VGPR file (gfx90a, gfx942) */
} kt_target;

/* Look a target up by name; NULL when unknown. */
const kt_target *kt_target_find(const char *name);
/* The target whose code runs on a device reporting `arch` ("sm_90" -> sm_90a, "gfx1201" ->
 * gfx1201): the row named arch, else the row named arch + "a" (NVIDIA's arch-specific variant).
 * NULL when none. */
const kt_target *kt_target_for_arch(const char *arch);
/* Shared memory one workgroup may have when it takes it at launch (dynamic): NVIDIA's opt-in
 * maximum, what the SM holds less the driver's per-block reserve; on AMD the same 64 KiB as
 * static LDS. */
int kt_target_lds_at_launch_max(const kt_target *t);
/* Number of rows, and the i-th row (for listings and loops). */
int kt_target_count(void);
const kt_target *kt_target_at(int i);

#endif
/* Note on sm_90a lds_per_workgroup: 48 KiB is the static __shared__ limit; templates use static
 * shared memory, so that is the budget a recipe may spend (227 KiB needs dynamic opt-in). */
