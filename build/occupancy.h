/* occupancy.h: how many waves (AMD) or warps (NVIDIA) of a compiled kernel are resident at once,
 * and which resource binds. The rules are those of ../shared/ref/code-objects.md sections B and C:
 * AMD follows LLVM's AMDGPU occupancy model (the `; Occupancy:` remark), NVIDIA follows
 * cuda_occupancy.h (cudaOccupancyMaxActiveBlocksPerMultiprocessor). */
#ifndef KT_OCCUPANCY_H
#define KT_OCCUPANCY_H

#include <stddef.h>
#include "target.h"
#include "resources.h"

typedef struct kt_occupancy {
    int waves;         /* AMD: waves per SIMD (the busiest SIMD, as LLVM reports it);
                          NVIDIA: resident warps per SM; 0 when one workgroup does not fit */
    int groups;        /* resident workgroups (blocks) per pool: WGP (gfx10+ WGP mode), CU, SM */
    const char *limit; /* what binds: "waves" (wave/warp slots), "blocks" (block slots), "vgpr",
                          "sgpr", "lds" (AMD), "regs", "smem" (NVIDIA); when waves == 0 the
                          resource that does not fit, or "wg_size" for a bad workgroup size */
} kt_occupancy;

/* Compute the occupancy of a kernel with resources r launched with wg_threads threads per
 * workgroup on target t. Fills *out (may be NULL) and, when why is not NULL, a one-line
 * explanation naming the binding limit and every limit's figure. Returns out->waves. */
int occupancy_compute(const kt_target *t, const kt_resources *r, int wg_threads,
                      kt_occupancy *out, char *why, size_t whylen);

/* The same, returning only the waves (AMD, per SIMD) or warps (NVIDIA, per SM). */
int occupancy_waves(const kt_target *t, const kt_resources *r, int wg_threads,
                    char *why, size_t whylen);

#endif
