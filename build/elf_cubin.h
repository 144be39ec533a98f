/* elf_cubin.h: resource usage of the kernels in an NVIDIA cubin (ELF64, e_machine 190),
 * as ptxas recorded it. Verified against nvcc 13.0 output for sm_90a (and sm_80), against
 * `ptxas -v`, and against cuFuncGetAttribute on an H200 (driver 580).
 *
 * A kernel is a global FUNC symbol marked as an entry (st_other & 0x10); device functions
 * are not listed. Field mapping into kt_resources:
 *
 *   vgpr          registers per thread: EIATTR_REGCOUNT (0x2f) in the global .nv.info, keyed by
 *                 the kernel's symbol. Older cubins also put it in the top byte of the kernel
 *                 text section's sh_info; when both are there they must agree (a fault if not).
 *                 CUDA 13 leaves that byte 0, so the EIATTR is the primary source.
 *   lds_bytes     static __shared__ bytes, what ptxas -v prints as "smem" and the driver as
 *                 CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: the size of the NOBITS section
 *                 .nv.shared.<kernel>, less the 1 KiB driver reserve on sm_90 and later. From
 *                 sm_90 on ptxas lays that reserve at the bottom of every kernel's shared window
 *                 and the section covers it: .nv.shared.k is 1024 + static bytes, and a kernel with
 *                 only dynamic shared memory may still get a 1024-byte section (seen with nvcc
 *                 13.0 for sm_90, sm_90a, sm_100a, sm_103a, sm_110a, sm_120, sm_121, with and
 *                 without -G; sm_75 to sm_89 sections hold the static bytes only). The reserve is
 *                 not counted: the occupancy model adds the target's per-block reserve itself.
 *                 A .nv.shared.reserved.* section tied to this kernel (sh_info = its text section)
 *                 would be kernel-specific reserved memory and is added; the global ones seen so
 *                 far (sh_info 0; 0 bytes on sm_90, 64 on sm_100a, inside the 1 KiB) are not.
 *   scratch_bytes per-thread local memory: the larger of EIATTR_FRAME_SIZE (0x11, ptxas "bytes
 *                 stack frame") and EIATTR_MIN_STACK_SIZE (0x12, ptxas "cumulative stack size",
 *                 which adds the frames of called functions), keyed by the kernel's symbol.
 *   vgpr_spills   spill traffic in bytes: ptxas -v's "bytes spill stores" + "bytes spill loads".
 *                 The cubin does not store those totals, but ptxas tags every spill instruction
 *                 with an EIATTR_ANNOTATIONS (0x55) entry of kind 1 in .nv.info.<kernel>
 *                 (pairs of u32 kind, u32 text offset); the reader sums the access width of each
 *                 tagged STL/LDL (128-bit SASS, sm_70+). Local arrays also use STL/LDL but are not
 *                 tagged, so they count in scratch_bytes only. A kind-1 entry that does not point
 *                 at an STL/LDL is a fault (the format changed; do not trust a number). A cubin
 *                 without the record (older toolkits) reads 0 spills: then scratch_bytes > 0 is
 *                 the only hint, and tests/unit/test_resources_vs_tools.sh is what catches it.
 *   max_wg_size   x*y*z of EIATTR_MAX_THREADS (0x05, __launch_bounds__ / .maxntid), else of
 *                 EIATTR_REQNTID (0x10, .reqntid: a required size is also the maximum), else 0.
 *   wave_size     32.   sgpr, agpr, sgpr_spills: 0.
 *
 * All functions return nonzero (or -1) with a one-line message in err on any fault; they
 * never read outside buf. */
#ifndef KT_ELF_CUBIN_H
#define KT_ELF_CUBIN_H

#include <stddef.h>

#include "elf.h"
#include "resources.h"

/* Resources of the kernel named kernel_name (NULL: the first kernel in the symbol table). */
int elf_cubin_read_resources(const void *buf, size_t len, const char *kernel_name,
                             kt_resources *out, char *err, size_t errlen);

/* Call fn with each kernel's name in symbol-table order. Returns the number of kernels
 * visited (fn may stop early by returning nonzero), or -1 on a fault. fn may be NULL. */
int elf_cubin_list_kernels(const void *buf, size_t len, elf_kernel_fn fn, void *ctx,
                           char *err, size_t errlen);

/* The SM version the SASS is for (e.g. 90 for sm_90 and sm_90a), from e_flags. */
int elf_cubin_sm(const void *buf, size_t len, int *sm, char *err, size_t errlen);

#endif
