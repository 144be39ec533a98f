/* fuzz_elf_amdgpu.c: libFuzzer target for the AMDGPU code-object reader. Every entry point
 * runs on the input: resources of the first kernel, of a kernel by name (one that usually
 * exists in the seeds, and one that never does, which walks the not-found listing), the
 * listing itself and the target query. Any outcome is fine except a crash, a sanitizer report
 * or a success that left an error message behind.
 *
 * Seeds: tests/fuzz/corpus_elf_amdgpu/ (the fixtures and cuts of them). */
/* fuzz-sources: build/elf.c build/msgpack_read.c build/elf_amdgpu.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_amdgpu.h"

static int fuzz_count(void *ctx, const char *name, size_t len)
{
    size_t *total = ctx;
    *total += len;
    if (len) (void)name[len - 1];   /* touch the last byte: the name must lie in the buffer */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = { NULL, "k_lds", "k_sspill", "not_a_kernel" };
    char err[256], target[128];
    kt_resources r;
    unsigned mach;
    size_t total = 0, i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        err[0] = 0;
        if (elf_amdgpu_read_resources(data, size, names[i], &r, err, sizeof err) != 0 && !err[0])
            abort();    /* every fault must say what it is */
    }
    elf_amdgpu_read_resources(data, size, "k_axpy", &r, NULL, 0);
    elf_amdgpu_list_kernels(data, size, fuzz_count, &total, err, sizeof err);
    elf_amdgpu_target(data, size, target, sizeof target, &mach, err, sizeof err);
    elf_amdgpu_target(data, size, target, 4, NULL, err, 7);
    return 0;
}
