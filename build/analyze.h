/* analyze.h: everything ktune learns about a compiled variant without running it: resources from
 * the ELF, occupancy from the target's rules, the ISA mix from the disassembly, and the verdict
 * (ok, or excluded with the reason: spills, scratch, over a limit, no resident wave). */
#ifndef KT_ANALYZE_H
#define KT_ANALYZE_H
#include <stddef.h>
#include "resources.h"
#include "target.h"

typedef struct kt_analysis {
    kt_resources res;
    int regs;                 /* what occupancy counts: vgpr (+agpr on unified-AGPR targets) */
    int waves;                /* waves/SIMD (AMD), warps/SM (NVIDIA) */
    char limit[16];           /* binding occupancy limit */
    char isa_json[4096];      /* "" when no disassembler is available */
    const char *status;       /* "ok" | "excluded" */
    char reason[128];         /* why excluded */
} kt_analysis;

/* Analyse code object `code` (len bytes, also on disk at path for the disassembler) holding
 * kernel `name`, launched with `threads` per workgroup and dynamic_lds bytes of shared memory on
 * top of what the code object declares (the recipe's lds_at_launch figure; 0: none). Returns nonzero (message in err) when
 * the object cannot be read: that makes the variant 'failed', not 'excluded'. */
int analyze_code_object(const kt_target *t, const void *code, size_t len, const char *path,
                        const char *name, int threads, int dynamic_lds, kt_analysis *out, char *err, size_t errlen);

/* The static LDS (shared memory) bytes kernel `name` declares in `code`: what analysis adds the
 * launch-time LDS to, so a stored row's lds_bytes can be checked against a recipe's declaration. */
int analyze_static_lds(const kt_target *t, const void *code, size_t len, const char *name, int *lds,
                       char *err, size_t errlen);

/* A companion kernel of the same code object (the recipe's `companions`: launched beside `name`),
 * held to the rules that do not depend on its launch: no spills, no scratch, registers within the
 * target's. Returns nonzero (message in err) when the object has no such kernel; else 0 with why
 * the rule it breaks, or "" when it keeps them. */
int analyze_companion(const kt_target *t, const void *code, size_t len, const char *name, char *why, size_t whylen,
                      char *err, size_t errlen);

#endif
