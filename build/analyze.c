/* analyze.c: code object -> resources, occupancy, ISA mix, verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"
#include "elf_amdgpu.h"
#include "elf_cubin.h"
#include "isa_stats.h"
#include "occupancy.h"

/* Exclusion rules, in the order they are reported. A spilling kernel is never swept (the seed's
 * BK=128 collapse was a spill); neither is one the hardware cannot make resident. */
static const char *analyze_verdict(const kt_target *t, const kt_analysis *a)
{
    if (a->res.vgpr_spills > 0) return "vgpr spills";
    /* SGPR spills go to VGPR lanes, not memory, but they mean the allocator ran out: same rule */
    if (a->res.sgpr_spills > 0) return "sgpr spills";
    if (a->res.scratch_bytes > 0) return "uses scratch/local memory";
    if (a->res.lds_bytes > t->lds_per_workgroup) return "lds over target limit";
    if (a->regs > t->max_regs_per_thread) return "registers over target limit";
    if (a->waves <= 0) return "no resident workgroup";
    return NULL;
}

/* The code object must be for the target it was built for: a mixed-up cache entry, compiler
 * flag or toolchain would otherwise store another GPU's code (with its resources) as this one's.
 * AMD: the processor of amdhsa.target ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"); NVIDIA:
 * the SM of the SASS (e_flags; sm_90 and sm_90a both read 90). */
static int analyze_check_target(const kt_target *t, const void *code, size_t len, const char *name,
                                char *err, size_t errlen)
{
    char where[128], rerr[256];
    if (t->vendor == KT_VENDOR_AMD) {
        if (elf_amdgpu_target(code, len, where, sizeof where, NULL, rerr, sizeof rerr)) {
            snprintf(err, errlen, "kernel %s: cannot read the code object's target: %s", name, rerr);
            return 1;
        }
        const char *proc = strstr(where, "--");
        proc = proc ? proc + 2 : where;
        size_t plen = strcspn(proc, ":");
        if (plen != strlen(t->name) || strncmp(proc, t->name, plen) != 0) {
            snprintf(err, errlen, "kernel %s: code object is for %.*s (amdhsa.target %s), but it was built for %s",
                     name, (int)plen, proc, where, t->name);
            return 1;
        }
        return 0;
    }
    int sm = 0, want = 0;
    if (elf_cubin_sm(code, len, &sm, rerr, sizeof rerr)) {
        snprintf(err, errlen, "kernel %s: cannot read the cubin's SM: %s", name, rerr);
        return 1;
    }
    if (sscanf(t->name, "sm_%d", &want) == 1 && sm != want) {
        snprintf(err, errlen, "kernel %s: code object is for sm_%d, but it was built for %s", name, sm, t->name);
        return 1;
    }
    return 0;
}

int analyze_static_lds(const kt_target *t, const void *code, size_t len, const char *name, int *lds,
                       char *err, size_t errlen)
{
    kt_resources r;
    int rc = t->vendor == KT_VENDOR_AMD ? elf_amdgpu_read_resources(code, len, name, &r, err, errlen)
                                        : elf_cubin_read_resources(code, len, name, &r, err, errlen);
    if (rc == 0) *lds = r.lds_bytes;
    return rc;
}

int analyze_companion(const kt_target *t, const void *code, size_t len, const char *name, char *why, size_t whylen,
                      char *err, size_t errlen)
{
    kt_analysis a;
    memset(&a, 0, sizeof a);
    int rc = t->vendor == KT_VENDOR_AMD ? elf_amdgpu_read_resources(code, len, name, &a.res, err, errlen)
                                        : elf_cubin_read_resources(code, len, name, &a.res, err, errlen);
    if (rc) return rc;
    a.regs = t->unified_agpr || a.res.agpr <= a.res.vgpr ? a.res.vgpr : a.res.agpr;
    a.waves = 1;   /* its residency depends on its own launch, which the op's geometry gives */
    a.res.lds_bytes = 0;
    const char *v = analyze_verdict(t, &a);
    snprintf(why, whylen, "%s", v ? v : "");
    return 0;
}

int analyze_code_object(const kt_target *t, const void *code, size_t len, const char *path,
                        const char *name, int threads, int dynamic_lds, kt_analysis *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (analyze_check_target(t, code, len, name, err, errlen)) return 1;
    int rc = t->vendor == KT_VENDOR_AMD ? elf_amdgpu_read_resources(code, len, name, &a->res, err, errlen)
                                        : elf_cubin_read_resources(code, len, name, &a->res, err, errlen);
    if (rc) return rc;
    a->res.lds_dynamic_bytes = dynamic_lds > 0 ? dynamic_lds : 0;
    if (t->vendor == KT_VENDOR_AMD && a->res.wave_size != t->wave_size) {
        snprintf(err, errlen, "kernel %s was compiled for wave%d, target %s runs wave%d", name, a->res.wave_size, t->name, t->wave_size);
        return 1;
    }
    /* on unified-AGPR targets .vgpr_count already includes the AGPRs (see occupancy.c) */
    a->regs = t->unified_agpr || a->res.agpr <= a->res.vgpr ? a->res.vgpr : a->res.agpr;
    kt_occupancy occ;
    occupancy_compute(t, &a->res, threads, &occ, NULL, 0);
    a->waves = occ.waves;
    snprintf(a->limit, sizeof a->limit, "%s", occ.limit ? occ.limit : "");
    /* the ISA mix is informative, never a reason to fail: no disassembler means no numbers */
    char ierr[256];
    kt_isa_report *isa = malloc(sizeof *isa);
    if (!isa || isa_stats_of_code_object(NULL, t->name, path, name, isa, ierr, sizeof ierr) != 0 ||
        isa_stats_to_json(isa, a->isa_json, sizeof a->isa_json) < 0)
        a->isa_json[0] = 0;
    free(isa);
    const char *why = analyze_verdict(t, a);
    a->status = why ? "excluded" : "ok";
    snprintf(a->reason, sizeof a->reason, "%s", why ? why : "");
    return 0;
}
