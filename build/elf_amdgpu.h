/* elf_amdgpu.h: resource usage of the kernels in an AMD HSA code object (v3 and later),
 * read from its NT_AMDGPU_METADATA note (owner "AMDGPU", type 32, a MessagePack map).
 *
 * Field mapping into kt_resources, per kernel map of amdhsa.kernels:
 *   vgpr          .vgpr_count. On gfx90a/gfx942 LLVM writes the *total* of the unified register
 *                 file here, align(arch_vgprs, 4) + agprs (its TotalNumVgprs), so vgpr already
 *                 includes agpr there; elsewhere it is the architected VGPR count.
 *   sgpr          .sgpr_count (includes VCC/FLAT_SCRATCH/XNACK reserved SGPRs)
 *   agpr          .agpr_count, 0 when absent (targets without AccVGPRs omit it)
 *   lds_bytes     .group_segment_fixed_size (static LDS; dynamic LDS is added at dispatch)
 *   scratch_bytes .private_segment_fixed_size (per work-item)
 *   vgpr_spills   .vgpr_spill_count, 0 when absent
 *   sgpr_spills   .sgpr_spill_count, 0 when absent
 *   wave_size     .wavefront_size (must be 32 or 64)
 *   max_wg_size   .max_flat_workgroup_size
 * The other fields are required by the code-object spec; a kernel missing one is a fault.
 *
 * All functions return nonzero (or -1) with a one-line message in err on any fault: not ELF,
 * not AMDGPU, truncated headers or sections, no metadata note, malformed msgpack, kernel not
 * found (the message lists the kernels that are there). They never read outside buf. */
#ifndef KT_ELF_AMDGPU_H
#define KT_ELF_AMDGPU_H

#include <stddef.h>

#include "elf.h"
#include "resources.h"

#define ELF_NT_AMDGPU_METADATA 32

/* Resources of the kernel whose .name is kernel_name (NULL: the first kernel). 0 on success. */
int elf_amdgpu_read_resources(const void *buf, size_t len, const char *kernel_name,
                              kt_resources *out, char *err, size_t errlen);

/* Call fn with each kernel's .name in metadata order. Returns the number of kernels visited
 * (fn may stop early by returning nonzero), or -1 on a fault. fn may be NULL to just count. */
int elf_amdgpu_list_kernels(const void *buf, size_t len, elf_kernel_fn fn, void *ctx,
                            char *err, size_t errlen);

/* The amdhsa.target string (e.g. "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"), NUL-terminated
 * into target (a fault when it does not fit), and EF_AMDGPU_MACH (e_flags & 0xff) into *mach.
 * Either output may be NULL. 0 on success. */
int elf_amdgpu_target(const void *buf, size_t len, char *target, size_t targetlen,
                      unsigned *mach, char *err, size_t errlen);

#endif
